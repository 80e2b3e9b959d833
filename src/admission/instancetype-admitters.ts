/**
 * virt-api's admitters of instancetype.kubevirt.io (`VirtualMachine{,Cluster}Instancetype`,
 * `VirtualMachine{,Cluster}Preference`), on create and update: the schema, then KubeVirt's spec
 * rules (`src/api/instancetype/admitters.ts`), refusals as KubeVirt's webhookutils answers them,
 * deprecations as warnings.
 */
import { validateInstancetypeSpec, validatePreferenceSpec } from '../api/instancetype/admitters.ts';
import type { InstancetypeKind } from '../api/instancetype/constants.ts';
import { parseInstancetypeObject } from '../api/instancetype/parse.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const InstancetypeWebhooks = {
  VirtualMachineInstancetype: 'virtualmachineinstancetype-validator.instancetype.kubevirt.io',
  VirtualMachineClusterInstancetype: 'virtualmachineclusterinstancetype-validator.instancetype.kubevirt.io',
  VirtualMachinePreference: 'virtualmachinepreference-validator.instancetype.kubevirt.io',
  VirtualMachineClusterPreference: 'virtualmachineclusterpreference-validator.instancetype.kubevirt.io',
} as const satisfies Record<InstancetypeKind, string>;

/** `admitInstancetype` / `admitPreference` for an object of `kind`. */
export function admitInstancetypeObject(kind: InstancetypeKind, object: unknown): AdmissionResult {
  const parsed = parseInstancetypeObject(kind, object);
  if (!parsed.value) return causesDenial(parsed.errors);
  const isInstancetype = kind === 'VirtualMachineInstancetype' || kind === 'VirtualMachineClusterInstancetype';
  const r = isInstancetype
    ? validateInstancetypeSpec((parsed.value as { spec: Parameters<typeof validateInstancetypeSpec>[0] }).spec)
    : validatePreferenceSpec((parsed.value as { spec: Parameters<typeof validatePreferenceSpec>[0] }).spec);
  return r.errors.length ? causesDenial(r.errors) : allowed(r.warnings);
}
