// The VMI a VM starts (pkg/virt-controller/watch/vm/vm.go SetupVMIFromVM + startVMI): the
// template's metadata and spec, named after the VM, controlled by it, with a firmware UUID that is
// stable across restarts (derived from the VM name), a disk for every volume, and the marks the VM
// controller puts on VMIs it creates (finalizer, generation annotation, revision name).
import { createHash } from 'node:crypto';
import {
  Annotations,
  Finalizers,
  FIRMWARE_UUID_NAMESPACE,
  KUBEVIRT_API_VERSION,
  Kinds,
} from '../constants.ts';
import { hasStartPausedRequest } from './state-change-requests.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../src/api/types.ts';

/**
 * Go's `uuid.NewSHA1(namespace, name)` (RFC 4122 version 5). KubeVirt derives a VM's firmware
 * UUID with it from the fixed namespace 6a1a24a1-4061-4607-8bf4-a3963d0c5895 and the VM name.
 */
export function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (ns.length !== 16) throw new Error(`uuidV5: namespace ${JSON.stringify(namespace)} is not a UUID`);
  const hash = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `CalculateLegacyUUID`: the firmware UUID a VM's VMI gets when its template names none. */
export function firmwareUUIDForVM(vmName: string): string {
  return uuidV5(FIRMWARE_UUID_NAMESPACE, vmName);
}

/** `revision-start-vm-<vmUID>-<generation>`: the ControllerRevision the VM controller records at start. */
export function vmRevisionName(vmUID: string, generation: number): string {
  return `revision-start-vm-${vmUID}-${generation}`;
}

/** `SetDefaultVolumeDisk`: every volume without a disk or filesystem of the same name gets `{name}`. */
export function setDefaultVolumeDisks(spec: VirtualMachineInstanceSpec): void {
  const devices = spec.domain.devices;
  const named = new Set<string>([...(devices.disks ?? []).map((d) => d.name), ...(devices.filesystems ?? []).map((f) => f.name)]);
  for (const volume of spec.volumes ?? []) {
    if (named.has(volume.name)) continue;
    devices.disks = [...(devices.disks ?? []), { name: volume.name }];
    named.add(volume.name);
  }
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
 *   paused start; `domain.firmware.uuid` := UUIDv5(VM name) when empty; a disk for every volume.
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
      apiVersion: KUBEVIRT_API_VERSION,
      kind: Kinds.VirtualMachine,
      name,
      uid: vm.metadata?.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    },
  ];

  const spec = structuredClone(templateSpec);
  if (hasStartPausedRequest(vm.status?.stateChangeRequests)) spec.startStrategy = 'Paused';
  spec.domain.firmware = spec.domain.firmware ?? {};
  if (!spec.domain.firmware.uuid) spec.domain.firmware.uuid = firmwareUUIDForVM(name);
  setDefaultVolumeDisks(spec);

  return { apiVersion: KUBEVIRT_API_VERSION, kind: Kinds.VirtualMachineInstance, metadata, spec };
}

/** `AutoAttachInputDevice`: `autoattachInputDevice: true` and no inputs → one input `default-0`. */
export function autoAttachInputDevice(spec: VirtualMachineInstanceSpec): void {
  const devices = spec.domain.devices;
  if (devices.autoattachInputDevice !== true || (devices.inputs?.length ?? 0) > 0) return;
  devices.inputs = [{ name: 'default-0' }];
}

/**
 * What `startVMI` creates: `setupVMIFromVM` plus the revision name in status, the VM's
 * generation annotation, the VM controller's finalizer and the auto-attached input device.
 * Instance types, preferences, DataVolumes and changed-block tracking are not applied (qvirt has
 * none of them); the default pod network is added by the VMI create defaulting (src/api).
 */
export function vmiForStart(vm: VirtualMachine): VirtualMachineInstance {
  const vmi = setupVMIFromVM(vm);
  const generation = vm.metadata?.generation ?? 0;
  vmi.status = { virtualMachineRevisionName: vmRevisionName(vm.metadata?.uid ?? '', generation) };
  vmi.metadata = vmi.metadata ?? {};
  vmi.metadata.annotations = { ...(vmi.metadata.annotations ?? {}), [Annotations.VirtualMachineGeneration]: String(generation) };
  vmi.metadata.finalizers = [...(vmi.metadata.finalizers ?? []), Finalizers.VirtualMachineController];
  autoAttachInputDevice(vmi.spec);
  return vmi;
}
