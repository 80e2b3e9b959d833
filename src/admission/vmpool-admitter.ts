/**
 * virt-api's VirtualMachinePool admitter (`vmpool-admitter.go`), on create and update: the schema,
 * then the template's VM spec as the VM admitter validates it (at `spec.virtualMachineTemplate.spec`),
 * the selector matching the template's labels, maxUnavailable (a percentage 1..100 or a count > 0),
 * one update and one scale-in strategy at most, and the selector immutable — KubeVirt's messages.
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { fieldError, type FieldError } from '../api/field-error.ts';
import { parseWithSchema } from '../api/parse.ts';
import { labelSelectorMatches } from '../api/label-selector.ts';
import { validateVirtualMachine } from '../api/validation/vms.ts';
import { VirtualMachinePoolSchema } from '../api/pool/schema.ts';
import type { VirtualMachinePool } from '../api/pool/types.ts';
import type { AdmissionResult } from '../apiserver/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const VMPOOL_WEBHOOK = 'virtualmachinepool-validator.kubevirt.io';
export const VMPOOL_WEBHOOK_PATH = '/virtualmachinepool-validate';

const strategies = (s: { unmanaged?: unknown; opportunistic?: unknown; proactive?: unknown }): string[] =>
  (['unmanaged', 'opportunistic', 'proactive'] as const).filter((k) => s[k] !== undefined);

/** `VMPoolAdmitter.Admit`: `oldObject` on update. */
export function admitVMPool(object: unknown, o: { config: ClusterConfig; fromKubeVirtServiceAccount: boolean; oldObject?: unknown }): AdmissionResult {
  const parsed = parseWithSchema<VirtualMachinePool>(VirtualMachinePoolSchema, object);
  if (!parsed.value) return causesDenial(parsed.errors);
  const pool = parsed.value;
  const spec = pool.spec;
  const out: FieldError[] = [];
  if (!spec.virtualMachineTemplate) return causesDenial([fieldError.required('spec.template', 'missing virtual machine template.')]);
  const vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: pool.metadata?.name ?? '', namespace: pool.metadata?.namespace ?? '' }, spec: spec.virtualMachineTemplate.spec };
  const r = validateVirtualMachine(vm, { config: o.config, isKubeVirtServiceAccount: o.fromKubeVirtServiceAccount });
  for (const e of r.errors) out.push({ ...e, field: e.field.startsWith('spec') ? `spec.virtualMachineTemplate.${e.field}` : e.field });
  if (!labelSelectorMatches(spec.selector, spec.virtualMachineTemplate.metadata?.labels)) out.push(fieldError.invalid('spec.selector', 'selector does not match labels.'));
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
  if (o.oldObject !== undefined && o.oldObject !== null) {
    const old = parseWithSchema<VirtualMachinePool>(VirtualMachinePoolSchema, o.oldObject).value;
    if (old && JSON.stringify(old.spec.selector ?? null) !== JSON.stringify(spec.selector ?? null)) out.push(fieldError.invalid('spec.selector', 'selector is immutable after creation.'));
  }
  return out.length ? causesDenial(out) : allowed(r.warnings);
}
