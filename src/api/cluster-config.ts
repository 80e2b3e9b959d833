/**
 * The part of KubeVirt's `KubeVirtConfiguration` (the KubeVirt CR's `spec.configuration`) that qvirt
 * honours, with KubeVirt's defaults (`pkg/virt-config/configuration.go defaultClusterConfig` and
 * `virt-config.go` constants), and the merge KubeVirt performs: the CR's configuration is JSON-decoded
 * over a copy of the defaults, so objects merge field by field, maps merge key by key, lists replace,
 * and Go's `omitempty` means a zero value (`false`, `0`, `""`) on a non-pointer field cannot override
 * a default.
 */
import { DEFAULT_CPU_MODEL, DefaultMachineType, EvictionStrategy, PodPath } from './constants.ts';
import type { EvictionStrategy as EvictionStrategyType, Quantity, ResourceRequirements } from './types.ts';
import type { FieldError } from './field-error.ts';
import { parseWithSchema } from './parse.ts';
import { arr, bool, enumOf, int64, looseObject, map, quantity, str, stringMap } from './schema/dsl.ts';

export const NetworkInterfaceType = { Bridge: 'bridge', Masquerade: 'masquerade', Slirp: 'slirp' } as const;
export const VMRolloutStrategy = { LiveUpdate: 'LiveUpdate', Stage: 'Stage' } as const;
export const SupportContainerType = {
  HotplugAttachment: 'hotplug-disk',
  Guestfs: 'guestfs',
  Sidecar: 'sidecar',
  VMExport: 'vmexport',
  Virtiofs: 'virtiofs',
} as const;

/** Feature gates referenced by the parts of KubeVirt qvirt reproduces. */
export const FeatureGate = {
  Root: 'Root',
  CPUManager: 'CPUManager',
  HotplugVolumes: 'HotplugVolumes',
  HostDisk: 'HostDisk',
  HostDevices: 'HostDevices',
  ExperimentalIgnitionSupport: 'ExperimentalIgnitionSupport',
  PortRangesSpec: 'PortRangesSpec',
  DeclarativeHotplugVolumes: 'DeclarativeHotplugVolumes',
  ExpandDisks: 'ExpandDisks',
  Sidecar: 'Sidecar',
  VMExport: 'VMExport',
  DownwardMetrics: 'DownwardMetricsFeatureGate',
  VMPersistentState: 'VMPersistentState',
  NUMA: 'NUMA',
  ImageVolume: 'ImageVolume',
  VmiMemoryOverheadReport: 'VmiMemoryOverheadReport',
  CrossArchitectureVirtualization: 'CrossArchitectureVirtualization',
  ContainerPathVolumes: 'ContainerPathVolumes',
  DecentralizedLiveMigration: 'DecentralizedLiveMigration',
  MigrationStallDetection: 'MigrationStallDetection',
  MigrationDowntimeTuning: 'MigrationDowntimeTuning',
  ObjectGraph: 'ObjectGraph',
} as const;

export interface DeveloperConfiguration {
  featureGates: string[];
  disabledFeatureGates: string[];
  useEmulation: boolean;
  /** Percent: guest memory ÷ pod memory request × 100. */
  memoryOvercommit: number;
  /** vCPUs per requested physical CPU (1 vCPU ⇒ 100m at the default 10). */
  cpuAllocationRatio: number;
  nodeSelectors: Record<string, string>;
  pvcTolerateLessSpaceUpToPercent: number;
  minimumReservePVCBytes: number;
  logVerbosity: {
    virtAPI: number;
    virtController: number;
    virtHandler: number;
    virtLauncher: number;
    virtOperator: number;
  };
}

export interface MigrationConfiguration {
  parallelMigrationsPerCluster: number;
  parallelOutboundMigrationsPerNode: number;
  nodeDrainTaintKey: string;
  /** `0Mi` means unlimited. */
  bandwidthPerMigration: Quantity;
  /** Seconds a migration may make no progress before it is aborted. */
  progressTimeout: number;
  /** Seconds per GiB of guest memory before a migration is aborted (or switched to post-copy). */
  completionTimeoutPerGiB: number;
  maxDowntimeMs: number;
  utilityVolumesTimeout: number;
  unsafeMigrationOverride: boolean;
  allowAutoConverge: boolean;
  allowPostCopy: boolean;
  allowWorkloadDisruption?: boolean;
  disableTLS?: boolean;
  /** Name of a dedicated migration network (NetworkAttachmentDefinition). */
  network?: string;
  matchSELinuxLevelOnMigration?: boolean;
}

export interface NetworkConfiguration {
  defaultNetworkInterface: (typeof NetworkInterfaceType)[keyof typeof NetworkInterfaceType];
  permitSlirpInterface: boolean;
  permitBridgeInterfaceOnPodNetwork: boolean;
}

export interface ArchSpecificConfiguration {
  ovmfPath: string;
  emulatedMachines: string[];
  machineType: string;
}

export interface ArchConfiguration {
  amd64: ArchSpecificConfiguration;
  arm64: ArchSpecificConfiguration;
  s390x: ArchSpecificConfiguration;
  defaultArchitecture: string;
}

export interface SupportContainerResources {
  type: string;
  resources: Pick<ResourceRequirements, 'requests' | 'limits'>;
}

export interface LiveUpdateConfiguration {
  maxHotplugRatio: number;
  maxCpuSockets?: number;
  maxGuest?: Quantity;
}

export interface SMBiosConfiguration {
  manufacturer: string;
  product: string;
  version?: string;
  sku?: string;
  family: string;
}

export interface VirtualMachineOptions {
  disableFreePageReporting?: Record<string, never>;
  disableSerialConsoleLog?: Record<string, never>;
}

/** A fully defaulted cluster configuration (what `ClusterConfig.GetConfig()` returns). */
export interface ClusterConfig {
  developerConfiguration: DeveloperConfiguration;
  migrations: MigrationConfiguration;
  network: NetworkConfiguration;
  architectureConfiguration: ArchConfiguration;
  liveUpdateConfiguration: LiveUpdateConfiguration;
  smbios: SMBiosConfiguration;
  evictionStrategy: EvictionStrategyType;
  cpuRequest: Quantity;
  imagePullPolicy: 'Always' | 'Never' | 'IfNotPresent';
  memBalloonStatsPeriod: number;
  supportedGuestAgentVersions: string[];
  vmRolloutStrategy: (typeof VMRolloutStrategy)[keyof typeof VMRolloutStrategy];
  supportContainerResources: SupportContainerResources[];
  /** Overrides the per-architecture machine type when set. */
  machineType?: string;
  /** Cluster-wide CPU model; empty means `host-model`. */
  cpuModel?: string;
  /** A decimal string such as `"1.5"`: multiplies the computed memory overhead. */
  additionalGuestMemoryOverheadRatio?: string;
  defaultRuntimeClass?: string;
  selinuxLauncherType?: string;
  ovmfPath?: string;
  virtualMachineOptions?: VirtualMachineOptions;
}

/** Deeply optional input form (what a KubeVirt CR may carry). */
export type PartialClusterConfig = DeepPartial<ClusterConfig>;
type DeepPartial<T> = T extends readonly (infer _U)[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> | null }
    : T;

/** KubeVirt's default configuration for a cluster whose default architecture is `arch`. */
export function defaultClusterConfig(arch = 'amd64'): ClusterConfig {
  return {
    imagePullPolicy: 'IfNotPresent',
    developerConfiguration: {
      featureGates: [],
      disabledFeatureGates: [],
      useEmulation: false,
      memoryOvercommit: 100,
      cpuAllocationRatio: 10,
      nodeSelectors: {},
      pvcTolerateLessSpaceUpToPercent: 10,
      minimumReservePVCBytes: 131072,
      logVerbosity: { virtAPI: 2, virtController: 2, virtHandler: 2, virtLauncher: 2, virtOperator: 2 },
    },
    evictionStrategy: EvictionStrategy.None,
    migrations: {
      parallelMigrationsPerCluster: 5,
      parallelOutboundMigrationsPerNode: 2,
      nodeDrainTaintKey: 'kubevirt.io/drain',
      bandwidthPerMigration: '0Mi',
      progressTimeout: 150,
      completionTimeoutPerGiB: 150,
      maxDowntimeMs: 900,
      utilityVolumesTimeout: 150,
      unsafeMigrationOverride: false,
      allowAutoConverge: false,
      allowPostCopy: false,
    },
    cpuRequest: '100m',
    network: {
      defaultNetworkInterface: NetworkInterfaceType.Bridge,
      permitSlirpInterface: false,
      permitBridgeInterfaceOnPodNetwork: true,
    },
    smbios: { family: 'KubeVirt', manufacturer: 'KubeVirt', product: 'None' },
    supportedGuestAgentVersions: ['2.*', '3.*', '4.*', '5.*'],
    memBalloonStatsPeriod: 10,
    architectureConfiguration: {
      amd64: { ovmfPath: PodPath.OVMF, emulatedMachines: ['q35*', 'pc-q35*'], machineType: DefaultMachineType.amd64 },
      arm64: { ovmfPath: '/usr/share/AAVMF', emulatedMachines: ['virt*'], machineType: DefaultMachineType.arm64 },
      s390x: { ovmfPath: '', emulatedMachines: ['s390-ccw-virtio*'], machineType: DefaultMachineType.s390x },
      defaultArchitecture: arch,
    },
    liveUpdateConfiguration: { maxHotplugRatio: 4 },
    vmRolloutStrategy: VMRolloutStrategy.LiveUpdate,
    supportContainerResources: [],
  };
}

/** Non-pointer Go fields: their zero value is dropped by `omitempty` and never overrides a default. */
const ZERO_IGNORED = new Set([
  'developerConfiguration.useEmulation',
  'developerConfiguration.memoryOvercommit',
  'developerConfiguration.cpuAllocationRatio',
  'developerConfiguration.pvcTolerateLessSpaceUpToPercent',
  'developerConfiguration.minimumReservePVCBytes',
  'network.defaultNetworkInterface',
  'machineType',
  'cpuModel',
  'imagePullPolicy',
  'ovmfPath',
  'selinuxLauncherType',
  'defaultRuntimeClass',
]);

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(base: unknown, over: unknown, path: string): unknown {
  if (over === undefined || over === null) return base;
  if (isObj(base) && isObj(over)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(over)) {
      const p = path ? `${path}.${k}` : k;
      if ((v === false || v === 0 || v === '') && ZERO_IGNORED.has(p)) continue;
      out[k] = merge(base[k], v, p);
    }
    return out;
  }
  return structuredClone(over);
}

/**
 * The effective configuration: `partial` (e.g. a KubeVirt CR's `spec.configuration`) decoded over
 * KubeVirt's defaults. Pure; the inputs are not modified.
 */
export function mergeClusterConfig(partial: PartialClusterConfig | undefined, arch = 'amd64'): ClusterConfig {
  const base = defaultClusterConfig(arch);
  return merge(base, partial ?? {}, '') as ClusterConfig;
}

// ------------------------------------------------------------------------------------------------
// Accessors with KubeVirt's semantics (`virt-config.go`)
// ------------------------------------------------------------------------------------------------

export function isFeatureGateEnabled(config: ClusterConfig, gate: string): boolean {
  const dc = config.developerConfiguration;
  return dc.featureGates.includes(gate) && !dc.disabledFeatureGates.includes(gate);
}

/** `GetMachineType`: the top-level `machineType` wins, else the architecture's. */
export function machineTypeFor(config: ClusterConfig, arch: string): string {
  if (config.machineType) return config.machineType;
  const ac = config.architectureConfiguration;
  switch (arch) {
    case 'arm64':
      return ac.arm64.machineType;
    case 's390x':
      return ac.s390x.machineType;
    default:
      return ac.amd64.machineType;
  }
}

/** `GetCPUModel`: the cluster's model, or `host-model`. */
export function cpuModelFor(config: ClusterConfig): string {
  return config.cpuModel || DEFAULT_CPU_MODEL;
}

export function isVMRolloutStrategyLiveUpdate(config: ClusterConfig): boolean {
  return config.vmRolloutStrategy === VMRolloutStrategy.LiveUpdate;
}

/** `RootEnabled`: VMIs run as root only with the `Root` feature gate. */
export function rootEnabled(config: ClusterConfig): boolean {
  return isFeatureGateEnabled(config, FeatureGate.Root);
}

// ------------------------------------------------------------------------------------------------
// Decoding a KubeVirt CR's `spec.configuration`
// ------------------------------------------------------------------------------------------------

const intField = int64({ minimum: 0 });
const strList = arr(str());

/**
 * The honoured subset, as a schema. Other keys of `KubeVirtConfiguration` are tolerated and
 * ignored (kept out of the result), as qvirt does not implement them.
 */
const ClusterConfigInputSchema = looseObject({
  developerConfiguration: looseObject({
    featureGates: strList,
    disabledFeatureGates: strList,
    useEmulation: bool(),
    memoryOvercommit: intField,
    cpuAllocationRatio: intField,
    nodeSelectors: stringMap(),
    pvcTolerateLessSpaceUpToPercent: intField,
    minimumReservePVCBytes: intField,
    logVerbosity: looseObject({ virtAPI: intField, virtController: intField, virtHandler: intField, virtLauncher: intField, virtOperator: intField }),
  }),
  migrations: looseObject({
    parallelMigrationsPerCluster: intField,
    parallelOutboundMigrationsPerNode: intField,
    nodeDrainTaintKey: str(),
    bandwidthPerMigration: quantity(),
    progressTimeout: intField,
    completionTimeoutPerGiB: intField,
    maxDowntimeMs: intField,
    utilityVolumesTimeout: intField,
    unsafeMigrationOverride: bool(),
    allowAutoConverge: bool(),
    allowPostCopy: bool(),
    allowWorkloadDisruption: bool(),
    disableTLS: bool(),
    network: str(),
    matchSELinuxLevelOnMigration: bool(),
  }),
  network: looseObject({
    defaultNetworkInterface: enumOf(Object.values(NetworkInterfaceType)),
    permitSlirpInterface: bool(),
    permitBridgeInterfaceOnPodNetwork: bool(),
  }),
  architectureConfiguration: looseObject(
    Object.fromEntries(
      ['amd64', 'arm64', 's390x'].map((a) => [a, looseObject({ ovmfPath: str(), emulatedMachines: strList, machineType: str() })]),
    ),
  ),
  liveUpdateConfiguration: looseObject({ maxHotplugRatio: int64({ minimum: 1 }), maxCpuSockets: intField, maxGuest: quantity() }),
  smbios: looseObject({ manufacturer: str(), product: str(), version: str(), sku: str(), family: str() }),
  evictionStrategy: enumOf(Object.values(EvictionStrategy)),
  cpuRequest: quantity(),
  imagePullPolicy: enumOf(['Always', 'Never', 'IfNotPresent']),
  memBalloonStatsPeriod: intField,
  supportedGuestAgentVersions: strList,
  vmRolloutStrategy: enumOf(Object.values(VMRolloutStrategy)),
  supportContainerResources: arr(
    looseObject(
      { type: str(), resources: looseObject({ requests: map(quantity()), limits: map(quantity()) }) },
      { required: ['type', 'resources'] },
    ),
  ),
  machineType: str(),
  cpuModel: str(),
  additionalGuestMemoryOverheadRatio: str({ pattern: '^[0-9]+(\\.[0-9]+)?$' }),
  defaultRuntimeClass: str(),
  selinuxLauncherType: str(),
  ovmfPath: str(),
  virtualMachineOptions: looseObject({ disableFreePageReporting: looseObject({}), disableSerialConsoleLog: looseObject({}) }),
});

/**
 * Decode a KubeVirt CR's `spec.configuration` (unknown JSON) and merge it over the defaults.
 * Type errors name the field (`configuration.migrations.allowPostCopy: must be a boolean ...`);
 * keys qvirt does not honour are ignored and listed in `ignored`.
 */
export function decodeClusterConfig(
  input: unknown,
  arch = 'amd64',
): { config?: ClusterConfig; errors: readonly FieldError[]; ignored: readonly string[] } {
  if (input === undefined || input === null) return { config: defaultClusterConfig(arch), errors: [], ignored: [] };
  const r = parseWithSchema<PartialClusterConfig>(ClusterConfigInputSchema, input, 'configuration');
  if (!r.value) return { errors: r.errors, ignored: r.pruned };
  return { config: mergeClusterConfig(r.value, arch), errors: [], ignored: r.pruned };
}
