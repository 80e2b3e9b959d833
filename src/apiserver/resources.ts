// The resources the server serves: the built-in kinds qvirt uses and, registered at runtime, the
// custom resources of established CRDs. One `ResourceDef` per group+resource; objects of a resource
// are stored once (in its storage version) and served under every version the resource lists.
import type { CompiledSchema } from './schema-validation.ts';
import type { FieldGetter } from './field-selector.ts';

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceDef {
  readonly group: string;
  /** Served versions, storage version first. */
  readonly versions: readonly string[];
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly statusSubresource: boolean;
  readonly scale: ScaleSubresource | undefined;
  /** Built-in kinds get strategic merge patch and their own table columns. */
  readonly builtin: boolean;
  /** Additional printer columns per version (custom resources). */
  readonly columns: ReadonlyMap<string, readonly PrinterColumn[]>;
  /** Structural schemas per version (custom resources). */
  readonly schemas: ReadonlyMap<string, CompiledSchema>;
  readonly fieldGetter: FieldGetter;
  /**
   * Built-in kinds: the fields a selector may name besides metadata.name and metadata.namespace.
   * Kinds without any answer an unknown one as kube-apiserver's default field label conversion does.
   */
  readonly fieldLabels?: readonly string[];
  /** Deprecated versions (custom resources) → the warning every request to them gets (kube-apiserver's `Warning: 299`). */
  readonly deprecations?: ReadonlyMap<string, string>;
  /** Subresources served besides status and scale, which are not supported (listed for discovery only). */
  readonly verbs: readonly string[];
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

/** `group/plural`, the store's and the registry's key for a resource. */
export const resourceKey = (group: string, plural: string): string => `${group}/${plural}`;

export const storageVersion = (r: ResourceDef): string => r.versions[0]!;
export const apiVersionFor = (group: string, version: string): string => (group ? `${group}/${version}` : version);

function dig(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

const scalar = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : typeof v === 'object' ? undefined : String(v));

/** `metadata.name`, `metadata.namespace` and any scalar under metadata, plus the listed fields. */
export function fieldGetterFor(extra: readonly string[]): FieldGetter {
  const allowed = new Set(extra);
  return (obj, field) => {
    if (field.startsWith('metadata.') || allowed.has(field)) {
      const v = scalar(dig(obj, field.split('.')));
      if (v !== undefined) return v;
      return field.startsWith('metadata.') || allowed.has(field) ? '' : undefined;
    }
    return undefined;
  };
}

/** Fields a selector may name on a resource: metadata.* and the resource's own list. */
export function selectableField(r: ResourceDef, field: string): boolean {
  return field === 'metadata.name' || field === 'metadata.namespace' || field.startsWith('metadata.') || r.fieldGetter({}, field) !== undefined;
}

interface BuiltinSpec {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced?: boolean;
  shortNames?: string[];
  status?: boolean;
  scale?: ScaleSubresource;
  fields?: string[];
  singular?: string;
  categories?: string[];
}

function builtin(s: BuiltinSpec): ResourceDef {
  return {
    group: s.group,
    versions: [s.version],
    plural: s.plural,
    singular: s.singular ?? s.kind.toLowerCase(),
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced ?? true,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    statusSubresource: s.status ?? false,
    scale: s.scale,
    builtin: true,
    columns: new Map(),
    schemas: new Map(),
    fieldGetter: fieldGetterFor(s.fields ?? []),
    fieldLabels: s.fields ?? [],
    verbs: ALL_VERBS,
  };
}

const replicasScale: ScaleSubresource = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' };

export const BUILTIN_RESOURCES: readonly ResourceDef[] = [
  builtin({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'], status: true, fields: ['status.phase'] }),
  builtin({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', shortNames: ['po'], status: true, categories: ['all'],
    fields: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'] }),
  builtin({ group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], status: true, fields: ['spec.unschedulable'] }),
  builtin({ group: '', version: 'v1', plural: 'events', kind: 'Event', shortNames: ['ev'],
    fields: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'] }),
  builtin({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret', fields: ['type'] }),
  builtin({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', shortNames: ['cm'] }),
  builtin({ group: '', version: 'v1', plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', shortNames: ['pvc'], status: true }),
  // Stored and served (a claim's volume, read by the node agent for hotplug); nothing binds or provisions them.
  builtin({ group: '', version: 'v1', plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false, shortNames: ['pv'], status: true }),
  builtin({ group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', shortNames: ['sa'] }),
  builtin({ group: '', version: 'v1', plural: 'services', kind: 'Service', shortNames: ['svc'], status: true, categories: ['all'] }),
  builtin({ group: 'events.k8s.io', version: 'v1', plural: 'events', kind: 'Event', shortNames: ['ev'], fields: ['regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'type', 'reportingController'] }),
  builtin({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease' }),
  // Served with kube-apiserver's system classes and its Priority admission of pods (priority.ts).
  builtin({ group: 'scheduling.k8s.io', version: 'v1', plural: 'priorityclasses', kind: 'PriorityClass', namespaced: false, shortNames: ['pc'] }),
  builtin({ group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', shortNames: ['deploy'], status: true, scale: replicasScale, categories: ['all'] }),
  builtin({ group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', shortNames: ['ds'], status: true, categories: ['all'] }),
  builtin({ group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', shortNames: ['rs'], status: true, scale: replicasScale, categories: ['all'] }),
  builtin({ group: 'apps', version: 'v1', plural: 'controllerrevisions', kind: 'ControllerRevision' }),
  // RBAC objects are stored and served (qvirt install applies them); the embedded server does not enforce them.
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', kind: 'ClusterRole', namespaced: false }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role' }),
  builtin({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', kind: 'RoleBinding' }),
  // Stored and served (qvirt install applies it, virt-controller sets its caBundle); the embedded server calls no webhooks.
  builtin({ group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false }),
  // Stored and served (qvirt install applies virt-api's); the embedded server proxies to no APIService:
  // it serves its aggregated groups in process (aggregated-api.ts).
  builtin({ group: 'apiregistration.k8s.io', version: 'v1', plural: 'apiservices', kind: 'APIService', namespaced: false, status: true }),
  builtin({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd', 'crds'], status: true, singular: 'customresourcedefinition' }),
];

/** The resources being served, looked up by group+plural or by group+version+kind. */
export class Registry {
  private readonly byKey = new Map<string, ResourceDef>();
  constructor() {
    for (const r of BUILTIN_RESOURCES) this.add(r);
  }
  add(r: ResourceDef): void {
    this.byKey.set(resourceKey(r.group, r.plural), r);
  }
  remove(group: string, plural: string): void {
    const r = this.byKey.get(resourceKey(group, plural));
    if (r && !r.builtin) this.byKey.delete(resourceKey(group, plural));
  }
  get(group: string, plural: string): ResourceDef | undefined {
    return this.byKey.get(resourceKey(group, plural));
  }
  /** The resource served at group/version/plural, if that version is served. */
  lookup(group: string, version: string, plural: string): ResourceDef | undefined {
    const r = this.byKey.get(resourceKey(group, plural));
    return r && r.versions.includes(version) ? r : undefined;
  }
  byKind(group: string, kind: string): ResourceDef | undefined {
    for (const r of this.byKey.values()) if (r.group === group && r.kind === kind) return r;
    return undefined;
  }
  all(): ResourceDef[] {
    return [...this.byKey.values()];
  }
  /** group → versions (storage/preferred first), in a stable order: built-in groups first. */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const r of this.byKey.values()) {
      const vs = out.get(r.group) ?? [];
      for (const v of r.versions) if (!vs.includes(v)) vs.push(v);
      out.set(r.group, vs);
    }
    return out;
  }
}
