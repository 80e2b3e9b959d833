// The client side of the node agent's subresource endpoint (KubeVirt: virt-api → virt-handler on
// :8186), shared by virt-api (src/virt-api) and the CLI, which may call it directly. The way there: the VMI's
// `status.nodeName` → that Node's `qvirt.io/handler-endpoint` and `qvirt.io/handler-ca`
// annotations → HTTPS verified with that CA, authenticated with the user's own credentials from the
// kubeconfig (bearer token and/or client certificate), never with anyone else's.
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type { VirtualMachineInstance } from '../api/types.ts';
import { HANDLER_CA_ANNOTATION, HANDLER_ENDPOINT_ANNOTATION, HANDLER_STREAM_PROTOCOL } from '../api/constants.ts';
import type { KubeClient, KubeObject } from './client.ts';
import { Resources } from './resource.ts';
import { kubeError } from './kube-error.ts';
import { UserError } from './user-error.ts';

/** A cluster as a caller reaches it: its client (the caller's own credentials), a namespace, and the API server's URL for messages. */
export interface ClusterAccess {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly server: string;
}

export interface HandlerTarget {
  readonly nodeName: string;
  readonly url: URL;
  /** PEM of the CA that signed the endpoint's serving certificate. */
  readonly ca: string;
}

/** Reads a VMI of the user's namespace; its absence is a kubectl-style error. */
export async function getVmi(ctx: ClusterAccess, name: string): Promise<VirtualMachineInstance> {
  try {
    return await ctx.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, ctx.namespace, name);
  } catch (err) {
    throw kubeError(err, { kind: 'VirtualMachineInstance', name, namespace: ctx.namespace }, ctx.server);
  }
}

/** Where the node agent of the VMI's node listens, from the Node's annotations. */
export async function resolveHandler(ctx: ClusterAccess, vmi: VirtualMachineInstance): Promise<HandlerTarget> {
  const name = vmi.metadata?.name ?? '';
  const nodeName = vmi.status?.nodeName;
  if (!nodeName) throw new UserError(`VirtualMachineInstance "${name}" in namespace "${ctx.namespace}" is not on a node yet (phase ${vmi.status?.phase || 'Pending'}); wait until it is Running (kubectl get vmi ${name} -w)`);
  let node: KubeObject;
  try {
    node = await ctx.client.get<KubeObject>(Resources.nodes, undefined, nodeName);
  } catch (err) {
    throw kubeError(err, { kind: 'Node', name: nodeName }, ctx.server);
  }
  const ann = node.metadata?.annotations ?? {};
  const endpoint = ann[HANDLER_ENDPOINT_ANNOTATION];
  if (!endpoint) throw new UserError(`node "${nodeName}" does not publish a node agent endpoint (annotation ${HANDLER_ENDPOINT_ANNOTATION}); is the qvirt node agent ('qvirt handler') running there?`);
  let url: URL;
  try { url = new URL(endpoint); } catch { throw new UserError(`node "${nodeName}": annotation ${HANDLER_ENDPOINT_ANNOTATION} is not a URL: "${endpoint}"`); }
  if (url.protocol !== 'https:') throw new UserError(`node "${nodeName}": annotation ${HANDLER_ENDPOINT_ANNOTATION} must be an https:// URL, got "${endpoint}"`);
  const caB64 = ann[HANDLER_CA_ANNOTATION];
  const ca = caB64 ? Buffer.from(caB64, 'base64').toString('utf8') : '';
  if (!ca.includes('BEGIN CERTIFICATE')) throw new UserError(`node "${nodeName}": annotation ${HANDLER_CA_ANNOTATION} does not hold a base64 PEM CA certificate, so the node agent at ${endpoint} cannot be verified`);
  return { nodeName, url, ca };
}

interface Credentials {
  readonly headers: Record<string, string>;
  readonly cert?: https.RequestOptions['cert'];
  readonly key?: https.RequestOptions['key'];
}

/** The user's own credentials from the kubeconfig: a bearer token (also from exec plugins) and/or a client certificate. */
async function credentials(ctx: ClusterAccess): Promise<Credentials> {
  const opts: https.RequestOptions = {};
  await ctx.client.kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined && k.toLowerCase() === 'authorization') headers.Authorization = Array.isArray(v) ? v.join(', ') : String(v);
  if (opts.auth && !headers.Authorization) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return { headers, ...(opts.cert ? { cert: opts.cert } : {}), ...(opts.key ? { key: opts.key } : {}) };
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', 'EPIPE']);

/** A call to one VMI's subresources on its node agent. */
export class HandlerEndpoint {
  readonly ctx: ClusterAccess;
  readonly target: HandlerTarget;
  readonly vmiName: string;
  private creds?: Promise<Credentials>;

  constructor(ctx: ClusterAccess, target: HandlerTarget, vmiName: string) {
    this.ctx = ctx;
    this.target = target;
    this.vmiName = vmiName;
  }

  /** Reads the VMI and finds its node agent. */
  static async forVmi(ctx: ClusterAccess, vmi: VirtualMachineInstance): Promise<HandlerEndpoint> {
    return new HandlerEndpoint(ctx, await resolveHandler(ctx, vmi), vmi.metadata?.name ?? '');
  }

  private path(sub: string): URL {
    const p = `${this.target.url.pathname.replace(/\/$/, '')}/v1/namespaces/${encodeURIComponent(this.ctx.namespace)}/virtualmachineinstances/${encodeURIComponent(this.vmiName)}/${sub}`;
    return new URL(p, this.target.url);
  }

  private async options(method: string, extraHeaders: Record<string, string>): Promise<https.RequestOptions> {
    this.creds ??= credentials(this.ctx);
    const c = await this.creds;
    return {
      method,
      ca: this.target.ca,
      ...(c.cert ? { cert: c.cert } : {}),
      ...(c.key ? { key: c.key } : {}),
      headers: { ...c.headers, 'User-Agent': 'qvirt-cli', Accept: 'application/json', ...extraHeaders },
      agent: false,
    };
  }

  /** A transport failure, named: where, and what to check. */
  private transportError(url: URL, err: Error & { code?: string }): UserError {
    const at = `${url.protocol}//${url.host}`;
    if (err.code && CONNECT_CODES.has(err.code)) return new UserError(`cannot reach the node agent on node "${this.target.nodeName}" at ${at}: ${err.code} (${err.message}); is 'qvirt handler' running there and reachable from here?`);
    if (/certificate|self.signed|SSL|TLS|altnames/i.test(`${err.code ?? ''} ${err.message}`)) {
      return new UserError(`cannot verify the node agent on node "${this.target.nodeName}" at ${at}: ${err.message} (its certificate does not match the CA in the Node's ${HANDLER_CA_ANNOTATION} annotation)`);
    }
    return new UserError(`the call to the node agent on node "${this.target.nodeName}" at ${at} failed: ${err.message}`);
  }

  /** An error answer of the endpoint: `{"message": "..."}` with its HTTP code. */
  private answerError(sub: string, code: number, body: string): UserError {
    let message = body.trim();
    try {
      const j = JSON.parse(body) as { message?: unknown };
      if (typeof j.message === 'string') message = j.message;
    } catch { /* not JSON: the raw text */ }
    const what = `${sub} of VirtualMachineInstance "${this.vmiName}" in namespace "${this.ctx.namespace}"`;
    switch (code) {
      case 401: return new UserError(`the node agent on node "${this.target.nodeName}" did not accept your credentials for ${what}: ${message}; check the user in your kubeconfig`);
      case 403: return new UserError(`forbidden: ${message}`);
      default: return new UserError(`${what} failed: ${message || `HTTP ${code}`}${code >= 500 ? ` (the node agent on node "${this.target.nodeName}" answered HTTP ${code})` : ''}`);
    }
  }

  /** PUT/GET/POST with a JSON body; resolves to the parsed answer. */
  async call<T = unknown>(method: 'GET' | 'PUT' | 'POST', sub: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const { data } = await this.request(method, sub, payload);
    const text = data.toString('utf8');
    try {
      return (text ? JSON.parse(text) : {}) as T;
    } catch {
      throw new UserError(`the node agent on node "${this.target.nodeName}" answered ${sub} with something that is not JSON: ${text.slice(0, 200)}`);
    }
  }

  /** GET of a binary answer (`vnc/screenshot`): its bytes and media type. */
  async getBinary(sub: 'vnc/screenshot'): Promise<{ contentType: string; data: Buffer }> {
    return this.request('GET', sub, undefined, '*/*');
  }

  /** One request; resolves to a 2xx answer's body, rejects with the endpoint's error otherwise. */
  private async request(method: 'GET' | 'PUT' | 'POST', sub: string, payload: Buffer | undefined, accept?: string): Promise<{ contentType: string; data: Buffer }> {
    const url = this.path(sub);
    const opts = await this.options(method, { ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {}), ...(accept ? { Accept: accept } : {}) });
    return new Promise((resolve, reject) => {
      const req = https.request(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(this.transportError(url, err)));
        res.on('end', () => {
          const data = Buffer.concat(chunks);
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) { reject(this.answerError(sub, code, data.toString('utf8'))); return; }
          resolve({ contentType: res.headers['content-type'] ?? '', data });
        });
      });
      req.on('error', (err) => reject(this.transportError(url, err)));
      if (payload) req.write(payload);
      req.end();
    });
  }

  /**
   * GET with `Upgrade: plain.kubevirt.io` → after `101 Switching Protocols`, the raw byte stream
   * (console / VNC, or `portforward/PORT[/tcp|udp]`: the guest's port; UDP datagrams in frames,
   * src/net/datagram-frames.ts).
   */
  async stream(sub: 'console' | 'vnc' | `portforward/${number}` | `portforward/${number}/${'tcp' | 'udp'}`): Promise<Duplex> {
    const url = this.path(sub);
    const opts = await this.options('GET', { Connection: 'Upgrade', Upgrade: HANDLER_STREAM_PROTOCOL });
    return new Promise<Duplex>((resolve, reject) => {
      const req = https.request(url, opts);
      req.on('upgrade', (_res: IncomingMessage, socket: Duplex, head: Buffer) => {
        if (head.length) socket.unshift(head);
        resolve(socket);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(this.answerError(sub, res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))));
        res.on('error', (err) => reject(this.transportError(url, err)));
      });
      req.on('error', (err) => reject(this.transportError(url, err)));
      req.end();
    });
  }
}
