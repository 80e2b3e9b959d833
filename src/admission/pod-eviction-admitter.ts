/**
 * KubeVirt's virt-launcher eviction interceptor (virt-api `pod-eviction-admitter.go`), as a pure
 * decision: an eviction of a running launcher pod whose VMI should move on eviction (effective
 * strategy LiveMigrate — refused outright when the VMI is not migratable —, LiveMigrateIfPossible
 * when migratable, or External) is refused with 429 Too Many Requests, and the first such eviction
 * marks the VMI `status.evacuationNodeName` so the evacuation controller migrates it away (External:
 * whoever owns the VMI acts on the mark). `kubectl drain` retries a 429 until the pod is gone, which
 * happens once the migration has finished and the source pod has completed. Messages are KubeVirt's
 * (the descheduler reads the "Eviction triggered evacuation" one).
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { Annotation, EvictionStrategy, LAUNCHER_APP_LABEL_VALUE, Label } from '../api/constants.ts';
import { isMarkedForEviction, isMigratable, vmiEvictionStrategy } from '../api/eviction.ts';
import type { ObjectMeta, VirtualMachineInstance } from '../api/types.ts';
import type { AdmissionAttributes, AdmissionDenial } from '../kube/admission.ts';
import { escapeJsonPointer } from '../kube/json-pointer.ts';

export const LAUNCHER_EVICTION_WEBHOOK = 'virt-launcher-eviction-interceptor.kubevirt.io';

/** What the webhook is registered for: any operation on pods/eviction. */
export const isPodEviction = (a: Pick<AdmissionAttributes, 'group' | 'resource' | 'subresource'>): boolean => a.group === '' && a.resource === 'pods' && a.subresource === 'eviction';

/** The `requested-by` annotation the descheduler puts on its Evictions, and its value. */
export const REQUESTED_BY_ANNOTATION = 'requested-by';
export const REQUESTED_BY_DESCHEDULER = 'sigs.k8s.io/descheduler';
/** What `kubevirt.io/eviction-source` says for a descheduler's eviction. */
export const EVICTION_SOURCE_DESCHEDULER = 'descheduler';

/** The fields of a pod the admitter reads. */
export interface EvictedPod {
  readonly metadata?: ObjectMeta;
  readonly spec?: { readonly nodeName?: string };
  readonly status?: { readonly phase?: string };
}

export type LauncherEvictionDecision =
  | { readonly type: 'allow' }
  /** Denied (429) without touching the VMI. */
  | { readonly type: 'deny'; readonly message: string }
  /** Mark the VMI for evacuation from `nodeName`, then deny (429) with `message`. */
  | { readonly type: 'mark'; readonly nodeName: string; readonly fromDescheduler: boolean; readonly message: string };

export interface LauncherEvictionInput {
  /** The pod named by the eviction, if it exists. */
  readonly pod: EvictedPod | undefined;
  /** The VMI of the pod's `kubevirt.io/domain` annotation, if it exists. */
  readonly vmi: VirtualMachineInstance | undefined;
  /** The Eviction's own annotations. */
  readonly evictionAnnotations: Readonly<Record<string, string>> | undefined;
  readonly config: Pick<ClusterConfig, 'evictionStrategy'>;
}

const isVirtLauncher = (pod: EvictedPod): boolean => pod.metadata?.labels?.[Label.App] === LAUNCHER_APP_LABEL_VALUE;
const isCompleted = (pod: EvictedPod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** Which VMI a pod's eviction concerns: a running launcher pod's `kubevirt.io/domain`, else none. */
export function evictedLauncherVMIName(pod: EvictedPod | undefined): string | undefined {
  if (!pod || !isVirtLauncher(pod) || isCompleted(pod)) return undefined;
  return pod.metadata?.annotations?.[Annotation.Domain];
}

/** `PodEvictionAdmitter.Admit` for launcher pods. */
export function launcherEvictionDecision(i: LauncherEvictionInput): LauncherEvictionDecision {
  const pod = i.pod;
  const vmiName = evictedLauncherVMIName(pod);
  if (!pod || vmiName === undefined) return { type: 'allow' };
  const vmi = i.vmi;
  const ns = pod.metadata?.namespace ?? '';
  if (!vmi) return { type: 'deny', message: `kubevirt failed getting the vmi: virtualmachineinstances.kubevirt.io "${vmiName}" not found` };
  const strategy = vmiEvictionStrategy(i.config, vmi);
  let mark = false;
  if (strategy === EvictionStrategy.LiveMigrate) {
    if (!isMigratable(vmi)) return { type: 'deny', message: `VMI ${vmi.metadata?.name ?? ''} is configured with an eviction strategy but is not live-migratable` };
    mark = true;
  } else if (strategy === EvictionStrategy.LiveMigrateIfPossible) {
    mark = isMigratable(vmi);
  } else if (strategy === EvictionStrategy.External) {
    mark = true;
  }
  if (!mark) return { type: 'allow' };
  const evacuation = `Eviction triggered evacuation of VMI "${ns}/${vmi.metadata?.name ?? ''}"`;
  if (isMarkedForEviction(vmi)) return { type: 'deny', message: `Evacuation in progress: ${evacuation}` };
  if (vmi.status?.nodeName !== pod.spec?.nodeName) return { type: 'deny', message: 'Eviction request for target Pod' };
  return { type: 'mark', nodeName: pod.spec?.nodeName ?? '', fromDescheduler: i.evictionAnnotations?.[REQUESTED_BY_ANNOTATION] === REQUESTED_BY_DESCHEDULER, message: evacuation };
}

/** `markVMI`'s JSON patch: `status.evacuationNodeName`, and the descheduler as the eviction's source. */
export function markForEvacuationPatch(vmi: VirtualMachineInstance, nodeName: string, fromDescheduler: boolean): object[] {
  const ops: object[] = [{ op: 'add', path: '/status/evacuationNodeName', value: nodeName }];
  if (fromDescheduler) {
    if (Object.keys(vmi.metadata?.annotations ?? {}).length === 0) ops.push({ op: 'add', path: '/metadata/annotations', value: { [Annotation.EvictionSource]: EVICTION_SOURCE_DESCHEDULER } });
    else ops.push({ op: 'add', path: `/metadata/annotations/${escapeJsonPointer(Annotation.EvictionSource)}`, value: EVICTION_SOURCE_DESCHEDULER });
  }
  return ops;
}

/**
 * What the interceptor reads from the eviction request itself: the Eviction's annotations, and
 * `isDryRun` — the request's dryRun, or the Eviction's own deleteOptions.dryRun.
 */
export function evictionRequest(a: Pick<AdmissionAttributes, 'object' | 'dryRun'>): { annotations: Readonly<Record<string, string>> | undefined; dryRun: boolean } {
  const meta = (a.object.metadata ?? {}) as { annotations?: Record<string, string> };
  const deleteOptions = (a.object.deleteOptions ?? {}) as { dryRun?: unknown };
  return { annotations: meta.annotations, dryRun: a.dryRun || (Array.isArray(deleteOptions.dryRun) && deleteOptions.dryRun[0] === 'All') };
}

/**
 * The interceptor's answer to a decision: nothing for `allow`, else 429 with its message — for a
 * `mark` whose patch failed (`markError`), KubeVirt's "failed marking" message: it is up to the
 * evicting client to retry.
 */
export function evictionAnswer(d: LauncherEvictionDecision, markError?: unknown): AdmissionDenial | undefined {
  if (d.type === 'allow') return undefined;
  if (markError !== undefined) return { code: 429, message: `kubevirt failed marking the vmi for eviction: ${markError instanceof Error ? markError.message : String(markError)}` };
  return { code: 429, message: d.message };
}
