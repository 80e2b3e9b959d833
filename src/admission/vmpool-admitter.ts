/**
 * virt-api's VirtualMachinePool admitter (`vmpool-admitter.go`), on create and update: the schema,
 * then `validateVirtualMachinePool` (`src/api/validation/vmpool.ts`: the template's VM spec, the
 * selector, maxUnavailable, the strategies, the selector immutable).
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { parseWithSchema } from '../api/parse.ts';
import { VirtualMachinePoolSchema } from '../api/pool/schema.ts';
import type { VirtualMachinePool } from '../api/pool/types.ts';
import { validateVirtualMachinePool } from '../api/validation/vmpool.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const VMPOOL_WEBHOOK = 'virtualmachinepool-validator.kubevirt.io';
export const VMPOOL_WEBHOOK_PATH = '/virtualmachinepool-validate';

/** `VMPoolAdmitter.Admit`: `oldObject` on update. */
export function admitVMPool(object: unknown, o: { config: ClusterConfig; fromKubeVirtServiceAccount: boolean; oldObject?: unknown }): AdmissionResult {
  const parsed = parseWithSchema<VirtualMachinePool>(VirtualMachinePoolSchema, object);
  if (!parsed.value) return causesDenial(parsed.errors);
  const old = o.oldObject !== undefined && o.oldObject !== null ? parseWithSchema<VirtualMachinePool>(VirtualMachinePoolSchema, o.oldObject).value : undefined;
  const { errors, warnings } = validateVirtualMachinePool(parsed.value, old, { config: o.config, isKubeVirtServiceAccount: o.fromKubeVirtServiceAccount });
  return errors.length ? causesDenial(errors) : allowed(warnings);
}
