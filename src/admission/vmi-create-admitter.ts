/**
 * KubeVirt's VirtualMachineInstance create admitter (virt-api `vmi-create-admitter.go`) as a pure
 * decision over the request's object: the schema (`ValidateSchema`), then the spec, metadata and
 * per-arch rules (`src/api/validation/vmi-create.ts`) over the VMI as KubeVirt's mutating webhook
 * defaults it before validation (the defaulted copy is only validated: qvirt's controllers default
 * the stored object).
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { DefaultingError, defaultNewVirtualMachineInstance } from '../api/defaults.ts';
import { parseVirtualMachineInstance } from '../api/parse.ts';
import type { VirtualMachineInstance } from '../api/types.ts';
import { validateVirtualMachineInstance } from '../api/validation/vmi-create.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial, errorDenial } from './response.ts';

export const VMI_CREATE_WEBHOOK = 'virtualmachineinstances-create-validator.kubevirt.io';

export interface VMIAdmissionOptions {
  readonly config: ClusterConfig;
  /** The request comes from virt-controller, virt-handler or virt-api. */
  readonly fromKubeVirtServiceAccount: boolean;
  /** The mutating webhook's clock and uids (only its defaulting of the spec is validated). */
  readonly now?: () => Date;
}

/** `VMICreateAdmitter.Admit`. */
export function admitVMICreate(object: unknown, o: VMIAdmissionOptions): AdmissionResult {
  const parsed = parseVirtualMachineInstance(object);
  if (!parsed.value) return causesDenial(parsed.errors);
  let defaulted: VirtualMachineInstance;
  try {
    defaulted = defaultNewVirtualMachineInstance(parsed.value, { config: o.config, now: o.now ?? (() => new Date()), randomUUID: () => '00000000-0000-0000-0000-000000000000' });
  } catch (err) {
    if (err instanceof DefaultingError) return errorDenial(err.message);
    throw err;
  }
  const errors = validateVirtualMachineInstance(defaulted, { config: o.config, isKubeVirtServiceAccount: o.fromKubeVirtServiceAccount });
  return errors.length ? causesDenial(errors) : allowed([]);
}
