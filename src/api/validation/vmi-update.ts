/**
 * KubeVirt's VMI update admitter (`vmi-update-admitter.go`): only KubeVirt's service accounts may
 * change a VMI's spec (quantities compared by value) or its reserved `kubevirt.io/` labels.
 */
import { quantitiesByValue } from '../canonical.ts';
import { FieldErrorType, type FieldError } from '../field-error.ts';
import { VirtualMachineInstanceSpecSchema } from '../schema/kubevirt.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from '../types.ts';
import { RESTRICTED_VMI_LABELS, type ValidationOptions } from './vmi-create.ts';

/** Structural equality of decoded JSON, with absent and `undefined` members treated alike. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!jsonEqual(ao[k], bo[k])) return false;
  return true;
}

function reservedLabels(labels: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => (RESTRICTED_VMI_LABELS as string[]).includes(k)));
}

/**
 * The VMI update admitter (`vmi-update-admitter.go`): only KubeVirt's service accounts may change a
 * VMI's spec (quantities compared by value) or its reserved `kubevirt.io/` labels. (The hotplug
 * checks KubeVirt applies to its own service accounts' spec changes are not reproduced.)
 */
export function validateVirtualMachineInstanceUpdate(
  oldVMI: VirtualMachineInstance,
  newVMI: VirtualMachineInstance,
  opts: ValidationOptions,
): FieldError[] {
  if (opts.isKubeVirtServiceAccount) return [];
  const errors: FieldError[] = [];
  const canon = (s: VirtualMachineInstanceSpec) => quantitiesByValue(VirtualMachineInstanceSpecSchema, s);
  if (!jsonEqual(canon(oldVMI.spec), canon(newVMI.spec))) {
    errors.push({ field: 'spec', type: FieldErrorType.NotSupported, reason: 'update of VMI object is restricted' });
  }
  if (!jsonEqual(reservedLabels(oldVMI.metadata?.labels), reservedLabels(newVMI.metadata?.labels))) {
    errors.push({ field: 'metadata.labels', type: FieldErrorType.NotSupported, reason: 'modification of the following reserved kubevirt.io/ labels on a VMI object is prohibited' });
  }
  return errors;
}
