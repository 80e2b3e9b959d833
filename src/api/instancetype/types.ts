/**
 * The instancetype.kubevirt.io/v1beta1 API as TypeScript types: exact JSON field names of KubeVirt's
 * `staging/src/kubevirt.io/api/instancetype/v1beta1/types.go` — VirtualMachineInstancetype and its
 * cluster-scoped twin (quantitative sizing: vCPUs, memory, devices), VirtualMachinePreference and its
 * twin (defaults a VM's template takes where it leaves a field unset). v1beta1 is the only version
 * KubeVirt serves and stores (`register.go`: `LatestVersion = "v1beta1"`).
 *
 * Conventions as `../types.ts`: required only where KubeVirt's OpenAPI says so; Go `uint32` and
 * `int` are numbers, quantities strings. Type-only module.
 */
import type { ObjectMeta, Quantity } from '../kube.ts';
import type {
  BlockSize,
  ClockOffset,
  CPUFeature,
  DiskBus,
  DiskIOThreads,
  DriverCache,
  DriverIO,
  EFI,
  FeatureAPIC,
  FeatureHyperv,
  FeatureKVM,
  FeatureState,
  GPU,
  HostDevice,
  Hugepages,
  InputBus,
  InputType,
  InterfaceMasquerade,
  IOThreadsPolicy,
  LaunchSecurity,
  NUMA,
  PanicDeviceModel,
  Realtime,
  Rng,
  Timer,
  TPMDevice,
  VGPUOptions,
} from '../types.ts';

export interface VirtualMachineInstancetype {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** Required spec describing the instancetype */
  spec: VirtualMachineInstancetypeSpec;
}

/** Cluster scoped version of VirtualMachineInstancetype (same spec). */
export interface VirtualMachineClusterInstancetype {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: VirtualMachineInstancetypeSpec;
}

export interface VirtualMachineInstancetypeSpec {
  /** NodeSelector is the name of the custom node selector for the instancetype. */
  nodeSelector?: Record<string, string>;
  /** SchedulerName is the name of the custom K8s scheduler for the instancetype. */
  schedulerName?: string;
  /** Required CPU related attributes of the instancetype. */
  cpu: CPUInstancetype;
  /** Required Memory related attributes of the instancetype. */
  memory: MemoryInstancetype;
  /** Optionally defines any GPU devices associated with the instancetype. */
  gpus?: GPU[];
  /** Optionally defines any HostDevices associated with the instancetype. */
  hostDevices?: HostDevice[];
  /** Optionally defines the IOThreadsPolicy to be used by the instancetype. */
  ioThreadsPolicy?: IOThreadsPolicy;
  /** Optionally specifies the IOThreads options to be used by the instancetype. */
  ioThreads?: DiskIOThreads;
  /** Optionally defines the LaunchSecurity to be used by the instancetype. Deprecated. */
  launchSecurity?: LaunchSecurity;
  /** Optionally defines the required Annotations to be used by the instance type and applied to the VirtualMachineInstance */
  annotations?: Record<string, string>;
}

export interface CPUInstancetype {
  /** Required number of vCPUs to expose to the guest. */
  guest: number;
  /** Model specifies the CPU model inside the VMI. */
  model?: string;
  /** DedicatedCPUPlacement requests the scheduler to place the VirtualMachineInstance on a node with enough dedicated pCPUs and pin the vCPUs to it. */
  dedicatedCPUPlacement?: boolean;
  /** NUMA allows specifying settings for the guest NUMA topology */
  numa?: NUMA;
  /** IsolateEmulatorThread requests one more dedicated pCPU to be allocated for the VMI to place the emulator thread on it. */
  isolateEmulatorThread?: boolean;
  /** Realtime instructs the virt-launcher to tune the VMI for lower latency, optional for real time workloads */
  realtime?: Realtime;
  /** MaxSockets specifies the maximum amount of sockets that can be hotplugged */
  maxSockets?: number;
}

export interface MemoryInstancetype {
  /** Required amount of memory which is visible inside the guest OS. */
  guest: Quantity;
  /** Optionally enables the use of hugepages for the VirtualMachineInstance instead of regular memory. */
  hugepages?: Hugepages;
  /** OvercommitPercent is the percentage of the guest memory which will be overcommitted. */
  overcommitPercent?: number;
  /** MaxGuest allows to specify the maximum amount of memory which is visible inside the Guest OS. */
  maxGuest?: Quantity;
}

export interface VirtualMachinePreference {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** Required spec describing the preferences */
  spec: VirtualMachinePreferenceSpec;
}

/** Cluster scoped version of the VirtualMachinePreference (same spec). */
export interface VirtualMachineClusterPreference {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: VirtualMachinePreferenceSpec;
}

export interface VirtualMachinePreferenceSpec {
  clock?: ClockPreferences;
  cpu?: CPUPreferences;
  devices?: DevicePreferences;
  features?: FeaturePreferences;
  firmware?: FirmwarePreferences;
  machine?: MachinePreferences;
  volumes?: VolumePreferences;
  /** Subdomain of the VirtualMachineInstance */
  preferredSubdomain?: string;
  /** Grace period observed after signalling a VirtualMachineInstance to stop after which the VirtualMachineInstance is force terminated. */
  preferredTerminationGracePeriodSeconds?: number;
  /** Requirements defines the minium amount of instance type defined resources required by a set of preferences */
  requirements?: PreferenceRequirements;
  /** Optionally defines preferred Annotations to be applied to the VirtualMachineInstance */
  annotations?: Record<string, string>;
  /** PreferSpreadSocketToCoreRatio defines the ratio to spread vCPUs between cores and sockets, it defaults to 2. */
  preferSpreadSocketToCoreRatio?: number;
  /** PreferredArchitecture defines a prefeerred architecture for the VirtualMachine */
  preferredArchitecture?: string;
  /** Optionally defines the preferred LaunchSecurity */
  preferredLaunchSecurity?: LaunchSecurity;
}

export interface VolumePreferences {
  preferredStorageClassName?: string;
}

/** `PreferredCPUTopology`: the `prefer*` spellings are deprecated aliases of the short ones. */
export type PreferredCPUTopology = 'preferCores' | 'preferSockets' | 'preferThreads' | 'preferSpread' | 'preferAny' | 'cores' | 'sockets' | 'threads' | 'spread' | 'any';

export interface CPUPreferences {
  /** PreferredCPUTopology optionally defines the preferred guest visible CPU topology, defaults to PreferSockets. */
  preferredCPUTopology?: string;
  spreadOptions?: SpreadOptions;
  /** PreferredCPUFeatures optionally defines a slice of preferred CPU features. */
  preferredCPUFeatures?: CPUFeature[];
}

export type SpreadAcross = 'SocketsCoresThreads' | 'SocketsCores' | 'CoresThreads';

export interface SpreadOptions {
  /** Across optionally defines how to spread vCPUs across the guest visible topology. Default: SocketsCores */
  across?: string;
  /** Ratio optionally defines the ratio to spread vCPUs across the guest visible topology. Default: 2 */
  ratio?: number;
}

export interface DevicePreferences {
  preferredAutoattachGraphicsDevice?: boolean;
  preferredAutoattachMemBalloon?: boolean;
  preferredAutoattachPodInterface?: boolean;
  preferredAutoattachSerialConsole?: boolean;
  preferredAutoattachInputDevice?: boolean;
  preferredDisableHotplug?: boolean;
  preferredVirtualGPUOptions?: VGPUOptions;
  preferredSoundModel?: string;
  preferredUseVirtioTransitional?: boolean;
  preferredInputBus?: InputBus;
  preferredInputType?: InputType;
  preferredDiskBus?: DiskBus;
  preferredLunBus?: DiskBus;
  preferredCdromBus?: DiskBus;
  preferredDiskDedicatedIoThread?: boolean;
  preferredDiskCache?: DriverCache;
  preferredDiskIO?: DriverIO;
  preferredDiskBlockSize?: BlockSize;
  preferredInterfaceModel?: string;
  preferredRng?: Rng;
  preferredBlockMultiQueue?: boolean;
  preferredNetworkInterfaceMultiQueue?: boolean;
  preferredTPM?: TPMDevice;
  preferredInterfaceMasquerade?: InterfaceMasquerade;
  preferredPanicDeviceModel?: PanicDeviceModel;
  preferredVideoType?: string;
}

export interface FeaturePreferences {
  preferredAcpi?: FeatureState;
  preferredApic?: FeatureAPIC;
  preferredHyperv?: FeatureHyperv;
  preferredKvm?: FeatureKVM;
  preferredPvspinlock?: FeatureState;
  preferredSmm?: FeatureState;
}

export interface FirmwarePreferences {
  preferredUseBios?: boolean;
  /** Requires PreferredUseBios to be enabled. */
  preferredUseBiosSerial?: boolean;
  /** Deprecated: use preferredEfi. */
  preferredUseEfi?: boolean;
  /** Deprecated: use preferredEfi.secureBoot. */
  preferredUseSecureBoot?: boolean;
  preferredEfi?: EFI;
}

export interface MachinePreferences {
  preferredMachineType?: string;
}

export interface ClockPreferences {
  /** ClockOffset allows specifying the UTC offset or the timezone of the guest clock. */
  preferredClockOffset?: ClockOffset;
  /** Timer specifies whih timers are attached to the vmi. */
  preferredTimer?: Timer;
}

export interface PreferenceRequirements {
  cpu?: CPUPreferenceRequirement;
  memory?: MemoryPreferenceRequirement;
  /** Required Architecture of the VM referencing this preference */
  architecture?: string;
}

export interface CPUPreferenceRequirement {
  /** Minimal number of vCPUs required by the preference. */
  guest: number;
}

export interface MemoryPreferenceRequirement {
  /** Minimal amount of memory required by the preference. */
  guest: Quantity;
}

/** Any of the four kinds. */
export type InstancetypeObject = VirtualMachineInstancetype | VirtualMachineClusterInstancetype;
export type PreferenceObject = VirtualMachinePreference | VirtualMachineClusterPreference;
