/**
 * The DataVolume CRD as CDI's operator installs it (`datavolumes.cdi.kubevirt.io`, from the
 * kubebuilder markers on `DataVolume` in CDI's v1beta1 types.go): short names dv/dvs, category
 * all, printer columns Phase, Progress, Restarts, Age, a status subresource. The schema has CDI's
 * structure for what qvirt reads (sources, pvc/storage, status); the claim specs keep unknown
 * fields as CDI's generated schema lists every PersistentVolumeClaimSpec field. Installed by the
 * local mode only: on a cluster CDI owns this CRD.
 */
import type { CustomResourceDefinition } from '../schema/crd-types.ts';
import type { JSONSchemaProps } from '../schema/openapi.ts';
import { CDI_GROUP, CDI_VERSION, CdiConfigResource, DataVolumePhase, DataVolumeResource as R } from './types.ts';

const str = (description?: string): JSONSchemaProps => ({ type: 'string', ...(description ? { description } : {}) });
const obj = (properties: Record<string, JSONSchemaProps>, required?: string[], description?: string): JSONSchemaProps => ({
  type: 'object', properties, ...(required ? { required } : {}), ...(description ? { description } : {}),
});
const strings: JSONSchemaProps = { type: 'array', items: { type: 'string' } };
const emptyObject: JSONSchemaProps = { type: 'object' };
const quantity: JSONSchemaProps = { anyOf: [{ type: 'integer' }, { type: 'string' }], pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$', 'x-kubernetes-int-or-string': true };

const claimSpec = (description: string): JSONSchemaProps => ({
  ...obj({
    accessModes: { ...strings, description: 'accessModes contains the desired access modes the volume should have.' },
    resources: obj({ requests: { type: 'object', additionalProperties: quantity }, limits: { type: 'object', additionalProperties: quantity } }),
    storageClassName: str(),
    volumeMode: str('volumeMode defines what type of volume is required by the claim (Filesystem, Block).'),
    volumeName: str(),
  }, undefined, description),
  'x-kubernetes-preserve-unknown-fields': true,
});

const httpLike = obj({ url: str('URL is the URL of the http(s) endpoint'), secretRef: str('SecretRef A Secret reference, the secret should contain accessKeyId (user name) base64 encoded, and secretKey (password) also base64 encoded'), certConfigMap: str('CertConfigMap is a configmap reference, containing a Certificate Authority(CA) public key, and a base64 encoded pem certificate'), extraHeaders: strings, secretExtraHeaders: strings, checksum: str(), insecureSkipVerify: { type: 'boolean' } }, ['url']);

const source = obj({
  http: httpLike,
  s3: obj({ url: str(), secretRef: str(), certConfigMap: str() }, ['url']),
  gcs: obj({ url: str(), secretRef: str() }, ['url']),
  registry: obj({ url: str(), imageStream: str(), pullMethod: str(), secretRef: str(), certConfigMap: str(), platform: obj({ architecture: str() }) }),
  pvc: obj({ namespace: str('The namespace of the source PVC'), name: str('The name of the source PVC') }, ['name', 'namespace']),
  upload: emptyObject,
  blank: emptyObject,
  imageio: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  vddk: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  snapshot: obj({ namespace: str(), name: str() }, ['name', 'namespace']),
}, undefined, 'DataVolumeSource represents the source for our Data Volume, this can be HTTP, Imageio, S3, GCS, Registry or an existing PVC');

const condition = obj({
  type: str('type of condition ie. Ready|Bound|Running.'),
  status: str('status of the condition, one of True, False, Unknown'),
  lastTransitionTime: { type: 'string', format: 'date-time' },
  lastHeartbeatTime: { type: 'string', format: 'date-time' },
  reason: str("reason for the condition's last transition"),
  message: str('human-readable message indicating details about last transition'),
}, ['status', 'type']);

const schema: JSONSchemaProps = obj({
  apiVersion: str(),
  kind: str(),
  metadata: { type: 'object' },
  spec: obj({
    source,
    sourceRef: obj({ kind: str(), namespace: str(), name: str() }, ['kind', 'name']),
    pvc: claimSpec('PVC is the PVC specification'),
    storage: claimSpec('Storage is the requested storage specification'),
    priorityClassName: str(),
    contentType: { type: 'string', enum: ['kubevirt', 'archive', ''] },
    checkpoints: { type: 'array', items: obj({ previous: str(), current: str() }, ['current', 'previous']) },
    finalCheckpoint: { type: 'boolean' },
    preallocation: { type: 'boolean' },
  }, undefined, 'DataVolumeSpec defines the DataVolume type specification'),
  status: obj({
    claimName: str('ClaimName is the name of the underlying PVC used by the DataVolume.'),
    phase: { type: 'string', description: `Phase is the current phase of the data volume (${Object.values(DataVolumePhase).filter(Boolean).join(', ')})` },
    progress: str('DataVolumeProgress is the current progress of the DataVolume transfer operation. Value between 0 and 100 inclusive, N/A if not available'),
    restartCount: { type: 'integer', format: 'int32', description: 'RestartCount is the number of times the pod populating the DataVolume has restarted' },
    conditions: { type: 'array', items: condition },
  }),
}, ['spec'], 'DataVolume is an abstraction on top of PersistentVolumeClaims to allow easy population of those PersistentVolumeClaims with relation to VirtualMachines');

export function dataVolumeCustomResourceDefinition(): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${R.plural}.${CDI_GROUP}`, labels: { 'cdi.kubevirt.io': '' } },
    spec: {
      group: CDI_GROUP,
      names: { categories: ['all'], kind: R.kind, listKind: R.listKind, plural: R.plural, shortNames: [...R.shortNames], singular: R.singular },
      scope: 'Namespaced',
      versions: [{
        name: CDI_VERSION,
        served: true,
        storage: true,
        additionalPrinterColumns: [
          { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'The phase the data volume is in' },
          { name: 'Progress', type: 'string', jsonPath: '.status.progress', description: 'Transfer progress in percentage if known, N/A otherwise' },
          { name: 'Restarts', type: 'integer', jsonPath: '.status.restartCount', description: 'The number of times the transfer has been restarted.' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: { openAPIV3Schema: schema },
        subresources: { status: {} },
      }],
    },
  };
}

/**
 * CDI's CDIConfig CRD (cluster scope), with the fields qvirt writes: the local mode keeps one
 * object, `config`, whose status.uploadProxyURL says where its upload proxy listens (virtctl and
 * `qvirt image-upload` read it) and status.filesystemOverhead.global CDI's default.
 */
export function cdiConfigCustomResourceDefinition(): CustomResourceDefinition {
  const C = CdiConfigResource;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${C.plural}.${CDI_GROUP}`, labels: { 'cdi.kubevirt.io': '' } },
    spec: {
      group: CDI_GROUP,
      names: { kind: C.kind, listKind: C.listKind, plural: C.plural, singular: C.singular },
      scope: 'Cluster',
      versions: [{
        name: CDI_VERSION,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: obj({
          apiVersion: str(), kind: str(), metadata: { type: 'object' },
          spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          status: { ...obj({ uploadProxyURL: str('The calculated upload proxy URL'), filesystemOverhead: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }), 'x-kubernetes-preserve-unknown-fields': true },
        }, ['spec']) },
      }],
    },
  };
}
