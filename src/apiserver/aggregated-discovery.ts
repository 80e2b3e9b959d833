// Aggregated discovery (apidiscovery.k8s.io/v2): every group's versions and resources in one
// document at `/apis` (and the core group's at `/api`), as kube-apiserver has served it since 1.30.
// kubectl and client-go ask for it first; a server that answers the legacy APIGroupList instead
// costs each fresh client one more request per group version (about thirty here), and each kubectl
// a test or a user runs against a server it has no discovery cache for pays them.
//
// The documents are converted from the legacy APIResourceLists the server already serves, as
// kube-aggregator converts an aggregated APIService that offers only the legacy format: a
// `plural/sub` entry becomes a subresource of `plural`.
import type { APIResource } from '../api/kube.ts';

/** The legacy documents one group is made from: its versions, preferred first, each with its APIResourceList. */
export interface LegacyGroup {
  readonly name: string;
  readonly versions: ReadonlyArray<{ readonly version: string; readonly resources: readonly APIResource[] }>;
}


/** The media type a client names to get these documents, and the server answers with. */
export const AGGREGATED_DISCOVERY_JSON = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Whether an Accept header asks for aggregated discovery v2 in JSON (among other types). Pure. */
export function wantsAggregatedDiscovery(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((item) => {
    const [type, ...params] = item.split(';').map((s) => s.trim().toLowerCase());
    if (type !== 'application/json') return false;
    const p = new Map(params.map((kv) => { const i = kv.indexOf('='); return [kv.slice(0, i), kv.slice(i + 1)] as const; }));
    return p.get('g') === 'apidiscovery.k8s.io' && p.get('v') === 'v2' && p.get('as') === 'APIGroupDiscoveryList'.toLowerCase();
  });
}

interface ResourceDiscovery {
  resource: string;
  responseKind: { group: string; version: string; kind: string };
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: Array<{ subresource: string; responseKind: { group: string; version: string; kind: string }; verbs: string[] }>;
}

/**
 * One version's resources in v2 form: subresources under their resource. A response kind's group and
 * version are the entry's own, empty when it names none (kube-apiserver's built-ins). Pure.
 */
export function versionDiscovery(version: string, resources: readonly APIResource[]): { version: string; resources: ResourceDiscovery[]; freshness: 'Current' } {
  const kindOf = (r: APIResource) => ({ group: r.group ?? '', version: r.version ?? '', kind: r.kind });
  const byName = new Map<string, ResourceDiscovery>();
  for (const r of resources) {
    if (r.name.includes('/')) continue;
    const d: ResourceDiscovery = {
      resource: r.name,
      responseKind: kindOf(r),
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName || r.kind.toLowerCase(),
      verbs: [...r.verbs],
    };
    if (r.shortNames?.length) d.shortNames = [...r.shortNames];
    if (r.categories?.length) d.categories = [...r.categories];
    byName.set(r.name, d);
  }
  for (const r of resources) {
    const slash = r.name.indexOf('/');
    if (slash < 0) continue;
    const parentName = r.name.slice(0, slash);
    // A subresource whose resource the list does not serve (virt-api's: `virtualmachineinstances/console`
    // without `virtualmachineinstances`): a resource entry of its own with no verbs, as kube-aggregator makes it.
    let parent = byName.get(parentName);
    if (!parent) {
      parent = { resource: parentName, responseKind: { group: '', version: '', kind: '' }, scope: r.namespaced ? 'Namespaced' : 'Cluster', singularResource: '', verbs: [] };
      byName.set(parentName, parent);
    }
    (parent.subresources ??= []).push({ subresource: r.name.slice(slash + 1), responseKind: kindOf(r), verbs: [...r.verbs] });
  }
  return { version, resources: [...byName.values()], freshness: 'Current' };
}

/** The APIGroupDiscoveryList of these groups, in their order. Pure. */
export function aggregatedDiscovery(groups: readonly LegacyGroup[]): object {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((g) => ({
      metadata: g.name ? { name: g.name } : {},
      versions: g.versions.map((v) => versionDiscovery(v.version, v.resources)),
    })),
  };
}
