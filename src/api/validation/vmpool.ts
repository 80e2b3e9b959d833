/**
 * KubeVirt's VirtualMachinePool admitter's rules (`vmpool-admitter.go`, `ValidateVMPoolSpec`): the
 * template's VM spec as the VM admitter validates it (at `spec.virtualMachineTemplate.spec`), the
 * selector matching the template's labels, maxUnavailable (a percentage 1..100 or a count > 0), one
 * update and one scale-in strategy at most, and the selector immutable — KubeVirt's messages.
 */
import { fieldError, type FieldError } from '../field-error.ts';
import { labelSelectorMatches, validateLabelSelector } from '../label-selector.ts';
import type { VirtualMachinePool } from '../pool/types.ts';
import type { ValidationOptions } from './vmi-create.ts';
import { validateVirtualMachine, type ValidationResult } from './vms.ts';

const strategies = (s: { unmanaged?: unknown; opportunistic?: unknown; proactive?: unknown }): string[] =>
  (['unmanaged', 'opportunistic', 'proactive'] as const).filter((k) => s[k] !== undefined);

/** `ValidateVMPoolSpec`: `oldPool` on update. The VM rules' warnings come back only when there is no error. */
export function validateVirtualMachinePool(pool: VirtualMachinePool, oldPool: VirtualMachinePool | undefined, opts: ValidationOptions): ValidationResult {
  const spec = pool.spec;
  const out: FieldError[] = [];
  if (!spec.virtualMachineTemplate) return { errors: [fieldError.required('spec.template', 'missing virtual machine template.')], warnings: [] };
  const vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: pool.metadata?.name ?? '', namespace: pool.metadata?.namespace ?? '' }, spec: spec.virtualMachineTemplate.spec };
  const r = validateVirtualMachine(vm, opts);
  for (const e of r.errors) out.push({ ...e, field: e.field.startsWith('spec') ? `spec.virtualMachineTemplate.${e.field}` : e.field });
  // An invalid selector is a cause of its own (LabelSelectorAsSelector's error), not a thrown error.
  const selectorErrors = validateLabelSelector(spec.selector, 'spec.selector');
  if (selectorErrors.length) out.push(...selectorErrors);
  else if (!labelSelectorMatches(spec.selector, spec.virtualMachineTemplate.metadata?.labels)) out.push(fieldError.invalid('spec.selector', 'selector does not match labels.'));
  const m = spec.maxUnavailable;
  if (typeof m === 'string') {
    if (!m.endsWith('%')) out.push(fieldError.invalid('spec.maxUnavailable', 'maxUnavailable percentage must end with %'));
    else {
      const p = m.slice(0, -1);
      const v = /^[+-]?\d+$/.test(p) ? Number(p) : NaN;
      if (Number.isNaN(v)) out.push(fieldError.invalid('spec.maxUnavailable', `maxUnavailable percentage value ${JSON.stringify(p)} is invalid: strconv.Atoi: parsing ${JSON.stringify(p)}: invalid syntax`));
      else if (v <= 0 || v > 100) out.push(fieldError.invalid('spec.maxUnavailable', `maxUnavailable percentage value ${v} must be between 1 and 100`));
    }
  } else if (typeof m === 'number' && m <= 0) out.push(fieldError.invalid('spec.maxUnavailable', 'maxUnavailable must be greater than 0'));
  for (const [f, s] of [['spec.updateStrategy', spec.updateStrategy], ['spec.scaleInStrategy', spec.scaleInStrategy]] as const) {
    const set = s ? strategies(s) : [];
    if (set.length > 1) out.push(fieldError.invalid(f, `only one strategy can be configured at a time: but found ${set.join(', ')} strategies`));
  }
  if (oldPool && JSON.stringify(oldPool.spec.selector ?? null) !== JSON.stringify(spec.selector ?? null)) out.push(fieldError.invalid('spec.selector', 'selector is immutable after creation.'));
  return { errors: out, warnings: r.warnings };
}
