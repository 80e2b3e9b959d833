/**
 * KubeVirt's VMIRS admitter's rules (`vmirs-admitter.go`, `ValidateVMIRSSpec`): the template's spec,
 * the selector valid and matching the template's labels, replicas not negative.
 */
import { FieldPath, fieldError, type FieldError } from '../field-error.ts';
import { labelSelectorMatches, validateLabelSelector } from '../label-selector.ts';
import type { VirtualMachineInstanceReplicaSet } from '../types.ts';
import { validateVirtualMachineInstanceSpec, type ValidationOptions } from './vmi-create.ts';

/** The VMIRS admitter. */
export function validateVirtualMachineInstanceReplicaSet(rs: VirtualMachineInstanceReplicaSet, opts: ValidationOptions): FieldError[] {
  const f = FieldPath.root('spec');
  const template = rs.spec.template;
  if (!template) return [fieldError.required(f.child('template'), 'missing virtual machine template.')];
  const errors: FieldError[] = [];
  if (template.spec) errors.push(...validateVirtualMachineInstanceSpec(template.spec, opts.config, 'spec.template.spec'));
  else errors.push(fieldError.required(f.child('template').child('spec')));
  const selectorErrors = validateLabelSelector(rs.spec.selector, f.child('selector'));
  if (selectorErrors.length) errors.push(...selectorErrors);
  else if (!labelSelectorMatches(rs.spec.selector, template.metadata?.labels)) errors.push(fieldError.invalid(f.child('selector'), 'selector does not match labels.'));
  if (rs.spec.replicas !== undefined && rs.spec.replicas < 0) {
    errors.push(fieldError.invalid(f.child('replicas'), `${f.child('replicas')} must be greater than or equal to 0`));
  }
  return errors;
}
