/**
 * KubeVirt's instance type and preference admitters (`pkg/instancetype/webhooks`,
 * `preference/webhooks`), for both the namespaced and the cluster kinds: after the schema, an
 * instance type's overcommitPercent must be within 0..100 and not come with hugepages (launchSecurity
 * is admitted with a deprecation warning); a preference's preferredCPUTopology must be one KubeVirt
 * knows (a `prefer*` spelling is admitted with a deprecation warning), and a spread topology must
 * spread across what KubeVirt supports, cores and threads only 1:2. Pure.
 */
import { FieldErrorType, type FieldError } from '../field-error.ts';
import { DeprecatedTopologies, InstancetypeMessages as M, PreferredCPUTopologies, SpreadAcrossValues } from './constants.ts';
import { preferredTopology, spreadOptions } from './preference.ts';
import type { VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from './types.ts';

export interface SpecValidation {
  readonly errors: FieldError[];
  readonly warnings: string[];
}

/** `ValidateInstanceTypeSpec` + `checkForDeprecatedFields`. */
export function validateInstancetypeSpec(spec: VirtualMachineInstancetypeSpec): SpecValidation {
  const errors: FieldError[] = [];
  const overcommit = spec.memory.overcommitPercent ?? 0;
  const field = 'spec.memory.overcommitPercent';
  if (overcommit < 0 || overcommit > 100) errors.push({ type: FieldErrorType.Invalid, field, reason: M.percentRange(field, overcommit) });
  if (overcommit !== 0 && spec.memory.hugepages !== undefined) errors.push({ type: FieldErrorType.Invalid, field, reason: M.overcommitWithHugepages(field, 'spec.memory.hugepages') });
  return { errors, warnings: spec.launchSecurity !== undefined && errors.length === 0 ? [M.deprecatedLaunchSecurity] : [] };
}

const TOPOLOGIES: readonly string[] = Object.values(PreferredCPUTopologies);
const ACROSS: readonly string[] = Object.values(SpreadAcrossValues);

/** `ValidatePreferenceSpec` + `checkForDeprecatedPreferredCPUTopology`. */
export function validatePreferenceSpec(spec: VirtualMachinePreferenceSpec): SpecValidation {
  const errors: FieldError[] = [];
  const topology = spec.cpu?.preferredCPUTopology;
  if (topology !== undefined && !TOPOLOGIES.includes(topology)) {
    errors.push({ type: FieldErrorType.Invalid, field: 'spec.cpu.preferredCPUTopology', reason: M.unknownTopology(topology) });
  } else if (topology === PreferredCPUTopologies.Spread || topology === PreferredCPUTopologies.DeprecatedPreferSpread) {
    const { ratio, across } = spreadOptions(spec);
    if (!ACROSS.includes(across)) errors.push({ type: FieldErrorType.Invalid, field: 'spec.cpu.spreadOptions.across', reason: M.spreadAcrossUnsupported(across) });
    else if (across === SpreadAcrossValues.CoresThreads && ratio !== 2) errors.push({ type: FieldErrorType.Invalid, field: 'spec.cpu.spreadOptions.ratio', reason: M.spreadAcrossCoresThreadsRatio });
  }
  const t = preferredTopology(spec);
  const use = DeprecatedTopologies[t];
  return { errors, warnings: errors.length === 0 && topology !== undefined && use ? [M.deprecatedTopology(t, use)] : [] };
}
