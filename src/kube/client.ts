// qvirt's Kubernetes client: configuration and authentication come from kubeconfig.ts (kubeconfig
// files, in-cluster service accounts, tokens, client certificates; exec plugins and auth providers
// through @kubernetes/client-node); requests are made over keep-alive connections and objects are kept in
// their wire form (JSON as the API server sends it), so what a controller reads is exactly what
// it writes back — no model classes converting timestamps or dropping fields they don't know.
import { loadKubeConfig, type ClusterCredentials } from './kubeconfig.ts';
import http from 'node:http';
import https from 'node:https';
import { resourcePath, type ResourceType } from './resource.ts';
import { countRestRequest } from '../metrics/rest-client.ts';

/** A Kubernetes object in wire form: the shape is up to the caller's type parameter. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string | null;
    deletionTimestamp?: string | null;
    deletionGracePeriodSeconds?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
  };
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** A Kubernetes `Status` failure, with the HTTP code and Kubernetes' reason (NotFound, Conflict, ...). */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  readonly code: number;
  readonly reason: string;
  readonly status: unknown;
  constructor(code: number, reason: string, message: string, status: unknown) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.status = status;
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.code === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.code === 409 && err.reason === 'Conflict';
export const isAlreadyExists = (err: unknown): boolean => err instanceof KubeApiError && err.code === 409 && err.reason === 'AlreadyExists';
export const isGone = (err: unknown): boolean => err instanceof KubeApiError && err.code === 410;
/**
 * A JSON patch that did not apply — a `test` op failed, or a path is gone — because the object
 * changed since it was read (like a 409 for an update). kube-apiserver says only 422 Invalid with
 * its generic message and no causes (validation failures, also 422 Invalid, carry their causes).
 */
export const isFailedPatchTest = (err: unknown): boolean =>
  err instanceof KubeApiError && err.code === 422 && err.message.endsWith('the server rejected our request due to an error in our request');

export type PatchType = 'merge' | 'json' | 'strategic';
const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export interface ListOptions {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  resourceVersion?: string | undefined;
  /** Page size; all pages are fetched and joined. */
  limit?: number | undefined;
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export { loadKubeConfig, type ClusterCredentials } from './kubeconfig.ts';

interface Transport {
  agent: http.Agent;
  headers: Record<string, string>;
  expires: number;
}

/**
 * JSON as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped (\u003c ...). The
 * API server stores objects that way, and a JSON patch's `test` op compares a string by those bytes
 * (evanphx/json-patch): a test of a cloud-init script holding `2>/dev/null` failed for ever when sent
 * as JSON.stringify writes it, so a hotplug request on such a VM never applied. The escapes are
 * valid JSON for every reader, so every body goes this way.
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export class KubeClient {
  readonly kc: ClusterCredentials;
  readonly server: URL;
  private transport?: Promise<Transport>;
  /** A user agent string sent with every request (shows in API server audit logs). */
  userAgent = 'qvirt';

  constructor(kc: ClusterCredentials) {
    this.kc = kc;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
  }

  static fromFile(file?: string): KubeClient {
    return new KubeClient(loadKubeConfig(file));
  }

  private getTransport(): Promise<Transport> {
    const now = Date.now();
    if (!this.transport) this.transport = this.buildTransport();
    return this.transport.then((t) => {
      if (t.expires > now) return t;
      this.transport = this.buildTransport();
      return this.transport;
    });
  }

  private async buildTransport(): Promise<Transport> {
    // client-node resolves credentials (certs, tokens, exec plugins) into request options.
    const opts: https.RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const agent = this.server.protocol === 'https:'
      ? new https.Agent({ keepAlive: true, maxSockets: 32, ca: opts.ca, cert: opts.cert, key: opts.key, pfx: opts.pfx, passphrase: opts.passphrase, servername: opts.servername, ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}) })
      : new http.Agent({ keepAlive: true, maxSockets: 32 });
    // Tokens from exec plugins expire: rebuild the transport every minute.
    return { agent, headers, expires: Date.now() + 60_000 };
  }

  /** One API request; a non-2xx answer becomes a KubeApiError carrying Kubernetes' Status. */
  async request<T>(method: string, path: string, opts: { query?: Record<string, string | number | boolean | undefined>; body?: unknown; contentType?: string; signal?: AbortSignal } = {}): Promise<T> {
    const t = await this.getTransport();
    const url = new URL(this.server.pathname.replace(/\/$/, '') + path, this.server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const payload = opts.body === undefined ? undefined : Buffer.from(typeof opts.body === 'string' ? opts.body : goJson(opts.body));
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      const req = mod.request(url, {
        method,
        agent: t.agent,
        signal: opts.signal,
        headers: {
          ...t.headers,
          Accept: 'application/json',
          'User-Agent': this.userAgent,
          ...(payload ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': payload.length } : {}),
        },
      }, (res) => {
        answered = true;
        countRestRequest(method, url, res.statusCode);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          let parsed: unknown;
          try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = text; }
          if (code >= 200 && code < 300) { resolve(parsed as T); return; }
          const st = (parsed && typeof parsed === 'object' ? parsed : {}) as { reason?: string; message?: string };
          reject(new KubeApiError(code, st.reason ?? http.STATUS_CODES[code] ?? 'Unknown', `${method} ${path}: ${st.message ?? (text || `HTTP ${code}`)}`, parsed));
        });
      });
      req.on('error', (err) => { if (!answered) countRestRequest(method, url, undefined); reject(new Error(`${method} ${path}: ${err.message}`, { cause: err })); });
      if (payload) req.write(payload);
      req.end();
    });
  }

  async list<T extends KubeObject>(r: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv: string | undefined;
    do {
      const page = await this.request<KubeList<T>>('GET', resourcePath(r, opts.namespace), {
        query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, resourceVersion: cont ? undefined : opts.resourceVersion, limit: opts.limit, continue: cont },
      });
      items.push(...(page.items ?? []));
      rv = page.metadata?.resourceVersion;
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return { metadata: { resourceVersion: rv }, items };
  }

  get<T extends KubeObject>(r: ResourceType, namespace: string | undefined, name: string, subresource?: string): Promise<T> {
    return this.request<T>('GET', resourcePath(r, namespace, name, subresource));
  }

  create<T extends KubeObject>(r: ResourceType, obj: T, opts: { dryRun?: boolean } = {}): Promise<T> {
    return this.request<T>('POST', resourcePath(r, obj.metadata?.namespace), { body: obj, query: { dryRun: opts.dryRun ? 'All' : undefined } });
  }

  update<T extends KubeObject>(r: ResourceType, obj: T, subresource?: string): Promise<T> {
    const m = obj.metadata ?? {};
    if (!m.name) throw new Error(`update of a ${r.kind} without metadata.name`);
    return this.request<T>('PUT', resourcePath(r, m.namespace, m.name, subresource), { body: obj });
  }

  updateStatus<T extends KubeObject>(r: ResourceType, obj: T): Promise<T> {
    return this.update(r, obj, 'status');
  }

  patch<T extends KubeObject>(r: ResourceType, namespace: string | undefined, name: string, patch: unknown, type: PatchType = 'merge', subresource?: string, opts: { dryRun?: boolean } = {}): Promise<T> {
    return this.request<T>('PATCH', resourcePath(r, namespace, name, subresource), { body: patch, contentType: patchContentType[type], query: { dryRun: opts.dryRun ? 'All' : undefined } });
  }

  delete(r: ResourceType, namespace: string | undefined, name: string, opts: { gracePeriodSeconds?: number; propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; preconditions?: { uid?: string; resourceVersion?: string } } = {}): Promise<unknown> {
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...opts };
    return this.request('DELETE', resourcePath(r, namespace, name), { body });
  }

  /**
   * Watches a collection from a resource version: one streaming GET (`watch=true`) over this
   * client's transport, one JSON event per line. Calls `onEvent` per event and `onDone` once when
   * the stream ends (normally, by error — a non-200 answer is a KubeApiError with its code, e.g.
   * 410 — or after abort). Returns an abort handle; aborting destroys the connection, so no idle
   * watch socket outlives it (client-node's Watch kept them in its keep-alive pool).
   */
  async watch<T>(r: ResourceType, opts: ListOptions & { allowWatchBookmarks?: boolean; timeoutSeconds?: number }, onEvent: (ev: WatchEvent<T>) => void, onDone: (err?: unknown) => void): Promise<AbortController> {
    const t = await this.getTransport();
    const path = resourcePath(r, opts.namespace);
    const url = new URL(this.server.pathname.replace(/\/$/, '') + path, this.server);
    const query: Record<string, string | number | boolean | undefined> = {
      watch: 'true',
      resourceVersion: opts.resourceVersion,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      allowWatchBookmarks: opts.allowWatchBookmarks ?? true,
      timeoutSeconds: opts.timeoutSeconds,
    };
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const controller = new AbortController();
    let done = false;
    const finish = (err?: unknown) => {
      if (done) return;
      done = true;
      onDone(err);
    };
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method: 'GET', agent: t.agent, headers: { ...t.headers, Accept: 'application/json', 'User-Agent': this.userAgent } }, (res) => {
      countRestRequest('GET', url, res.statusCode);
      const code = res.statusCode ?? 0;
      if (code !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', finish);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let st: { reason?: string; message?: string } = {};
          try { st = JSON.parse(text) as typeof st; } catch { /* not a Status */ }
          finish(new KubeApiError(code, st.reason ?? http.STATUS_CODES[code] ?? 'Unknown', `WATCH ${path}: ${st.message ?? (text || `HTTP ${code}`)}`, st));
        });
        return;
      }
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          let ev: WatchEvent<T>;
          try { ev = JSON.parse(line) as WatchEvent<T>; } catch { continue; }
          if (!done) onEvent(ev);
        }
      });
      res.on('error', (err) => finish(controller.signal.aborted ? undefined : err));
      res.on('end', () => finish());
      res.on('close', () => finish());
    });
    req.on('error', (err) => finish(controller.signal.aborted ? undefined : new Error(`WATCH ${path}: ${err.message}`, { cause: err })));
    controller.signal.addEventListener('abort', () => { req.destroy(); finish(); }, { once: true });
    req.end();
    return controller;
  }

  /** Closes idle keep-alive connections (at shutdown). */
  async close(): Promise<void> {
    if (!this.transport) return;
    const t = await this.transport.catch(() => undefined);
    t?.agent.destroy();
  }
}
