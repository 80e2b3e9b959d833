/**
 * kubevirt.io VirtualMachineInstancePreset (`core/v1/types.go`): deprecated in KubeVirt (served as
 * v1 and v1alpha3, stored as v1alpha3, with its deprecation warnings), still applied to new VMIs by
 * virt-api's VMI mutator. Names and strings exactly as KubeVirt's.
 */
import type { ObjectMeta } from '../kube.ts';
import type { LabelSelector } from '../label-selector.ts';
import type { DomainSpec } from '../types.ts';

export const PresetResource = {
  kind: 'VirtualMachineInstancePreset',
  listKind: 'VirtualMachineInstancePresetList',
  plural: 'virtualmachineinstancepresets',
  singular: 'virtualmachineinstancepreset',
  shortNames: ['vmipreset', 'vmipresets'],
  categories: ['all'],
} as const;

/** The versions KubeVirt serves, the storage one last, each deprecated with its warning. */
export const PRESET_VERSIONS = [
  { name: 'v1', storage: false, deprecationWarning: 'kubevirt.io/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2.' },
  { name: 'v1alpha3', storage: true, deprecationWarning: 'kubevirt.io/v1alpha3 VirtualMachineInstancePresets is now deprecated and will be removed in v2.' },
] as const;

/** The VMI mutator's warning when it applied a preset (`presetDeprecationWarning`). */
export const PRESET_DEPRECATION_WARNING = 'kubevirt.io/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2.';
/** A VMI annotated `<this>: "true"` gets no presets. */
export const PRESET_EXCLUSION_ANNOTATION = 'virtualmachineinstancepresets.admission.kubevirt.io/exclude';
/** `virtualmachinepreset.kubevirt.io/<preset name>: kubevirt.io/v1` on a VMI a preset was applied to. */
export const presetAnnotation = (name: string): string => `virtualmachinepreset.kubevirt.io/${name}`;
export const PRESET_ANNOTATION_VALUE = 'kubevirt.io/v1';

export interface VirtualMachineInstancePresetSpec {
  selector: LabelSelector;
  /** A DomainSpec whose fields are merged into matching VMIs where they leave them unset. */
  domain?: Partial<DomainSpec>;
}

export interface VirtualMachineInstancePreset {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: VirtualMachineInstancePresetSpec;
}
