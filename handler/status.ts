// The VMI status virt-handler writes (updateVMIStatus): phase with its transition timestamps, the
// node-side conditions (Paused, AgentConnected, LiveMigratable and StorageLiveMigratable with the
// migration method, AccessCredentialsSynchronized, Synchronized), interfaces, guest OS
// info, volume status and the machine type — a pure function of (VMI, reported domain, phase,
// sync error, now). The controller writes the result only when it differs from what is stored.
import type { VirtualMachineInstance, VirtualMachineInstanceCondition, VirtualMachineInstanceStatus, VirtualMachineInstanceNetworkInterface, VolumeStatus } from '../src/api/types.ts';
import type { PasstGuestAddresses } from '../src/net/passt-guest-addresses.ts';
import type { Domain } from '../src/api/domain/domain.ts';
import { ConditionReason, isFinalVMIPhase } from '../src/api/constants.ts';
import { FSFreezeStatus, LifeCycle, Reason } from '../src/api/domain/lifecycle.ts';
import { migratability } from './live-migratable.ts';
import { withAccessCredentialCondition } from './access-credentials.ts';

export const InfoSource = { Domain: 'domain', GuestAgent: 'guest-agent', DomainAndGuestAgent: 'domain, guest-agent' } as const;

/**
 * When the launcher pod has no network namespace of its own (the node agent could not set up the
 * masquerade/bridge/passt binding), an interface on the pod network gets QEMU user-mode
 * networking; its status says so in infoSource.
 */
export const USER_MODE_NETWORK_INFO_SOURCE = 'user-mode-network';

/** Names of the VMI's interfaces attached to the pod network. */
function podNetworkInterfaces(vmi: VirtualMachineInstance): Set<string> {
  const podNets = new Set((vmi.spec.networks ?? []).filter((n) => n.pod !== undefined).map((n) => n.name));
  return new Set((vmi.spec.domain.devices.interfaces ?? []).filter((i) => podNets.has(i.name)).map((i) => i.name));
}

const withUserMode = (infoSource: string): string => `${infoSource}, ${USER_MODE_NETWORK_INFO_SOURCE}`;

export interface StatusInput {
  readonly vmi: VirtualMachineInstance;
  readonly domain: Domain | undefined;
  /** The phase the handler decided (handler/phase-from-domain). */
  readonly phase: string;
  /** The last SyncVirtualMachine failure, if the last attempt failed. */
  readonly syncError?: string | undefined;
  /** The machine type the launcher used, when known (spec.domain.machine.type otherwise). */
  readonly machineType?: string | undefined;
  /** The pod network set up for the VMI's interfaces (handler/network/setup), by interface name. */
  readonly podNetwork?: ReadonlyMap<string, PodInterfaceStatus> | undefined;
  readonly now: string;
}

/** What the node agent knows of an interface bound to the pod network. */
export interface PodInterfaceStatus {
  readonly binding: string;
  /** The pod's addresses: what KubeVirt reports for the primary pod network. */
  readonly podIPs: readonly string[];
  /** The guest NIC's MAC, when the binding fixed it (bridge: the pod's MAC). */
  readonly mac?: string | undefined;
  /** passt: the addresses passt hands the guest in this pod (the pod's own). */
  readonly passtGuest?: PasstGuestAddresses | undefined;
}

type Cond = VirtualMachineInstanceCondition;

function setCondition(list: Cond[], next: Cond | undefined, type: Cond['type'], now: string): Cond[] {
  const old = list.find((c) => c.type === type);
  const rest = list.filter((c) => c.type !== type);
  if (!next) return rest;
  const same = old && old.status === next.status && old.reason === next.reason && old.message === next.message;
  if (same) return [...rest, old];
  const keepTransition = old && old.status === next.status;
  return [...rest, { ...next, lastTransitionTime: keepTransition ? old.lastTransitionTime ?? now : now }];
}

/** The VMI's Paused condition for a domain: paused by its user or on an I/O error (else none). */
export function pausedCondition(domain: Domain | undefined): Cond | undefined {
  if (domain?.Status.Status !== LifeCycle.Paused) return undefined;
  if (domain.Status.Reason === Reason.IOError) return { type: 'Paused', status: 'True', reason: ConditionReason.PausedIOError, message: 'VMI was paused, low-level IO error detected' };
  if (domain.Status.Reason === Reason.User) return { type: 'Paused', status: 'True', reason: ConditionReason.PausedByUser, message: 'VMI was paused by user' };
  return undefined;
}

function agentConnected(domain: Domain | undefined): boolean {
  // The launcher fills OSInfo only from guest-get-osinfo answers: the agent is connected.
  return !!domain && Object.values(domain.Status.OSInfo).some((v) => v !== '');
}

function interfaces(vmi: VirtualMachineInstance, domain: Domain | undefined, podNet: ReadonlyMap<string, PodInterfaceStatus> | undefined): VirtualMachineInstanceNetworkInterface[] | undefined {
  const spec = vmi.spec.domain.devices.interfaces ?? [];
  const onPod = podNetworkInterfaces(vmi);
  const bound = (name: string | undefined) => (name ? podNet?.get(name) : undefined);
  const source = (name: string | undefined, base: string) => (name && onPod.has(name) && !bound(name) ? withUserMode(base) : base);
  // The pod's addresses for an interface bound to the pod network (KubeVirt reports the pod IP for masquerade/passt).
  const withPodIPs = (out: VirtualMachineInstanceNetworkInterface, name: string | undefined) => {
    const b = bound(name);
    if (b && b.podIPs.length > 0) { out.ipAddress = b.podIPs[0]; out.ipAddresses = [...b.podIPs]; }
    return out;
  };
  if (!domain?.Status.Interfaces) {
    // The launcher reports no NICs yet: list the pod-network ones from the spec.
    if (!domain || onPod.size === 0) return vmi.status?.interfaces;
    return spec.filter((s) => onPod.has(s.name)).map((s) => {
      const known = vmi.status?.interfaces?.find((k) => k.name === s.name);
      const out: VirtualMachineInstanceNetworkInterface = { ...known, name: s.name, infoSource: source(s.name, InfoSource.Domain) };
      const mac = s.macAddress || bound(s.name)?.mac;
      if (mac) out.mac = mac;
      return withPodIPs(out, s.name);
    });
  }
  return domain.Status.Interfaces.map((i, idx) => {
    const named = spec.find((s) => { const m = s.macAddress || bound(s.name)?.mac; return m && m.toLowerCase() === i.Mac.toLowerCase(); }) ?? spec[idx];
    const ips = i.IPs && i.IPs.length > 0 ? i.IPs : i.Ip ? [i.Ip] : [];
    const base = ips.length > 0 || i.InterfaceName ? InfoSource.DomainAndGuestAgent : InfoSource.Domain;
    const out: VirtualMachineInstanceNetworkInterface = { mac: i.Mac, infoSource: source(named?.name, base) };
    if (named?.name) out.name = named.name;
    if (ips[0]) { out.ipAddress = ips[0]; out.ipAddresses = ips; }
    if (i.InterfaceName) out.interfaceName = i.InterfaceName;
    return withPodIPs(out, named?.name);
  });
}

/** The guest device name of each disk (vda, sda...) in spec order, per bus, as QEMU enumerates them. */
function volumeStatus(vmi: VirtualMachineInstance): VolumeStatus[] {
  const counters: Record<string, number> = {};
  const targets = new Map<string, string>();
  for (const d of vmi.spec.domain.devices.disks ?? []) {
    const bus = d.disk?.bus ?? d.cdrom?.bus ?? d.lun?.bus ?? 'virtio';
    const prefix = bus === 'virtio' ? 'vd' : 'sd';
    const n = counters[prefix] ?? 0;
    counters[prefix] = n + 1;
    targets.set(d.name, prefix + String.fromCharCode(97 + n));
  }
  // Keep what the VMI controller recorded (persistentVolumeClaimInfo, hotplug phases): only the target is ours.
  const old = new Map((vmi.status?.volumeStatus ?? []).map((s) => [s.name, s]));
  return (vmi.spec.volumes ?? []).map((v) => ({ ...(old.get(v.name) ?? {}), name: v.name, target: targets.get(v.name) ?? '' }));
}

export function computeStatus(i: StatusInput): VirtualMachineInstanceStatus {
  const old = i.vmi.status ?? {};
  const s: VirtualMachineInstanceStatus = { ...old };
  s.phase = i.phase as VirtualMachineInstanceStatus['phase'];
  if (old.phase !== i.phase) {
    s.phaseTransitionTimestamps = [...(old.phaseTransitionTimestamps ?? []), { phase: s.phase, phaseTransitionTimestamp: i.now }];
  }
  let conds = [...(old.conditions ?? [])];
  conds = setCondition(conds, pausedCondition(i.domain), 'Paused', i.now);
  if (i.domain && !isFinalVMIPhase(i.phase)) {
    conds = setCondition(conds, agentConnected(i.domain) ? { type: 'AgentConnected', status: 'True' } : undefined, 'AgentConnected', i.now);
    const m = migratability(i.vmi);
    conds = setCondition(conds, m.liveMigratable, 'LiveMigratable', i.now);
    conds = setCondition(conds, m.storageLiveMigratable, 'StorageLiveMigratable', i.now);
    s.migrationMethod = m.migrationMethod;
    conds = withAccessCredentialCondition(conds, i.domain.Spec.Metadata.KubeVirt.AccessCredential, i.now);
  }
  conds = setCondition(conds, i.syncError ? { type: 'Synchronized', status: 'False', reason: ConditionReason.SynchronizingWithDomainFailed, message: i.syncError } : undefined, 'Synchronized', i.now);
  s.conditions = conds;
  const ifaces = interfaces(i.vmi, i.domain, i.podNetwork);
  if (ifaces) s.interfaces = ifaces;
  const os = i.domain?.Status.OSInfo;
  if (os && agentConnected(i.domain)) {
    s.guestOSInfo = { name: os.Name ?? '', kernelRelease: os.KernelRelease ?? '', version: os.Version ?? '', prettyName: os.PrettyName ?? '', versionId: os.VersionId ?? '', kernelVersion: os.KernelVersion ?? '', machine: os.Machine ?? '', id: os.Id ?? '' };
  }
  if (i.domain) s.volumeStatus = volumeStatus(i.vmi);
  // KubeVirt's updateSELinuxContext: launchers run without SELinux here ("none"); a migration target pod matches it.
  if (i.domain && !s.selinuxContext) s.selinuxContext = 'none';
  // KubeVirt's updateMachineType: from the domain, so not before there is one (a write of its own otherwise).
  const machine = i.domain ? (i.machineType ?? i.vmi.spec.domain.machine?.type) : undefined;
  if (machine) s.machine = { type: machine };
  // updateFSFreezeStatus: "thawed" clears it, no report keeps what is there.
  const frozen = i.domain?.Status.FSFreezeStatus.Status;
  if (frozen === FSFreezeStatus.Thawed) delete s.fsFreezeStatus;
  else if (frozen) s.fsFreezeStatus = frozen;
  return s;
}
