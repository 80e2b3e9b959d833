// Whether a VMI can live-migrate, and how (KubeVirt's virt-handler calculateLiveMigrationCondition,
// checkVolumesForMigration and calculateLiveStorageMigrationCondition): the LiveMigratable and
// StorageLiveMigratable conditions and status.migrationMethod. Pure.
//
// The first reason found wins, in KubeVirt's order: the pod network's interface, a host-model CPU on
// a node that could not name its host model, host devices and GPUs, SEV/SNP and TDX, a TSC
// frequency requirement without topology hints, Hyper-V passthrough, then the disks. A volume whose
// data lives only in the pod (containerDisk overlay, emptyDisk, ephemeral, cloud-init, config
// volumes — anything not a shared claim, shared host disk, virtiofs filesystem or read-only CD-ROM)
// does not block migration: it makes the migration a BlockMigration, which copies those disks.
import type { VirtualMachineInstance, VirtualMachineInstanceCondition, VirtualMachineInstanceMigrationMethod } from '../src/api/types.ts';
import { checkVolumesForMigration } from '../src/api/block-migration.ts';
import { Annotation, ConditionReason } from '../src/api/constants.ts';

type Cond = VirtualMachineInstanceCondition;

export interface MigratabilityContext {
  /**
   * Whether this node could compute its host-model CPU (KubeVirt's hostCpuModel). A host-model VMI
   * on a node without it is not migratable. Default: known.
   */
  readonly hostModelKnown?: boolean;
  /** Names of network binding plugins whose configuration allows migration (kubevirt.spec.configuration.network.binding[].migration). */
  readonly migratableBindingPlugins?: ReadonlySet<string>;
}

export interface Migratability {
  readonly liveMigratable: Cond;
  readonly storageLiveMigratable: Cond;
  readonly migrationMethod: VirtualMachineInstanceMigrationMethod;
}

const notMigratable = (reason: string, message: string): Cond => ({ type: 'LiveMigratable', status: 'False', reason, message });

/** KubeVirt's VerifyVMIMigratable: the interface on the pod network must be masquerade, passt or a migratable plugin. */
function interfaceMigrationError(vmi: VirtualMachineInstance, ctx: MigratabilityContext = {}): string | undefined {
  const ifaces = vmi.spec.domain.devices.interfaces ?? [];
  if (ifaces.length === 0) return undefined;
  const podNet = (vmi.spec.networks ?? []).find((n) => n.pod !== undefined);
  if (!podNet) return undefined;
  const primary = ifaces.find((i) => i.name === podNet.name);
  if (!primary) return `no primary interface found for network ${podNet.name}`;
  if (primary.masquerade || primary.passtBinding) return undefined;
  if (primary.bridge && vmi.metadata?.annotations?.[Annotation.AllowPodBridgeNetworkLiveMigration] !== undefined) return undefined;
  if (primary.binding && ctx.migratableBindingPlugins?.has(primary.binding.name)) return undefined;
  return 'cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network';
}

/** KubeVirt's vmiContainsNonMigratablePCIHostDevices (no vGPU live migration: its feature gate is not served). */
function hostDeviceReason(vmi: VirtualMachineInstance): string | undefined {
  const d = vmi.spec.domain.devices;
  if ((d.hostDevices ?? []).length > 0) return 'VMI specifies non-migratable generic PCI host device';
  if ((d.gpus ?? []).length > 1) return 'VMI specifies too many GPUs';
  if ((d.gpus ?? []).length === 1) return 'VMI specifies a GPU but feature gate VGPULiveMigration is not enabled';
  return undefined;
}

/** topology.GetTscFrequencyRequirement's RequiredForMigration case, unless status.topologyHints names a frequency. */
function tscReason(vmi: VirtualMachineInstance): string | undefined {
  const hinted = (vmi.status?.topologyHints?.tscFrequency ?? 0) > 0;
  if (hinted) return undefined;
  const invtsc = (vmi.spec.domain.cpu?.features ?? []).some((f) => f.name === 'invtsc' && (f.policy === 'require' || f.policy === 'force'));
  if (invtsc) return undefined; // RequiredForBoot: the VMI would not have been scheduled without hints
  if (vmi.spec.domain.features?.hyperv?.reenlightenment?.enabled === true) {
    return 'HyperV Reenlightenment VMIs cannot migrate when TSC Frequency is not exposed on the cluster: guest timers might be inconsistent';
  }
  return undefined;
}

/** The LiveMigratable condition, StorageLiveMigratable and the migration method, as virt-handler computes them. */
export function migratability(vmi: VirtualMachineInstance, ctx: MigratabilityContext = {}): Migratability {
  const volumes = checkVolumesForMigration(vmi);
  const sec = vmi.spec.domain.launchSecurity;
  const iface = interfaceMigrationError(vmi, ctx);
  const cpu = vmi.spec.domain.cpu?.model === 'host-model' && ctx.hostModelKnown === false
    ? `the node "${vmi.status?.nodeName ?? ''}" does not allow migration with host-model` : undefined;
  const hostDev = hostDeviceReason(vmi);
  const tsc = tscReason(vmi);
  const hyperv = vmi.spec.domain.features?.hypervPassthrough?.enabled === true ? 'VMI uses hyperv passthrough' : undefined;
  const pr = (vmi.spec.domain.devices.disks ?? []).some((d) => d.lun?.reservation === true) ? 'VMI uses SCSI persistent reservation' : undefined;
  const cc: Array<[string, string | undefined]> = [
    [ConditionReason.SEVNotLiveMigratable, sec?.sev || sec?.snp ? 'VMI uses SEV' : undefined],
    [ConditionReason.TDXNotLiveMigratable, !(sec?.sev || sec?.snp) && sec?.tdx ? 'VMI uses TDX' : undefined],
  ];
  const head: Array<[string, string | undefined]> = [
    [ConditionReason.InterfaceNotLiveMigratable, iface],
    [ConditionReason.CPUModeNotLiveMigratable, cpu],
    [ConditionReason.HostDeviceNotLiveMigratable, hostDev],
    ...cc,
  ];
  const tail: Array<[string, string | undefined]> = [
    [ConditionReason.NoTSCFrequencyNotLiveMigratable, tsc],
    [ConditionReason.HypervPassthroughNotLiveMigratable, hyperv],
  ];
  const present = (l: Array<[string, string | undefined]>) => l.filter((e): e is [string, string] => e[1] !== undefined);

  // LiveMigratable: the first reason, the disks last.
  const first = present([...head, ...tail])[0];
  const liveMigratable = first ? notMigratable(first[0], first[1])
    : volumes.error ? notMigratable(ConditionReason.DisksNotLiveMigratable, volumes.error)
      : { type: 'LiveMigratable' as const, status: 'True' as const };
  // StorageLiveMigratable: every reason, persistent reservations included, the disks not.
  const storage = present([...head, [ConditionReason.PersistentReservationNotLiveMigratable, pr], ...tail]);
  const storageLiveMigratable: Cond = storage.length === 0
    ? { type: 'StorageLiveMigratable', status: 'True' }
    : { type: 'StorageLiveMigratable', status: 'False', reason: ConditionReason.NotMigratable, message: storage.map(([r, m]) => `${r}: ${m}`).join(', ') };
  return { liveMigratable, storageLiveMigratable, migrationMethod: volumes.block || volumes.error !== undefined ? 'BlockMigration' : 'LiveMigration' };
}
