// The migration controller's decisions for a local live migration
// (pkg/virt-controller/watch/migration/migration.go): the failure checks and phase transitions of a
// VirtualMachineInstanceMigration (updateStatus), what to do next (sync: throttle and create the
// target pod, time out a pending target pod, hand the VMI over to the target node, signal an
// abort), and which finished migrations to garbage-collect. Decentralized (cross-cluster)
// migrations are not modelled: qvirt does not implement them.
import { Annotation, ConditionReason, EventReason, Finalizer, Label, MigrationConditionType, MigrationPhase, VMIConditionType, isFinalMigrationPhase, isFinalVMIPhase } from '../../src/api/constants.ts';
import { DEFAULT_CATCH_ALL_PENDING_TIMEOUT_SECONDS, DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER, DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE, DEFAULT_UNSCHEDULABLE_PENDING_TIMEOUT_SECONDS, FINALIZED_MIGRATION_GC_BUFFER, POD_CONDITION_SCHEDULED } from '../constants.ts';
import { hasCondition, hasConditionWithStatus, removeCondition } from '../condition-list.ts';
import { isPodReady, podIsDown } from '../pod-state.ts';
import { toRFC3339Seconds } from '../vm/backoff.ts';
import type { Pod } from '../pod.ts';
import type {
  VirtualMachineInstance,
  VirtualMachineInstanceMigration,
  VirtualMachineInstanceMigrationPhase,
  VirtualMachineInstanceMigrationState,
  VMIMConfigurationOptions,
} from '../../src/api/types.ts';

type VMIM = VirtualMachineInstanceMigration;
const uidOf = (m: VMIM) => m.metadata?.uid ?? '';
const phaseOf = (m: VMIM): VirtualMachineInstanceMigrationPhase => m.status?.phase ?? MigrationPhase.Unset;

/** The target pod exists from Scheduling on (`TargetIsCreated`). */
export function targetIsCreated(m: VMIM): boolean {
  const p = phaseOf(m);
  return p !== MigrationPhase.Unset && p !== MigrationPhase.Pending && p !== MigrationPhase.WaitingForSync && p !== MigrationPhase.Synchronizing;
}

/** The VMI was handed to the node agents: PreparingTarget and later (`TargetIsHandedOff`). */
export function targetIsHandedOff(m: VMIM): boolean {
  const p = phaseOf(m);
  return targetIsCreated(m) && p !== MigrationPhase.Scheduling && p !== MigrationPhase.Scheduled;
}

/** The VMI's migration state belongs to this migration. */
function stateIsOurs(vmi: VirtualMachineInstance, m: VMIM): boolean {
  return vmi.status?.migrationState !== undefined && vmi.status.migrationState.migrationUid === uidOf(m);
}

/**
 * `canMigrateVMI`: free when the VMI has no migration state, the state is this migration's or
 * names none, or its migration is final or gone.
 */
export function canMigrateVMI(m: VMIM, vmi: VirtualMachineInstance, migrations: readonly VMIM[]): boolean {
  const state = vmi.status?.migrationState;
  if (!state || !state.migrationUid || state.migrationUid === uidOf(m)) return true;
  const current = migrations.find((x) => uidOf(x) === state.migrationUid);
  return current === undefined || isFinalMigrationPhase(current.status?.phase);
}

export interface MigrationStatusInputs {
  readonly migration: VMIM;
  readonly vmi: VirtualMachineInstance | undefined;
  /** The migration's target pod (label kubevirt.io/migrationJobUID = its UID), if any. */
  readonly targetPod: Pod | undefined;
  /** Name of the VMI's current (source) launcher pod. */
  readonly sourcePodName?: string | undefined;
  /** All migrations in the namespace (for `canMigrateVMI`). */
  readonly migrations: readonly VMIM[];
  /** The controller handed this migration off in an earlier round (its in-memory hand-off set). */
  readonly handedOffEarlier?: boolean;
  /** Error of this round's sync (quota errors set migrationRejectedByResourceQuota). */
  readonly syncError?: Error | undefined;
  readonly now: Date;
}

export interface ControllerEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface MigrationStatusUpdate {
  readonly migration: VMIM;
  readonly events: readonly ControllerEvent[];
}

const failedEvent = (message: string): ControllerEvent => ({ type: 'Warning', reason: EventReason.FailedMigration, message });

/** The failure checks, in KubeVirt's order; the first that applies decides. */
function failureCheck(inputs: MigrationStatusInputs, handedOff: boolean): ControllerEvent | 'abort-condition' | undefined {
  const { migration: m, vmi, targetPod } = inputs;
  if (!vmi) return failedEvent('Migration failed because vmi does not exist.');
  // A local migration's VMI is never a "migration source" in the decentralized sense.
  if (isFinalVMIPhase(vmi.status?.phase)) return failedEvent('Migration failed vmi shutdown during migration.');
  if (m.metadata?.deletionTimestamp != null && !handedOff) return failedEvent('Migration failed due to being canceled');
  if (targetPod && podIsDown(targetPod)) return failedEvent('Migration failed because target pod shutdown during migration');
  if (targetIsCreated(m) && !targetPod) return failedEvent('Migration target pod was removed during active migration.');
  if (targetIsHandedOff(m) && !vmi.status?.migrationState) return failedEvent("VMI's migration state was cleared during the active migration.");
  if (targetIsHandedOff(m) && vmi.status?.migrationState && !stateIsOurs(vmi, m)) return failedEvent("VMI's migration state was taken over by another migration job during active migration.");
  if (stateIsOurs(vmi, m) && vmi.status?.migrationState?.failed) return failedEvent('source node reported migration failed');
  if (m.metadata?.deletionTimestamp != null && !hasCondition(m.status?.conditions, MigrationConditionType.AbortRequested)) return 'abort-condition';
  return undefined;
}

/**
 * The phase machine of a local migration:
 *
 * | phase           | next when                                                                     |
 * |-----------------|-------------------------------------------------------------------------------|
 * | ""              | no other unfinished migration owns the VMI → Pending; else Failed             |
 * | Pending         | target pod exists → Scheduling (quota error → migrationRejectedByResourceQuota) |
 * | Scheduling      | target pod ready (IsPodReady) → Scheduled                                     |
 * | Scheduled       | VMI migrationState is ours with a targetNode (handoff done) → PreparingTarget  |
 * | PreparingTarget | targetNode and targetNodeAddress set → TargetReady                            |
 * | TargetReady     | startTimestamp set → Running                                                  |
 * | Running         | completed, no HotVCPUChange, HotMemoryChange/MigrationRequired not True → Succeeded |
 */
function nextPhase(inputs: MigrationStatusInputs, out: VMIM, events: ControllerEvent[]): void {
  const { migration: m, vmi, targetPod } = inputs;
  const status = out.status!;
  const state = vmi?.status?.migrationState;
  switch (phaseOf(m)) {
    case MigrationPhase.Unset:
      if (vmi && canMigrateVMI(m, vmi, inputs.migrations)) status.phase = MigrationPhase.Pending;
      else {
        status.phase = MigrationPhase.Failed;
        events.push(failedEvent('VMI is not eligible for migration because another migration job is in progress.'));
      }
      return;
    case MigrationPhase.Pending:
      if (targetPod) status.phase = MigrationPhase.Scheduling;
      else if (inputs.syncError && inputs.syncError.message.includes('exceeded quota') && !hasCondition(m.status?.conditions, MigrationConditionType.RejectedByResourceQuota)) {
        status.conditions = [...(status.conditions ?? []), { type: MigrationConditionType.RejectedByResourceQuota, status: 'True', lastProbeTime: toRFC3339Seconds(inputs.now) }];
      }
      return;
    case MigrationPhase.Scheduling:
      status.conditions = removeCondition(status.conditions, MigrationConditionType.RejectedByResourceQuota);
      if (status.conditions.length === 0) delete status.conditions;
      if (targetPod && isPodReady(targetPod)) status.phase = MigrationPhase.Scheduled;
      return;
    case MigrationPhase.Scheduled:
      if (vmi && stateIsOurs(vmi, m) && state?.targetNode) status.phase = MigrationPhase.PreparingTarget;
      return;
    case MigrationPhase.PreparingTarget:
      if (state?.targetNode && state.targetNodeAddress) status.phase = MigrationPhase.TargetReady;
      return;
    case MigrationPhase.TargetReady:
      // A migration that finished before the source node wrote its start (a fast one: the target
      // took the VMI over, the source's informer lost it) has run all the same.
      if (state?.startTimestamp || state?.completed) status.phase = MigrationPhase.Running;
      return;
    case MigrationPhase.Running: {
      const conds = vmi?.status?.conditions;
      if (
        state?.completed &&
        !hasCondition(conds, VMIConditionType.HotVCPUChange) &&
        !hasConditionWithStatus(conds, VMIConditionType.HotMemoryChange, 'True') &&
        !hasConditionWithStatus(conds, VMIConditionType.MigrationRequired, 'True')
      ) {
        status.phase = MigrationPhase.Succeeded;
        events.push({ type: 'Normal', reason: EventReason.SuccessfulMigration, message: 'Source node reported migration succeeded' });
      }
      return;
    }
    default:
      return;
  }
}

/** One pass of `updateStatus`: the migration as it should be and the events to record. */
export function migrationStatusUpdate(inputs: MigrationStatusInputs): MigrationStatusUpdate {
  const m = inputs.migration;
  const out: VMIM = structuredClone(m);
  out.status = out.status ?? {};
  const events: ControllerEvent[] = [];
  const vmi = inputs.vmi;
  const handedOff = (vmi !== undefined && stateIsOurs(vmi, m)) || inputs.handedOffEarlier === true;

  if (isFinalMigrationPhase(m.status?.phase)) {
    if (vmi?.status?.migrationState && stateIsOurs(vmi, m)) out.status.migrationState = structuredClone(vmi.status.migrationState);
    const f = (out.metadata?.finalizers ?? []).filter((x) => x !== Finalizer.Migration);
    if (out.metadata) {
      if (f.length > 0) out.metadata.finalizers = f;
      else delete out.metadata.finalizers;
    }
  } else {
    const check = failureCheck(inputs, handedOff);
    if (check === 'abort-condition') {
      out.status.conditions = [...(out.status.conditions ?? []), { type: MigrationConditionType.AbortRequested, status: 'True', lastProbeTime: toRFC3339Seconds(inputs.now) }];
    } else if (check) {
      if (check.message === 'Migration failed due to being canceled' && !hasCondition(m.status?.conditions, MigrationConditionType.AbortRequested)) {
        out.status.conditions = [...(out.status.conditions ?? []), { type: MigrationConditionType.AbortRequested, status: 'True', lastProbeTime: toRFC3339Seconds(inputs.now) }];
      }
      out.status.phase = MigrationPhase.Failed;
      events.push(check);
    } else {
      nextPhase(inputs, out, events);
    }
  }

  const newPhase = out.status.phase ?? MigrationPhase.Unset;
  if (newPhase !== (m.status?.phase ?? MigrationPhase.Unset) && !(out.status.phaseTransitionTimestamps ?? []).some((t) => t.phase === newPhase)) {
    out.status.phaseTransitionTimestamps = [...(out.status.phaseTransitionTimestamps ?? []), { phase: newPhase, phaseTransitionTimestamp: toRFC3339Seconds(inputs.now) }];
  }
  // `SetSourcePod`: while Pending, remember which pod the VMI migrates away from.
  if (out.status.phase === MigrationPhase.Pending && inputs.sourcePodName) {
    out.status.migrationState = { ...(out.status.migrationState ?? {}), sourcePod: inputs.sourcePodName };
  }
  return { migration: out, events };
}

// ---------------------------------------------------------------------------------------------
// sync: what to do about the target pod and the VMI

export interface ThrottleInputs {
  /** Target pod creations the controller issued but has not seen yet (all migrations). */
  readonly pendingPodCreations: number;
  /** Unfinished pods the VMI controls (source + any target). */
  readonly vmiActivePods: number;
  /** Migrations running, or unfinished with a target pod already (`findRunningMigrations`). */
  readonly runningMigrations: readonly { readonly migration: VMIM; readonly vmi: VirtualMachineInstance | undefined }[];
  readonly parallelMigrationsPerCluster?: number;
  readonly parallelOutboundMigrationsPerNode?: number;
}

/** Requeue delay for a throttled migration by its priority (`getRequeueDelayForPriority`). */
export function requeueDelayForPriority(m: VMIM): number {
  switch (m.spec.priority) {
    case 'system-critical':
      return 1000;
    case 'user-triggered':
      return 3000;
    default:
      return 5000;
  }
}

/** Migrations leaving `node`: their VMI runs there or came from there (`outboundMigrationsOnNode`). */
export function outboundMigrationsOnNode(node: string | undefined, running: ThrottleInputs['runningMigrations']): number {
  return running.filter(({ vmi }) => vmi !== undefined && (vmi.status?.nodeName === node || vmi.status?.migrationState?.sourceNode === node)).length;
}

/**
 * `findRunningMigrations`: unfinished migrations that are Running, or that already have a target
 * pod. `targetPodFor` says whether a migration has one.
 */
export function findRunningMigrations(
  migrations: readonly VMIM[],
  vmiFor: (m: VMIM) => VirtualMachineInstance | undefined,
  targetPodFor: (m: VMIM) => boolean,
): ThrottleInputs['runningMigrations'] {
  const out: { migration: VMIM; vmi: VirtualMachineInstance | undefined }[] = [];
  for (const m of migrations) {
    if (isFinalMigrationPhase(m.status?.phase)) continue;
    const vmi = vmiFor(m);
    if (m.status?.phase === MigrationPhase.Running) out.push({ migration: m, vmi });
    else if (vmi && targetPodFor(m)) out.push({ migration: m, vmi });
  }
  return out;
}

export type ThrottleDecision =
  | { readonly type: 'create-target-pod' }
  | { readonly type: 'wait'; readonly afterMs: number; readonly reason: string };

/**
 * `handleTargetPodCreation`'s gate: wait 1 s while target pod creations are in flight or the VMI
 * already has more than one pod; wait (by priority) while the cluster runs
 * `parallelMigrationsPerCluster` (5) migrations or the source node `parallelOutboundMigrationsPerNode` (2).
 */
export function throttleTargetPodCreation(m: VMIM, vmi: VirtualMachineInstance, t: ThrottleInputs): ThrottleDecision {
  if (t.pendingPodCreations > 0) return { type: 'wait', afterMs: 1000, reason: 'waiting for the cache to see target pods created earlier' };
  if (t.vmiActivePods > 1) return { type: 'wait', afterMs: 1000, reason: `there are already multiple pods running for vmi ${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}` };
  const perCluster = t.parallelMigrationsPerCluster ?? DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER;
  if (t.runningMigrations.length >= perCluster) {
    return { type: 'wait', afterMs: requeueDelayForPriority(m), reason: `total running parallel migration count [${t.runningMigrations.length}] is at the global cluster limit` };
  }
  const perNode = t.parallelOutboundMigrationsPerNode ?? DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE;
  const outbound = outboundMigrationsOnNode(vmi.status?.nodeName, t.runningMigrations);
  if (outbound >= perNode) {
    return { type: 'wait', afterMs: requeueDelayForPriority(m), reason: `total running parallel outbound migrations on node [${outbound}] has hit the outbound migrations per node limit` };
  }
  return { type: 'create-target-pod' };
}

function timeoutFromAnnotation(m: VMIM, key: string, fallback: number): number {
  const raw = m.metadata?.annotations?.[key];
  if (raw === undefined) return fallback;
  const n = Number.parseInt(raw, 10);
  return Number.isFinite(n) && String(n) === raw.trim() ? n : fallback;
}

export type PendingPodDecision =
  | { readonly type: 'none' }
  | { readonly type: 'delete-target-pod'; readonly message: string; readonly unschedulable: boolean }
  | { readonly type: 'recheck'; readonly afterMs: number; readonly unschedulable: boolean };

/**
 * `handlePendingPodTimeout`: a target pod still Pending is deleted after 5 min unschedulable
 * (`kubevirt.io/migrationUnschedulablePodTimeoutSeconds`) or 15 min in any case
 * (`kubevirt.io/migrationPendingPodTimeoutSeconds`); until then look again when the first
 * timeout would expire.
 */
export function pendingTargetPodTimeout(m: VMIM, pod: Pod, now: Date): PendingPodDecision {
  const created = pod.metadata?.creationTimestamp;
  if (pod.status?.phase !== 'Pending' || pod.metadata?.deletionTimestamp != null || !created) return { type: 'none' };
  const unschedulableTimeout = timeoutFromAnnotation(m, Annotation.MigrationUnschedulablePodTimeoutSeconds, DEFAULT_UNSCHEDULABLE_PENDING_TIMEOUT_SECONDS);
  const catchAllTimeout = timeoutFromAnnotation(m, Annotation.MigrationPendingPodTimeoutSeconds, DEFAULT_CATCH_ALL_PENDING_TIMEOUT_SECONDS);
  const pending = Math.max(0, Math.floor(now.getTime() / 1000) - Math.floor(Date.parse(created) / 1000));
  const unschedulable = (pod.status.conditions ?? []).some((c) => c.type === POD_CONDITION_SCHEDULED && c.status === 'False' && c.reason === ConditionReason.Unschedulable);
  const where = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  let recheck = Infinity;
  if (unschedulable) {
    if (pending >= unschedulableTimeout) return { type: 'delete-target-pod', message: `unschedulable pod ${where} timeout period exceeded`, unschedulable };
    recheck = unschedulableTimeout - pending;
  }
  if (pending >= catchAllTimeout) return { type: 'delete-target-pod', message: `pending pod ${where} timeout period exceeded`, unschedulable };
  recheck = Math.min(recheck, catchAllTimeout - pending);
  return { type: 'recheck', afterMs: recheck * 1000, unschedulable };
}

/**
 * `handleTargetPodHandoff`: the VMI changes that tell the target node agent to prepare — a fresh
 * `status.migrationState` and the `kubevirt.io/migrationTargetNodeName` label. Undefined when the
 * VMI already carries this migration's state.
 */
export function handoffVMI(m: VMIM, vmi: VirtualMachineInstance, targetPod: Pod, migrationConfiguration?: VMIMConfigurationOptions): VirtualMachineInstance | undefined {
  if (stateIsOurs(vmi, m)) return undefined;
  const next = structuredClone(vmi);
  const state: VirtualMachineInstanceMigrationState = {
    migrationUid: uidOf(m),
    targetNode: targetPod.spec?.nodeName ?? '',
    sourceNode: vmi.status?.nodeName ?? '',
    targetPod: targetPod.metadata?.name ?? '',
  };
  // KubeVirt copies the effective migration configuration (cluster config + policy) for the node agents.
  if (migrationConfiguration) state.migrationConfiguration = { ...migrationConfiguration };
  const fromMigration = m.status?.migrationState;
  if (fromMigration?.sourcePod) state.sourcePod = fromMigration.sourcePod;
  if (fromMigration?.sourcePersistentStatePVCName) state.sourcePersistentStatePVCName = fromMigration.sourcePersistentStatePVCName;
  if (fromMigration?.targetPersistentStatePVCName) state.targetPersistentStatePVCName = fromMigration.targetPersistentStatePVCName;
  next.status = { ...(next.status ?? {}), migrationState: state };
  next.metadata = { ...(next.metadata ?? {}), labels: { ...(next.metadata?.labels ?? {}), [Label.MigrationTargetNodeName]: targetPod.spec?.nodeName ?? '' } };
  return next;
}

export type MigrationSyncAction =
  | { readonly type: 'none' }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'create-target-pod' }
  | { readonly type: 'wait'; readonly afterMs: number; readonly reason: string }
  | { readonly type: 'delete-target-pod'; readonly message: string }
  | { readonly type: 'recheck'; readonly afterMs: number }
  | { readonly type: 'handoff'; readonly vmi: VirtualMachineInstance }
  /** Target pod died before the migration started: mark it failed on the VMI (JSON patch with a test on migrationUid). */
  | { readonly type: 'mark-failed-on-vmi'; readonly migrationState: VirtualMachineInstanceMigrationState }
  /** VMIM deleted while Running: ask the source node agent to cancel. */
  | { readonly type: 'abort-on-vmi'; readonly migrationState: VirtualMachineInstanceMigrationState };

export interface MigrationSyncInputs {
  readonly migration: VMIM;
  readonly vmi: VirtualMachineInstance | undefined;
  readonly targetPod: Pod | undefined;
  /** The VMI's current launcher pod (the source). */
  readonly sourcePod: Pod | undefined;
  readonly migrations: readonly VMIM[];
  readonly handedOffEarlier?: boolean;
  readonly throttle: ThrottleInputs;
  readonly now: Date;
  /** The cluster's migration configuration, copied into migrationState at hand-off. */
  readonly migrationConfiguration?: VMIMConfigurationOptions | undefined;
}

function markedFailed(state: VirtualMachineInstanceMigrationState, now: Date): VirtualMachineInstanceMigrationState {
  const t = toRFC3339Seconds(now);
  return { ...state, failed: true, completed: true, endTimestamp: state.endTimestamp ?? t, startTimestamp: state.startTimestamp ?? t, failureReason: state.failureReason || 'Target pod is down' };
}

/** `sync`: the one action to take for this migration now (status is handled by migrationStatusUpdate). */
export function migrationSyncAction(inputs: MigrationSyncInputs): MigrationSyncAction {
  const { migration: m, vmi, targetPod } = inputs;
  if (!vmi || vmi.metadata?.deletionTimestamp != null) return { type: 'none' };
  const state = vmi.status?.migrationState;
  if (stateIsOurs(vmi, m) && state?.completed) return { type: 'none' };
  if (!canMigrateVMI(m, vmi, inputs.migrations)) return { type: 'error', message: 'vmi is ineligible for migration because another migration job is running' };
  const deleting = m.metadata?.deletionTimestamp != null;
  const handedOff = stateIsOurs(vmi, m) || inputs.handedOffEarlier === true;

  switch (phaseOf(m)) {
    case MigrationPhase.Pending:
      if (deleting) return targetPod ? { type: 'delete-target-pod', message: `migration canceled and pod ${targetPod.metadata?.namespace ?? ''}/${targetPod.metadata?.name ?? ''} is deleted` } : { type: 'none' };
      if (!targetPod) {
        if (!inputs.sourcePod) return { type: 'none' };
        const gate = throttleTargetPodCreation(m, vmi, inputs.throttle);
        // Accepted into the system; only a running VMI gets a target pod.
        if (gate.type === 'create-target-pod' && vmi.status?.phase !== 'Running') return { type: 'none' };
        return gate;
      }
      if (isPodReady(targetPod)) return { type: 'none' };
      return fromPending(pendingTargetPodTimeout(m, targetPod, inputs.now));
    case MigrationPhase.Scheduling:
      if (deleting) return targetPod ? { type: 'delete-target-pod', message: `migration canceled and pod ${targetPod.metadata?.namespace ?? ''}/${targetPod.metadata?.name ?? ''} is deleted` } : { type: 'none' };
      return targetPod ? fromPending(pendingTargetPodTimeout(m, targetPod, inputs.now)) : { type: 'none' };
    case MigrationPhase.Scheduled: {
      if (deleting && !handedOff) return targetPod ? { type: 'delete-target-pod', message: `migration canceled and pod ${targetPod.metadata?.namespace ?? ''}/${targetPod.metadata?.name ?? ''} is deleted` } : { type: 'none' };
      if (targetPod && isPodReady(targetPod)) {
        const next = handoffVMI(m, vmi, targetPod, inputs.migrationConfiguration);
        return next ? { type: 'handoff', vmi: next } : { type: 'none' };
      }
      return { type: 'none' };
    }
    case MigrationPhase.PreparingTarget:
    case MigrationPhase.TargetReady:
      if ((!targetPod || podIsDown(targetPod)) && state && stateIsOurs(vmi, m) && !state.startTimestamp && !state.failed && !state.completed) {
        return { type: 'mark-failed-on-vmi', migrationState: markedFailed(state, inputs.now) };
      }
      return { type: 'none' };
    case MigrationPhase.Failed:
      if (state && stateIsOurs(vmi, m) && !state.failed) return { type: 'mark-failed-on-vmi', migrationState: markedFailed(state, inputs.now) };
      return { type: 'none' };
    case MigrationPhase.Running:
      if (deleting && state && !state.abortRequested) return { type: 'abort-on-vmi', migrationState: { ...state, abortRequested: true } };
      return { type: 'none' };
    default:
      return { type: 'none' };
  }
}

function fromPending(d: PendingPodDecision): MigrationSyncAction {
  switch (d.type) {
    case 'none':
      return { type: 'none' };
    case 'delete-target-pod':
      return { type: 'delete-target-pod', message: d.message };
    case 'recheck':
      return { type: 'recheck', afterMs: d.afterMs };
  }
}

// ---------------------------------------------------------------------------------------------
// garbage collection

export interface GarbageCollection {
  /** Migration name → the defunct pod to delete with it (failed: its target pod; succeeded: the old source pod). */
  readonly delete: readonly { readonly migration: string; readonly pod?: string }[];
}

/** `garbageCollectFinalizedMigrations`: keep the 5 newest finalized migrations of a VMI. */
export function finalizedMigrationsToCollect(migrationsOfVMI: readonly VMIM[], keep: number = FINALIZED_MIGRATION_GC_BUFFER): GarbageCollection {
  const finalized = migrationsOfVMI
    .filter((m) => isFinalMigrationPhase(m.status?.phase) && m.metadata?.deletionTimestamp == null)
    .map((m, i) => ({ m, i, t: Date.parse(m.metadata?.creationTimestamp ?? '') || 0 }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((x) => x.m);
  const n = finalized.length - keep;
  if (n <= 0) return { delete: [] };
  return {
    delete: finalized.slice(0, n).map((m) => {
      const s = m.status?.migrationState;
      const pod = s?.failed ? s.targetPod : s?.completed ? s.sourcePod : undefined;
      return pod ? { migration: m.metadata?.name ?? '', pod } : { migration: m.metadata?.name ?? '' };
    }),
  };
}
