// The VirtualMachineInstanceReplicaSet controller's decisions
// (pkg/virt-controller/watch/replicaset/replicaset.go): which VMIs it owns (adopt/release), how
// they split into active/finished/unknown, how many to create or delete this round (at most 250),
// the VMIs to create, and the status it reports.
import { API_VERSION, ConditionReason, EventReason, Kind, ReplicaSetConditionType, isFinalVMIPhase } from '../../src/api/constants.ts';
import { Messages, POD_CONDITION_READY, REPLICASET_BURST_REPLICAS } from '../constants.ts';
import { hasCondition, hasConditionWithStatus, hasConditionWithStatusAndReason, removeCondition } from '../condition-list.ts';
import { labelSelectorAsSelector as compileLabelSelector, selectorMatches, selectorString, type Selector as CompiledSelector } from '../../src/api/label-selector.ts';
import { controllerOf } from '../pod-state.ts';
import { toRFC3339Seconds } from '../vm/backoff.ts';
import type { OwnerReference, VirtualMachineInstance, VirtualMachineInstanceReplicaSet, VirtualMachineInstanceReplicaSetStatus } from '../../src/api/types.ts';

/** Why the controller will not act on this replica set (KubeVirt logs and does not requeue). */
export function invalidReplicaSetSpec(rs: VirtualMachineInstanceReplicaSet): string | undefined {
  if (!rs.spec.template || !rs.spec.selector) return 'spec.template and spec.selector are required';
  if (Object.keys(rs.spec.template.metadata?.labels ?? {}).length === 0) return 'spec.template.metadata.labels must not be empty';
  let sel: CompiledSelector;
  try {
    sel = compileLabelSelector(rs.spec.selector);
  } catch (e) {
    return `spec.selector: ${(e as Error).message}`;
  }
  if (!selectorMatches(sel, rs.spec.template.metadata?.labels)) return 'spec.selector does not match spec.template.metadata.labels';
  return undefined;
}

/** `OwnerRef(rs)`: controller reference with blockOwnerDeletion. */
export function replicaSetOwnerRef(rs: VirtualMachineInstanceReplicaSet): OwnerReference {
  return { apiVersion: API_VERSION, kind: Kind.VirtualMachineInstanceReplicaSet, name: rs.metadata?.name ?? '', uid: rs.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

export interface ClaimResult {
  /** VMIs the replica set controls after this round (owned and matching, plus adopted). */
  readonly claimed: VirtualMachineInstance[];
  /** Orphans matching the selector: set the controller reference on them. */
  readonly adopt: VirtualMachineInstance[];
  /** Owned VMIs the selector no longer matches: remove the controller reference. */
  readonly release: VirtualMachineInstance[];
}

/**
 * `ClaimVirtualMachineInstances`: owned+matching → keep; owned+not matching → release (unless the
 * replica set is being deleted); orphan+matching → adopt (unless the replica set or the VMI is
 * being deleted); owned by someone else → ignore.
 */
export function claimVMIs(rs: VirtualMachineInstanceReplicaSet, vmis: readonly VirtualMachineInstance[]): ClaimResult {
  const sel = compileLabelSelector(rs.spec.selector);
  const rsDeleting = rs.metadata?.deletionTimestamp != null;
  const out: ClaimResult = { claimed: [], adopt: [], release: [] };
  for (const vmi of vmis) {
    const ref = controllerOf(vmi.metadata);
    const owned = ref !== undefined && ref.uid === rs.metadata?.uid;
    const matched = selectorMatches(sel, vmi.metadata?.labels);
    if (owned && matched) out.claimed.push(vmi);
    else if (owned && !matched) {
      if (!rsDeleting) out.release.push(vmi);
    } else if (ref === undefined && matched) {
      if (rsDeleting || vmi.metadata?.deletionTimestamp != null) continue;
      out.adopt.push(vmi);
      out.claimed.push(vmi);
    }
  }
  return out;
}

export interface Partition {
  /** Not final, not deleting, not `Ready=False/PodTerminating`: these count as replicas. */
  readonly active: VirtualMachineInstance[];
  /** Final and not deleting: to be cleaned up. */
  readonly finished: VirtualMachineInstance[];
  /** Not final, not deleting, `Ready=False/PodTerminating`: their pod is going away; cleaned up too. */
  readonly unknown: VirtualMachineInstance[];
}

export function partitionVMIs(vmis: readonly VirtualMachineInstance[]): Partition {
  const p: Partition = { active: [], finished: [], unknown: [] };
  for (const vmi of vmis) {
    const deleting = vmi.metadata?.deletionTimestamp != null;
    const final = isFinalVMIPhase(vmi.status?.phase);
    const terminating = hasConditionWithStatusAndReason(vmi.status?.conditions, POD_CONDITION_READY, 'False', ConditionReason.PodTerminating);
    if (final && !deleting) p.finished.push(vmi);
    else if (!final && !deleting && terminating) p.unknown.push(vmi);
    else if (!final && !deleting) p.active.push(vmi);
  }
  return p;
}

export function desiredReplicas(rs: VirtualMachineInstanceReplicaSet): number {
  return rs.spec.replicas ?? 1;
}

/** `calcDiff`: active − desired (positive: too many). */
export function replicaDiff(rs: VirtualMachineInstanceReplicaSet, active: readonly VirtualMachineInstance[]): number {
  return active.length - desiredReplicas(rs);
}

/** The VMI name prefix: template name, else template generateName, else the replica set name (no dash added). */
export function vmiBaseName(rs: VirtualMachineInstanceReplicaSet): string {
  const meta = rs.spec.template.metadata;
  if (meta?.name) return meta.name;
  if (meta?.generateName) return meta.generateName;
  return rs.metadata?.name ?? '';
}

/** One VMI to create: template metadata with generateName, template labels, owner reference, template spec. */
export function vmiFromTemplate(rs: VirtualMachineInstanceReplicaSet): VirtualMachineInstance {
  const metadata = structuredClone(rs.spec.template.metadata ?? {});
  delete metadata.name;
  metadata.generateName = vmiBaseName(rs);
  if (rs.metadata?.namespace !== undefined) metadata.namespace = rs.metadata.namespace;
  const labels = rs.spec.template.metadata?.labels;
  if (labels) metadata.labels = { ...labels };
  metadata.ownerReferences = [replicaSetOwnerRef(rs)];
  const spec = structuredClone(rs.spec.template.spec);
  if (!spec) throw new Error(`VirtualMachineInstanceReplicaSet ${rs.metadata?.namespace ?? ''}/${rs.metadata?.name ?? ''}: spec.template.spec is required`);
  return { apiVersion: API_VERSION, kind: Kind.VirtualMachineInstance, metadata, spec };
}

export interface ScalePlan {
  /** active − desired. */
  readonly diff: number;
  /** Names of active VMIs to delete (the first `diff`, in list order: KubeVirt does no ranking). */
  readonly deleteActive: string[];
  /** VMIs to create (each with generateName). */
  readonly create: VirtualMachineInstance[];
  /** Names of finished and unknown VMIs to delete (at most 250). */
  readonly cleanup: string[];
}

/**
 * What to do this round. Nothing unless the expectations of earlier rounds are satisfied, the
 * replica set is not paused and not being deleted. At most `burst` creations or deletions.
 */
export function planScale(
  rs: VirtualMachineInstanceReplicaSet,
  partition: Partition,
  opts: { expectationsSatisfied: boolean; burst?: number },
): ScalePlan {
  const diff = replicaDiff(rs, partition.active);
  const none: ScalePlan = { diff, deleteActive: [], create: [], cleanup: [] };
  if (!opts.expectationsSatisfied || rs.spec.paused === true || rs.metadata?.deletionTimestamp != null) return none;
  const burst = opts.burst ?? REPLICASET_BURST_REPLICAS;
  const n = Math.min(Math.abs(diff), burst);
  const deleteActive = diff > 0 ? partition.active.slice(0, n).map((v) => v.metadata?.name ?? '') : [];
  const create = diff < 0 ? Array.from({ length: n }, () => vmiFromTemplate(rs)) : [];
  const stale = [...partition.finished, ...partition.unknown];
  const cleanup = stale.slice(0, Math.min(stale.length, burst)).map((v) => v.metadata?.name ?? '');
  return { diff, deleteActive, create, cleanup };
}

export interface StatusResult {
  readonly status: VirtualMachineInstanceReplicaSetStatus;
  /** Whether the status differs enough to be written (KubeVirt's equilibrium check). */
  readonly changed: boolean;
  /** `SuccessfulPaused` / `SuccessfulResumed` when the pause state flipped. */
  readonly event?: { readonly reason: string; readonly message: string };
}

/**
 * `updateStatus`: replicas = active VMIs, readyReplicas = those with Ready=True, labelSelector
 * string, ReplicaPaused while paused, ReplicaFailure (FailedCreate/FailedDelete) while scaling
 * fails. Only written when one of those changed.
 */
export function replicaSetStatus(rs: VirtualMachineInstanceReplicaSet, active: readonly VirtualMachineInstance[], scaleError: Error | undefined, now: Date): StatusResult {
  const current = rs.status ?? {};
  const diff = replicaDiff(rs, active);
  const ready = active.filter((v) => hasConditionWithStatus(v.status?.conditions, POD_CONDITION_READY, 'True')).length;
  const selector = selectorString(compileLabelSelector(rs.spec.selector));
  const paused = rs.spec.paused === true;
  const statesMatch = active.length === (current.replicas ?? 0) && ready === (current.readyReplicas ?? 0);
  const errorsMatch = (scaleError !== undefined) === hasCondition(current.conditions, ReplicaSetConditionType.ReplicaFailure);
  const pausedMatch = paused === hasCondition(current.conditions, ReplicaSetConditionType.ReplicaPaused);
  const selectorMatch = selector === (current.labelSelector ?? '');
  if (statesMatch && errorsMatch && pausedMatch && selectorMatch) return { status: current, changed: false };

  const status: VirtualMachineInstanceReplicaSetStatus = structuredClone(current);
  status.labelSelector = selector;
  status.replicas = active.length;
  status.readyReplicas = ready;
  const t = toRFC3339Seconds(now);
  let conditions = status.conditions ?? [];
  if (paused && !hasCondition(conditions, ReplicaSetConditionType.ReplicaPaused)) {
    conditions = [...conditions, { type: ReplicaSetConditionType.ReplicaPaused, status: 'True', reason: ConditionReason.Paused, message: Messages.ReplicaSetPaused, lastTransitionTime: t }];
  } else if (!paused) conditions = removeCondition(conditions, ReplicaSetConditionType.ReplicaPaused);
  if (scaleError && !hasCondition(conditions, ReplicaSetConditionType.ReplicaFailure)) {
    conditions = [...conditions, { type: ReplicaSetConditionType.ReplicaFailure, status: 'True', reason: diff < 0 ? ConditionReason.FailedCreate : ConditionReason.FailedDelete, message: scaleError.message, lastTransitionTime: t }];
  } else if (!scaleError) conditions = removeCondition(conditions, ReplicaSetConditionType.ReplicaFailure);
  if (conditions.length > 0) status.conditions = conditions;
  else delete status.conditions;

  const result: StatusResult = { status, changed: true };
  if (!pausedMatch) return { ...result, event: paused ? { reason: EventReason.SuccessfulPaused, message: 'Paused' } : { reason: EventReason.SuccessfulResumed, message: 'Resumed' } };
  return result;
}
