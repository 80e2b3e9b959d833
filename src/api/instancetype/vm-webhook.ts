/**
 * The VM webhooks' instance type part (`pkg/instancetype/webhooks/vm`): the matchers checked as
 * KubeVirt's VM mutator checks them (a name or inferFromVolume; not both; a known failure policy; on
 * update, a renamed matcher must not keep its old revisionName), and the admitter's `ApplyToVM`: the
 * instance type and preference the VM names (those that exist: a missing one is the VM controller's
 * to report) applied to a copy of the template — a spread topology the vCPUs do not divide into and
 * every template field the instance type also sets are refused with KubeVirt's message at their
 * path — and the preference's requirements checked on the defaulted copy. The copy is what the VM
 * admitter then validates. Pure.
 */
import type { ClusterConfig } from '../cluster-config.ts';
import { DefaultingError, defaultVirtualMachineInstanceSpec } from '../defaults.ts';
import { FieldErrorType, type FieldError } from '../field-error.ts';
import type { VirtualMachine } from '../types.ts';
import { applyToVMISpec } from './apply.ts';
import { conflictCauses, conflictPaths } from './conflict.ts';
import { InstancetypeMessages as M } from './constants.ts';
import { TEMPLATE_SPEC_PATH } from './expand.ts';
import { checkPreferenceRequirements, checkSpreadCPUTopology } from './requirements.ts';
import type { VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from './types.ts';
import type { Matcher } from './revision.ts';

const POLICIES: readonly string[] = ['Reject', 'Ignore'];

function matcherCauses(m: Matcher | undefined, field: 'instancetype' | 'preference'): FieldError[] {
  if (!m) return [];
  const out: FieldError[] = [];
  if (!m.name && !m.inferFromVolume) {
    out.push({ type: FieldErrorType.NotFound, field: `spec.${field}`, reason: field === 'instancetype' ? M.instancetypeMatcherNameOrInfer : M.preferenceMatcherNameOrInfer });
  }
  if (m.inferFromVolume) {
    if (m.name) out.push({ type: FieldErrorType.NotSupported, field: `spec.${field}.name`, reason: M.nameSetWithInfer });
    if (m.kind) out.push({ type: FieldErrorType.NotSupported, field: `spec.${field}.kind`, reason: M.kindSetWithInfer });
  }
  if (m.inferFromVolumeFailurePolicy !== undefined && !POLICIES.includes(m.inferFromVolumeFailurePolicy)) {
    out.push({ type: FieldErrorType.Invalid, field: `spec.${field}.inferFromVolumeFailurePolicy`, reason: M.invalidFailurePolicy(m.inferFromVolumeFailurePolicy) });
  }
  return out;
}

const sameMatcher = (a: Matcher, b: Matcher) =>
  a.name === b.name && a.kind === b.kind && a.revisionName === b.revisionName && a.inferFromVolume === b.inferFromVolume && a.inferFromVolumeFailurePolicy === b.inferFromVolumeFailurePolicy;

function matcherUpdateCauses(next: Matcher | undefined, old: Matcher | undefined, field: 'instancetype' | 'preference'): FieldError[] {
  // Matchers introduced or removed are fine; without an old revisionName it is the VM controller updating it.
  if (!next || !old || !old.revisionName) return [];
  if (!sameMatcher(next, old) && old.name !== next.name && old.revisionName === next.revisionName) {
    return [{ type: FieldErrorType.Invalid, field: `spec.${field}.revisionName`, reason: M.matcherNameWithoutRevision }];
  }
  return [];
}

/** The mutator's `validateMatchers`: on update (`old` given) the revisionName rule first, then each matcher. */
export function validateMatchers(vm: VirtualMachine, old?: VirtualMachine): FieldError[] {
  if (old) {
    const it = matcherUpdateCauses(vm.spec.instancetype, old.spec.instancetype, 'instancetype');
    if (it.length) return it;
    const pref = matcherUpdateCauses(vm.spec.preference, old.spec.preference, 'preference');
    if (pref.length) return pref;
  }
  const it = matcherCauses(vm.spec.instancetype, 'instancetype');
  if (it.length) return it;
  return matcherCauses(vm.spec.preference, 'preference');
}

export interface InstancetypeAdmission {
  /** Causes to refuse the VM with (none: admitted so far). */
  readonly errors: readonly FieldError[];
  /** The VM with the instance type and preference applied to its template: what the admitter validates next. */
  readonly vm: VirtualMachine;
}

/** `admitter.ApplyToVM` + the requirements check, for the specs found (undefined: none named, or not found). */
export function admitInstancetypes(
  vm: VirtualMachine,
  instancetype: VirtualMachineInstancetypeSpec | undefined,
  preference: VirtualMachinePreferenceSpec | undefined,
  config: ClusterConfig,
): InstancetypeAdmission {
  if (!instancetype && !preference) return { errors: [], vm };
  const spread = checkSpreadCPUTopology(instancetype, preference);
  if (spread) return { errors: conflictCauses([spread]), vm };
  const template = vm.spec.template;
  const applied = applyToVMISpec(TEMPLATE_SPEC_PATH, instancetype, preference, template.spec ?? { domain: { devices: {} } }, template.metadata);
  if (applied.conflicts.length) return { errors: conflictCauses(applied.conflicts), vm };
  const copy: VirtualMachine = { ...vm, spec: { ...vm.spec, template: { ...template, metadata: applied.metadata, spec: applied.spec } } };
  let defaulted;
  try {
    defaulted = defaultVirtualMachineInstanceSpec(applied.spec, config);
  } catch (err) {
    if (err instanceof DefaultingError) return { errors: [], vm: copy }; // the VM admitter reports it
    throw err;
  }
  const failed = checkPreferenceRequirements(instancetype, preference, defaulted);
  if (failed) return { errors: [{ type: FieldErrorType.NotFound, field: conflictPaths(failed.conflicts), reason: M.requirementsFailure(failed.message) }], vm: copy };
  return { errors: [], vm: copy };
}
