/**
 * KubeVirt's VirtualMachineInstanceReplicaSet admitter (virt-api `vmirs-admitter.go`) as a pure
 * decision, on create and update: the schema, then the template spec, the selector matching the
 * template's labels, and replicas ≥ 0.
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { parseVirtualMachineInstanceReplicaSet } from '../api/parse.ts';
import { validateVirtualMachineInstanceReplicaSet } from '../api/validation/vmirs.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const VMIRS_WEBHOOK = 'virtualmachinereplicaset-validator.kubevirt.io';

/** `VMIRSAdmitter.Admit`. */
export function admitVMIRS(object: unknown, config: ClusterConfig): AdmissionResult {
  const parsed = parseVirtualMachineInstanceReplicaSet(object);
  if (!parsed.value) return causesDenial(parsed.errors);
  const errors = validateVirtualMachineInstanceReplicaSet(parsed.value, { config });
  return errors.length ? causesDenial(errors) : allowed([]);
}
