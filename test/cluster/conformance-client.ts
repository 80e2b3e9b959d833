// The small client the API conformance cases speak through: raw HTTP(S) over a kubeconfig (client-node
// resolves its credentials), so a case sees exactly what a server answers — status code, Status body,
// headers and watch lines — from the real kube-apiserver and from the embedded one alike.
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export const ContentTypes = {
  json: 'application/json',
  merge: 'application/merge-patch+json',
  jsonPatch: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type ContentType = (typeof ContentTypes)[keyof typeof ContentTypes];

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  apiVersion?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

export interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  managedFields?: ManagedFieldsEntry[];
  continue?: string;
}

/** Any object or list as a server sends it; cases read the fields they assert on. */
export interface KObj {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
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
  code: number;
  events: WatchEvent[];
  /** The server ended the stream (timeoutSeconds, or an ERROR event), rather than the client. */
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
   * A watch stream: collects events until the server ends it, `until` is satisfied, or `ms` pass
   * (then the client closes it).
   */
  watch(path: string, query: Record<string, string | number | boolean | undefined>, opts: { ms: number; until?: (events: readonly WatchEvent[]) => boolean }): Promise<WatchResult>;
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
  const makeAgent = (keepAlive: boolean): http.Agent => tls
    ? new https.Agent({ keepAlive, ca: opts.ca, cert: opts.cert, key: opts.key, ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}) })
    : new http.Agent({ keepAlive });
  const agent = makeAgent(true);
  // Watches get connections of their own, closed with them.
  const watchAgent = makeAgent(false);
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
            'User-Agent': 'qvirt-conformance',
            ...(payload ? { 'Content-Type': o.contentType ?? ContentTypes.json, 'Content-Length': payload.length } : {}),
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

    watch(path, query, { ms, until }) {
      const p = new Promise<WatchResult>((resolve, reject) => {
        const events: WatchEvent[] = [];
        let code = 0;
        let settled = false;
        const finish = (endedByServer: boolean): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          req.destroy();
          resolve({ code, events, endedByServer });
        };
        const timer = setTimeout(() => finish(false), ms);
        const req = mod.request(urlOf(path, { ...query, watch: 'true' }), { method: 'GET', agent: watchAgent, headers: { ...headers, Accept: 'application/json', 'User-Agent': 'qvirt-conformance' } }, (res) => {
          code = res.statusCode ?? 0;
          res.setEncoding('utf8');
          let buf = '';
          res.on('data', (chunk: string) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl).trim();
              buf = buf.slice(nl + 1);
              if (!line) continue;
              const ev = parse(line, `WATCH ${path}`) as unknown as WatchEvent;
              events.push(ev);
              if (code !== 200 || (until && until(events))) { finish(false); return; }
            }
          });
          res.on('end', () => {
            if (code !== 200 && buf.trim()) events.push({ type: 'ERROR', object: parse(buf, `WATCH ${path}`) });
            finish(true);
          });
          res.on('error', () => finish(true));
        });
        req.on('error', (e) => {
          if (!settled) {
            settled = true;
            clearTimeout(timer);
            reject(new Error(`WATCH ${path}: ${e.message}`, { cause: e }));
          }
        });
        req.end();
      });
      // A case may await the watch only after its writes: a failure must not be an unhandled rejection meanwhile.
      p.catch(() => {});
      return p;
    },

    close() {
      agent.destroy();
      watchAgent.destroy();
    },
  };
}
