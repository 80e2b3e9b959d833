/**
 * Structural schema of VirtualMachineInstancePreset: `spec.selector` required, `spec.domain` the
 * VMI's DomainSpec node (its `devices` not required here: a preset names only what it sets).
 */
import { object, str, type ObjectSchema } from '../schema/dsl.ts';
import { LabelSelectorSchema, ObjectMetaSchema } from '../schema/kube.ts';
import { DomainSpecSchema } from '../schema/kubevirt.ts';
import type { VirtualMachineInstancePreset, VirtualMachineInstancePresetSpec } from './types.ts';

export const PresetDomainSchema: ObjectSchema = { ...DomainSpecSchema, required: [] };

export const VirtualMachineInstancePresetSpecSchema = object<VirtualMachineInstancePresetSpec>()(
  { selector: LabelSelectorSchema, domain: PresetDomainSchema },
  { required: ['selector'] },
);

export const VirtualMachineInstancePresetSchema: ObjectSchema = object<VirtualMachineInstancePreset>()(
  { apiVersion: str(), kind: str(), metadata: ObjectMetaSchema, spec: VirtualMachineInstancePresetSpecSchema },
  { required: ['spec'] },
);
