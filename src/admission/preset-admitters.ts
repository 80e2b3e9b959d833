/**
 * VirtualMachineInstancePreset at admission: virt-api's preset validator (`vmi-preset-admitter.go`:
 * the schema, a domain required) and what its VMI mutator refuses on create — matching presets that
 * conflict with each other (422, KubeVirt's message) — with its deprecation warning when presets
 * apply. The merge itself is the VMI controller's (qvirt has no mutating admission).
 */
import { fieldError } from '../api/field-error.ts';
import { parseWithSchema } from '../api/parse.ts';
import { applyPresets, PresetConflictError } from '../api/preset/apply.ts';
import { VirtualMachineInstancePresetSchema } from '../api/preset/schema.ts';
import type { VirtualMachineInstancePreset } from '../api/preset/types.ts';
import type { VirtualMachineInstance } from '../api/types.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const PRESET_WEBHOOK = 'virtualmachinepreset-validator.kubevirt.io';
export const PRESET_WEBHOOK_PATH = '/vmipreset-validate';
/** KubeVirt's VMI mutating webhook, whose preset step this is. */
export const VMI_MUTATOR_WEBHOOK = 'virtualmachineinstances-mutator.kubevirt.io';

/** `VMIPresetAdmitter.Admit`. */
export function admitPreset(object: unknown): AdmissionResult {
  const parsed = parseWithSchema<VirtualMachineInstancePreset>(VirtualMachineInstancePresetSchema, object);
  if (!parsed.value) return causesDenial(parsed.errors);
  if (!parsed.value.spec.domain) return causesDenial([fieldError.required('spec.domain', 'missing domain.')]);
  return allowed([]);
}

const parsePresets = (presets: readonly unknown[]): VirtualMachineInstancePreset[] =>
  presets.map((p) => parseWithSchema<VirtualMachineInstancePreset>(VirtualMachineInstancePresetSchema, p).value).filter((p): p is VirtualMachineInstancePreset => p !== undefined);

/** The VMI as the mutator leaves it: presets merged (unchanged when they conflict or none match). */
export function withPresets(object: unknown, presets: readonly unknown[]): unknown {
  const vmi = object as VirtualMachineInstance;
  if (!vmi?.spec?.domain || presets.length === 0) return object;
  try {
    return applyPresets(vmi, parsePresets(presets)).vmi;
  } catch (err) {
    if (err instanceof PresetConflictError) return object;
    throw err;
  }
}

/** The VMI mutator's preset step on create: refused when matching presets conflict; its warning when any applies. */
export function admitVMIPresets(object: unknown, presets: readonly unknown[]): AdmissionResult {
  const vmi = object as VirtualMachineInstance;
  if (!vmi?.spec?.domain) return undefined;
  const parsed = parsePresets(presets);
  try {
    return allowed(applyPresets(vmi, parsed).warnings);
  } catch (err) {
    if (err instanceof PresetConflictError) return { code: 422, message: err.message };
    throw err;
  }
}
