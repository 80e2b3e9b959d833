// What virt-api does for the VM's start, stop and restart subresources
// (pkg/virt-api/rest/lifecycle.go), as pure decisions: the VM, its VMI (if any) and the options go
// in; either the refusal virt-api would answer (409 Conflict / 400 Bad Request, with its message)
// or the JSON patches to send comes out. qvirt's virt-api (subresource-api.ts) sends them for
// virtctl; qvirt's CLI sends the same patches with the user's own credentials.
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineStateChangeRequest } from '../api/types.ts';
import { ConditionStatus, RunStrategy, StateChangeRequestAction, START_REQUEST_DATA_PAUSED_KEY, START_REQUEST_DATA_PAUSED_TRUE, VMConditionType, VMIConditionType, VMIPhase, isFinalVMIPhase } from '../api/constants.ts';
import { effectiveRunStrategy } from '../api/run-strategy.ts';

export interface JsonPatchOp {
  readonly op: 'test' | 'add' | 'replace' | 'remove';
  readonly path: string;
  readonly value?: unknown;
}

/** One JSON patch: on the VM, on the VM's status subresource, or on the VMI. */
export interface PatchStep {
  readonly target: 'vm' | 'vm-status' | 'vmi';
  readonly ops: readonly JsonPatchOp[];
}

export type LifecyclePlan =
  | { readonly kind: 'refused'; readonly code: 400 | 409 | 500; readonly message: string }
  | { readonly kind: 'patch'; readonly steps: readonly PatchStep[] };

const refuse = (code: 400 | 409 | 500, message: string): LifecyclePlan => ({ kind: 'refused', code, message });

// virt-api's messages (pkg/virt-api/rest/subresource.go).
export const LifecycleMessages = {
  vmAlreadyRunning: 'VM is already running',
  vmNotRunning: 'VM is not running',
  changeUnderway: 'unable to complete request: stop/start already underway',
  manualRecovery: 'VM recovery required: Volume migration failed, leaving some volumes pointing to non-consistent targets; manual intervention is needed to reassign them to their original volumes.',
} as const;

const isFinal = (vmi: VirtualMachineInstance | undefined) => vmi !== undefined && isFinalVMIPhase(vmi.status?.phase);

function hasTrueCondition(vm: VirtualMachine, type: string): boolean {
  return (vm.status?.conditions ?? []).some((c) => c.type === type && c.status === ConditionStatus.True);
}

function statusIsEmpty(vm: VirtualMachine): boolean {
  const s = vm.status;
  return !s || Object.values(s).every((v) => v === undefined);
}

/**
 * `getChangeRequestJson`: append the requests to `status.stateChangeRequests`, guarded by a
 * `test` of the list as read; a lone Stop replaces whatever is queued; anything else on a
 * non-empty queue is refused. A pending start failure (crash-loop backoff) is cleared.
 */
export function changeRequestPatch(vm: VirtualMachine, changes: readonly VirtualMachineStateChangeRequest[]): PatchStep | { error: string } {
  const ops: JsonPatchOp[] = [];
  if (statusIsEmpty(vm)) {
    ops.push({ op: 'add', path: '/status', value: { stateChangeRequests: changes } });
  } else {
    const queued = vm.status?.stateChangeRequests ?? [];
    ops.push({ op: 'test', path: '/status/stateChangeRequests', value: vm.status?.stateChangeRequests ?? null });
    if (queued.length === 0) ops.push({ op: 'add', path: '/status/stateChangeRequests', value: changes });
    else if (changes.length === 1 && changes[0]!.action === StateChangeRequestAction.Stop) ops.push({ op: 'replace', path: '/status/stateChangeRequests', value: changes });
    else return { error: LifecycleMessages.changeUnderway };
  }
  if (vm.status?.startFailure !== undefined) ops.push({ op: 'remove', path: '/status/startFailure' });
  return { target: 'vm-status', ops };
}

/** `getRunningPatch`: runStrategy Always/Halted (or the deprecated spec.running), guarded by a test. */
export function runningPatch(vm: VirtualMachine, running: boolean): PatchStep {
  if (vm.spec.runStrategy !== undefined) {
    return { target: 'vm', ops: [
      { op: 'test', path: '/spec/runStrategy', value: vm.spec.runStrategy },
      { op: 'replace', path: '/spec/runStrategy', value: running ? RunStrategy.Always : RunStrategy.Halted },
    ] };
  }
  return { target: 'vm', ops: [
    { op: 'test', path: '/spec/running', value: vm.spec.running ?? null },
    // virt-api replaces; an absent field (neither running nor runStrategy: Halted) is added instead.
    { op: vm.spec.running === undefined ? 'add' : 'replace', path: '/spec/running', value: running },
  ] };
}

/** `patchVMITerminationGracePeriod`: the VMI's grace period, guarded by a test of the old value. */
export function vmiGracePeriodPatch(vmi: VirtualMachineInstance, seconds: number): PatchStep {
  const old = vmi.spec.terminationGracePeriodSeconds;
  return { target: 'vmi', ops: [
    { op: 'test', path: '/spec/terminationGracePeriodSeconds', value: old ?? null },
    { op: old === undefined ? 'add' : 'replace', path: '/spec/terminationGracePeriodSeconds', value: seconds },
  ] };
}

function withRequests(vm: VirtualMachine, changes: readonly VirtualMachineStateChangeRequest[], before: readonly PatchStep[] = []): LifecyclePlan {
  const step = changeRequestPatch(vm, changes);
  if ('error' in step) return refuse(500, step.error);
  return { kind: 'patch', steps: [...before, step] };
}

function strategyOf(vm: VirtualMachine): string | LifecyclePlan {
  try {
    return effectiveRunStrategy(vm);
  } catch (err) {
    return refuse(500, (err as Error).message);
  }
}

/** `StartVMRequestHandler`. */
export function planStart(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, o: { paused?: boolean } = {}): LifecyclePlan {
  const phase = vmi?.status?.phase ?? '';
  if (vmi && !isFinal(vmi) && phase !== VMIPhase.Unknown && phase !== VMIPhase.Unset) return refuse(409, LifecycleMessages.vmAlreadyRunning);
  if (hasTrueCondition(vm, VMConditionType.ManualRecoveryRequired)) return refuse(409, LifecycleMessages.manualRecovery);
  const strategy = strategyOf(vm);
  if (typeof strategy !== 'string') return strategy;
  const data = o.paused ? { [START_REQUEST_DATA_PAUSED_KEY]: START_REQUEST_DATA_PAUSED_TRUE } : undefined;
  const start: VirtualMachineStateChangeRequest = data ? { action: StateChangeRequestAction.Start, data } : { action: StateChangeRequestAction.Start };
  switch (strategy) {
    case RunStrategy.Halted:
      // A paused start goes through the request queue; the controller flips the run strategy.
      return o.paused ? withRequests(vm, [start]) : { kind: 'patch', steps: [runningPatch(vm, true)] };
    case RunStrategy.Manual:
    case RunStrategy.RerunOnFailure: {
      if (strategy === RunStrategy.RerunOnFailure && phase === VMIPhase.Failed) {
        return refuse(409, `${RunStrategy.RerunOnFailure} does not support starting VM from failed state`);
      }
      const needsRestart = vmi !== undefined && (strategy === RunStrategy.RerunOnFailure ? phase === VMIPhase.Succeeded : isFinal(vmi));
      return withRequests(vm, needsRestart ? [{ action: StateChangeRequestAction.Stop, uid: vmi!.metadata?.uid ?? '' }, start] : [start]);
    }
    default:
      return refuse(409, `${strategy} does not support manual start requests`);
  }
}

/**
 * `StopVMRequestHandler`. `gracePeriod` is `--grace-period` with `--force`. Unlike virt-api, the
 * VMI's grace period is only patched when the stop itself is allowed (no side effect of a refusal).
 */
export function planStop(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, o: { gracePeriod?: number | undefined } = {}): LifecyclePlan {
  const strategy = strategyOf(vm);
  if (typeof strategy !== 'string') return strategy;
  const running = vmi !== undefined && !isFinal(vmi);
  const grace = running && o.gracePeriod !== undefined ? [vmiGracePeriodPatch(vmi!, o.gracePeriod)] : [];
  const stop: VirtualMachineStateChangeRequest = { action: StateChangeRequestAction.Stop, uid: vmi?.metadata?.uid ?? '' };
  switch (strategy) {
    case RunStrategy.Halted: {
      if (!running) return refuse(409, LifecycleMessages.vmNotRunning);
      const old = vmi!.spec.terminationGracePeriodSeconds;
      if (o.gracePeriod === undefined || (old !== undefined && o.gracePeriod >= old)) {
        return refuse(409, `${RunStrategy.Halted} only supports manual stop requests with a shorter graceperiod`);
      }
      return withRequests(vm, [stop], grace);
    }
    case RunStrategy.Manual:
    case RunStrategy.RerunOnFailure:
      if (!running) return refuse(409, LifecycleMessages.vmNotRunning);
      return withRequests(vm, [stop], grace);
    default:
      return { kind: 'patch', steps: [...grace, runningPatch(vm, false)] };
  }
}

/** `RestartVMRequestHandler`. `gracePeriodSeconds` is `--grace-period` with `--force` (only 0). */
export function planRestart(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, o: { gracePeriodSeconds?: number | undefined } = {}): LifecyclePlan {
  if (o.gracePeriodSeconds !== undefined) {
    if (o.gracePeriodSeconds > 0) return refuse(400, 'For force restart, only gracePeriod=0 is supported for now');
    if (o.gracePeriodSeconds < 0) return refuse(400, 'gracePeriod has to be greater or equal to 0');
  }
  if (hasTrueCondition(vm, VMIConditionType.VolumesChange)) return refuse(409, LifecycleMessages.manualRecovery);
  const strategy = strategyOf(vm);
  if (typeof strategy !== 'string') return strategy;
  if (strategy === RunStrategy.Halted || strategy === RunStrategy.Once) return refuse(409, `RunStrategy ${strategy} does not support manual restart requests`);
  if (!vmi) return refuse(409, LifecycleMessages.vmNotRunning);
  // A forced restart shortens the VMI's grace period to 1 s first (the shortest safe one).
  const grace = o.gracePeriodSeconds === 0 ? [vmiGracePeriodPatch(vmi, 1)] : [];
  return withRequests(vm, [{ action: StateChangeRequestAction.Stop, uid: vmi.metadata?.uid ?? '' }, { action: StateChangeRequestAction.Start }], grace);
}
