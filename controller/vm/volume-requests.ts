// The VM controller's handling of `status.volumeRequests` (virt-controller's handleVolumeRequests and
// trimDoneVolumeRequests): every request is applied to the VM template (persisted), and to the
// running VMI (hotplug) unless the VMI already shows it; requests whose effect the template shows are
// dropped from the status. Pure: the controller sends what this returns.
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec, VirtualMachineVolumeRequest } from '../../src/api/types.ts';
import { applyVolumeRequest, pendingVolumeRequests, type JsonPatchOp } from '../../src/api/volume-requests.ts';

export interface VolumeRequestPlan {
  /** Patch of the VM's template volumes/disks, when a request is not in it yet. */
  vmPatch?: JsonPatchOp[];
  /** Patch of the running VMI's volumes/disks, when a request is not in it yet. */
  vmiPatch?: JsonPatchOp[];
  /** status.volumeRequests after this pass. */
  remaining: VirtualMachineVolumeRequest[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

function patchFor(prefix: '' | '/spec/template', before: VirtualMachineInstanceSpec, after: VirtualMachineInstanceSpec): JsonPatchOp[] | undefined {
  if (same(before.volumes, after.volumes) && same(before.domain.devices.disks, after.domain.devices.disks)) return undefined;
  const v = `${prefix}/spec/volumes`;
  const d = `${prefix}/spec/domain/devices/disks`;
  return [
    { op: 'test', path: v, value: before.volumes ?? null },
    { op: 'test', path: d, value: before.domain.devices.disks ?? null },
    { op: before.volumes ? 'replace' : 'add', path: v, value: after.volumes ?? [] },
    { op: before.domain.devices.disks ? 'replace' : 'add', path: d, value: after.domain.devices.disks ?? [] },
  ];
}

export function planVolumeRequests(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): VolumeRequestPlan {
  const requests = vm.status?.volumeRequests ?? [];
  const template = vm.spec.template?.spec;
  if (requests.length === 0 || !template) return { remaining: [...requests] };
  const nextTemplate = requests.reduce(applyVolumeRequest, template);
  const plan: VolumeRequestPlan = { remaining: pendingVolumeRequests(nextTemplate, requests) };
  const vmPatch = patchFor('/spec/template', template, nextTemplate);
  if (vmPatch) plan.vmPatch = vmPatch;
  if (vmi && vmi.metadata?.deletionTimestamp == null && vmi.status?.phase === 'Running') {
    const vmiPatch = patchFor('', vmi.spec, requests.reduce(applyVolumeRequest, vmi.spec));
    if (vmiPatch) plan.vmiPatch = vmiPatch;
  }
  return plan;
}
