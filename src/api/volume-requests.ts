// Volume hotplug requests (KubeVirt's addvolume/removevolume): how a request changes a VMI spec
// (controller.ApplyVolumeRequestOnVMISpec), virt-api's checks and JSON patches (rest/volumes.go), and
// the VM controller's bookkeeping of `status.volumeRequests` (trimDoneVolumeRequests). Pure; used by
// the CLI (which plays virt-api) and by controller/vm.
import type { Disk, VirtualMachine, VirtualMachineInstanceSpec, VirtualMachineVolumeRequest, Volume } from './types.ts';

/** A request virt-api would answer with 409 Conflict / 400 Bad Request: the message says why. */
export class VolumeRequestError extends Error {
  override name = 'VolumeRequestError';
}

/** One RFC 6902 operation. */
export type JsonPatchOp = { op: 'test' | 'add' | 'replace'; path: string; value: unknown };

const requestName = (r: VirtualMachineVolumeRequest): string => r.addVolumeOptions?.name ?? r.removeVolumeOptions?.name ?? '';

/** ApplyVolumeRequestOnVMISpec: the spec with the volume (hotpluggable) and its disk added, or both removed. */
export function applyVolumeRequest(spec: VirtualMachineInstanceSpec, r: VirtualMachineVolumeRequest): VirtualMachineInstanceSpec {
  const out: VirtualMachineInstanceSpec = { ...spec, domain: { ...spec.domain, devices: { ...spec.domain.devices } } };
  const volumes = spec.volumes ?? [];
  const disks = spec.domain.devices.disks ?? [];
  const add = r.addVolumeOptions;
  if (add) {
    if (volumes.some((v) => v.name === add.name)) return out;
    const v: Volume = { name: add.name };
    if (add.volumeSource.persistentVolumeClaim) v.persistentVolumeClaim = { ...add.volumeSource.persistentVolumeClaim, hotpluggable: true };
    else if (add.volumeSource.dataVolume) v.dataVolume = { ...add.volumeSource.dataVolume, hotpluggable: true };
    out.volumes = [...volumes, v];
    if (add.disk) out.domain.devices.disks = [...disks, { ...add.disk, name: add.name }];
  } else if (r.removeVolumeOptions) {
    const name = r.removeVolumeOptions.name;
    out.volumes = volumes.filter((v) => v.name !== name);
    out.domain.devices.disks = disks.filter((d) => d.name !== name);
  }
  return out;
}

const sourceName = (v: Volume): string | undefined => v.dataVolume?.name ?? v.persistentVolumeClaim?.claimName;
const isHotpluggable = (v: Volume): boolean => v.dataVolume?.hotpluggable === true || v.persistentVolumeClaim?.hotpluggable === true;

/** verifyVolumeOption: names and claims must be new for an add; a remove needs a hotpluggable volume. */
export function verifyVolumeRequest(volumes: readonly Volume[], r: VirtualMachineVolumeRequest): void {
  const add = r.addVolumeOptions;
  if (add) {
    const src = add.volumeSource.dataVolume?.name ?? add.volumeSource.persistentVolumeClaim?.claimName ?? '';
    for (const v of volumes) {
      if (v.name === add.name) throw new VolumeRequestError(`Unable to add volume [${add.name}] because volume with that name already exists`);
      if (sourceName(v) === src) throw new VolumeRequestError(`Unable to add volume source [${src}] because it already exists`);
    }
    return;
  }
  const name = r.removeVolumeOptions?.name ?? '';
  const v = volumes.find((x) => x.name === name || sourceName(x) === name);
  if (!v) throw new VolumeRequestError(`Unable to remove volume [${name}] because it does not exist`);
  if (!isHotpluggable(v)) throw new VolumeRequestError(`Unable to remove volume [${v.name}] because it is not hotpluggable`);
}

/** virt-api's basic checks of AddVolumeOptions / RemoveVolumeOptions. */
export function checkVolumeRequest(r: VirtualMachineVolumeRequest): void {
  if (r.addVolumeOptions) {
    const a = r.addVolumeOptions;
    if (!a.name) throw new VolumeRequestError('AddVolumeOptions requires name to be set');
    if (!a.disk) throw new VolumeRequestError('AddVolumeOptions requires disk to not be nil');
    if (!a.volumeSource || (!a.volumeSource.persistentVolumeClaim && !a.volumeSource.dataVolume)) throw new VolumeRequestError('AddVolumeOptions requires VolumeSource to not be nil');
  } else if (!r.removeVolumeOptions?.name) {
    throw new VolumeRequestError('RemoveVolumeOptions requires name to be set');
  }
}

/** generateVolumeRequestPatch: test-guarded replace (or add) of volumes and disks under `prefix`. */
export function specVolumePatch(prefix: '' | '/spec/template', spec: VirtualMachineInstanceSpec, r: VirtualMachineVolumeRequest): JsonPatchOp[] {
  const volumePath = `${prefix}/spec/volumes`;
  const diskPath = `${prefix}/spec/domain/devices/disks`;
  const next = applyVolumeRequest(spec, r);
  const volumes = spec.volumes ?? [];
  const disks: Disk[] = spec.domain.devices.disks ?? [];
  return [
    { op: 'test', path: volumePath, value: spec.volumes ?? null },
    { op: 'test', path: diskPath, value: spec.domain.devices.disks ?? null },
    { op: volumes.length > 0 ? 'replace' : 'add', path: volumePath, value: next.volumes ?? [] },
    { op: disks.length > 0 ? 'replace' : 'add', path: diskPath, value: next.domain.devices.disks ?? [] },
  ];
}

/** addAddVolumeRequests / addRemoveVolumeRequests: the VM's request list with `r` appended. */
export function nextVolumeRequests(existing: readonly VirtualMachineVolumeRequest[], r: VirtualMachineVolumeRequest): VirtualMachineVolumeRequest[] {
  const name = requestName(r);
  if (r.addVolumeOptions) {
    for (const x of existing) {
      if (x.addVolumeOptions?.name === name) throw new VolumeRequestError(`add volume request for volume [${name}] already exists`);
      if (x.removeVolumeOptions?.name === name) throw new VolumeRequestError(`unable to add volume since a remove volume request for volume [${name}] already exists and is still being processed`);
    }
    return [...existing, r];
  }
  const out: VirtualMachineVolumeRequest[] = [];
  for (const x of existing) {
    if (x.addVolumeOptions?.name === name) continue; // a pending add of the same volume is dropped
    if (x.removeVolumeOptions?.name === name) throw new VolumeRequestError(`a remove volume request for volume [${name}] already exists and is still being processed`);
    out.push(x);
  }
  return [...out, r];
}

/** generateVMVolumeRequestPatch: the status patch virt-api sends for a VM. */
export function vmVolumeRequestPatch(vm: VirtualMachine, r: VirtualMachineVolumeRequest): JsonPatchOp[] {
  const existing = vm.status?.volumeRequests ?? [];
  const next = nextVolumeRequests(existing, r);
  return [
    { op: 'test', path: '/status/volumeRequests', value: vm.status?.volumeRequests ?? null },
    { op: existing.length > 0 ? 'replace' : 'add', path: '/status/volumeRequests', value: next },
  ];
}

/** trimDoneVolumeRequests: requests whose effect the VM template already shows are dropped. */
export function pendingVolumeRequests(spec: VirtualMachineInstanceSpec, requests: readonly VirtualMachineVolumeRequest[]): VirtualMachineVolumeRequest[] {
  const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
  const disks = new Set((spec.domain.devices.disks ?? []).map((d) => d.name));
  return requests.filter((r) => {
    const name = requestName(r);
    if (r.addVolumeOptions) return !(volumes.has(name) && disks.has(name));
    return volumes.has(name) || disks.has(name);
  });
}
