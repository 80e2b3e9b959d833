// The VMI a VM starts (pkg/virt-controller/watch/vm/vm.go SetupVMIFromVM + startVMI): the
// template's metadata and spec, named after the VM, controlled by it, with a firmware UUID that is
// stable across restarts (derived from the VM name), a disk for every volume, and the marks the VM
// controller puts on VMIs it creates (finalizer, generation annotation, revision name).
import { API_VERSION, Annotation, Finalizer, Kind } from '../../src/api/constants.ts';
import { setDefaultNetworkInterface, setDefaultVolumeDisk, vmiFirmwareUUID } from '../../src/api/defaults.ts';
import { applyToNewVMI } from '../../src/api/instancetype/apply.ts';
import { applyAutoAttachPreferences } from '../../src/api/instancetype/preference.ts';
import type { VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from '../../src/api/instancetype/types.ts';
import type { ClusterConfig } from '../../src/api/cluster-config.ts';
import { hasStartPausedRequest } from './state-change-requests.ts';
import { withoutCompletedMemoryDump } from './memory-dump.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../src/api/types.ts';

/** `CalculateLegacyUUID`: the firmware UUID a VM's VMI gets when its template names none. */
export const firmwareUUIDForVM = vmiFirmwareUUID;

/** `revision-start-vm-<vmUID>-<generation>`: the ControllerRevision the VM controller records at start. */
export function vmRevisionName(vmUID: string, generation: number): string {
  return `revision-start-vm-${vmUID}-${generation}`;
}

export class InvalidVMTemplateError extends Error {
  override name = 'InvalidVMTemplateError';
  constructor(vm: VirtualMachine, why: string) {
    super(`VirtualMachine ${vm.metadata?.namespace ?? ''}/${vm.metadata?.name ?? ''}: spec.template: ${why}`);
  }
}

/**
 * `SetupVMIFromVM`: the VMI object (not yet created) for this VM. Pure: the VM is not modified.
 * - metadata := template metadata, name := VM name, no generateName, namespace := VM's,
 *   labels := template labels (whatever the template metadata said), one controller owner ref → VM;
 * - spec := template spec, `startStrategy: Paused` when the head state change request is a
 *   paused start; `domain.firmware.uuid` := UUIDv5(VM name) when empty; a completed memory
 *   dump's volume left out (not dumped again); a disk for every volume.
 */
export function setupVMIFromVM(vm: VirtualMachine): VirtualMachineInstance {
  const name = vm.metadata?.name;
  if (!name) throw new InvalidVMTemplateError(vm, 'the VirtualMachine has no metadata.name');
  const templateSpec = vm.spec.template.spec;
  if (!templateSpec) throw new InvalidVMTemplateError(vm, 'spec is required');

  const metadata = structuredClone(vm.spec.template.metadata ?? {});
  metadata.name = name;
  delete metadata.generateName;
  if (vm.metadata?.namespace !== undefined) metadata.namespace = vm.metadata.namespace;
  const labels = vm.spec.template.metadata?.labels;
  if (labels !== undefined) metadata.labels = { ...labels };
  else delete metadata.labels;
  metadata.ownerReferences = [
    {
      apiVersion: API_VERSION,
      kind: Kind.VirtualMachine,
      name,
      uid: vm.metadata?.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    },
  ];

  const spec = setDefaultVolumeDisk(withoutCompletedMemoryDump(vm, templateSpec));
  if (hasStartPausedRequest(vm.status?.stateChangeRequests)) spec.startStrategy = 'Paused';
  spec.domain.firmware = spec.domain.firmware ?? {};
  if (!spec.domain.firmware.uuid) spec.domain.firmware.uuid = firmwareUUIDForVM(name);

  return { apiVersion: API_VERSION, kind: Kind.VirtualMachineInstance, metadata, spec };
}

/** `AutoAttachInputDevice`: `autoattachInputDevice: true` and no inputs → one input `default-0`. */
export function autoAttachInputDevice(spec: VirtualMachineInstanceSpec): void {
  const devices = spec.domain.devices;
  if (devices.autoattachInputDevice !== true || (devices.inputs?.length ?? 0) > 0) return;
  devices.inputs = [{ name: 'default-0' }];
}

/** The instance type and preference the VM uses (found by the VM controller), for `vmiForStart`. */
export interface StartInstancetypes {
  readonly instancetype: VirtualMachineInstancetypeSpec | undefined;
  readonly preference: VirtualMachinePreferenceSpec | undefined;
  readonly config: ClusterConfig;
}

/**
 * What `startVMI` creates: `setupVMIFromVM` plus the revision name in status, the VM's
 * generation annotation, the VM controller's finalizer and the auto-attached input device. With an
 * instance type or preference, in KubeVirt's order: the preference's autoattach flags before the
 * input device, the default pod network interface, then the instance type and preference applied
 * (throws `InstancetypeApplyError` on a conflict). DataVolumes and changed-block tracking are not
 * applied (qvirt has none of them); without an instance type or preference the default pod network
 * is added by the VMI create defaulting (src/api).
 */
export function vmiForStart(vm: VirtualMachine, instancetypes?: StartInstancetypes): VirtualMachineInstance {
  const vmi = setupVMIFromVM(vm);
  const generation = vm.metadata?.generation ?? 0;
  vmi.status = { virtualMachineRevisionName: vmRevisionName(vm.metadata?.uid ?? '', generation) };
  vmi.metadata = vmi.metadata ?? {};
  vmi.metadata.annotations = { ...(vmi.metadata.annotations ?? {}), [Annotation.VirtualMachineGeneration]: String(generation) };
  vmi.metadata.finalizers = [...(vmi.metadata.finalizers ?? []), Finalizer.VirtualMachineController];
  const it = instancetypes && (instancetypes.instancetype || instancetypes.preference) ? instancetypes : undefined;
  if (it?.preference) applyAutoAttachPreferences(it.preference, vmi.spec);
  autoAttachInputDevice(vmi.spec);
  if (it) {
    setDefaultNetworkInterface(it.config, vmi.spec);
    applyToNewVMI(vm, vmi, it.instancetype, it.preference);
  }
  return vmi;
}
