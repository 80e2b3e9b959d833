// pods/log, the way kube-apiserver serves it: pick and check the container (the only one, or the
// one named; kube-apiserver's messages otherwise), find the pod's node and its kubelet endpoint
// (status.daemonEndpoints.kubeletEndpoint.Port at the node's InternalIP), and stream kubelet's
// `/containerLogs/{ns}/{pod}/{container}` back, with follow/previous/timestamps/sinceSeconds/
// sinceTime/tailLines/limitBytes passed on. The API server presents its kubelet client
// certificate. A kubelet error becomes the API error kube-apiserver makes of it (400 stays a
// BadRequest with kubelet's text).
import type { ServerResponse } from 'node:http';
import { request } from 'node:https';
import { ApiError, badRequest, internalError, StatusReasons } from './errors.ts';
import type { Obj } from './store.ts';

/** kubelet's default port, used when a node does not advertise one (as kube-apiserver does). */
export const DEFAULT_KUBELET_PORT = 10250;

/** The address types tried in order (kube-apiserver's --kubelet-preferred-address-types, InternalIP first). */
export const KUBELET_ADDRESS_TYPES = ['InternalIP', 'Hostname', 'InternalDNS', 'ExternalIP', 'ExternalDNS'] as const;

const LOG_PARAMS = ['follow', 'previous', 'timestamps', 'sinceSeconds', 'sinceTime', 'tailLines', 'limitBytes'] as const;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const names = (v: unknown): string[] => objs(v).map((c) => String(c.name ?? ''));

/** kube-apiserver's validateContainer: the container to read, or a BadRequest naming the choices. */
export function logContainer(pod: Obj, requested: string | null): string {
  const spec = obj(pod.spec);
  const podName = String(obj(pod.metadata).name ?? '');
  if (!requested) {
    const containers = names(spec.containers);
    if (containers.length === 1) return containers[0]!;
    if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${podName}`);
    const inits = names(spec.initContainers);
    let msg = `a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]`;
    if (inits.length > 0) msg += ` or one of the init containers: [${inits.join(' ')}]`;
    throw badRequest(msg);
  }
  const all = [...names(spec.containers), ...names(spec.initContainers), ...names(spec.ephemeralContainers)];
  if (!all.includes(requested)) throw badRequest(`container ${requested} is not valid for pod ${podName}`);
  return requested;
}

/** Where kubelet's logs of the container are (undefined: the pod is not on a node yet — empty logs). */
export function podLogLocation(pod: Obj, node: Obj | undefined, q: URLSearchParams): URL | undefined {
  const container = logContainer(pod, q.get('container'));
  const nodeName = String(obj(pod.spec).nodeName ?? '');
  if (!nodeName) return undefined;
  if (!node) throw internalError(`nodes "${nodeName}" not found`);
  const st = obj(node.status);
  const port = Number(obj(obj(st.daemonEndpoints).kubeletEndpoint).Port ?? 0) || DEFAULT_KUBELET_PORT;
  const addrs = objs(st.addresses);
  let host = '';
  for (const t of KUBELET_ADDRESS_TYPES) {
    const a = addrs.find((x) => x.type === t && typeof x.address === 'string' && x.address !== '');
    if (a) { host = String(a.address); break; }
  }
  if (!host) throw internalError(`node "${nodeName}" has no address of a type in [${KUBELET_ADDRESS_TYPES.join(' ')}]`);
  const meta = obj(pod.metadata);
  const url = new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`);
  url.pathname = `/containerLogs/${encodeURIComponent(String(meta.namespace ?? ''))}/${encodeURIComponent(String(meta.name ?? ''))}/${encodeURIComponent(container)}`;
  for (const p of LOG_PARAMS) {
    const v = q.get(p);
    if (v !== null && v !== '' && !((p === 'follow' || p === 'previous' || p === 'timestamps') && v === 'false')) url.searchParams.set(p, v);
  }
  return url;
}

export interface KubeletClientTls {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** Streams the container's log from its kubelet into `res`. */
export function proxyPodLog(location: URL, tls: KubeletClientTls, res: ServerResponse, podName: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const up = request(location, {
      method: 'GET',
      ...(tls.ca ? { ca: tls.ca } : { rejectUnauthorized: false }),
      ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
    }, (kres) => {
      const code = kres.statusCode ?? 500;
      if (code < 200 || code > 206) {
        const chunks: Buffer[] = [];
        kres.on('data', (c: Buffer) => { if (chunks.reduce((n, b) => n + b.length, 0) < 64 * 1024) chunks.push(c); });
        kres.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8').trim();
          if (code === 400) reject(badRequest(text));
          else if (code === 500) reject(internalError(text));
          else reject(new ApiError(code, code === 404 ? StatusReasons.NotFound : code === 401 ? StatusReasons.Unauthorized : StatusReasons.InternalError, `the server responded with the status code ${code} but did not return more information (get pods/log ${podName})${text ? `: ${text}` : ''}`, { name: podName, kind: 'pods/log', causes: [{ reason: 'UnexpectedServerResponse', message: text }] }));
        });
        kres.on('error', (e) => reject(internalError(e.message)));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
      res.flushHeaders();
      kres.on('data', (c: Buffer) => { res.write(c); });
      kres.on('end', () => { res.end(); resolve(); });
      kres.on('error', () => { res.end(); resolve(); });
    });
    up.on('error', (e) => {
      if (res.headersSent) { res.end(); resolve(); return; }
      reject(internalError(`Get "${location.href}": ${e.message}`));
    });
    // The client went away (kubectl logs -f interrupted): stop reading from kubelet.
    res.on('close', () => up.destroy());
    up.end();
  });
}
