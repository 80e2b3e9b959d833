// Reading a VMI's status.conditions, as KubeVirt's VirtualMachineInstanceConditionManager does
// (pkg/controller/conditions.go: GetCondition, HasCondition, HasConditionWithStatus). Pure.
import { ConditionStatus } from './constants.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceCondition, VirtualMachineInstanceConditionType } from './types.ts';

type Status = VirtualMachineInstanceCondition['status'];

/** `GetCondition`: the VMI's condition of `type`, whatever its status. */
export function vmiCondition(vmi: VirtualMachineInstance | undefined, type: VirtualMachineInstanceConditionType): VirtualMachineInstanceCondition | undefined {
  return vmi?.status?.conditions?.find((c) => c.type === type);
}

/** `HasCondition`: a condition of `type` is there, whatever its status. */
export function hasVmiCondition(vmi: VirtualMachineInstance | undefined, type: VirtualMachineInstanceConditionType): boolean {
  return vmiCondition(vmi, type) !== undefined;
}

/** `HasConditionWithStatus`: the condition of `type` has `status` (True unless said). */
export function hasVmiConditionWithStatus(vmi: VirtualMachineInstance | undefined, type: VirtualMachineInstanceConditionType, status: Status = ConditionStatus.True): boolean {
  return vmiCondition(vmi, type)?.status === status;
}

/** The VMI is paused as its Paused condition says: by its user, or on an I/O error (handler/status.ts pausedCondition). */
export function isVmiPaused(vmi: VirtualMachineInstance | undefined): boolean {
  return hasVmiConditionWithStatus(vmi, 'Paused');
}
