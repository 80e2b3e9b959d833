// The VMI controller's part of the VMI lifecycle (pkg/virt-controller/watch/vmi/lifecycle.go
// updateStatus): Pending → Scheduling when the launcher pod exists, → Scheduled when the pod is
// ready to be handed to the node agent, → Failed when the pod disappears or dies first; once the
// VMI is final and no pod is left, the finalizer comes off. Running/Succeeded/Failed from a live
// domain are the node agent's business. Also the Ready condition derived from the pod and the
// pod's `kubevirt.io/virtual-machine-unpaused` readiness gate.
import { Annotation, ConditionReason, Finalizer, Label, LauncherContainer, POD_CONDITION_VM_UNPAUSED, VMIConditionType, VMIPhase, isFinalVMIPhase, isUnprocessedVMIPhase } from '../../src/api/constants.ts';
import { Messages, POD_CONDITION_READY, POD_CONDITION_SCHEDULED } from '../constants.ts';
import { addConditionIfAbsent, findCondition, hasConditionWithStatus, removeCondition, updateCondition } from '../condition-list.ts';
import { containerImageError, isControlledBy, isPodDownOrGoingDown, isPodFailed, isPodFailedOrGoingDown, isPodReady, podCondition, podIsDown } from '../pod-state.ts';
import { toRFC3339Seconds } from '../vm/backoff.ts';
import type { SyncError } from '../vm/conditions.ts';
import type { Pod, PodCondition } from '../pod.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceCondition, VirtualMachineInstancePhase } from '../../src/api/types.ts';

/** A pod rendered only to make a WaitForFirstConsumer PVC bind; never the VMI's launcher. */
export function isTempPod(pod: Pod): boolean {
  return pod.metadata?.annotations?.[Annotation.EphemeralProvisioning] !== undefined;
}

/** A receiver VMI of a decentralized migration. */
export function isMigrationTarget(vmi: VirtualMachineInstance): boolean {
  return vmi.metadata?.annotations?.[Annotation.CreateMigrationTarget] === 'true';
}

function isMigrationTargetNodeLabelSet(vmi: VirtualMachineInstance): boolean {
  return vmi.metadata?.labels?.[Label.MigrationTargetNodeName] !== undefined;
}

export function isCPUDedicated(vmi: VirtualMachineInstance): boolean {
  return vmi.spec.domain.cpu?.dedicatedCpuPlacement === true;
}

/**
 * The VMI's Ready condition as the VMI controller derives it from the launcher pod
 * (`syncReadyConditionFromPod`). `vmiPhase` is the phase before this sync's transition.
 */
export function readyConditionFromPod(vmiPhase: VirtualMachineInstancePhase | undefined, pod: Pod | undefined, now: Date): VirtualMachineInstanceCondition {
  const t = toRFC3339Seconds(now);
  const notReady = (reason: string, message: string): VirtualMachineInstanceCondition => ({
    type: VMIConditionType.Ready,
    status: 'False',
    reason,
    message,
    lastProbeTime: t,
    lastTransitionTime: t,
  });
  if (!pod || isTempPod(pod)) return notReady(ConditionReason.PodNotExists, Messages.PodNotExists);
  if (isPodDownOrGoingDown(pod)) return notReady(ConditionReason.PodTerminating, Messages.PodTerminating);
  if (vmiPhase !== VMIPhase.Running) return notReady(ConditionReason.GuestNotRunning, Messages.GuestNotRunning);
  const ready = podCondition(pod, POD_CONDITION_READY);
  if (!ready) return notReady(ConditionReason.PodConditionMissing, Messages.PodConditionMissing);
  const c: VirtualMachineInstanceCondition = { type: VMIConditionType.Ready, status: ready.status };
  if (ready.reason !== undefined) c.reason = ready.reason;
  if (ready.message !== undefined) c.message = ready.message;
  if (ready.lastProbeTime) c.lastProbeTime = ready.lastProbeTime;
  if (ready.lastTransitionTime) c.lastTransitionTime = ready.lastTransitionTime;
  return c;
}

/**
 * The launcher pod's `kubevirt.io/virtual-machine-unpaused` condition to write, or undefined when
 * the pod already says the right thing (`syncPausedConditionToPod`). The pod only turns Ready
 * while this gate is True, so a paused VM reads NotReady.
 */
export function unpausedPodCondition(vmi: VirtualMachineInstance, pod: Pod, now: Date): PodCondition | undefined {
  const t = toRFC3339Seconds(now);
  const paused = hasConditionWithStatus(vmi.status?.conditions, VMIConditionType.Paused, 'True');
  const gateTrue = podCondition(pod, POD_CONDITION_VM_UNPAUSED)?.status === 'True';
  if (paused) {
    // KubeVirt only flips an existing True gate to False; a pod without the gate stays unready anyway.
    return gateTrue ? { type: POD_CONDITION_VM_UNPAUSED, status: 'False', reason: ConditionReason.Paused, message: Messages.Paused, lastProbeTime: t, lastTransitionTime: t } : undefined;
  }
  return gateTrue ? undefined : { type: POD_CONDITION_VM_UNPAUSED, status: 'True', reason: ConditionReason.NotPaused, message: Messages.NotPaused, lastProbeTime: t, lastTransitionTime: t };
}

export interface PhaseInputs {
  /** The VMI's current launcher pod (`CurrentVMIPod`), or undefined. */
  readonly pod: Pod | undefined;
  /** A DataVolume the VMI uses has failed (qvirt has no CDI: normally false). */
  readonly hasFailedDataVolume?: boolean;
}

export interface PhaseDecision {
  readonly phase: VirtualMachineInstancePhase;
  /** Set when the Scheduling→Scheduled handover was refused for this reason. */
  readonly syncError?: SyncError;
}

/**
 * The controller-owned phase machine:
 *
 * | phase          | condition                                                         | next            |
 * |----------------|-------------------------------------------------------------------|-----------------|
 * | Pending / ""   | launcher pod exists                                                | Scheduling      |
 * |                | VMI deleting, or a DataVolume failed                               | Failed          |
 * |                | migration target without target-node label                         | WaitingForSync  |
 * |                | else                                                               | Pending         |
 * | Scheduling     | pod ready (IsPodReady) and VMI not deleting; dedicated CPUs need   | Scheduled       |
 * |                | a Guaranteed pod (else sync error FailedGuaranteeResources)        |                 |
 * |                | pod down or going down / pod missing                               | Failed (targets: WaitingForSync) |
 * | Scheduled      | pod missing; or (qvirt) its compute container failed               | Failed          |
 * | Running        | pod missing                                                        | Failed          |
 * | WaitingForSync | pod exists (not down for targets), not deleting                    | Scheduling      |
 * | final          | —                                                                  | unchanged       |
 */
export function nextPhase(vmi: VirtualMachineInstance, inputs: PhaseInputs): PhaseDecision {
  const phase = vmi.status?.phase ?? VMIPhase.Unset;
  const pod = inputs.pod;
  const vmiPodExists = pod !== undefined && !isTempPod(pod);
  const tempPodExists = pod !== undefined && isTempPod(pod);
  const deleting = vmi.metadata?.deletionTimestamp != null;
  const target = isMigrationTarget(vmi);
  const migrationTargetFailed = target && vmi.status?.migrationState?.failed === true;

  if (isUnprocessedVMIPhase(phase)) {
    if (vmiPodExists) return { phase: VMIPhase.Scheduling };
    if (deleting || inputs.hasFailedDataVolume) return { phase: VMIPhase.Failed };
    if (target && !isMigrationTargetNodeLabelSet(vmi)) return { phase: VMIPhase.WaitingForSync };
    if (tempPodExists && isPodFailedOrGoingDown(pod)) return { phase: VMIPhase.Failed };
    return { phase: VMIPhase.Pending };
  }
  switch (phase) {
    case VMIPhase.Scheduling: {
      if (!vmiPodExists) return { phase: target ? VMIPhase.WaitingForSync : VMIPhase.Failed };
      if (isPodReady(pod) && !deleting) {
        if (pod.status?.qosClass !== 'Guaranteed' && isCPUDedicated(vmi)) {
          return { phase, syncError: { reason: ConditionReason.FailedGuaranteeResources, message: 'failed to guarantee pod resources' } };
        }
        return { phase: VMIPhase.Scheduled };
      }
      if (isPodDownOrGoingDown(pod)) return { phase: target ? VMIPhase.WaitingForSync : VMIPhase.Failed };
      return { phase };
    }
    case VMIPhase.Scheduled:
      if (!vmiPodExists || (target && podIsDown(pod)) || migrationTargetFailed) return { phase: target ? VMIPhase.WaitingForSync : VMIPhase.Failed };
      // Beyond KubeVirt (issue 22): a launcher that died before its command socket existed leaves
      // virt-handler waiting its 3-minute init timeout; a compute container that exited non-zero
      // (or a Failed pod: restartPolicy Never) can never start this VMI, so it fails now.
      if (!target && isPodFailed(pod)) return { phase: VMIPhase.Failed };
      return { phase };
    case VMIPhase.Running:
      if (!vmiPodExists) return { phase: VMIPhase.Failed };
      return { phase };
    case VMIPhase.WaitingForSync:
      if (!deleting && vmiPodExists && !migrationTargetFailed && !(target && podIsDown(pod))) return { phase: VMIPhase.Scheduling };
      return { phase };
    default:
      return { phase };
  }
}

export interface VMIStatusInputs extends PhaseInputs {
  /** Every pod the VMI controls (for `status.activePods` and finalizer removal). */
  readonly ownedPods: readonly Pod[];
  readonly now: Date;
  /** The launcher image this controller renders; a different compute image marks the VMI outdated. */
  readonly launcherImage: string;
  /** The error of this sync's pod creation/deletion step, if any. */
  readonly syncError?: SyncError | undefined;
  /** The VM that controls the VMI still exists (its finalizer must stay until it saw the end). */
  readonly hasOwnerVM: boolean;
}

export interface VMIStatusUpdate {
  /** The VMI as it should be (a modified copy; the input is not touched). */
  readonly vmi: VirtualMachineInstance;
  /** Write the launcher pod's readiness-gate condition (status subresource, strategic merge). */
  readonly podCondition?: PodCondition;
  /** Sync error of this round (the input's, or one found while reading the pod). */
  readonly syncError?: SyncError;
  /**
   * How to write it: Scheduled/Running VMIs belong to the node agent, so only a JSON patch of the
   * fields the controller owns; other phases are updated whole (with Synchronized and transition
   * timestamps maintained).
   */
  readonly write: 'patch' | 'update';
}

/**
 * One pass of the VMI controller's `updateStatus`: the new VMI (phase, Ready, activePods, node
 * label and name at handover, QoS class, PodScheduled mirror, Synchronized, EvictionRequested,
 * transition timestamps, finalizers) and the pod readiness-gate write, as data.
 */
export function updateVMIStatus(vmi: VirtualMachineInstance, inputs: VMIStatusInputs): VMIStatusUpdate {
  const next: VirtualMachineInstance = structuredClone(vmi);
  next.metadata = next.metadata ?? {};
  next.status = next.status ?? {};
  const status = next.status;
  const now = inputs.now;
  const pod = inputs.pod;
  const vmiPodExists = pod !== undefined && !isTempPod(pod);
  let syncError = inputs.syncError;

  // The deprecated non-qualified finalizer becomes the qualified one.
  const finalizers = next.metadata.finalizers ?? [];
  if (finalizers.includes(Finalizer.DeprecatedVirtualMachineInstance)) {
    const rest = finalizers.filter((f) => f !== Finalizer.DeprecatedVirtualMachineInstance);
    next.metadata.finalizers = rest.includes(Finalizer.VirtualMachineInstance) ? rest : [...rest, Finalizer.VirtualMachineInstance];
  }

  const owned = inputs.ownedPods.filter((p) => isControlledBy(p.metadata, vmi.metadata?.uid));
  if (owned.length > 0 || status.activePods !== undefined) {
    status.activePods = Object.fromEntries(owned.map((p) => [p.metadata?.uid ?? '', p.spec?.nodeName ?? '']));
  }

  status.conditions = updateCondition(status.conditions, readyConditionFromPod(vmi.status?.phase, pod, now));

  let podConditionWrite: PodCondition | undefined;
  if (vmiPodExists) {
    const image = pod.spec?.containers.find((c) => c.name === LauncherContainer.Compute)?.image ?? '';
    if (image !== '' && image !== inputs.launcherImage) next.metadata.labels = { ...(next.metadata.labels ?? {}), [Label.OutdatedLauncherImage]: '' };
    else if (next.metadata.labels) delete next.metadata.labels[Label.OutdatedLauncherImage];
    status.launcherContainerImageVersion = image;
    podConditionWrite = unpausedPodCondition(next, pod, now);
  }

  const decision = nextPhase(vmi, inputs);
  const phase = vmi.status?.phase ?? VMIPhase.Unset;

  if (isUnprocessedVMIPhase(phase)) {
    if (pod && isTempPod(pod)) {
      const scheduled = podCondition(pod, POD_CONDITION_SCHEDULED);
      if (scheduled?.status === 'False') status.conditions = addConditionIfAbsent(status.conditions, podConditionToVMI(scheduled));
      else status.conditions = removeCondition(status.conditions, VMIConditionType.PodScheduled);
    }
    if (!vmiPodExists && syncError?.reason === ConditionReason.FailedPvcNotFound) {
      status.conditions = [
        ...removeCondition(status.conditions, VMIConditionType.PodScheduled),
        { type: VMIConditionType.PodScheduled, status: 'False', reason: ConditionReason.Unschedulable, message: syncError.message },
      ];
    }
  } else if (phase === VMIPhase.Scheduling) {
    status.conditions = removeCondition(status.conditions, VMIConditionType.Provisioning);
    if (vmiPodExists) {
      if (pod.status?.qosClass) status.qosClass = pod.status.qosClass;
      else delete status.qosClass;
      const scheduled = podCondition(pod, POD_CONDITION_SCHEDULED);
      if (scheduled?.status === 'False') status.conditions = addConditionIfAbsent(status.conditions, podConditionToVMI(scheduled));
      else status.conditions = removeCondition(status.conditions, VMIConditionType.PodScheduled);
      const imageError = containerImageError(pod);
      if (imageError) syncError = imageError;
      if (decision.syncError) syncError = decision.syncError;
      if (decision.phase === VMIPhase.Scheduled) {
        const node = pod.spec?.nodeName ?? '';
        next.metadata.labels = { ...(next.metadata.labels ?? {}), [Label.NodeName]: node };
        status.nodeName = node;
        if (pod.metadata?.annotations?.[Annotation.MigrationTransportUnix] !== undefined) status.migrationTransport = 'Unix';
      }
    }
  } else if (isFinalVMIPhase(phase)) {
    if (owned.length === 0) {
      next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== Finalizer.VirtualMachineInstance && f !== Finalizer.DeprecatedVirtualMachineInstance);
      if (next.metadata.labels) delete next.metadata.labels[Label.OutdatedLauncherImage];
      delete status.launcherContainerImageVersion;
    }
    if (!inputs.hasOwnerVM && (next.metadata.finalizers?.length ?? 0) > 0) {
      next.metadata.finalizers = next.metadata.finalizers!.filter((f) => f !== Finalizer.VirtualMachineController);
    }
  } else if (phase === VMIPhase.WaitingForSync && vmi.metadata?.deletionTimestamp != null) {
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== Finalizer.VirtualMachineInstance && f !== Finalizer.DeprecatedVirtualMachineInstance);
    if (!inputs.hasOwnerVM) next.metadata.finalizers = next.metadata.finalizers.filter((f) => f !== Finalizer.VirtualMachineController);
  }
  status.phase = decision.phase;

  if (status.evacuationNodeName) {
    if (!hasConditionWithStatus(status.conditions, VMIConditionType.EvictionRequested, 'True')) {
      const t = toRFC3339Seconds(now);
      status.conditions = updateCondition(status.conditions, {
        type: VMIConditionType.EvictionRequested,
        status: 'True',
        reason: ConditionReason.EvictionRequested,
        message: Messages.EvictionRequested,
        lastProbeTime: t,
        lastTransitionTime: t,
      });
    }
  } else {
    status.conditions = removeCondition(status.conditions, VMIConditionType.EvictionRequested);
  }

  if (next.metadata.finalizers?.length === 0) delete next.metadata.finalizers;
  if (status.conditions?.length === 0) delete status.conditions;

  const base = { vmi: next, ...(podConditionWrite ? { podCondition: podConditionWrite } : {}), ...(syncError ? { syncError } : {}) };
  if (phase === VMIPhase.Running || phase === VMIPhase.Scheduled) return { ...base, write: 'patch' };

  // Synchronized reflects this round's sync error (`CheckFailure`), then transition timestamps.
  status.conditions = checkFailure(status.conditions, syncError, now);
  if (status.conditions.length === 0) delete status.conditions;
  if (decision.phase !== phase && !(status.phaseTransitionTimestamps ?? []).some((t) => t.phase === decision.phase)) {
    status.phaseTransitionTimestamps = [...(status.phaseTransitionTimestamps ?? []), { phase: decision.phase, phaseTransitionTimestamp: toRFC3339Seconds(now) }];
  }
  return { ...base, write: 'update' };
}

/** `CheckFailure`: Synchronized=False with the error's reason, or no Synchronized condition at all. */
export function checkFailure(conditions: readonly VirtualMachineInstanceCondition[] | undefined, syncError: SyncError | undefined, now: Date): VirtualMachineInstanceCondition[] {
  if (!syncError) return removeCondition(conditions, VMIConditionType.Synchronized);
  const existing = findCondition(conditions, VMIConditionType.Synchronized);
  if (existing && existing.status === 'False' && existing.reason === syncError.reason) return [...(conditions ?? [])];
  return [
    ...removeCondition(conditions, VMIConditionType.Synchronized),
    { type: VMIConditionType.Synchronized, status: 'False', reason: syncError.reason, message: syncError.message, lastTransitionTime: toRFC3339Seconds(now) },
  ];
}

function podConditionToVMI(c: PodCondition): VirtualMachineInstanceCondition {
  const out: VirtualMachineInstanceCondition = { type: c.type as VirtualMachineInstanceCondition['type'], status: c.status };
  if (c.reason !== undefined) out.reason = c.reason;
  if (c.message !== undefined) out.message = c.message;
  if (c.lastProbeTime) out.lastProbeTime = c.lastProbeTime;
  if (c.lastTransitionTime) out.lastTransitionTime = c.lastTransitionTime;
  return out;
}

/** Whether the VMI controller is done with a final VMI: no pod it controls is left. */
export function finalizerCanBeRemoved(vmi: VirtualMachineInstance, ownedPods: readonly Pod[]): boolean {
  return isFinalVMIPhase(vmi.status?.phase) && !ownedPods.some((p) => isControlledBy(p.metadata, vmi.metadata?.uid));
}

export type PodAction =
  | { readonly type: 'none' }
  /** Render the launch manifest and create it. */
  | { readonly type: 'create-pod' }
  /** Delete these pods (VMI being deleted). */
  | { readonly type: 'delete-pods'; readonly names: readonly string[] };

/**
 * The pod half of the VMI controller's `sync`: a deleted VMI takes its pods with it (pods already
 * terminating are left alone unless they finished); an unprocessed VMI without a pod gets one,
 * unless a migration of it is still active; nothing else creates pods.
 */
export function podAction(vmi: VirtualMachineInstance, currentPod: Pod | undefined, ownedPods: readonly Pod[], activeMigration = false): PodAction {
  if (vmi.metadata?.deletionTimestamp != null) {
    const names = ownedPods
      .filter((p) => isControlledBy(p.metadata, vmi.metadata?.uid))
      .filter((p) => p.metadata?.deletionTimestamp == null || podIsDown(p))
      .map((p) => p.metadata?.name ?? '');
    return names.length > 0 ? { type: 'delete-pods', names } : { type: 'none' };
  }
  if (isFinalVMIPhase(vmi.status?.phase)) return { type: 'none' };
  if (isMigrationTarget(vmi) && !isMigrationTargetNodeLabelSet(vmi)) return { type: 'none' };
  if (currentPod === undefined && isUnprocessedVMIPhase(vmi.status?.phase) && !activeMigration) return { type: 'create-pod' };
  return { type: 'none' };
}
