/**
 * CDI's DataVolume (cdi.kubevirt.io/v1beta1) as qvirt reads and writes it: the JSON field names of
 * CDI's `containerized-data-importer-api/pkg/apis/core/v1beta1/types.go`, its phase and condition
 * names, and the annotations and labels KubeVirt's VM controller and CDI put on what they create.
 * On a cluster CDI serves the kind; the local mode serves it itself (`crd.ts`, controller/datavolume).
 */
import type { ObjectMeta, PersistentVolumeClaimSpec } from '../kube.ts';

export const CDI_GROUP = 'cdi.kubevirt.io';
export const CDI_VERSION = 'v1beta1';
export const CDI_API_VERSION = `${CDI_GROUP}/${CDI_VERSION}`;

export const DataVolumeResource = { kind: 'DataVolume', listKind: 'DataVolumeList', plural: 'datavolumes', singular: 'datavolume', shortNames: ['dv', 'dvs'] } as const;

export interface DataVolumeSourceHTTP {
  url: string;
  /** A Secret with `accessKeyId` and `secretKey`: HTTP basic auth. */
  secretRef?: string;
  /** A ConfigMap whose values are PEM CA certificates to trust. */
  certConfigMap?: string;
  extraHeaders?: string[];
  secretExtraHeaders?: string[];
  checksum?: string;
  insecureSkipVerify?: boolean;
}

export interface DataVolumeSource {
  http?: DataVolumeSourceHTTP;
  s3?: { url: string; secretRef?: string; certConfigMap?: string };
  gcs?: { url: string; secretRef?: string };
  registry?: { url?: string; imageStream?: string; pullMethod?: 'pod' | 'node'; secretRef?: string; certConfigMap?: string; platform?: { architecture?: string } };
  pvc?: { namespace: string; name: string };
  upload?: Record<string, never>;
  blank?: Record<string, never>;
  imageio?: Record<string, unknown>;
  vddk?: Record<string, unknown>;
  snapshot?: { namespace: string; name: string };
}

export interface DataVolumeSpec {
  source?: DataVolumeSource;
  sourceRef?: { kind: string; namespace?: string; name: string };
  pvc?: PersistentVolumeClaimSpec;
  storage?: PersistentVolumeClaimSpec;
  priorityClassName?: string;
  contentType?: 'kubevirt' | 'archive' | '';
  preallocation?: boolean;
}

export const DataVolumePhase = {
  Unset: '',
  Pending: 'Pending',
  PVCBound: 'PVCBound',
  ImportScheduled: 'ImportScheduled',
  ImportInProgress: 'ImportInProgress',
  CloneScheduled: 'CloneScheduled',
  CloneInProgress: 'CloneInProgress',
  UploadScheduled: 'UploadScheduled',
  UploadReady: 'UploadReady',
  WaitForFirstConsumer: 'WaitForFirstConsumer',
  PendingPopulation: 'PendingPopulation',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Unknown: 'Unknown',
  Paused: 'Paused',
} as const;
export type DataVolumePhase = (typeof DataVolumePhase)[keyof typeof DataVolumePhase];

export const DataVolumeConditionType = { Ready: 'Ready', Bound: 'Bound', Running: 'Running' } as const;
export type DataVolumeConditionType = (typeof DataVolumeConditionType)[keyof typeof DataVolumeConditionType];

export interface DataVolumeCondition {
  type: DataVolumeConditionType;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
  reason?: string;
  message?: string;
}

export interface DataVolumeStatus {
  claimName?: string;
  phase?: DataVolumePhase;
  /** `N.NN%`, or `N/A` when unknown. */
  progress?: string;
  restartCount?: number;
  conditions?: DataVolumeCondition[];
}

export interface DataVolume {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: DataVolumeSpec;
  status?: DataVolumeStatus;
}

export const CdiAnnotations = {
  /** KubeVirt's GenerateDataVolumeFromTemplate: CDI may adopt an existing claim of the DV's name. */
  allowClaimAdoption: 'cdi.kubevirt.io/allowClaimAdoption',
  /** On the claim: the DataVolume it was made for (CDI's AnnCreatedForDataVolume carries the uid). */
  createdForDataVolume: 'cdi.kubevirt.io/createdForDataVolume',
  /** On the claim: the import source (CDI's AnnSource: http, blank, upload, ...). */
  source: 'cdi.kubevirt.io/storage.import.source',
  /** On the claim: the import's endpoint (CDI's AnnEndpoint). */
  endpoint: 'cdi.kubevirt.io/storage.import.endpoint',
  /** On the claim: the pod (here: the local importer) phase, Pending/Running/Succeeded/Failed (CDI's AnnPodPhase). */
  podPhase: 'cdi.kubevirt.io/storage.pod.phase',
  /** On the claim: the upload server can receive data (CDI's AnnPodReady; virtctl image-upload waits on it). */
  podReady: 'cdi.kubevirt.io/storage.pod.ready',
  /** On the claim: restarts of the import (CDI's AnnPodRestarts). */
  podRestarts: 'cdi.kubevirt.io/storage.pod.restarts',
  /** On the claim: the upload token's target (CDI's AnnUploadRequest). */
  uploadRequest: 'cdi.kubevirt.io/storage.upload.target',
  /** On an upload claim: what the upload holds, `kubevirt` (a disk image) or `archive` (CDI's AnnContentType). */
  contentType: 'cdi.kubevirt.io/storage.contentType',
  /** Where the claim is being populated from (CDI's AnnPopulatedFor is the DV name). */
  populatedFor: 'cdi.kubevirt.io/storage.populatedFor',
  /** On a DV or claim: bind at once, ignoring WaitForFirstConsumer (virtctl's --force-bind). */
  bindImmediateRequested: 'cdi.kubevirt.io/storage.bind.immediate.requested',
  /** On the DV: KubeVirt's "create the DataVolumes at once" switch on the VM (`kubevirt.io/immediate-data-volume-creation`). */
  immediateDataVolumeCreation: 'kubevirt.io/immediate-data-volume-creation',
} as const;

/** On a claim: let CDI's PVC rendering webhook apply the storage profile (KubeVirt's LabelApplyStorageProfile). */
export const LABEL_APPLY_STORAGE_PROFILE = 'cdi.kubevirt.io/applyStorageProfile';

/** CDI's default global filesystem overhead (`common.DefaultGlobalOverhead`, 6 % since CDI v1.64 — 5.5 % before). */
export const DEFAULT_FILESYSTEM_OVERHEAD = 0.06;
/** CDI's `util.DefaultAlignBlockSize`: images are sized in whole MiB. */
export const ALIGN_BLOCK_SIZE = 1024 * 1024;

/** CDI's upload API group (cdi-apiserver's UploadTokenRequest) and the upload proxy's paths. */
export const UPLOAD_GROUP = 'upload.cdi.kubevirt.io';
export const UPLOAD_VERSION = 'v1beta1';
export const UploadProxyPaths = { sync: '/v1beta1/upload', async: '/v1beta1/upload-async', form: '/v1beta1/upload-form', formAsync: '/v1beta1/upload-form-async' } as const;

export interface UploadTokenRequest {
  apiVersion: string;
  kind: 'UploadTokenRequest';
  metadata?: ObjectMeta;
  spec: { pvcName: string };
  status?: { token?: string };
}

/** CDI's cluster-wide CDIConfig `config`: virtctl reads status.uploadProxyURL from it. */
export const CdiConfigResource = { kind: 'CDIConfig', listKind: 'CDIConfigList', plural: 'cdiconfigs', singular: 'cdiconfig', name: 'config' } as const;
