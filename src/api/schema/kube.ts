/**
 * Schemas of the Kubernetes shapes KubeVirt's objects embed (see `../kube.ts`). Shapes qvirt only
 * passes through (affinity, topology spread constraints, CDI DataVolume specs) are opaque objects:
 * kept verbatim, checked to be objects, not spelled out in the CRD.
 */
import type {
  DownwardAPIVolumeFile,
  ExecAction,
  HTTPGetAction,
  HTTPHeader,
  K8sPersistentVolumeClaimVolumeSource,
  LocalObjectReference,
  ManagedFieldsEntry,
  ObjectFieldSelector,
  ObjectMeta,
  OwnerReference,
  PodDNSConfig,
  ResourceFieldSelector,
  TCPSocketAction,
  Toleration,
} from '../kube.ts';
import type { LabelSelector, LabelSelectorRequirement } from '../label-selector.ts';
import { arr, bool, enumOf, int32, int64, intOrString, looseObject, map, object, opaque, quantity, str, stringMap, time } from './dsl.ts';

export const OwnerReferenceSchema = object<OwnerReference>()(
  {
    apiVersion: str(),
    kind: str(),
    name: str(),
    uid: str(),
    controller: bool(),
    blockOwnerDeletion: bool(),
  },
  { required: ['apiVersion', 'kind', 'name', 'uid'] },
);

export const ManagedFieldsEntrySchema = object<ManagedFieldsEntry>()({
  manager: str(),
  operation: str(),
  apiVersion: str(),
  time: time(),
  fieldsType: str(),
  fieldsV1: opaque(),
  subresource: str(),
});

/**
 * `metav1.ObjectMeta`. Checked by `parse.ts`; in CRDs emitted as KubeVirt does — an opaque object the
 * API server validates itself (nullable + preserved when embedded in a template).
 */
export const ObjectMetaSchema = object<ObjectMeta>()(
  {
    name: str(),
    generateName: str(),
    namespace: str(),
    selfLink: str(),
    uid: str(),
    resourceVersion: str(),
    generation: int64(),
    creationTimestamp: time(),
    deletionTimestamp: time(),
    deletionGracePeriodSeconds: int64(),
    labels: stringMap(),
    annotations: stringMap(),
    ownerReferences: arr(OwnerReferenceSchema),
    finalizers: arr(str()),
    managedFields: arr(ManagedFieldsEntrySchema),
  },
  { crdOpaque: true },
);

/**
 * ObjectMeta inside a template: kept verbatim (`nullable`, unknown fields preserved, as KubeVirt's
 * CRDs do), with the fields CEL rules read (labels for the ReplicaSet selector check) spelled out.
 * Label keys/values are bounded as Kubernetes bounds them, which also bounds CEL cost.
 */
export const TemplateObjectMetaSchema = looseObject(
  {
    name: str(),
    generateName: str(),
    namespace: str(),
    labels: map(str({ maxLength: 63 }), { maxProperties: 256 }),
    annotations: stringMap(),
  },
  { nullable: true, preserveUnknownFields: true },
);

export const LabelSelectorRequirementSchema = object<LabelSelectorRequirement>()(
  {
    key: str({ maxLength: 317 }),
    operator: enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: arr(str({ maxLength: 63 }), { listType: 'atomic', maxItems: 64 }),
  },
  { required: ['key', 'operator'] },
);

/** `metav1.LabelSelector`, bounded (keys, values, counts) so CEL rules over it stay cheap. */
export const LabelSelectorSchema = object<LabelSelector>()({
  matchLabels: map(str({ maxLength: 63 }), { maxProperties: 64 }),
  matchExpressions: arr(LabelSelectorRequirementSchema, { listType: 'atomic', maxItems: 64 }),
});

export const LocalObjectReferenceSchema = object<LocalObjectReference>()({ name: str() });

export const TolerationSchema = object<Toleration>()({
  key: str(),
  operator: enumOf(['Exists', 'Equal']),
  value: str(),
  effect: enumOf(['NoSchedule', 'PreferNoSchedule', 'NoExecute', '']),
  tolerationSeconds: int64(),
});

export const AffinitySchema = opaque({ description: 'Kubernetes pod Affinity, passed to the launcher pod verbatim.' });
export const TopologySpreadConstraintSchema = opaque({
  description: 'Kubernetes TopologySpreadConstraint, passed to the launcher pod verbatim.',
});
export const DataVolumeSpecSchema = opaque({ description: 'CDI DataVolumeSpec (cdi.kubevirt.io/v1beta1).' });

export const PodDNSConfigSchema = object<PodDNSConfig>()({
  nameservers: arr(str(), { listType: 'atomic' }),
  searches: arr(str(), { listType: 'atomic' }),
  options: arr(looseObject({ name: str(), value: str() })),
});

export const ExecActionSchema = object<ExecAction>()({ command: arr(str(), { listType: 'atomic' }) });

export const HTTPHeaderSchema = object<HTTPHeader>()({ name: str(), value: str() }, { required: ['name', 'value'] });

export const HTTPGetActionSchema = object<HTTPGetAction>()(
  {
    path: str(),
    port: intOrString(),
    host: str(),
    scheme: enumOf(['HTTP', 'HTTPS']),
    httpHeaders: arr(HTTPHeaderSchema, { listType: 'atomic' }),
  },
  { required: ['port'] },
);

export const TCPSocketActionSchema = object<TCPSocketAction>()({ port: intOrString(), host: str() }, { required: ['port'] });

export const ObjectFieldSelectorSchema = object<ObjectFieldSelector>()(
  { apiVersion: str(), fieldPath: str() },
  { required: ['fieldPath'] },
);

export const ResourceFieldSelectorSchema = object<ResourceFieldSelector>()(
  { containerName: str(), resource: str(), divisor: quantity() },
  { required: ['resource'] },
);

export const DownwardAPIVolumeFileSchema = object<DownwardAPIVolumeFile>()(
  {
    path: str(),
    fieldRef: ObjectFieldSelectorSchema,
    resourceFieldRef: ResourceFieldSelectorSchema,
    mode: int32(),
  },
  { required: ['path'] },
);

export const K8sPersistentVolumeClaimVolumeSourceSchema = object<K8sPersistentVolumeClaimVolumeSource>()(
  { claimName: str(), readOnly: bool() },
  { required: ['claimName'] },
);
