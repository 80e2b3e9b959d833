// virt-api's addvolume/removevolume subresources (pkg/virt-api/rest/volumes.go), as a pure
// decision: the VM or VMI and the request go in, the JSON patch virt-api sends comes out — on a VM
// a request in `status.volumeRequests` (the VM controller moves it into spec.template and the running
// VMI), on a VMI without a VM a test-guarded patch of its spec — or a VolumeRequestError saying why not.
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineVolumeRequest } from '../api/types.ts';
import { checkVolumeRequest, specVolumePatch, verifyVolumeRequest, vmVolumeRequestPatch, VolumeRequestError, type JsonPatchOp } from '../api/volume-requests.ts';
import { Resources, type ResourceType } from '../kube/resource.ts';

export type VolumeTarget = { kind: 'vm'; vm: VirtualMachine } | { kind: 'vmi'; vmi: VirtualMachineInstance };

/** The patch virt-api sends for `request` against `t` (VM status or VMI spec), after its checks. */
export function volumeRequestPatch(t: VolumeTarget, request: VirtualMachineVolumeRequest): { resource: ResourceType; subresource?: 'status'; ops: JsonPatchOp[] } {
  checkVolumeRequest(request);
  if (t.kind === 'vm') {
    verifyVolumeRequest(t.vm.spec.template?.spec?.volumes ?? [], request);
    return { resource: Resources.virtualMachines, subresource: 'status', ops: vmVolumeRequestPatch(t.vm, request) };
  }
  const vmi = t.vmi;
  const owner = vmi.metadata?.ownerReferences?.find((o) => o.controller);
  if (owner?.kind === 'VirtualMachine' && owner.apiVersion === 'kubevirt.io/v1') {
    throw new VolumeRequestError(`VMI ${vmi.metadata?.namespace}/${vmi.metadata?.name} is owned by a VM`);
  }
  if (vmi.status?.phase !== 'Running') throw new VolumeRequestError('VMI is not running');
  verifyVolumeRequest(vmi.spec.volumes ?? [], request);
  return { resource: Resources.virtualMachineInstances, ops: specVolumePatch('', vmi.spec, request) };
}

