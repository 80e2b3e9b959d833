/**
 * `pkg/instancetype/expand` (virt-api's expand-spec and expand-vm-spec): the VM with its instance
 * type and preference written into the template — a disk for every volume, the default network
 * interface, the instance type and preference applied (conflicts refused at
 * `spec.template.spec.…`), then the template defaulted as the VMI webhook would — and the matchers
 * (`spec.instancetype`, `spec.preference`) and status refs removed. A VM naming neither comes back
 * unchanged. Pure: returns a new object; throws `ConflictsError` or `DefaultingError`.
 */
import type { ClusterConfig } from '../cluster-config.ts';
import { defaultVirtualMachineInstanceSpec, setDefaultNetworkInterface, setDefaultVolumeDisk } from '../defaults.ts';
import type { VirtualMachine } from '../types.ts';
import { applyToVMI } from './apply.ts';
import { ConflictsError } from './conflict.ts';
import type { VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from './types.ts';

export const TEMPLATE_SPEC_PATH = 'spec.template.spec';

export function expandVirtualMachine(
  vm: VirtualMachine,
  instancetype: VirtualMachineInstancetypeSpec | undefined,
  preference: VirtualMachinePreferenceSpec | undefined,
  config: ClusterConfig,
): VirtualMachine {
  if (!vm.spec.instancetype && !vm.spec.preference) return vm;
  const out = structuredClone(vm);
  const template = out.spec.template;
  let spec = setDefaultVolumeDisk(template.spec ?? { domain: { devices: {} } });
  setDefaultNetworkInterface(config, spec);
  const meta = template.metadata ?? {};
  const conflicts = applyToVMI(TEMPLATE_SPEC_PATH, instancetype, preference, spec, meta);
  if (conflicts.length) throw new ConflictsError(conflicts);
  if (template.metadata || Object.keys(meta).length) template.metadata = meta;
  spec = defaultVirtualMachineInstanceSpec(spec, config);
  template.spec = spec;
  delete out.spec.instancetype;
  delete out.spec.preference;
  if (out.status) {
    delete out.status.instancetypeRef;
    delete out.status.preferenceRef;
  }
  return out;
}
