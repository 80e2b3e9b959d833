/**
 * KubeVirt's VirtualMachine admitter (virt-api `vms-admitter.go`) as a pure decision, on create and
 * update of `virtualmachines` (not its status): a VM being deleted passes; else the schema; the
 * instance type and preference matchers as KubeVirt's VM mutator checks them; the instance type
 * and preference the VM names applied to a copy (`ApplyToVM`: a template field the instance type
 * also sets is refused with KubeVirt's conflict message at its path; one that does not exist is
 * ignored here, the VM controller reports it); the preference's requirements; then
 * `validateVirtualMachine` of that copy (the template validated after spec defaulting: the stored
 * object is not changed), warnings for `spec.running`. The storage/volume-request checks are not
 * reproduced.
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { parseVirtualMachine } from '../api/parse.ts';
import { validateVirtualMachine } from '../api/validation/vms.ts';
import { findInstancetypeSpec, findPreferenceSpec, InstancetypeFindError, type InstancetypeSource } from '../api/instancetype/find.ts';
import { admitInstancetypes, validateMatchers } from '../api/instancetype/vm-webhook.ts';
import type { VirtualMachine } from '../api/types.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const VM_WEBHOOK = 'virtualmachine-validator.kubevirt.io';

export interface VMAdmissionOptions {
  readonly config: ClusterConfig;
  /** The request comes from virt-controller, virt-handler or virt-api (may set reserved template labels). */
  readonly fromKubeVirtServiceAccount: boolean;
  /** Where the instance types, preferences and revisions the VM names are read (absent: as if none existed). */
  readonly instancetypes?: InstancetypeSource;
  /** The VM an update replaces (the matchers' revisionName rule). */
  readonly oldObject?: unknown;
}

/** A finder that fails is ignored, as KubeVirt's admitter ignores (and logs) it. */
function orUndefined<T>(find: () => T): T | undefined {
  try {
    return find();
  } catch (err) {
    if (err instanceof InstancetypeFindError) return undefined;
    throw err;
  }
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
  const vm: VirtualMachine = parsed.value;
  const matchers = validateMatchers(vm, o.oldObject !== undefined && o.oldObject !== null ? parseVirtualMachine(o.oldObject).value : undefined);
  if (matchers.length) return causesDenial(matchers);
  const source = o.instancetypes;
  const instancetype = source && vm.spec.instancetype ? orUndefined(() => findInstancetypeSpec(vm, source)) : undefined;
  const preference = source && vm.spec.preference ? orUndefined(() => findPreferenceSpec(vm, source)) : undefined;
  const applied = admitInstancetypes(vm, instancetype, preference, o.config);
  if (applied.errors.length) return causesDenial(applied.errors);
  const { errors, warnings } = validateVirtualMachine(applied.vm, { config: o.config, isKubeVirtServiceAccount: o.fromKubeVirtServiceAccount });
  return errors.length ? causesDenial(errors) : allowed(warnings);
}
