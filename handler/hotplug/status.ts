// The VMI status parts of hotplug and live updates, as virt-handler (and, for the phases before the
// node, virt-controller) write them — pure functions of the VMI, the domain the launcher reports and
// what the node has mounted:
// - status.volumeStatus of hotplug volumes: Pending → MountedToPod (the node made the claim
//   available in the launcher) → Ready (the domain has the disk); a volume removed from the spec
//   stays Detaching, with the launcher's reason, until the guest has released it; then its status
//   goes away. While a claim waits for its attachment pod, the phases the VMI controller writes
//   (Pending, Bound, AttachedToNode) stand.
// - status.currentCPUTopology and HotVCPUChange; status.memory and HotMemoryChange.
// - the fingerprint of what a live SyncVirtualMachine depends on, so the handler re-syncs exactly
//   when it changed.
import type { CPUTopology, VirtualMachineInstance, VirtualMachineInstanceCondition, VirtualMachineInstanceNetworkInterface, VirtualMachineInstanceStatus, VolumeStatus, PersistentVolumeClaimInfo } from '../../src/api/types.ts';
import { quantityToNumber } from '../../src/api/quantity.ts';
import { VolumePhase } from '../../src/api/constants.ts';
import type { Domain } from '../../src/api/domain/domain.ts';

/**
 * What a launcher reports plugged and pending (the domain's Spec.Devices, VCPUs, CurrentMemory and
 * QVirtHotplug), by the VMI's names: present once the launcher supports live changes.
 */
export interface LiveDevices {
  /** Disks by volume name (alias without `ua-`), with the guest target. */
  readonly disks: ReadonlyArray<{ name: string; target: string; hotplugged: boolean }>;
  /** NICs by interface name, with their MAC. */
  readonly interfaces: ReadonlyArray<{ name: string; mac: string }>;
  /** Devices whose unplug the guest has not completed yet, with the reason. */
  readonly detaching: ReadonlyArray<{ name: string; kind: string; reason: string }>;
  /** Live changes the launcher refused, one sentence each. */
  readonly refused: readonly string[];
  readonly vcpus?: { current: number; max: number } | undefined;
  readonly currentMemoryBytes?: number | undefined;
}

const userAlias = (a: { Name: string } | null): string => (a?.Name ?? '').replace(/^ua-/, '');

export function liveDevices(domain: Domain | undefined): LiveDevices | undefined {
  const spec = domain?.Spec;
  const hp = spec?.QVirtHotplug;
  if (!spec || !hp) return undefined;
  const vcpus = spec.VCPUs;
  const mem = spec.CurrentMemory;
  return {
    disks: (spec.Devices.Disks ?? []).map((d) => ({ name: userAlias(d.Alias), target: d.Target.Device, hotplugged: d.HotplugVolume })),
    interfaces: (spec.Devices.Interfaces ?? []).map((i) => ({ name: userAlias(i.Alias), mac: i.MAC?.MAC ?? '' })),
    detaching: hp.Detaching.map((d) => ({ name: d.Alias, kind: d.Kind, reason: d.Reason })),
    refused: hp.Refused,
    vcpus: vcpus ? { current: vcpus.Current, max: vcpus.Max || vcpus.Current } : undefined,
    currentMemoryBytes: mem && mem.Unit === 'b' ? mem.Value : undefined,
  };
}

/** KubeVirt's reasons (virt-handler controller.go, virt-controller storage.go). */
export const HotplugVolumeReason = {
  MountedToPod: 'VolumeMountedToPod',
  Ready: 'VolumeReady',
  Pending: 'VolumePending',
  Detaching: 'VolumeDetaching',
  Unplugged: 'VolumeUnplugged',
} as const;

export const LiveUpdateReason = {
  /** The launcher refused the change (e.g. vCPU unplug under TCG). */
  Refused: 'LiveUpdateRefused',
} as const;

/** What the node did about one hotplug volume. */
export interface MountResult {
  readonly mounted: boolean;
  /** Why it is not mounted (claim missing, not bound, no path). */
  readonly message?: string | undefined;
  /** Not mounted because the attachment pod is not there yet: nothing is wrong on this node. */
  readonly waiting?: boolean | undefined;
  readonly pvc?: PersistentVolumeClaimInfo | undefined;
}

/** The VMI controller's phases of a volume on its way to the node (its attachment pod). */
const ATTACHING: ReadonlySet<string | undefined> = new Set(['Pending', 'Bound', 'AttachedToNode']);

/** A memoryDump volume's phases past MountedToPod: still being mounted does not reset them (KubeVirt's canUpdateToMounted). */
const MEMORY_DUMP_PHASES: ReadonlySet<string | undefined> = new Set([VolumePhase.MemoryDumpInProgress, VolumePhase.MemoryDumpCompleted, VolumePhase.MemoryDumpFailed]);

/**
 * Hotpluggable volumes of the spec (persistentVolumeClaim / dataVolume with hotpluggable: true),
 * and memoryDump volumes (a claim mounted as a directory, not a disk).
 */
export function hotplugVolumes(vmi: VirtualMachineInstance): Array<{ name: string; claimName: string; memoryDump?: boolean }> {
  const out: Array<{ name: string; claimName: string; memoryDump?: boolean }> = [];
  for (const v of vmi.spec.volumes ?? []) {
    if (v.persistentVolumeClaim?.hotpluggable) out.push({ name: v.name, claimName: v.persistentVolumeClaim.claimName });
    else if (v.dataVolume?.hotpluggable) out.push({ name: v.name, claimName: v.dataVolume.name });
    else if (v.memoryDump) out.push({ name: v.name, claimName: v.memoryDump.claimName, memoryDump: true });
  }
  return out;
}

/**
 * volumeStatus with the hotplug volumes' phases: `base` is the status computed for the spec's
 * volumes; hotplug entries are replaced, and entries of volumes gone from the spec but still in the
 * domain are kept as Detaching.
 */
export function withHotplugVolumeStatus(base: readonly VolumeStatus[], vmi: VirtualMachineInstance, domain: Domain | undefined, mounts: ReadonlyMap<string, MountResult>): VolumeStatus[] {
  const hot = new Map(hotplugVolumes(vmi).map((h) => [h.name, h]));
  const live = liveDevices(domain);
  const inDomain = new Map((live?.disks ?? []).map((d) => [d.name, d]));
  const detaching = new Map((live?.detaching ?? []).map((d) => [d.name, d]));
  const old = new Map((vmi.status?.volumeStatus ?? []).map((s) => [s.name, s]));
  const out: VolumeStatus[] = [];
  for (const s of base) {
    const h = hot.get(s.name);
    if (!h) { out.push(s); continue; }
    const prev = old.get(s.name);
    const m = mounts.get(s.name);
    const d = inDomain.get(s.name);
    const next: VolumeStatus = { name: s.name, target: d?.target ?? '', hotplugVolume: { ...prev?.hotplugVolume } };
    if (d && !detaching.has(s.name)) {
      Object.assign(next, { phase: 'Ready', reason: HotplugVolumeReason.Ready, message: `Successfully attach hotplugged volume ${s.name} to VM` });
    } else if (m?.mounted && h.memoryDump && MEMORY_DUMP_PHASES.has(prev?.phase)) {
      Object.assign(next, { phase: prev!.phase, ...(prev!.reason ? { reason: prev!.reason } : {}), ...(prev!.message ? { message: prev!.message } : {}), ...(prev!.memoryDumpVolume ? { memoryDumpVolume: prev!.memoryDumpVolume } : {}) });
    } else if (m?.mounted) {
      Object.assign(next, { phase: 'MountedToPod', reason: HotplugVolumeReason.MountedToPod, message: `Volume ${s.name} has been mounted in virt-launcher pod` });
    } else if ((!m || m.waiting) && ATTACHING.has(prev?.phase)) {
      Object.assign(next, { phase: prev!.phase, ...(prev!.reason ? { reason: prev!.reason } : {}), ...(prev!.message ? { message: prev!.message } : {}) });
    } else {
      Object.assign(next, { phase: 'Pending', reason: HotplugVolumeReason.Pending, message: m?.message ?? `Volume ${s.name} is waiting to be mounted in the virt-launcher pod` });
    }
    const pvc = m?.pvc ?? prev?.persistentVolumeClaimInfo;
    if (pvc) next.persistentVolumeClaimInfo = pvc;
    out.push(next);
  }
  const inSpec = new Set((vmi.spec.volumes ?? []).map((v) => v.name));
  for (const d of live?.disks ?? []) {
    if (inSpec.has(d.name) || !d.hotplugged) continue;
    const prev = old.get(d.name);
    const why = detaching.get(d.name)?.reason ?? `Volume ${d.name} is being detached from the VM`;
    out.push({ name: d.name, target: d.target, phase: 'Detaching', reason: HotplugVolumeReason.Detaching, message: why, hotplugVolume: { ...prev?.hotplugVolume }, ...(prev?.persistentVolumeClaimInfo ? { persistentVolumeClaimInfo: prev.persistentVolumeClaimInfo } : {}) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

type Cond = VirtualMachineInstanceCondition;

function setCond(list: Cond[], type: Cond['type'], next: Omit<Cond, 'type'> | undefined, now: string): Cond[] {
  const old = list.find((c) => c.type === type);
  const rest = list.filter((c) => c.type !== type);
  if (!next) return rest;
  if (old && old.status === next.status && old.reason === next.reason && old.message === next.message) return list;
  return [...rest, { type, ...next, lastTransitionTime: now }];
}

const bytes = (q: string | number | undefined): number | undefined => {
  if (q === undefined) return undefined;
  try { return quantityToNumber(q); } catch { return undefined; }
};

/**
 * currentCPUTopology / memory from the domain, and the HotVCPUChange / HotMemoryChange conditions:
 * removed once the domain has what the spec asks for, False with the launcher's reason when it
 * refused, left as they are while the change is under way.
 */
export function withLiveUpdateStatus(s: VirtualMachineInstanceStatus, vmi: VirtualMachineInstance, domain: Domain | undefined, now: string): VirtualMachineInstanceStatus {
  const live = liveDevices(domain);
  if (!live) return s;
  const out: VirtualMachineInstanceStatus = { ...s };
  let conds = [...(s.conditions ?? [])];
  const cpu = vmi.spec.domain.cpu;
  const cores = cpu?.cores || 1;
  const threads = cpu?.threads || 1;
  if (live.vcpus) {
    const topo: CPUTopology = { sockets: Math.max(1, Math.floor(live.vcpus.current / (cores * threads))), cores, threads };
    out.currentCPUTopology = topo;
    const wantSockets = cpu?.sockets || 1;
    const refused = live.refused.find((r) => r.startsWith('spec.domain.cpu'));
    if (wantSockets === topo.sockets) conds = setCond(conds, 'HotVCPUChange', undefined, now);
    else if (refused) conds = setCond(conds, 'HotVCPUChange', { status: 'False', reason: LiveUpdateReason.Refused, message: refused }, now);
  }
  if (live.currentMemoryBytes !== undefined) {
    const requested = vmi.spec.domain.memory?.guest;
    out.memory = {
      ...s.memory,
      guestAtBoot: s.memory?.guestAtBoot ?? String(live.currentMemoryBytes),
      guestCurrent: String(live.currentMemoryBytes),
      ...(requested !== undefined ? { guestRequested: requested } : {}),
    };
    const refused = live.refused.find((r) => r.startsWith('spec.domain.memory'));
    if (requested === undefined || bytes(requested) === live.currentMemoryBytes) conds = setCond(conds, 'HotMemoryChange', undefined, now);
    else if (refused) conds = setCond(conds, 'HotMemoryChange', { status: 'False', reason: LiveUpdateReason.Refused, message: refused }, now);
  }
  out.conditions = conds;
  return out;
}

/**
 * generateEventsForVolumeStatusChange: a Normal event per hotplug volume whose phase changed (its
 * reason and message), and VolumeUnplugged for one whose status went away.
 */
export function volumeStatusEvents(old: readonly VolumeStatus[] | undefined, next: readonly VolumeStatus[] | undefined): Array<{ reason: string; message: string }> {
  const before = new Map((old ?? []).filter((s) => s.hotplugVolume).map((s) => [s.name, s]));
  const out: Array<{ reason: string; message: string }> = [];
  const seen = new Set<string>();
  for (const s of next ?? []) {
    if (!s.hotplugVolume) continue;
    seen.add(s.name);
    const o = before.get(s.name);
    if ((!o || o.phase !== s.phase) && s.reason) out.push({ reason: s.reason, message: s.message ?? '' });
  }
  for (const name of before.keys()) if (!seen.has(name)) out.push({ reason: HotplugVolumeReason.Unplugged, message: `Volume ${name} has been unplugged` });
  return out;
}

/**
 * status.interfaces after NIC hotplug: an interface the domain has plugged but the status does not
 * list yet appears (name, MAC, infoSource domain); one unplugged (`state: absent`, or gone from the
 * spec) and no longer in the domain disappears.
 */
export function withHotplugInterfaces(list: readonly VirtualMachineInstanceNetworkInterface[] | undefined, vmi: VirtualMachineInstance, domain: Domain | undefined): VirtualMachineInstanceNetworkInterface[] | undefined {
  const live = liveDevices(domain);
  if (!live) return list ? [...list] : undefined;
  const plugged = new Map(live.interfaces.map((i) => [i.name, i]));
  const spec = new Map((vmi.spec.domain.devices.interfaces ?? []).map((i) => [i.name, i]));
  const kept = (list ?? []).filter((s) => {
    if (!s.name || plugged.has(s.name)) return true;
    const want = spec.get(s.name);
    return want !== undefined && want.state !== 'absent';
  });
  const named = new Set(kept.map((s) => s.name));
  const macs = new Set(kept.map((s) => s.mac?.toLowerCase()));
  for (const [name, i] of plugged) {
    if (named.has(name) || (i.mac && macs.has(i.mac.toLowerCase()))) continue;
    kept.push({ name, ...(i.mac ? { mac: i.mac } : {}), infoSource: 'domain' });
  }
  return kept.length > 0 || list ? kept : undefined;
}

/** What a live SyncVirtualMachine depends on; the handler re-syncs when this changes. */
export function liveSyncFingerprint(vmi: VirtualMachineInstance, mounts: ReadonlyMap<string, MountResult>): string {
  const d = vmi.spec.domain;
  return JSON.stringify([
    d.devices.disks ?? [], vmi.spec.volumes ?? [], d.devices.interfaces ?? [], vmi.spec.networks ?? [],
    d.cpu ?? null, d.memory ?? null, [...mounts].filter(([, m]) => m.mounted).map(([n]) => n).sort(),
  ]);
}
