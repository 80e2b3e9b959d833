// The VM's conditions (pkg/virt-controller/watch/vm/vm.go syncConditions): Ready mirrors the
// VMI's Ready (or says why it cannot), Failure carries the last sync error, and every other VMI
// condition is copied verbatim; VM conditions the VMI no longer has are dropped. Ready, Failure and
// RestartRequired belong to the VM controller and are never mirrored or dropped that way.
import { ConditionReason, VMConditionType, VMIConditionType } from '../../src/api/constants.ts';
import { Messages } from '../constants.ts';
import { findCondition, removeCondition, updateCondition } from '../condition-list.ts';
import { toRFC3339Seconds } from './backoff.ts';
import type { VirtualMachineCondition, VirtualMachineInstance } from '../../src/api/types.ts';

/** A failed sync step: KubeVirt's SyncError (reason + message). */
export interface SyncError {
  readonly reason: string;
  readonly message: string;
}

const NOT_MIRRORED: ReadonlySet<string> = new Set([VMConditionType.Ready, VMConditionType.Failure, VMConditionType.RestartRequired]);

/** The VM Ready condition for this VMI (absent VMI, VMI without Ready, or a copy of it). */
export function readyConditionFromVMI(vmi: VirtualMachineInstance | undefined, now: Date): VirtualMachineCondition {
  const t = toRFC3339Seconds(now);
  if (!vmi) {
    return { type: VMConditionType.Ready, status: 'False', reason: ConditionReason.VMINotExists, message: Messages.VMINotExists, lastProbeTime: t, lastTransitionTime: t };
  }
  const ready = findCondition(vmi.status?.conditions, VMIConditionType.Ready);
  if (!ready) {
    return { type: VMConditionType.Ready, status: 'False', reason: ConditionReason.VMIConditionMissing, message: Messages.VMIConditionMissing, lastProbeTime: t, lastTransitionTime: t };
  }
  const c: VirtualMachineCondition = { type: VMConditionType.Ready, status: ready.status };
  if (ready.reason !== undefined) c.reason = ready.reason;
  if (ready.message !== undefined) c.message = ready.message;
  if (ready.lastProbeTime !== undefined) c.lastProbeTime = ready.lastProbeTime;
  if (ready.lastTransitionTime !== undefined) c.lastTransitionTime = ready.lastTransitionTime;
  return c;
}

/** The VM's conditions after a sync that ended with `syncError` (undefined: success). */
export function syncVMConditions(
  current: readonly VirtualMachineCondition[] | undefined,
  vmi: VirtualMachineInstance | undefined,
  syncError: SyncError | undefined,
  now: Date,
): VirtualMachineCondition[] {
  let conds = updateCondition(current, readyConditionFromVMI(vmi, now));
  if (syncError) {
    conds = updateCondition(conds, {
      type: VMConditionType.Failure,
      status: 'True',
      reason: syncError.reason,
      message: syncError.message,
      lastTransitionTime: toRFC3339Seconds(now),
    });
  } else {
    conds = removeCondition(conds, VMConditionType.Failure);
  }
  if (!vmi) return conds;

  const onVMI = new Set<string>();
  for (const c of vmi.status?.conditions ?? []) {
    if (NOT_MIRRORED.has(c.type)) continue;
    onVMI.add(c.type);
    conds = updateCondition(conds, { ...c });
  }
  return conds.filter((c) => NOT_MIRRORED.has(c.type) || onVMI.has(c.type));
}
