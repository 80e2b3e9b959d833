// What the VM controller does about the VM's VMI under its run strategy
// (pkg/virt-controller/watch/vm/vm.go syncRunStrategy), as a pure decision: the VM, its VMI (if
// any) and the time go in, an ordered list of actions comes out for the shell to carry out. The
// effective strategy itself is the API's (src/api/run-strategy.ts), which virt-api reads too.
import { RunStrategy, VMConditionType, VMIPhase } from '../../src/api/constants.ts';
import { Messages } from '../constants.ts';
import { hasConditionWithStatus } from '../condition-list.ts';
import { startBackoffSecondsLeft } from './backoff.ts';
import { hasStartPausedRequest, hasStartRequest, hasStopRequestForVMI } from './state-change-requests.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineStateChangeRequest } from '../../src/api/types.ts';
import { effectiveRunStrategy, RunStrategyNotSupportedError, tryEffectiveRunStrategy, type RunStrategyName } from '../../src/api/run-strategy.ts';

export type RunStrategyAction =
  /** Create the VMI (see vmi-from-vm.ts); `paused` when the head request is a paused start. */
  | { readonly type: 'start'; readonly paused: boolean }
  /** Delete the VMI with this UID (precondition on the UID). */
  | { readonly type: 'delete-vmi'; readonly uid: string | undefined; readonly vmiPhase: string }
  /** Look at the VM again after this delay (crash-loop backoff). */
  | { readonly type: 'requeue'; readonly afterMs: number }
  /** Update the VM's spec: a paused start on a Halted VM flips it to Always / running=true. */
  | { readonly type: 'update-vm'; readonly patch: { readonly spec: { readonly runStrategy?: 'Always'; readonly running?: true } } }
  /** Append to `status.stateChangeRequests` (RerunOnFailure restarting a failed VMI). */
  | { readonly type: 'append-state-change'; readonly request: VirtualMachineStateChangeRequest };

export interface RunStrategyDecision {
  readonly strategy: RunStrategyName;
  readonly actions: readonly RunStrategyAction[];
  /** Why nothing was done, when that is worth a log line. */
  readonly note?: string;
}

const isFinal = (vmi: VirtualMachineInstance) => vmi.status?.phase === VMIPhase.Succeeded || vmi.status?.phase === VMIPhase.Failed;
const isDeleting = (vmi: VirtualMachineInstance) => vmi.metadata?.deletionTimestamp != null;

/** `stopVMI`: nothing to do for a VMI that is already being deleted. */
function deleteVMI(vmi: VirtualMachineInstance): RunStrategyAction[] {
  if (isDeleting(vmi)) return [];
  return [{ type: 'delete-vmi', uid: vmi.metadata?.uid, vmiPhase: vmi.status?.phase ?? '' }];
}

/** `startVMI`'s gates that do not need I/O: a VM needing manual recovery is never started. */
function start(vm: VirtualMachine, strategy: RunStrategyName): RunStrategyDecision {
  if (hasConditionWithStatus(vm.status?.conditions, VMConditionType.ManualRecoveryRequired, 'True')) {
    return { strategy, actions: [], note: 'VM has ManualRecoveryRequired=True; not starting' };
  }
  return { strategy, actions: [{ type: 'start', paused: hasStartPausedRequest(vm.status?.stateChangeRequests) }] };
}

function startHonouringBackoff(vm: VirtualMachine, strategy: RunStrategyName, now: Date): RunStrategyDecision {
  const left = startBackoffSecondsLeft(vm.status?.startFailure, now);
  if (left > 0) {
    return { strategy, actions: [{ type: 'requeue', afterMs: left * 1000 }], note: `start delayed by crash-loop backoff: ${left}s left` };
  }
  return start(vm, strategy);
}

/**
 * The run strategy table of KubeVirt's VM controller:
 *
 * | strategy       | VMI exists                                                         | no VMI                                    |
 * |----------------|--------------------------------------------------------------------|-------------------------------------------|
 * | Always         | stop request for this VMI, or VMI final → delete it                 | backoff left → requeue; else start        |
 * | RerunOnFailure | not deleting and (stop request / Failed / Succeeded) → delete;     | head Start, or status.runStrategy differs |
 * |                | Failed also appends a Start request                                 | (just switched) → start, with backoff     |
 * | Manual         | stop request for this VMI → delete                                  | head Start → start                        |
 * | Halted         | delete                                                              | head Start (paused start) → runStrategy   |
 * |                |                                                                     | Always (running=true if legacy field)     |
 * | Once           | nothing                                                             | start                                     |
 * | WaitAsReceiver | not supported by qvirt (decentralized migration receiver)           |                                           |
 *
 * Throws RunStrategyConflictError / RunStrategyNotSupportedError; the shell records those as the
 * VM's Failure condition with reason FailedCreate, as KubeVirt does for its sync errors.
 * Decentralized (cross-cluster) migration special cases of Always are not modelled: qvirt has no
 * decentralized migration.
 */
export function syncRunStrategy(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, now: Date): RunStrategyDecision {
  const strategy = effectiveRunStrategy(vm);
  const requests = vm.status?.stateChangeRequests;
  switch (strategy) {
    case RunStrategy.Always: {
      if (vmi) {
        if (hasStopRequestForVMI(requests, vmi) || isFinal(vmi)) return { strategy, actions: deleteVMI(vmi) };
        return { strategy, actions: [] };
      }
      return startHonouringBackoff(vm, strategy, now);
    }
    case RunStrategy.RerunOnFailure: {
      if (vmi) {
        const failed = vmi.status?.phase === VMIPhase.Failed;
        const succeeded = vmi.status?.phase === VMIPhase.Succeeded;
        if (!isDeleting(vmi) && (hasStopRequestForVMI(requests, vmi) || failed || succeeded)) {
          const actions: RunStrategyAction[] = deleteVMI(vmi);
          if (failed) actions.push({ type: 'append-state-change', request: { action: 'Start' } });
          return { strategy, actions };
        }
        return { strategy, actions: [] };
      }
      const justSwitched = (vm.status?.runStrategy ?? '') !== strategy;
      if (!hasStartRequest(requests) && !justSwitched) return { strategy, actions: [] };
      return startHonouringBackoff(vm, strategy, now);
    }
    case RunStrategy.Manual: {
      if (vmi) return { strategy, actions: hasStopRequestForVMI(requests, vmi) ? deleteVMI(vmi) : [] };
      return hasStartRequest(requests) ? start(vm, strategy) : { strategy, actions: [] };
    }
    case RunStrategy.Halted: {
      if (vmi) return { strategy, actions: deleteVMI(vmi) };
      if (hasStartRequest(requests)) {
        const patch = vm.spec.runStrategy !== undefined ? { spec: { runStrategy: 'Always' as const } } : { spec: { running: true as const } };
        return { strategy, actions: [{ type: 'update-vm', patch }] };
      }
      return { strategy, actions: [] };
    }
    case RunStrategy.Once:
      return vmi ? { strategy, actions: [] } : start(vm, strategy);
    case RunStrategy.WaitAsReceiver:
      throw new RunStrategyNotSupportedError(vm.metadata?.name ?? '', strategy, `decentralized (cross-cluster) migration receivers are not implemented by qvirt (${Messages.NonReceiverVMI})`);
  }
}

/** `isSetToStart`: whether the VM is meant to be running (used for WaitingForVolumeBinding). */
export function isSetToStart(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): boolean {
  const strategy = tryEffectiveRunStrategy(vm);
  const requests = vm.status?.stateChangeRequests;
  switch (strategy) {
    case RunStrategy.Always:
      return true;
    case RunStrategy.Manual:
      return vmi ? !hasStopRequestForVMI(requests, vmi) : hasStartRequest(requests);
    case RunStrategy.RerunOnFailure:
      if (vmi) return vmi.status?.phase !== VMIPhase.Succeeded;
      return hasStartRequest(requests) || (vm.status?.runStrategy ?? '') !== strategy;
    case RunStrategy.Once:
      return vmi === undefined;
    default:
      return false;
  }
}
