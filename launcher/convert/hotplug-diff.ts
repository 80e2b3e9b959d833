// What SyncVirtualMachine must change on a running domain (KubeVirt's SyncVMI diff: getAttachedDisks /
// getDetachedDisks, network.Sync, UpdateVCPUs, the virtio-mem resize), as pure decisions over the VMI
// the handler sent and what the launcher knows is plugged. The supervisor carries them out over QMP.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { cpuTopology, vcpuCount } from './cpu.ts';
import { diskTarget } from './disks.ts';
import { memoryLayout, type MemoryLayout } from './memory.ts';
import { USER_ALIAS_PREFIX } from './constants.ts';
import type { HotplugState } from './hotplug.ts';

/** status.volumeStatus phases after which the launcher may attach a hotplug volume (KubeVirt's hotplugReady). */
export const HOTPLUG_ATTACHABLE_PHASES: ReadonlySet<string> = new Set(['MountedToPod', 'Ready']);

export interface HotplugTracking {
  /** QEMU ids of the disks plugged at runtime (only those are unplugged, as in KubeVirt). */
  readonly hotplugged: ReadonlySet<string>;
  /** QEMU ids with a device_del sent and no DEVICE_DELETED yet. */
  readonly detaching: ReadonlySet<string>;
}

export interface HotplugDiff {
  /** Disk names to plug, in spec order. */
  attachDisks: string[];
  /** QEMU ids of disks to unplug. */
  detachDisks: string[];
  /** Interface names to plug, in spec order. */
  attachInterfaces: string[];
  /** QEMU ids of NICs to unplug. */
  detachInterfaces: string[];
  /** Wanted but impossible right now, one sentence each naming the device. */
  blocked: { name: string; reason: string }[];
}

/** The node has made the volume available in the launcher (volumeStatus hotplugVolume, phase MountedToPod/Ready). */
export function hotplugVolumeAttachable(vmi: VirtualMachineInstance, name: string): boolean {
  const s = vmi.status?.volumeStatus?.find((x) => x.name === name);
  return s?.hotplugVolume !== undefined && HOTPLUG_ATTACHABLE_PHASES.has(s.phase ?? '');
}

const DISK_KINDS: ReadonlySet<string> = new Set(['disk', 'lun']);

export function hotplugDiff(vmi: VirtualMachineInstance, state: HotplugState, tracking: HotplugTracking): HotplugDiff {
  const out: HotplugDiff = { attachDisks: [], detachDisks: [], attachInterfaces: [], detachInterfaces: [], blocked: [] };
  const attached = new Set(state.devices.map((d) => d.qemuId));
  const volumes = new Map((vmi.spec.volumes ?? []).map((v) => [v.name, v]));
  const disks = vmi.spec.domain.devices.disks ?? [];
  const wantedDisks = new Set<string>();

  for (const disk of disks) {
    const v = volumes.get(disk.name);
    if (!v) continue;
    const id = USER_ALIAS_PREFIX + disk.name;
    // hostDisks are prepared by the launcher itself (local mode opens them at their host path).
    const hot = v.hostDisk !== undefined || hotplugVolumeAttachable(vmi, disk.name);
    if (!hot) {
      if (attached.has(id)) wantedDisks.add(id);
      continue;
    }
    wantedDisks.add(id);
    if (tracking.detaching.has(id)) {
      out.blocked.push({ name: disk.name, reason: `disk "${disk.name}" is still being detached from the guest; it is attached again once the guest has released it` });
      continue;
    }
    if (attached.has(id)) continue;
    const { bus, target } = diskTarget(disk);
    if (target === 'cdrom' || (bus !== 'virtio' && bus !== 'scsi')) {
      out.blocked.push({ name: disk.name, reason: `disk "${disk.name}": only virtio and scsi disks and luns can be hotplugged (bus ${bus}, ${target})` });
      continue;
    }
    out.attachDisks.push(disk.name);
  }
  for (const d of state.devices) {
    if (!DISK_KINDS.has(d.kind) || !tracking.hotplugged.has(d.qemuId)) continue;
    if (wantedDisks.has(d.qemuId) || tracking.detaching.has(d.qemuId)) continue;
    out.detachDisks.push(d.qemuId);
  }

  const networks = new Set((vmi.spec.networks ?? []).map((n) => n.name));
  const ifaces = vmi.spec.domain.devices.interfaces ?? [];
  const wantedNics = new Set<string>();
  for (const iface of ifaces) {
    if (iface.state === 'absent' || !networks.has(iface.name)) continue;
    const id = USER_ALIAS_PREFIX + iface.name;
    wantedNics.add(id);
    if (attached.has(id)) continue;
    if (tracking.detaching.has(id)) {
      out.blocked.push({ name: iface.name, reason: `interface "${iface.name}" is still being detached from the guest` });
      continue;
    }
    out.attachInterfaces.push(iface.name);
  }
  for (const d of state.devices) {
    if (d.kind !== 'interface' || wantedNics.has(d.qemuId) || tracking.detaching.has(d.qemuId)) continue;
    out.detachInterfaces.push(d.qemuId);
  }
  return out;
}

export type VcpuChange =
  | { kind: 'none'; vcpus: number }
  | { kind: 'add'; from: number; to: number }
  | { kind: 'refuse'; vcpus: number; reason: string };

/**
 * vCPUs wanted by `spec.domain.cpu` against those plugged. Raising up to maxSockets × cores × threads
 * is hot-added; lowering is refused under TCG (QEMU 7.2 corrupts its heap on the next device_add after
 * a vCPU unplug) and not implemented under KVM.
 */
export function vcpuChange(vmi: VirtualMachineInstance, current: number, max: number, accelerator: 'kvm' | 'tcg'): VcpuChange {
  let want: number;
  try {
    want = vcpuCount(cpuTopology(vmi));
  } catch (err) {
    return { kind: 'refuse', vcpus: current, reason: `${err instanceof Error ? err.message : String(err)}; the running domain keeps ${current} vCPUs` };
  }
  if (want === current) return { kind: 'none', vcpus: current };
  if (want > max) {
    return { kind: 'refuse', vcpus: current, reason: `spec.domain.cpu: ${want} vCPUs requested, but the domain was started with room for ${max} (maxSockets); a restart is required` };
  }
  if (want < current) {
    return {
      kind: 'refuse',
      vcpus: current,
      reason: accelerator === 'tcg'
        ? `spec.domain.cpu: lowering vCPUs from ${current} to ${want} is refused under software emulation (TCG): QEMU 7.2 corrupts its memory on vCPU hot-unplug; a restart is required`
        : `spec.domain.cpu: lowering vCPUs from ${current} to ${want} (hot-unplug) is not supported by qvirt; a restart is required`,
    };
  }
  return { kind: 'add', from: current, to: want };
}

export type MemoryChange =
  | { kind: 'none' }
  | { kind: 'resize'; requestedBytes: number; guestBytes: number }
  | { kind: 'refuse'; reason: string };

/**
 * The virtio-mem `requested-size` for the VMI's `memory.guest` (KubeVirt liveupdate/memory: guest −
 * guestAtBoot), given the layout the domain was started with.
 */
export function memoryChange(vmi: VirtualMachineInstance, atStart: MemoryLayout, currentRequested: number): MemoryChange {
  let want: number;
  try {
    want = memoryLayout({ ...vmi, status: { ...vmi.status, memory: { ...vmi.status?.memory, guestAtBoot: String(atStart.bootBytes) } } }).guestBytes;
  } catch (err) {
    return { kind: 'refuse', reason: err instanceof Error ? err.message : String(err) };
  }
  const requested = want - atStart.bootBytes;
  if (requested === currentRequested) return { kind: 'none' };
  if (atStart.maxBytes === undefined) {
    if (want === atStart.guestBytes) return { kind: 'none' };
    return { kind: 'refuse', reason: `spec.domain.memory.guest: the domain was started without memory hotplug (no maxGuest); a restart is required` };
  }
  if (want > atStart.maxBytes) return { kind: 'refuse', reason: `spec.domain.memory.guest: ${want} bytes exceed maxGuest (${atStart.maxBytes} bytes) the domain was started with` };
  if (requested < 0) return { kind: 'refuse', reason: `spec.domain.memory.guest: ${want} bytes is below the memory the domain booted with (${atStart.bootBytes} bytes)` };
  return { kind: 'resize', requestedBytes: requested, guestBytes: want };
}
