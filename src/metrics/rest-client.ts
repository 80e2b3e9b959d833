// KubeVirt's REST client metric (pkg/monitoring/metrics/common/client: rt_wrapper.go), counted for
// every request the process's KubeClient makes: kubevirt_rest_client_requests_total{code, method,
// host, resource, verb}, with KubeVirt's rules for the resource (the path's resource segment) and
// the verb (GET → LIST on a collection, WATCH on a watch, GET on an object; PUT → UPDATE; POST →
// CREATE). A request that got no answer counts with code `<error>`. The parsing is pure.
import { CounterVec, defaultRegistry } from './registry.ts';

const NONE = 'none';
const P = '[A-Za-z0-9.\\-]*';
const RES = `(${P})`;

// KubeVirt's order: watches first, then namespaced, then cluster-scoped; core (/api) and groups (/apis).
const RESOURCE_PATTERNS: readonly RegExp[] = [
  new RegExp(`/api/${P}/watch/namespaces/${P}/${RES}`),
  new RegExp(`/api/${P}/watch/${RES}`),
  new RegExp(`/apis/${P}/${P}/watch/namespaces/${P}/${RES}`),
  new RegExp(`/apis/${P}/${P}/watch/${RES}`),
  new RegExp(`/api/${P}/namespaces/${P}/${RES}`),
  new RegExp(`/apis/${P}/${P}/namespaces/${P}/${RES}`),
  new RegExp(`/api/${P}/${RES}`),
  new RegExp(`/apis/${P}/${P}/${RES}`),
];

/** The resource a request path names ('' when none). Pure. */
export function resourceOfPath(path: string): string {
  for (const re of RESOURCE_PATTERNS) {
    const m = re.exec(path);
    if (m && m[1] !== undefined) return m[1];
  }
  return '';
}

/** KubeVirt's resource and verb labels of a request. Pure. */
export function resourceAndVerb(method: string, url: URL): { resource: string; verb: string } {
  if (!method) return { resource: NONE, verb: NONE };
  const resource = resourceOfPath(url.pathname);
  if (!resource) return { resource: NONE, verb: NONE };
  switch (method) {
    case 'GET':
      if (url.pathname.includes('/watch/') || url.searchParams.get('watch') === 'true') return { resource, verb: 'WATCH' };
      return { resource, verb: url.pathname.endsWith(resource) ? 'LIST' : 'GET' };
    case 'PUT': return { resource, verb: 'UPDATE' };
    case 'PATCH': return { resource, verb: 'PATCH' };
    case 'POST': return { resource, verb: 'CREATE' };
    case 'DELETE': return { resource, verb: 'DELETE' };
    default: return { resource, verb: method };
  }
}

export const restClientRequests = defaultRegistry.register(new CounterVec(
  'kubevirt_rest_client_requests_total',
  'Number of HTTP requests, partitioned by status code, method, and host.',
  ['code', 'method', 'host', 'resource', 'verb'],
));

/** Counts one request: its answer's status code, or undefined when none came. */
export function countRestRequest(method: string, url: URL, status: number | undefined): void {
  const { resource, verb } = resourceAndVerb(method, url);
  restClientRequests.inc({ code: status === undefined ? '<error>' : String(status), method, host: url.host || NONE, resource, verb });
}
