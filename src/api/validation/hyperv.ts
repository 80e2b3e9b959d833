/**
 * KubeVirt's Hyper-V rules (`pkg/virt-api/webhooks/hyperv.go`, `ValidateVirtualMachineInstanceHyperv`):
 * no explicit features with passthrough, each enabled enlightenment's requirement enabled, and
 * evmcs only with the vmx CPU feature required.
 */
import { fieldError, type FieldError, type FieldPath } from '../field-error.ts';
import type { FeatureState, VirtualMachineInstanceSpec } from '../types.ts';

/** Enabled Hyper-V features whose requirement is disabled (`ValidateVirtualMachineInstanceHyperv`). */
export function validateVirtualMachineInstanceHyperv(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const features = spec.domain.features;
  const hp = f.child('domain').child('features').child('hyperv');
  if (features?.hyperv && features.hypervPassthrough) {
    out.push(fieldError.invalid(hp, 'Cannot explicitly set hyperV features if HypervPassthrough is being used. Please use either HyperV or HypervPassthrough.'));
  }
  const hv = features?.hyperv;
  if (!hv) return;
  const on = (s: FeatureState | undefined) => s?.enabled === true;
  const deps: [string, FeatureState | undefined, string, FeatureState | undefined][] = [
    ['evmcs', hv.evmcs, 'vapic', hv.vapic],
    ['ipi', hv.ipi, 'vpindex', hv.vpindex],
    ['tlbflush', hv.tlbflush, 'vpindex', hv.vpindex],
    ['synictimer', hv.synictimer, 'synic', hv.synic],
    ['synic', hv.synic, 'vpindex', hv.vpindex],
  ];
  for (const [name, state, reqName, req] of deps) {
    if (on(state) && !on(req)) out.push(fieldError.invalid(hp.child(name), `'${hp.child(name)}' requires '${hp.child(reqName)}', which was disabled.`));
  }
  if (hv.evmcs && hv.evmcs.enabled !== false) {
    const feats = spec.domain.cpu?.features ?? [];
    const vmx = feats.find((x) => x.name === 'vmx');
    if (feats.length === 0) out.push(fieldError.required('spec.domain.cpu.features', 'vmx cpu feature is required when evmcs is set'));
    else if (!vmx) out.push(fieldError.required('spec.domain.cpu.features', 'vmx cpu feature is required when evmcs is set'));
    else if (vmx.policy !== 'require' && vmx.policy !== undefined && vmx.policy !== '') {
      out.push(fieldError.invalid('spec.domain.cpu.features', 'vmx cpu feature must be set with require policy when evmcs is set'));
    }
  }
}
