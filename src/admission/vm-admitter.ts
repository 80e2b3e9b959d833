/**
 * KubeVirt's VirtualMachine admitter (virt-api `vms-admitter.go`) as a pure decision, on create and
 * update of `virtualmachines` (not its status): a VM being deleted passes; else the schema, then
 * `validateVirtualMachine` (the template validated after spec defaulting, on a copy: the stored
 * object is not changed), warnings for `spec.running`. Instance types, preferences and the
 * storage/volume-request checks are not reproduced (qvirt has no instance types).
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { parseVirtualMachine } from '../api/parse.ts';
import { validateVirtualMachine } from '../api/validate.ts';
import type { AdmissionResult } from '../apiserver/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const VM_WEBHOOK = 'virtualmachine-validator.kubevirt.io';

export interface VMAdmissionOptions {
  readonly config: ClusterConfig;
  /** The request comes from virt-controller, virt-handler or virt-api (may set reserved template labels). */
  readonly fromKubeVirtServiceAccount: boolean;
}

const beingDeleted = (object: unknown): boolean => {
  const meta = (object as { metadata?: { deletionTimestamp?: unknown } } | null)?.metadata;
  return meta?.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
};

/** `VMsAdmitter.Admit`. */
export function admitVM(object: unknown, o: VMAdmissionOptions): AdmissionResult {
  if (beingDeleted(object)) return undefined;
  const parsed = parseVirtualMachine(object);
  if (!parsed.value) return causesDenial(parsed.errors);
  const { errors, warnings } = validateVirtualMachine(parsed.value, { config: o.config, isKubeVirtServiceAccount: o.fromKubeVirtServiceAccount });
  return errors.length ? causesDenial(errors) : allowed(warnings);
}
