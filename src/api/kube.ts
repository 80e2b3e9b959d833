/**
 * The Kubernetes shapes that KubeVirt's objects embed, as they appear on the wire (JSON names of
 * k8s.io/api and k8s.io/apimachinery). Deliberately minimal: `src/api` must not pull in
 * `@kubernetes/client-node`. Shapes that qvirt passes through untouched (affinity, probes' HTTP
 * actions, DNS config, ...) are typed loosely but never as `any`.
 */
import type { LabelSelector } from './label-selector.ts';

/** A `resource.Quantity` in its serialized form (`"128Mi"`, `"100m"`, `"1"`); see `quantity.ts`. */
export type Quantity = string;
/** `metav1.Time`: RFC 3339 with second precision, UTC (`2006-01-02T15:04:05Z`). */
export type Time = string;
/** `metav1.Duration` in Go duration syntax (`"1h2m3s"`). */
export type Duration = string;
/** `intstr.IntOrString`. */
export type IntOrString = number | string;
/** `k8s.io/api/core/v1.ResourceList`: resource name → quantity. */
export type ResourceList = Record<string, Quantity>;
/** `k8s.io/api/core/v1.ConditionStatus`. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';
export type PullPolicy = 'Always' | 'Never' | 'IfNotPresent';
export type DNSPolicy = 'ClusterFirstWithHostNet' | 'ClusterFirst' | 'Default' | 'None';
export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';
export type PersistentVolumeAccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod';
export type PersistentVolumeMode = 'Block' | 'Filesystem';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: Time;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  selfLink?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Time | null;
  deletionTimestamp?: Time;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  selfLink?: string;
}

/**
 * An entry of a discovery APIResourceList (metav1.APIResource): what `/apis/GROUP/VERSION` lists.
 * A `plural/sub` name is a subresource; group and version are set only where they differ from the list's.
 */
export interface APIResource {
  readonly name: string;
  readonly singularName?: string;
  readonly namespaced: boolean;
  readonly group?: string;
  readonly version?: string;
  readonly kind: string;
  readonly verbs: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
}

export interface LocalObjectReference {
  name?: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: NodeSelectorTerm }[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  namespaces?: string[];
  topologyKey: string;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface PodAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
  preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: PodAffinityTerm }[];
}

export interface Affinity {
  nodeAffinity?: NodeAffinity;
  podAffinity?: PodAffinity;
  podAntiAffinity?: PodAffinity;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | '';
  tolerationSeconds?: number;
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelector;
  minDomains?: number;
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
  matchLabelKeys?: string[];
}

export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: { name?: string; value?: string }[];
}

export interface ExecAction {
  command?: string[];
}

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface HTTPGetAction {
  path?: string;
  port: IntOrString;
  host?: string;
  scheme?: 'HTTP' | 'HTTPS';
  httpHeaders?: HTTPHeader[];
}

export interface TCPSocketAction {
  port: IntOrString;
  host?: string;
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: Quantity;
}

export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}

/** `k8s.io/api/core/v1.PersistentVolumeClaimVolumeSource`. */
export interface K8sPersistentVolumeClaimVolumeSource {
  claimName: string;
  readOnly?: boolean;
}

export interface TypedLocalObjectReference {
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface PersistentVolumeClaimSpec {
  accessModes?: PersistentVolumeAccessMode[];
  selector?: LabelSelector;
  resources?: { limits?: ResourceList; requests?: ResourceList };
  volumeName?: string;
  storageClassName?: string;
  volumeMode?: PersistentVolumeMode;
  dataSource?: TypedLocalObjectReference;
  dataSourceRef?: TypedLocalObjectReference & { namespace?: string };
  volumeAttributesClassName?: string;
}

/**
 * CDI's `DataVolumeSpec` (cdi.kubevirt.io/v1beta1) as carried inside a VM's `dataVolumeTemplates`.
 * qvirt does not run CDI: sources are kept as opaque objects.
 */
export interface DataVolumeSpec {
  source?: Record<string, unknown>;
  sourceRef?: { kind: string; namespace?: string; name: string };
  pvc?: PersistentVolumeClaimSpec;
  storage?: PersistentVolumeClaimSpec;
  priorityClassName?: string;
  contentType?: string;
  checkpoints?: { previous: string; current: string }[];
  finalCheckpoint?: boolean;
  preallocation?: boolean;
}
