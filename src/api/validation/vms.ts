/**
 * KubeVirt's VM admitter's own rules (`vms-admitter.go`, `ValidateVirtualMachineSpec`): the
 * template's metadata, its spec validated after `SetDefaultVirtualMachineInstanceSpec`,
 * running vs runStrategy, DataVolume templates referenced by the template's volumes; the
 * `spec.running` deprecation warning.
 */
import { FeatureGate, isFeatureGateEnabled } from '../cluster-config.ts';
import { RUNNING_DEPRECATION_WARNING, RunStrategy } from '../constants.ts';
import { DefaultingError, defaultVirtualMachineInstanceSpec } from '../defaults.ts';
import { FieldPath, fieldError, type FieldError } from '../field-error.ts';
import type { VirtualMachine } from '../types.ts';
import { validateVirtualMachineInstanceMetadata, validateVirtualMachineInstanceSpec, type ValidationOptions } from './vmi-create.ts';

export interface ValidationResult {
  readonly errors: FieldError[];
  readonly warnings: string[];
}

/** The VM admitter: template validated after spec defaulting; running vs runStrategy. */
export function validateVirtualMachine(vm: VirtualMachine, opts: ValidationOptions): ValidationResult {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const f = FieldPath.root('spec');
  const template = vm.spec.template;
  if (!template) return { errors: [fieldError.required(f.child('template'), 'missing virtual machine template.')], warnings };
  validateVirtualMachineInstanceMetadata(f.child('template').child('metadata'), template.metadata, opts, errors);
  if (template.spec) {
    let spec = template.spec;
    try {
      spec = defaultVirtualMachineInstanceSpec(template.spec, opts.config);
    } catch (e) {
      if (!(e instanceof DefaultingError)) throw e;
      errors.push(fieldError.invalid(f.child('template').child('spec'), e.message));
    }
    // A VM naming an instance type takes its memory from it (applied before this, when it exists).
    errors.push(...validateVirtualMachineInstanceSpec(spec, opts.config, 'spec.template.spec', vm.spec.instancetype === undefined));
  } else {
    errors.push(fieldError.required(f.child('template').child('spec')));
  }
  const { running, runStrategy } = vm.spec;
  if (running !== undefined && runStrategy !== undefined) {
    errors.push(fieldError.invalid(f.child('running'), 'Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead'));
  }
  if (running === undefined && runStrategy === undefined) errors.push(fieldError.invalid(f.child('running'), 'RunStrategy must be specified'));
  if (runStrategy !== undefined) {
    if (runStrategy === RunStrategy.WaitAsReceiver) {
      if (!isFeatureGateEnabled(opts.config, FeatureGate.DecentralizedLiveMigration)) {
        errors.push(fieldError.invalid(f.child('runStrategy'), `Invalid RunStrategy (${runStrategy}), ${FeatureGate.DecentralizedLiveMigration} feature gate is not enabled in kubevirt resource`));
      }
    } else if (!['Always', 'Halted', 'Manual', 'RerunOnFailure', 'Once'].includes(runStrategy)) {
      errors.push(fieldError.invalid(f.child('runStrategy'), `Invalid RunStrategy (${runStrategy})`));
    }
  }
  (vm.spec.dataVolumeTemplates ?? []).forEach((dvt, i) => {
    const dp = f.child('dataVolumeTemplates').index(i);
    const name = dvt.metadata?.name;
    if (!name) {
      errors.push(fieldError.required(dp.child('metadata').child('name'), `'name' field must not be empty for DataVolumeTemplate entry ${dp.child('metadata').child('name')}.`));
      return;
    }
    if (!dvt.spec.pvc && !dvt.spec.storage) {
      errors.push(fieldError.invalid(dp.child('spec'), 'Missing Data volume PVC or Storage'));
      return;
    }
    const referenced = (template.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === name || v.dataVolume?.name === name);
    if (!referenced) errors.push(fieldError.required(dp, `DataVolumeTemplate entry ${dp} must be referenced in the VMI template's 'volumes' list`));
  });
  if (running !== undefined) warnings.push(RUNNING_DEPRECATION_WARNING);
  return { errors, warnings };
}
