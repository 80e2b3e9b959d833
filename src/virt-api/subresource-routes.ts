// The URL space of KubeVirt's aggregated API group `subresources.kubevirt.io` (pkg/virt-api/api.go
// composeSubresources), as pure decisions: which route a request names, whether its method fits,
// what it needs authorized (pkg/virt-api/rest/authorizer.go), and the discovery documents the
// aggregator and kubectl read.
import { SUBRESOURCE_GROUP } from '../api/constants.ts';
import type { APIResource } from '../api/kube.ts';

/** The versions virt-api serves (v1.SubresourceGroupVersions: the latest first, the preferred one). */
export const SUBRESOURCE_VERSIONS = ['v1', 'v1alpha3'] as const;
export type SubresourceVersion = (typeof SUBRESOURCE_VERSIONS)[number];

export type SubresourceResource = 'virtualmachines' | 'virtualmachineinstances';

/** What qvirt does with a subresource: serves it, or answers that it is not supported. */
export type Support = 'served' | 'unsupported';

interface RouteSpec { readonly method: 'GET' | 'PUT'; readonly support: Support; readonly stream?: boolean }

const put: RouteSpec = { method: 'PUT', support: 'served' };
const get: RouteSpec = { method: 'GET', support: 'served' };
const stream: RouteSpec = { method: 'GET', support: 'served', stream: true };
const putNo: RouteSpec = { method: 'PUT', support: 'unsupported' };
const getNo: RouteSpec = { method: 'GET', support: 'unsupported' };

/** Every VM and VMI route virt-api registers, with its method; `portforward` takes PORT[/PROTOCOL] after it. */
export const ROUTES: Readonly<Record<SubresourceResource, Readonly<Record<string, RouteSpec>>>> = {
  virtualmachines: {
    start: put, stop: put, restart: put, migrate: put, addvolume: put, removevolume: put,
    memorydump: put, removememorydump: put, 'evacuate/cancel': put,
    'expand-spec': get, objectgraph: get, portforward: stream,
  },
  virtualmachineinstances: {
    pause: put, unpause: put, freeze: put, unfreeze: put, reset: put, softreboot: put, addvolume: put, removevolume: put,
    backup: putNo, 'redefine-checkpoint': putNo, 'evacuate/cancel': put,
    'sev/setupsession': putNo, 'sev/injectlaunchsecret': putNo, 'sev/fetchcertchain': getNo, 'sev/querylaunchmeasurement': getNo,
    guestosinfo: get, userlist: get, filesystemlist: get, objectgraph: get, 'vnc/screenshot': get,
    console: stream, vnc: stream, portforward: stream, usbredir: { ...stream, support: 'unsupported' }, vsock: { ...stream, support: 'unsupported' },
  },
};

export type SubresourceRoute =
  | { readonly kind: 'group-list' }
  | { readonly kind: 'group' }
  | { readonly kind: 'resource-list'; readonly version: SubresourceVersion }
  | { readonly kind: 'version' | 'healthz' | 'guestfs'; readonly version: SubresourceVersion }
  | {
    readonly kind: 'subresource';
    readonly version: SubresourceVersion;
    readonly namespace: string;
    readonly resource: SubresourceResource;
    readonly name: string;
    /** `pause`, `vnc/screenshot`, `portforward`, ... */
    readonly subresource: string;
    readonly support: Support;
    readonly stream: boolean;
    /** portforward only. */
    readonly port?: number;
    readonly protocol?: 'tcp' | 'udp';
  }
  | { readonly kind: 'expand-vm-spec'; readonly version: SubresourceVersion; readonly namespace: string };

export type RouteResult = { ok: true; route: SubresourceRoute } | { ok: false; code: 400 | 404 | 405; message: string };

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const notFound = (path: string): RouteResult => ({ ok: false, code: 404, message: `the server could not find the requested resource (${path})` });

/** Which route `method path` names in the group. Pure. */
export function routeOf(method: string, path: string): RouteResult {
  const clean = path.replace(/\/+$/, '') || '/';
  if (clean === '/apis') return method === 'GET' ? { ok: true, route: { kind: 'group-list' } } : notAllowed(method, clean);
  const prefix = `/apis/${SUBRESOURCE_GROUP}`;
  if (clean === prefix) return method === 'GET' ? { ok: true, route: { kind: 'group' } } : notAllowed(method, clean);
  if (!clean.startsWith(`${prefix}/`)) return notFound(clean);
  let segs: string[];
  try {
    segs = clean.slice(prefix.length + 1).split('/').map((s) => decodeURIComponent(s));
  } catch {
    return { ok: false, code: 400, message: `${clean}: bad percent-encoding` };
  }
  const version = segs[0] as SubresourceVersion;
  if (!SUBRESOURCE_VERSIONS.includes(version)) return notFound(clean);
  const rest = segs.slice(1);
  if (rest.length === 0) return method === 'GET' ? { ok: true, route: { kind: 'resource-list', version } } : notAllowed(method, clean);
  if (rest.length === 1 && (rest[0] === 'version' || rest[0] === 'healthz' || rest[0] === 'guestfs')) {
    return method === 'GET' ? { ok: true, route: { kind: rest[0], version } } : notAllowed(method, clean);
  }
  if (rest[0] !== 'namespaces' || rest.length < 3) return notFound(clean);
  const namespace = rest[1]!;
  if (!DNS_SUBDOMAIN.test(namespace)) return { ok: false, code: 400, message: `namespace "${namespace}": must be a DNS label` };
  if (rest.length === 3 && rest[2] === 'expand-vm-spec') {
    return method === 'PUT' ? { ok: true, route: { kind: 'expand-vm-spec', version, namespace } } : notAllowed(method, clean);
  }
  const resource = rest[2] as SubresourceResource;
  const table = ROUTES[resource];
  if (!table || rest.length < 5) return notFound(clean);
  const name = rest[3]!;
  if (!DNS_SUBDOMAIN.test(name)) return { ok: false, code: 400, message: `name "${name}": must be a DNS subdomain` };
  const tail = rest.slice(4);
  if (tail[0] === 'portforward') {
    const spec = table.portforward!;
    if (tail.length < 2 || tail.length > 3) return { ok: false, code: 404, message: `${clean}: portforward takes a port and an optional protocol (portforward/PORT[/tcp|udp])` };
    const port = /^\d{1,5}$/.test(tail[1]!) ? Number(tail[1]) : NaN;
    if (!(port >= 1 && port <= 65535)) return { ok: false, code: 400, message: `port "${tail[1]}": must be a number from 1 to 65535` };
    const protocol = (tail[2] ?? 'tcp').toLowerCase();
    if (protocol !== 'tcp' && protocol !== 'udp') return { ok: false, code: 400, message: `protocol "${tail[2]}": must be tcp or udp` };
    if (method !== spec.method) return notAllowed(method, clean);
    return { ok: true, route: { kind: 'subresource', version, namespace, resource, name, subresource: 'portforward', support: spec.support, stream: true, port, protocol } };
  }
  const subresource = tail.join('/');
  const spec = table[subresource];
  if (!spec) return notFound(clean);
  if (method !== spec.method) return notAllowed(method, clean);
  return { ok: true, route: { kind: 'subresource', version, namespace, resource, name, subresource, support: spec.support, stream: spec.stream === true } };
}

function notAllowed(method: string, path: string): RouteResult {
  return { ok: false, code: 405, message: `${method} is not supported on ${path}` };
}

/** Routes virt-api serves without authorization (authorizer.go noAuthEndpoints): discovery, version, health. */
export function needsAuthorization(route: SubresourceRoute): boolean {
  return route.kind === 'subresource' || route.kind === 'expand-vm-spec';
}

export interface ResourceAttributes {
  readonly namespace: string;
  readonly verb: string;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly name?: string;
}

/** The SubjectAccessReview attributes of a route (authorizer.go: PUT → update, GET → get, portforward without its port). */
export function accessOf(route: SubresourceRoute, method: string): ResourceAttributes | undefined {
  const verb = method === 'PUT' ? 'update' : method === 'POST' ? 'create' : method === 'PATCH' ? 'patch' : method === 'DELETE' ? 'delete' : 'get';
  if (route.kind === 'subresource') {
    return { namespace: route.namespace, verb, group: SUBRESOURCE_GROUP, version: route.version, resource: route.resource, subresource: route.subresource, name: route.name };
  }
  if (route.kind === 'expand-vm-spec') return { namespace: route.namespace, verb: method === 'GET' ? 'list' : verb, group: SUBRESOURCE_GROUP, version: route.version, resource: 'expand-vm-spec' };
  return undefined;
}

/** `/apis/subresources.kubevirt.io`: the APIGroup (subresourceAPIGroup(); its name is virt-api's, typo included). */
export function apiGroup(): Record<string, unknown> {
  return {
    kind: 'APIGroup', apiVersion: 'v1', name: 'subresource.kubevirt.io',
    versions: SUBRESOURCE_VERSIONS.map((v) => ({ groupVersion: `${SUBRESOURCE_GROUP}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${SUBRESOURCE_GROUP}/${SUBRESOURCE_VERSIONS[0]}`, version: SUBRESOURCE_VERSIONS[0] },
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }],
  };
}

/** The group as an entry of `/apis` (what kube-apiserver lists: the group's real name). */
export function apiGroupEntry(): Record<string, unknown> {
  return {
    name: SUBRESOURCE_GROUP,
    versions: SUBRESOURCE_VERSIONS.map((v) => ({ groupVersion: `${SUBRESOURCE_GROUP}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${SUBRESOURCE_GROUP}/${SUBRESOURCE_VERSIONS[0]}`, version: SUBRESOURCE_VERSIONS[0] },
  };
}

/** The names virt-api lists for each version (all namespaced, no verbs: discovery only needs them to exist). */
export const DISCOVERED_RESOURCES: readonly string[] = [
  'expand-vm-spec',
  'virtualmachineinstances/vnc', 'virtualmachineinstances/vnc/screenshot', 'virtualmachineinstances/console', 'virtualmachineinstances/portforward',
  'virtualmachineinstances/backup', 'virtualmachineinstances/redefine-checkpoint', 'virtualmachineinstances/pause', 'virtualmachineinstances/unpause',
  'virtualmachineinstances/freeze', 'virtualmachineinstances/unfreeze', 'virtualmachineinstances/reset', 'virtualmachineinstances/softreboot',
  'virtualmachines/start', 'virtualmachines/stop', 'virtualmachines/restart', 'virtualmachines/migrate', 'virtualmachines/expand-spec',
  'virtualmachines/objectgraph', 'virtualmachines/evacuate/cancel',
  'virtualmachineinstances/guestosinfo', 'virtualmachineinstances/userlist', 'virtualmachineinstances/filesystemlist',
  'virtualmachineinstances/addvolume', 'virtualmachineinstances/removevolume', 'virtualmachineinstances/objectgraph',
  'virtualmachineinstances/sev/fetchcertchain', 'virtualmachineinstances/sev/querylaunchmeasurement', 'virtualmachineinstances/sev/setupsession',
  'virtualmachineinstances/sev/injectlaunchsecret', 'virtualmachineinstances/evacuate/cancel',
];

/** A version's APIResourceList entries (the same for each version served; none for another). */
export function discoveredResources(version: string): APIResource[] {
  if (!(SUBRESOURCE_VERSIONS as readonly string[]).includes(version)) return [];
  return DISCOVERED_RESOURCES.map((name) => ({ name, singularName: '', namespaced: true, kind: '', verbs: [] }));
}

/** `/apis/subresources.kubevirt.io/VERSION`: the APIResourceList. */
export function apiResourceList(version: SubresourceVersion): Record<string, unknown> {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${SUBRESOURCE_GROUP}/${version}`, resources: discoveredResources(version) };
}

/** `/apis`: the APIGroupList with the one group. */
export function apiGroupList(): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup()] };
}
