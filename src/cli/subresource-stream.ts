// The client side of KubeVirt's streaming subresources (`subresources.kubevirt.io`: port-forward,
// console, VNC), as virtctl opens them (client-go kubevirt/typed/core/v1/async.go): a websocket GET
// to the API server's URL at /apis/subresources.kubevirt.io/v1/namespaces/NS/RESOURCE/NAME/SUB,
// subprotocol plain.kubevirt.io, with the kubeconfig's own credentials (CA, bearer token and/or
// client certificate, exec plugins). Binary messages carry the bytes: a TCP port-forward, console
// or VNC is a byte stream (a Duplex); a UDP port-forward carries one datagram per message (a
// DatagramChannel). A refusal comes before the upgrade as an HTTP error with a Kubernetes Status
// (virt-api's, or the API server's own); it becomes a UserError that says what failed and what to do.
import type https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import WebSocket, { createWebSocketStream } from 'ws';
import { HANDLER_STREAM_PROTOCOL, SUBRESOURCE_GROUP } from '../api/constants.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import type { ClusterContext } from './kube-context.ts';

export type StreamResource = 'virtualmachines' | 'virtualmachineinstances';

export interface StreamTarget {
  readonly resource: StreamResource;
  readonly namespace: string;
  readonly name: string;
  /** `console`, `vnc`, `portforward/22/tcp`, ... */
  readonly subresource: string;
}

const KIND: Readonly<Record<StreamResource, string>> = { virtualmachines: 'VirtualMachine', virtualmachineinstances: 'VirtualMachineInstance' };
const SHORT: Readonly<Record<StreamResource, string>> = { virtualmachines: 'vm', virtualmachineinstances: 'vmi' };

/** The websocket URL of a streaming subresource under the API server's URL (its path prefix kept). Pure. */
export function subresourceStreamUrl(server: URL, t: StreamTarget): URL {
  const u = new URL(server.href);
  if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol === 'http:') u.protocol = 'ws:';
  else throw new UserError(`the API server URL ${server.href} is neither https:// nor http://`);
  const sub = t.subresource.split('/').map(encodeURIComponent).join('/');
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/apis/${SUBRESOURCE_GROUP}/v1/namespaces/${encodeURIComponent(t.namespace)}/${t.resource}/${encodeURIComponent(t.name)}/${sub}`;
  u.search = '';
  u.hash = '';
  return u;
}

interface StatusBody { readonly message?: string; readonly reason?: string; readonly details?: { readonly name?: string; readonly kind?: string } }

function readStatus(contentType: string, body: string): StatusBody | undefined {
  if (!body.trim()) return undefined;
  try {
    const j = JSON.parse(body) as unknown;
    if (j && typeof j === 'object' && (j as { kind?: unknown }).kind === 'Status') {
      const s = j as Record<string, unknown>;
      const d = s.details && typeof s.details === 'object' ? s.details as Record<string, unknown> : undefined;
      return {
        ...(typeof s.message === 'string' ? { message: s.message } : {}),
        ...(typeof s.reason === 'string' ? { reason: s.reason } : {}),
        ...(d ? { details: { ...(typeof d.name === 'string' ? { name: d.name } : {}), ...(typeof d.kind === 'string' ? { kind: d.kind } : {}) } } : {}),
      };
    }
  } catch { /* not JSON */ }
  return /json/i.test(contentType) ? undefined : { message: body.trim().slice(0, 500) };
}

/**
 * What to tell the user when the API server refused the upgrade with HTTP `code` and `body`
 * (usually a Status). Pure: `server` is the API server's URL, for messages.
 */
export function streamRefusal(t: StreamTarget, code: number, contentType: string, body: string, server: string): string {
  const st = readStatus(contentType, body);
  const msg = st?.message || `HTTP ${code}`;
  const kind = KIND[t.resource];
  const what = `${t.subresource} of ${kind} "${t.name}" in namespace "${t.namespace}"`;
  const sub = t.subresource.split('/')[0];
  const port = /^portforward\/(\d+)/.exec(t.subresource)?.[1];
  switch (code) {
    case 401:
      return `the API server at ${server} did not accept your credentials (Unauthorized): ${msg}; check the user in your kubeconfig`;
    case 403:
      return `forbidden: ${msg}; opening the ${sub} needs "get" on ${t.resource}/${sub} in API group "${SUBRESOURCE_GROUP}" in namespace "${t.namespace}"`;
    case 404:
      if (st?.details?.name !== undefined || /" not found$/.test(msg)) return `${kind} "${t.name}" not found in namespace "${t.namespace}"`;
      return `the API server at ${server} does not serve ${SUBRESOURCE_GROUP} (${msg}); is qvirt installed there ('qvirt install'; kubectl get apiservice v1.${SUBRESOURCE_GROUP}) or 'qvirt local up' running?`;
    case 409: {
      let hint = '';
      if (/VMI is not started/.test(msg)) hint = `; start it with 'qvirt start ${t.name}'`;
      else if (/is paused/.test(msg)) hint = `; unpause it with 'qvirt unpause vmi ${t.name}'`;
      else if (/not running/.test(msg)) hint = `; wait until it is Running (kubectl get vmi ${t.name} -n ${t.namespace} -w)`;
      return `cannot open the ${what}: ${msg}${hint}`;
    }
    case 503:
      return `the API server at ${server} cannot reach the ${SUBRESOURCE_GROUP} API (${msg}); is qvirt's virt-api running? (kubectl get apiservice v1.${SUBRESOURCE_GROUP})`;
    default: {
      const hint = port && /ECONNREFUSED|connection refused/i.test(msg) ? `; is a server listening on port ${port} in the guest?` : '';
      return `cannot open the ${what}: ${st?.message ? msg : `HTTP ${code}`}${hint}`;
    }
  }
}

/** The kubeconfig's TLS material and Authorization header, as client-node resolves them (exec plugins included). */
async function wsOptions(ctx: ClusterContext, handshakeTimeoutMs: number): Promise<WebSocket.ClientOptions> {
  const opts: https.RequestOptions = {};
  await ctx.client.kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = { 'User-Agent': ctx.client.userAgent };
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined && k.toLowerCase() === 'authorization') headers.Authorization = Array.isArray(v) ? v.join(', ') : String(v);
  if (opts.auth && !headers.Authorization) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return {
    headers,
    perMessageDeflate: false,
    handshakeTimeout: handshakeTimeoutMs,
    maxPayload: 64 * 1024 * 1024,
    ...(opts.ca ? { ca: opts.ca } : {}),
    ...(opts.cert ? { cert: opts.cert } : {}),
    ...(opts.key ? { key: opts.key } : {}),
    ...(opts.pfx ? { pfx: opts.pfx } : {}),
    ...(opts.passphrase ? { passphrase: opts.passphrase } : {}),
    ...(opts.servername ? { servername: opts.servername } : {}),
    ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
  };
}

/** Opens the websocket of a streaming subresource; resolves once it is open (plain.kubevirt.io). */
export async function openSubresourceWebSocket(ctx: ClusterContext, t: StreamTarget, o: { handshakeTimeoutMs?: number } = {}): Promise<WebSocket> {
  const url = subresourceStreamUrl(ctx.client.server, t);
  const options = await wsOptions(ctx, o.handshakeTimeoutMs ?? 30_000);
  const server = ctx.client.server.origin;
  return new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(url, [HANDLER_STREAM_PROTOCOL], options);
    let settled = false;
    const fail = (err: Error) => { if (!settled) { settled = true; reject(err); } ws.terminate(); };
    ws.on('unexpected-response', (req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => { if (chunks.reduce((n, x) => n + x.length, 0) < 65536) chunks.push(c); });
      res.on('error', () => fail(new UserError(streamRefusal(t, res.statusCode ?? 0, String(res.headers['content-type'] ?? ''), Buffer.concat(chunks).toString('utf8'), server))));
      res.on('end', () => {
        fail(new UserError(streamRefusal(t, res.statusCode ?? 0, String(res.headers['content-type'] ?? ''), Buffer.concat(chunks).toString('utf8'), server)));
        req.destroy();
      });
    });
    ws.on('error', (err: Error & { code?: string }) => {
      if (settled) return;
      if (/certificate|self.signed|SSL|TLS|altnames/i.test(`${err.code ?? ''} ${err.message}`)) {
        fail(new UserError(`cannot verify the API server at ${server}: ${err.message}; check the certificate-authority of the kubeconfig's cluster`));
      } else if (/timed out/i.test(err.message)) {
        fail(new UserError(`the API server at ${server} did not answer the websocket upgrade for the ${t.subresource} of ${SHORT[t.resource]}/${t.name} in time: ${err.message}`));
      } else {
        fail(kubeError(err, undefined, server));
      }
    });
    ws.on('open', () => {
      if (settled) return;
      if (ws.protocol !== HANDLER_STREAM_PROTOCOL) {
        fail(new UserError(`the API server at ${server} answered the ${t.subresource} of ${SHORT[t.resource]}/${t.name} with websocket subprotocol "${ws.protocol}", not ${HANDLER_STREAM_PROTOCOL}`));
        return;
      }
      settled = true;
      resolve(ws);
    });
  });
}

/** A byte stream over an open websocket: each write one binary message; ending it closes the websocket. */
export function webSocketDuplex(ws: WebSocket): Duplex {
  return createWebSocketStream(ws, { allowHalfOpen: false });
}

/** A TCP connection (or console/VNC) through the subresource: a Duplex of its bytes. */
export async function openSubresourceStream(ctx: ClusterContext, t: StreamTarget): Promise<Duplex> {
  return webSocketDuplex(await openSubresourceWebSocket(ctx, t));
}

/**
 * A UDP port-forward: one datagram per binary websocket message, both ways. Emits 'datagram'
 * (Buffer) and, once, 'close' (with the error that closed it, if one did).
 */
export class DatagramChannel extends EventEmitter<{ datagram: [Buffer]; close: [Error | undefined] }> {
  private readonly ws: WebSocket;
  private closedWith: { err: Error | undefined } | undefined;

  constructor(ws: WebSocket) {
    super();
    this.ws = ws;
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      if (!isBinary) return;
      this.emit('datagram', Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
    });
    ws.on('error', (err: Error) => this.finish(err));
    ws.on('close', () => this.finish(undefined));
  }

  get closed(): boolean { return this.closedWith !== undefined; }

  send(datagram: Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(datagram, { binary: true });
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
    this.finish(undefined);
  }

  private finish(err: Error | undefined): void {
    if (this.closedWith) return;
    this.closedWith = { err };
    this.emit('close', err);
  }
}

export async function openDatagramChannel(ctx: ClusterContext, t: StreamTarget): Promise<DatagramChannel> {
  return new DatagramChannel(await openSubresourceWebSocket(ctx, t));
}
