// The VM's `status.printableStatus` (`kubectl get vm` STATUS column), as KubeVirt's
// setPrintableStatus computes it: a fixed list of predicates, first match wins. Several can hold
// at once (Running and Migrating, Paused and Terminating); the order is the precedence.
import { ConditionReason, PrintableStatus, RunStrategy, VMIConditionType, VMIPhase } from '../../src/api/constants.ts';
import { findCondition, hasConditionWithStatus, hasConditionWithStatusAndReason } from '../condition-list.ts';
import { isSetToStart } from './run-strategy.ts';
import { tryEffectiveRunStrategy } from '../../src/api/run-strategy.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePrintableStatus as PrintableStatusName } from '../../src/api/types.ts';

/** What the status depends on besides the two objects: cache state and storage lookups. */
export interface PrintableStatusContext {
  readonly now: Date;
  /** The controller expects a VMI creation it has not observed yet (expectations: adds > 0). */
  readonly vmiStartExpected: boolean;
  /** The controller expects a VMI deletion it has not observed yet (expectations: dels > 0). */
  readonly vmiStopExpected: boolean;
  /** A DataVolume of the template reports an error (qvirt has no CDI: normally false). */
  readonly dataVolumeError?: boolean;
  /** A DataVolume of the template is still provisioning. */
  readonly dataVolumeProvisioning?: boolean;
  /** A PVC the template uses exists but is not bound yet. */
  readonly unboundPVC?: boolean;
}

const isFinal = (vmi: VirtualMachineInstance) => vmi.status?.phase === VMIPhase.Succeeded || vmi.status?.phase === VMIPhase.Failed;
const phaseOf = (vmi: VirtualMachineInstance) => vmi.status?.phase ?? '';

/** `migrations.IsMigrating`: started at or before now and not yet ended at or before now. */
export function isMigrating(vmi: VirtualMachineInstance, now: Date): boolean {
  const state = vmi.status?.migrationState;
  if (!state) return false;
  const t = now.getTime();
  let running = false;
  if (state.startTimestamp && Date.parse(state.startTimestamp) <= t) running = true;
  if (state.endTimestamp && Date.parse(state.endTimestamp) <= t) running = false;
  return running;
}

function pausedTrue(vmi: VirtualMachineInstance): boolean {
  return hasConditionWithStatus(vmi.status?.conditions, VMIConditionType.Paused, 'True');
}

function syncFailedWith(vmi: VirtualMachineInstance | undefined, reason: string): boolean {
  const c = findCondition(vmi?.status?.conditions, VMIConditionType.Synchronized);
  return c !== undefined && c.status === 'False' && c.reason === reason;
}

type Rule = readonly [PrintableStatusName, (vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, ctx: PrintableStatusContext) => boolean];

/** The precedence list, in KubeVirt's order. Exported so tests can walk it. */
export const PRINTABLE_STATUS_RULES: readonly Rule[] = [
  [PrintableStatus.Terminating, (vm) => vm.metadata?.deletionTimestamp != null],
  [PrintableStatus.Stopping, (_vm, vmi, ctx) => vmi !== undefined && !isFinal(vmi) && (vmi.metadata?.deletionTimestamp != null || ctx.vmiStopExpected)],
  [PrintableStatus.Migrating, (_vm, vmi, ctx) => vmi !== undefined && isMigrating(vmi, ctx.now)],
  [PrintableStatus.Paused, (_vm, vmi) => vmi !== undefined && phaseOf(vmi) === VMIPhase.Running && pausedTrue(vmi)],
  [PrintableStatus.Running, (_vm, vmi) => vmi !== undefined && phaseOf(vmi) === VMIPhase.Running && !pausedTrue(vmi)],
  [PrintableStatus.ErrorPvcNotFound, (_vm, vmi) => syncFailedWith(vmi, ConditionReason.FailedPvcNotFound)],
  [PrintableStatus.DataVolumeError, (_vm, _vmi, ctx) => ctx.dataVolumeError === true],
  [PrintableStatus.ErrorUnschedulable, (_vm, vmi) => hasConditionWithStatusAndReason(vmi?.status?.conditions, VMIConditionType.PodScheduled, 'False', ConditionReason.Unschedulable)],
  [PrintableStatus.Provisioning, (_vm, _vmi, ctx) => ctx.dataVolumeProvisioning === true],
  [PrintableStatus.WaitingForVolumeBinding, (vm, vmi, ctx) => isSetToStart(vm, vmi) && ctx.unboundPVC === true],
  [PrintableStatus.ErrImagePull, (_vm, vmi) => syncFailedWith(vmi, ConditionReason.ErrImagePull)],
  [PrintableStatus.ImagePullBackOff, (_vm, vmi) => syncFailedWith(vmi, ConditionReason.ImagePullBackOff)],
  [
    PrintableStatus.Starting,
    (_vm, vmi, ctx) => {
      if (!vmi) return ctx.vmiStartExpected;
      const p = phaseOf(vmi);
      return p === VMIPhase.Unset || p === VMIPhase.Pending || p === VMIPhase.Scheduling || p === VMIPhase.Scheduled;
    },
  ],
  [
    PrintableStatus.CrashLoopBackOff,
    (vm, vmi, ctx) => {
      if (vmi && !isFinal(vmi)) return false;
      if (ctx.vmiStartExpected) return false;
      const strategy = tryEffectiveRunStrategy(vm);
      const count = vm.status?.startFailure?.consecutiveFailCount ?? 0;
      return count > 0 && (strategy === RunStrategy.Always || strategy === RunStrategy.RerunOnFailure || strategy === RunStrategy.Once);
    },
  ],
  [PrintableStatus.Stopped, (_vm, vmi, ctx) => (vmi ? isFinal(vmi) : !ctx.vmiStartExpected)],
  [
    PrintableStatus.WaitingForReceiver,
    (vm, vmi) => (vmi === undefined || phaseOf(vmi) === VMIPhase.WaitingForSync) && tryEffectiveRunStrategy(vm) === RunStrategy.WaitAsReceiver,
  ],
];

/** The first matching status, or `Unknown`. */
export function printableStatus(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, ctx: PrintableStatusContext): PrintableStatusName {
  for (const [status, matches] of PRINTABLE_STATUS_RULES) {
    if (matches(vm, vmi, ctx)) return status;
  }
  return PrintableStatus.Unknown;
}
