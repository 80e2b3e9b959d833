// What the controllers conclude from a launcher pod's status (pkg/controller/controller.go):
// when a pod counts as ready to hand to the node agent, as down, as going down; which of a VMI's
// pods is the current one; whether an image pull failed. Pure functions of the pod objects.
import { ConditionReason, LauncherContainer } from '../src/api/constants.ts';
import { PodPhase } from './constants.ts';
import type { Pod, PodCondition } from './pod.ts';
import type { ObjectMeta, OwnerReference } from '../src/api/types.ts';

/** The pod finished: phase Succeeded or Failed. */
export function podIsDown(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === PodPhase.Succeeded || phase === PodPhase.Failed;
}

function computeStatus(pod: Pod) {
  return pod.status?.containerStatuses?.find((s) => s.name === LauncherContainer.Compute);
}

function isComputeContainerDown(pod: Pod): boolean {
  return computeStatus(pod)?.state?.terminated !== undefined;
}

function isComputeContainerFailed(pod: Pod): boolean {
  const terminated = computeStatus(pod)?.state?.terminated;
  return terminated !== undefined && terminated.exitCode !== 0;
}

/** Finished, compute container terminated, or being deleted. */
export function isPodDownOrGoingDown(pod: Pod): boolean {
  return podIsDown(pod) || isComputeContainerDown(pod) || pod.metadata?.deletionTimestamp != null;
}

/** Failed, or its compute container exited non-zero: no launcher will ever serve this pod's VMI. */
export function isPodFailed(pod: Pod): boolean {
  return pod.status?.phase === PodPhase.Failed || isComputeContainerFailed(pod);
}

/** Failed, compute container exited non-zero, or being deleted. */
export function isPodFailedOrGoingDown(pod: Pod): boolean {
  return pod.status?.phase === PodPhase.Failed || isComputeContainerFailed(pod) || pod.metadata?.deletionTimestamp != null;
}

/**
 * KubeVirt's `IsPodReady`: the pod may be handed to the node agent once it runs, its compute
 * container (and an istio-proxy) has started, and every other container is ready. The compute
 * container's own readiness is not awaited: it carries the VMI's readiness probe and the
 * `kubevirt.io/virtual-machine-unpaused` gate, which only turn true once the guest runs.
 */
export function isPodReady(pod: Pod): boolean {
  if (isPodDownOrGoingDown(pod)) return false;
  for (const status of pod.status?.containerStatuses ?? []) {
    if (status.name === LauncherContainer.Compute || status.name === LauncherContainer.IstioProxy) {
      if (status.state?.running === undefined) return false;
    } else if (!status.ready) {
      return false;
    }
  }
  return pod.status?.phase === PodPhase.Running;
}

export function podCondition(pod: Pod | undefined, type: string): PodCondition | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type);
}

/** The owner reference marked `controller: true`, if any. */
export function controllerOf(meta: ObjectMeta | undefined): OwnerReference | undefined {
  return meta?.ownerReferences?.find((r) => r.controller === true);
}

export function isControlledBy(meta: ObjectMeta | undefined, ownerUID: string | undefined): boolean {
  const ref = controllerOf(meta);
  return ref !== undefined && ownerUID !== undefined && ref.uid === ownerUID;
}

/**
 * KubeVirt's `CurrentVMIPod`: among the pods the VMI controls, the newest one on the VMI's node
 * (any node while the VMI has none). Pods being created on a migration target node are skipped
 * until the VMI moves there.
 */
export function currentVMIPod(vmiUID: string | undefined, vmiNodeName: string | undefined, pods: readonly Pod[]): Pod | undefined {
  let current: Pod | undefined;
  for (const pod of pods) {
    if (!isControlledBy(pod.metadata, vmiUID)) continue;
    if (vmiNodeName && vmiNodeName !== (pod.spec?.nodeName ?? '')) continue;
    if (current === undefined || creationTime(current) < creationTime(pod)) current = pod;
  }
  return current;
}

function creationTime(pod: Pod): number {
  const t = pod.metadata?.creationTimestamp;
  return t ? Date.parse(t) : 0;
}

/** Pods the VMI controls that have not finished (KubeVirt's `VMIActivePodsCount`). */
export function activePodCount(vmiUID: string | undefined, pods: readonly Pod[]): number {
  return pods.filter((p) => !podIsDown(p) && isControlledBy(p.metadata, vmiUID)).length;
}

export interface ImagePullError {
  readonly reason: typeof ConditionReason.ErrImagePull | typeof ConditionReason.ImagePullBackOff;
  readonly message: string;
}

/** The first (init) container waiting on `ErrImagePull` or `ImagePullBackOff`, as a sync error. */
export function containerImageError(pod: Pod): ImagePullError | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    const reason = s.state?.waiting?.reason;
    if (reason === ConditionReason.ErrImagePull || reason === ConditionReason.ImagePullBackOff) {
      return { reason, message: s.state?.waiting?.message ?? '' };
    }
  }
  return undefined;
}
