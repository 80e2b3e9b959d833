// The small client the API conformance cases speak through: raw HTTP(S) over a kubeconfig (client-node
// resolves its credentials), so a case sees exactly what a server answers — status code, Status body,
// headers and watch lines — from the real kube-apiserver and from the embedded one alike.
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ListMeta, ObjectMeta } from '../../src/api/kube.ts';
import { PatchTypes } from '../../src/apiserver/patch.ts';
import { KubeApiError, KubeClient, type ListOptions } from '../../src/kube/client.ts';
import type { ResourceType } from '../../src/kube/resource.ts';

/** The PATCH bodies (`json` is a JSON patch); other bodies are sent as application/json. */
export const ContentTypes = PatchTypes;
export type ContentType = (typeof ContentTypes)[keyof typeof ContentTypes];

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const USER_AGENT = 'qvirt-conformance';

/** Any object or list as a server sends it; cases read the fields they assert on. */
export interface KObj {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta & ListMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
  items?: KObj[];
  [k: string]: unknown;
}

export interface StatusCause { reason?: string; message?: string; field?: string }
export interface Status {
  kind: 'Status';
  status: string;
  message?: string;
  reason?: string;
  code: number;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[] };
}

export interface Response {
  code: number;
  /** The parsed JSON body (an object, a list, a Table or a Status). */
  body: KObj;
  headers: http.IncomingHttpHeaders;
}

export interface WatchEvent { type: string; object: KObj }

export interface WatchResult {
  /** 200, or the HTTP code a watch was refused with. */
  code: number;
  events: WatchEvent[];
  /** The server ended the stream (timeoutSeconds, or after an ERROR event), rather than the client. */
  endedByServer: boolean;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: ContentType;
  accept?: string;
}

export interface KubeHttp {
  request(method: string, path: string, opts?: RequestOptions): Promise<Response>;
  /**
   * A watch stream (src/kube/client.ts's): collects events until the server ends it, `until` is
   * satisfied, or `ms` pass (then the client closes it).
   */
  watch(r: ResourceType, opts: ListOptions & { allowWatchBookmarks?: boolean; timeoutSeconds?: number }, end: { ms: number; until?: (events: readonly WatchEvent[]) => boolean }): Promise<WatchResult>;
  close(): void;
}

/** A client for the cluster of `kc`'s current context. */
export async function kubeHttp(kc: KubeConfig): Promise<KubeHttp> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('conformance client: the kubeconfig has no current cluster');
  const server = new URL(cluster.server);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  const tls = server.protocol === 'https:';
  const agent = tls
    ? new https.Agent({ keepAlive: true, ca: opts.ca, cert: opts.cert, key: opts.key, ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}) })
    : new http.Agent({ keepAlive: true });
  const watcher = new KubeClient(kc);
  watcher.userAgent = USER_AGENT;
  const mod = tls ? https : http;
  const urlOf = (path: string, query: RequestOptions['query'] = {}): URL => {
    const u = new URL(server.pathname.replace(/\/$/, '') + path, server);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  };
  const parse = (text: string, what: string): KObj => {
    if (text === '') return {};
    try {
      return JSON.parse(text) as KObj;
    } catch {
      throw new Error(`${what}: the answer is not JSON: ${text.slice(0, 200)}`);
    }
  };

  return {
    request(method, path, o = {}) {
      const payload = o.body === undefined ? undefined : Buffer.from(typeof o.body === 'string' ? o.body : JSON.stringify(o.body));
      return new Promise<Response>((resolve, reject) => {
        const req = mod.request(urlOf(path, o.query), {
          method,
          agent,
          headers: {
            ...headers,
            Accept: o.accept ?? 'application/json',
            'User-Agent': USER_AGENT,
            ...(payload ? { 'Content-Type': o.contentType ?? 'application/json', 'Content-Length': payload.length } : {}),
          },
        }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            try {
              resolve({ code: res.statusCode ?? 0, body: parse(Buffer.concat(chunks).toString('utf8'), `${method} ${path}`), headers: res.headers });
            } catch (e) {
              reject(e as Error);
            }
          });
        });
        req.on('error', (e) => reject(new Error(`${method} ${path}: ${e.message}`, { cause: e })));
        if (payload) req.write(payload);
        req.end();
      });
    },

    watch(r, opts, { ms, until }) {
      return new Promise<WatchResult>((resolve) => {
        const events: WatchEvent[] = [];
        let byClient = false;
        let abort: AbortController | undefined;
        const stop = (): void => {
          byClient = true;
          abort?.abort();
        };
        const timer = setTimeout(stop, ms);
        const done = (err?: unknown): void => {
          clearTimeout(timer);
          resolve({ code: err instanceof KubeApiError ? err.code : 200, events, endedByServer: !byClient });
        };
        watcher.watch<KObj>(r, { allowWatchBookmarks: false, ...opts }, (ev) => {
          events.push(ev);
          if (until?.(events)) stop();
        }, done).then((c) => {
          abort = c;
          if (byClient) c.abort();
        }, done);
      });
    },

    close() {
      agent.destroy();
      void watcher.close();
    },
  };
}
