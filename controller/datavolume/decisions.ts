// The local DataVolume controller's decisions, pure (CDI's datavolume and import controllers, the
// importer's sizing): which source a DataVolume has, the claim CDI makes for it (same name, owned
// by the DV, the size inflated by the filesystem overhead for `spec.storage`), the size the disk
// image gets (CDI's GetUsableSpace of the claim), the DV's status (phase, progress, Bound / Ready /
// Running conditions as CDI writes them) from the claim and the import's state, and the retry
// policy after a failed transfer.
import { ALIGN_BLOCK_SIZE, CDI_API_VERSION, CdiAnnotations, DataVolumeConditionType, DataVolumePhase, type DataVolume, type DataVolumeCondition, type DataVolumeStatus } from '../../src/api/cdi/types.ts';
import { isQuantity, quantityToNumber } from '../../src/api/quantity.ts';
import type { PersistentVolumeClaimSpec } from '../../src/api/kube.ts';

export type SourceKind = 'http' | 'blank' | 'pvc' | 'upload' | 'registry' | 'unsupported';

/** The one source a DataVolume names (CDI's default with no source at all is blank). */
export function sourceKind(dv: DataVolume): SourceKind {
  const s = dv.spec.source;
  if (!s) return dv.spec.sourceRef ? 'unsupported' : 'blank';
  if (s.http) return 'http';
  if (s.blank) return 'blank';
  if (s.pvc) return 'pvc';
  if (s.upload) return 'upload';
  if (s.registry) return 'registry';
  return 'unsupported';
}

const roundUp = (n: number, a: number) => Math.ceil(n / a) * a;
const roundDown = (n: number, a: number) => Math.floor(n / a) * a;

/** CDI's util.GetRequiredSpace: the claim size that holds an image of `bytes` on a filesystem with `overhead`. */
export function requiredSpace(overhead: number, bytes: number): number {
  return Math.ceil(roundUp(bytes, ALIGN_BLOCK_SIZE) * (1 + overhead));
}

/** CDI's util.GetUsableSpace: the image size a filesystem claim of `bytes` holds (whole MiB). */
export function usableSpace(overhead: number, bytes: number): number {
  return roundDown(Math.ceil(bytes / (1 + overhead)), ALIGN_BLOCK_SIZE);
}

export type ClaimResult = { claim: Claim } | { error: string };

export interface Claim {
  apiVersion: 'v1';
  kind: 'PersistentVolumeClaim';
  metadata: { name: string; namespace?: string; labels: Record<string, string>; annotations: Record<string, string>; ownerReferences: { apiVersion: string; kind: string; name: string; uid: string; controller: true; blockOwnerDeletion: true }[] };
  spec: PersistentVolumeClaimSpec;
}

/**
 * The claim CDI creates for a DataVolume: the DV's name and namespace, owned by it (controller),
 * CDI's labels and annotations; `spec.pvc` as written, `spec.storage` completed as CDI's storage
 * profile would (ReadWriteOnce, Filesystem) with the size inflated by the filesystem overhead.
 */
export function claimForDataVolume(dv: DataVolume, overhead: number): ClaimResult {
  const name = dv.metadata?.name ?? '';
  const spec = dv.spec.pvc ?? dv.spec.storage;
  if (!spec) return { error: 'DataVolume.spec: missing pvc or storage' };
  const field = dv.spec.pvc ? 'spec.pvc' : 'spec.storage';
  const size = spec.resources?.requests?.storage;
  const bytes = size !== undefined && isQuantity(size) ? quantityToNumber(size) : undefined;
  if (bytes === undefined || !(bytes > 0)) return { error: `DataVolume.${field}.resources.requests.storage: ${size === undefined ? 'missing' : `invalid quantity ${JSON.stringify(size)}`}` };
  const volumeMode = spec.volumeMode ?? 'Filesystem';
  const requested = dv.spec.storage && volumeMode === 'Filesystem' ? String(requiredSpace(overhead, bytes)) : String(size);
  const claimSpec: PersistentVolumeClaimSpec = {
    ...spec,
    accessModes: spec.accessModes?.length ? spec.accessModes : ['ReadWriteOnce'],
    volumeMode,
    resources: { ...(spec.resources ?? {}), requests: { ...(spec.resources?.requests ?? {}), storage: requested } },
  };
  const kind = sourceKind(dv);
  return {
    claim: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name,
        ...(dv.metadata?.namespace ? { namespace: dv.metadata.namespace } : {}),
        labels: { ...(dv.metadata?.labels ?? {}), app: 'containerized-data-importer', 'app.kubernetes.io/component': 'storage', 'app.kubernetes.io/managed-by': 'cdi-controller' },
        annotations: {
          [CdiAnnotations.createdForDataVolume]: dv.metadata?.uid ?? '',
          [CdiAnnotations.source]: kind === 'pvc' ? 'none' : kind,
          ...(dv.spec.source?.http ? { [CdiAnnotations.endpoint]: dv.spec.source.http.url } : {}),
          ...(kind === 'upload' ? { [CdiAnnotations.uploadRequest]: '' } : {}),
        },
        ownerReferences: [{ apiVersion: CDI_API_VERSION, kind: 'DataVolume', name, uid: dv.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
      spec: claimSpec,
    },
  };
}

/**
 * Whether a claim is a bare upload claim (CDI's upload controller serves it, no DataVolume): it
 * carries the upload target annotation (virtctl image-upload pvc sets it) and was not made for a
 * DataVolume.
 */
export function isBareUploadClaim(claim: { metadata?: { annotations?: Record<string, string>; ownerReferences?: readonly { kind?: string }[] } }): boolean {
  const a = claim.metadata?.annotations ?? {};
  return CdiAnnotations.uploadRequest in a && !(CdiAnnotations.createdForDataVolume in a) && !(claim.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DataVolume');
}

/**
 * The virtual size of the disk image in a claim of `claimBytes` (its request; the local path has
 * exactly that much room): CDI's importer resizes to min(requested, usable), the blank image is
 * created at the usable size. Block claims hold the image as it is, at the claim's size.
 */
export function targetImageSize(claimBytes: number, overhead: number, volumeMode: string = 'Filesystem'): number {
  return volumeMode === 'Block' ? claimBytes : usableSpace(overhead, claimBytes);
}

/** `status.progress` as CDI writes it: two decimals and a percent sign. */
export function formatProgress(done: number, total: number | undefined): string {
  if (!total || total <= 0) return 'N/A';
  return `${(Math.min(1, done / total) * 100).toFixed(2)}%`;
}

/** Where the import of one DV stands (the controller's record of its worker). */
export type ImportState =
  | { readonly state: 'waiting' }
  | { readonly state: 'running'; readonly progress?: string; readonly restarts: number; readonly lastError?: string }
  | { readonly state: 'succeeded'; readonly restarts: number }
  | { readonly state: 'failed'; readonly restarts: number; readonly reason: string; readonly message: string };

export interface ClaimFacts {
  readonly name: string;
  /** Pending, Bound, Lost. */
  readonly phase?: string | undefined;
}

/** CDI's updateCondition: a transition stamps both times; a new reason/message only the heartbeat. */
export function setCondition(list: readonly DataVolumeCondition[] | undefined, type: DataVolumeCondition['type'], status: DataVolumeCondition['status'], message: string, reason: string, now: string): DataVolumeCondition[] {
  const out = [...(list ?? [])];
  const i = out.findIndex((c) => c.type === type);
  const cur = i >= 0 ? out[i]! : undefined;
  let next: DataVolumeCondition;
  if (!cur || cur.status !== status) next = { type, status, lastTransitionTime: now, lastHeartbeatTime: now, message, reason };
  else if (cur.message !== message || cur.reason !== reason) next = { ...cur, message, reason, lastHeartbeatTime: now };
  else next = cur;
  if (i >= 0) out[i] = next; else out.push(next);
  return out;
}

/** A claim size in bytes (0 when it is not a quantity). */
export function claimBytes(q: string | undefined): number {
  return q !== undefined && isQuantity(q) ? quantityToNumber(q) : 0;
}

/** CDI's pod-running reason on the Running condition. */
export const POD_RUNNING_REASON = 'Pod is running';

const scheduledPhase = (k: SourceKind) => (k === 'pvc' ? DataVolumePhase.CloneScheduled : k === 'upload' ? DataVolumePhase.UploadScheduled : DataVolumePhase.ImportScheduled);
const inProgressPhase = (k: SourceKind) => (k === 'pvc' ? DataVolumePhase.CloneInProgress : k === 'upload' ? DataVolumePhase.UploadReady : DataVolumePhase.ImportInProgress);

/**
 * The DV's status: phase, progress, restarts and the Bound/Ready/Running conditions, as CDI's
 * datavolume controller derives them from its claim and its importer pod (here: the import worker).
 * `specError`: the DV cannot be served at all (no size, an unsupported source) — Failed with it.
 */
export function dataVolumeStatus(dv: DataVolume, claim: ClaimFacts | undefined, imp: ImportState, now: string, specError?: string): DataVolumeStatus {
  const prev = dv.status ?? {};
  const kind = sourceKind(dv);
  let conditions = prev.conditions;
  const st: DataVolumeStatus = { ...prev };
  if (specError) {
    st.phase = DataVolumePhase.Failed;
    st.progress = 'N/A';
    conditions = setCondition(conditions, DataVolumeConditionType.Bound, 'False', specError, 'Error', now);
    conditions = setCondition(conditions, DataVolumeConditionType.Ready, 'False', '', '', now);
    conditions = setCondition(conditions, DataVolumeConditionType.Running, 'False', specError, 'Error', now);
    st.conditions = conditions;
    return st;
  }
  if (claim) st.claimName = claim.name;
  // Bound (updateBoundCondition)
  if (!claim) {
    conditions = setCondition(conditions, DataVolumeConditionType.Bound, 'False', 'No PVC found', 'NotFound', now);
  } else if (claim.phase === 'Bound') {
    conditions = setCondition(conditions, DataVolumeConditionType.Bound, 'True', `PVC ${claim.name} Bound`, 'Bound', now);
  } else if (claim.phase === 'Lost') {
    conditions = setCondition(conditions, DataVolumeConditionType.Bound, 'False', 'Claim Lost', 'ClaimLost', now);
  } else {
    conditions = setCondition(conditions, DataVolumeConditionType.Bound, 'False', `PVC ${claim.name} Pending`, 'Pending', now);
  }
  const bound = claim?.phase === 'Bound';
  const restarts = imp.state === 'waiting' ? (prev.restartCount ?? 0) : imp.restarts;
  if (restarts > 0) st.restartCount = restarts; else delete st.restartCount;
  if (!bound && imp.state !== 'succeeded' && imp.state !== 'failed') {
    st.phase = DataVolumePhase.Pending;
    st.progress = 'N/A';
    conditions = setCondition(conditions, DataVolumeConditionType.Ready, 'False', '', '', now);
    conditions = setCondition(conditions, DataVolumeConditionType.Running, 'False', '', '', now);
  } else {
    switch (imp.state) {
      case 'waiting':
        st.phase = scheduledPhase(kind);
        st.progress = 'N/A';
        conditions = setCondition(conditions, DataVolumeConditionType.Ready, 'False', '', '', now);
        conditions = setCondition(conditions, DataVolumeConditionType.Running, 'False', '', '', now);
        break;
      case 'running':
        st.phase = inProgressPhase(kind);
        st.progress = imp.progress ?? 'N/A';
        if (imp.lastError) {
          // Between attempts (the importer pod restarting): Running False with the last error.
          conditions = setCondition(conditions, DataVolumeConditionType.Running, 'False', imp.lastError, 'Error', now);
          conditions = setCondition(conditions, DataVolumeConditionType.Ready, 'False', '', '', now);
        } else {
          conditions = setCondition(conditions, DataVolumeConditionType.Running, 'True', '', POD_RUNNING_REASON, now);
          conditions = setCondition(conditions, DataVolumeConditionType.Ready, 'False', '', 'TransferRunning', now);
        }
        break;
      case 'succeeded':
        st.phase = DataVolumePhase.Succeeded;
        st.progress = '100.0%';
        conditions = setCondition(conditions, DataVolumeConditionType.Running, 'False', kind === 'upload' ? 'Upload Complete' : kind === 'pvc' ? 'Clone Complete' : 'Import Complete', 'Completed', now);
        conditions = setCondition(conditions, DataVolumeConditionType.Ready, 'True', '', '', now);
        break;
      case 'failed':
        st.phase = DataVolumePhase.Failed;
        st.progress = prev.progress ?? 'N/A';
        conditions = setCondition(conditions, DataVolumeConditionType.Running, 'False', imp.message, imp.reason, now);
        conditions = setCondition(conditions, DataVolumeConditionType.Ready, 'False', '', '', now);
        break;
    }
  }
  // CDI's order: Bound, Ready, Running.
  const order: Record<string, number> = { Bound: 0, Ready: 1, Running: 2 };
  st.conditions = [...(conditions ?? [])].sort((a, b) => (order[a.type] ?? 9) - (order[b.type] ?? 9));
  return st;
}

/** Whether two statuses differ in anything but heartbeat times (so an unchanged status is not rewritten). */
export function statusChanged(a: DataVolumeStatus | undefined, b: DataVolumeStatus): boolean {
  return JSON.stringify(a ?? {}) !== JSON.stringify(b);
}

/** How many times a failed transfer is tried again before the DV is Failed (the importer pod's restarts). */
export const MAX_IMPORT_RESTARTS = 3;
/** The first retry's delay; doubled each restart (the kubelet's crash-loop backoff starts at 10 s; shorter here: one machine, no pod). */
export const IMPORT_RETRY_BASE_MS = 1000;

/**
 * After a failed attempt: retry (after a backoff) or give up. Permanent errors (the server said
 * 4xx, the data is not a disk image, it does not fit) fail at once; transfer errors (a connection
 * cut, a truncated body, 5xx) are retried up to `max` times.
 */
export function retryDecision(restarts: number, permanent: boolean, max = MAX_IMPORT_RESTARTS, baseMs = IMPORT_RETRY_BASE_MS): { retry: true; afterMs: number } | { retry: false } {
  if (permanent || restarts >= max) return { retry: false };
  return { retry: true, afterMs: baseMs * 2 ** restarts };
}
