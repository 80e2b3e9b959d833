// Discovery documents: /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>, /version,
// and the OpenAPI v3 index and per-group-version documents kubectl reads. The OpenAPI documents
// carry paths only (no schemas): enough for kubectl to learn that the server validates fields
// itself (the `fieldValidation` query parameter on PATCH), so `kubectl apply` skips client-side
// validation and asks for server-side validation instead, and falls back to its compiled-in
// strategic-merge metadata for built-in kinds and to JSON merge patch for custom resources.
// A client that asks for aggregated discovery (`as=APIGroupDiscoveryList`) at /api and /apis gets
// it (aggregated-discovery.ts, made from these documents); the others get these.
import { createHash } from 'node:crypto';
import { apiVersionFor, type Registry, type ResourceDef } from './resources.ts';
import type { LegacyGroup } from './aggregated-discovery.ts';
import type { APIResource } from '../api/kube.ts';

export const SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0+qvirt', gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean', buildDate: '2025-01-01T00:00:00Z', goVersion: 'go1.23.0', compiler: 'gc', platform: 'linux/amd64' } as const;

const GROUP_ORDER = ['', 'apps', 'events.k8s.io', 'coordination.k8s.io', 'scheduling.k8s.io', 'apiextensions.k8s.io'];

function sortedGroups(reg: Registry): [string, string[]][] {
  return [...reg.groups().entries()].sort((a, b) => {
    const ia = GROUP_ORDER.indexOf(a[0]);
    const ib = GROUP_ORDER.indexOf(b[0]);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a[0].localeCompare(b[0]);
  });
}

export function apiVersions(serverAddress: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function groupDoc(name: string, versions: string[]): object {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(reg: Registry): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: sortedGroups(reg).filter(([g]) => g !== '').map(([g, vs]) => groupDoc(g, vs)) };
}

/**
 * The groups the registry serves that `include` names (the core group first, then /apis's order),
 * with each version's APIResourceList entries, for aggregated discovery. A custom resource's entries (and its status's)
 * name their group and version: kube-apiserver's v2 documents give a CRD's kinds in full, and a
 * built-in's with group and version empty, as its legacy entries leave them.
 */
export function legacyGroups(reg: Registry, include: (group: string) => boolean): LegacyGroup[] {
  return sortedGroups(reg).filter(([name]) => include(name)).map(([name, versions]) => {
    const custom = new Set(reg.all().filter((r) => r.group === name && !r.builtin).map((r) => r.plural));
    return {
      name,
      versions: versions.map((version) => {
        const entries = (apiResourceList(reg, name, version) as { resources?: APIResource[] } | undefined)?.resources ?? [];
        return { version, resources: entries.map((e) => (e.group === undefined && custom.has(e.name.split('/')[0]!) ? { ...e, group: name, version } : e)) };
      }),
    };
  });
}

export function apiGroup(reg: Registry, group: string): object | undefined {
  const vs = reg.groups().get(group);
  if (!vs || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(group, vs) };
}

function resourceEntries(r: ResourceDef): object[] {
  const out: object[] = [];
  const main: Record<string, unknown> = { name: r.plural, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: r.verbs };
  if (r.shortNames.length) main.shortNames = r.shortNames;
  if (r.categories.length) main.categories = r.categories;
  main.storageVersionHash = createHash('sha256').update(`${r.group}/${r.versions[0]}/${r.kind}`).digest('base64').slice(0, 11);
  out.push(main);
  if (r.statusSubresource) out.push({ name: `${r.plural}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['get', 'patch', 'update'] });
  if (r.group === '' && r.plural === 'pods') out.push({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] }, { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] }, { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
  if (r.scale) out.push({ name: `${r.plural}/scale`, singularName: '', namespaced: r.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
  return out;
}

export function apiResourceList(reg: Registry, group: string, version: string): object | undefined {
  const rs = reg.all().filter((r) => r.group === group && r.versions.includes(version));
  if (!rs.length) return undefined;
  rs.sort((a, b) => a.plural.localeCompare(b.plural));
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionFor(group, version), resources: rs.flatMap(resourceEntries) };
}

const gvPath = (group: string, version: string): string => (group ? `apis/${group}/${version}` : `api/${version}`);

/** One OpenAPI v3 document per group-version, with a PATCH operation per resource. */
export function openApiV3Doc(reg: Registry, group: string, version: string): object | undefined {
  const rs = reg.all().filter((r) => r.group === group && r.versions.includes(version));
  if (!rs.length) return undefined;
  const paths: Record<string, object> = {};
  const param = (name: string): object => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  for (const r of rs) {
    const base = `/${gvPath(group, version)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}`;
    const gvk = { group, version, kind: r.kind };
    const op = (verb: string): object => ({
      operationId: `${verb}${r.kind}`,
      'x-kubernetes-action': verb,
      'x-kubernetes-group-version-kind': gvk,
      parameters: [param('dryRun'), param('fieldManager'), param('fieldValidation')],
      responses: { '200': { description: 'OK' } },
    });
    paths[base] = { post: op('post'), get: { ...op('list'), parameters: [] } };
    paths[`${base}/{name}`] = { get: { ...op('get'), parameters: [] }, put: op('put'), patch: { ...op('patch'), parameters: [param('dryRun'), param('fieldManager'), param('fieldValidation'), param('force')] }, delete: op('delete') };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths, components: { schemas: {} } };
}

export function openApiV3Index(reg: Registry): { paths: Record<string, { serverRelativeURL: string }> } {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [group, versions] of reg.groups()) {
    for (const v of versions) {
      const doc = openApiV3Doc(reg, group, v);
      const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase();
      paths[gvPath(group, v)] = { serverRelativeURL: `/openapi/v3/${gvPath(group, v)}?hash=${hash}` };
    }
  }
  return { paths };
}
