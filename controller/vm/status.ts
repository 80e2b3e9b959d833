// The VM status the VM controller writes after each sync (vm.go updateStatus), assembled from the
// pure pieces: created/ready, the observed run strategy, the trimmed request queue, the memory
// dump request's phase, the start failure record, conditions and the printable status. Also says
// whether the VM controller's finalizer may come off the VMI (its final state has been recorded on
// the VM).
import { Finalizer, VMIConditionType, VMIPhase } from '../../src/api/constants.ts';
import { hasConditionWithStatus } from '../condition-list.ts';
import { nextStartFailure, type RandomInt, mathRandomInt } from './backoff.ts';
import { syncVMConditions, type SyncError } from './conditions.ts';
import { printableStatus, type PrintableStatusContext } from './printable-status.ts';
import { tryEffectiveRunStrategy } from '../../src/api/run-strategy.ts';
import { trimStateChangeRequests } from './state-change-requests.ts';
import { nextMemoryDumpRequest } from './memory-dump.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineStatus } from '../../src/api/types.ts';

export interface VMStatusInputs extends Omit<PrintableStatusContext, 'now'> {
  readonly now: Date;
  readonly syncError?: SyncError | undefined;
  readonly randomInt?: RandomInt;
}

export interface VMStatusResult {
  readonly status: VirtualMachineStatus;
  /** Remove `kubevirt.io/virtualMachineControllerFinalize` from the VMI now. */
  readonly removeVMIFinalizer: boolean;
}

export function computeVMStatus(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, inputs: VMStatusInputs): VMStatusResult {
  const status: VirtualMachineStatus = structuredClone(vm.status ?? {});
  status.created = vmi !== undefined;
  status.ready = vmi !== undefined && hasConditionWithStatus(vmi.status?.conditions, VMIConditionType.Ready, 'True');

  const strategy = tryEffectiveRunStrategy(vm);
  // Recorded only once the VM was started at least once, so a switch to RerunOnFailure is visible.
  if ((status.runStrategy !== undefined && status.runStrategy !== '') || status.created) status.runStrategy = strategy ?? '';

  const requests = trimStateChangeRequests(status.stateChangeRequests, vmi);
  if (requests.length > 0) status.stateChangeRequests = requests;
  else delete status.stateChangeRequests;

  const memoryDump = nextMemoryDumpRequest({ ...vm, status }, vmi);
  if (memoryDump) status.memoryDumpRequest = memoryDump;
  else delete status.memoryDumpRequest;

  const startFailure = nextStartFailure(status.startFailure, vmi, strategy, inputs.now, inputs.randomInt ?? mathRandomInt);
  if (startFailure) status.startFailure = startFailure;
  else delete status.startFailure;

  const conditions = syncVMConditions(status.conditions, vmi, inputs.syncError, inputs.now);
  if (conditions.length > 0) status.conditions = conditions;
  else delete status.conditions;

  const withStatus: VirtualMachine = { ...vm, status };
  status.printableStatus = printableStatus(withStatus, vmi, inputs);

  const phase = vmi?.status?.phase;
  const final = phase === VMIPhase.Succeeded || phase === VMIPhase.Failed;
  const syncVMIDeleted = phase === VMIPhase.WaitingForSync && vmi?.metadata?.deletionTimestamp != null;
  const removeVMIFinalizer = vmi !== undefined && (final || syncVMIDeleted) && (vmi.metadata?.finalizers ?? []).includes(Finalizer.VirtualMachineController);
  return { status, removeVMIFinalizer };
}
