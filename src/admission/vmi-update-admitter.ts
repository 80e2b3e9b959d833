/**
 * KubeVirt's VirtualMachineInstance update admitter (virt-api `vmi-update-admitter.go`) as a pure
 * decision over the request's objects: only KubeVirt's service accounts may change the spec or the
 * reserved `kubevirt.io/` labels (`src/api/validation/vmi-update.ts`; status changes pass: the VMI
 * has no status subresource).
 */
import { parseVirtualMachineInstance } from '../api/parse.ts';
import { validateVirtualMachineInstanceUpdate } from '../api/validation/vmi-update.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial } from './response.ts';
import type { VMIAdmissionOptions } from './vmi-create-admitter.ts';

export const VMI_UPDATE_WEBHOOK = 'virtualmachineinstances-update-validator.kubevirt.io';

/** `VMIUpdateAdmitter.Admit` (the node restriction and the hotplug checks of KubeVirt's own updates are not reproduced). */
export function admitVMIUpdate(oldObject: unknown, newObject: unknown, o: VMIAdmissionOptions): AdmissionResult {
  const parsed = parseVirtualMachineInstance(newObject);
  if (!parsed.value) return causesDenial(parsed.errors);
  const old = parseVirtualMachineInstance(oldObject);
  // The stored object no longer parses (an older schema): nothing to compare against but the new one.
  if (!old.value) return allowed([]);
  const errors = validateVirtualMachineInstanceUpdate(old.value, parsed.value, { config: o.config, isKubeVirtServiceAccount: o.fromKubeVirtServiceAccount });
  return errors.length ? causesDenial(errors) : allowed([]);
}
