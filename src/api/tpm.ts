// KubeVirt's pkg/tpm: whether a VMI has an emulated TPM, and whether its state persists. Read by the
// VMI controller (the launcher pod's memory overhead) and the launcher (QEMU's TPM and its swtpm). Pure.
import type { VirtualMachineInstanceSpec } from './types.ts';

/** tpm.HasDevice: a `tpm` section that is not disabled. */
export function hasTpmDevice(spec: VirtualMachineInstanceSpec): boolean {
  const tpm = spec.domain.devices.tpm;
  return tpm !== undefined && tpm.enabled !== false;
}

/** tpm.HasPersistentDevice: a TPM whose state outlives the pod (in a backend-storage claim). */
export function hasPersistentTpmDevice(spec: VirtualMachineInstanceSpec): boolean {
  return hasTpmDevice(spec) && spec.domain.devices.tpm?.persistent === true;
}
