/**
 * KubeVirt's exact strings for the kubevirt.io/v1 API: group, kinds, phases, conditions, reasons,
 * labels, annotations, finalizers, event reasons and in-pod paths. Sources: KubeVirt
 * `staging/src/kubevirt.io/api/core/v1/types.go`, `register.go`, the virt-controller/virt-handler
 * reason constants, and `/work/shared/reference/kubevirt-model.md` §1, §3–§6.
 *
 * Every value lives here once; code imports it and never retypes it. All objects are `as const`, so
 * `(typeof X)[keyof typeof X]` gives the literal union.
 */
import type {
  EvictionStrategy as EvictionStrategyType,
  VirtualMachineInstanceConditionType,
  VirtualMachineInstanceMigrationConditionType,
  VirtualMachineInstanceMigrationPhase,
  VirtualMachineInstancePhase,
  VirtualMachinePrintableStatus,
  VirtualMachineRunStrategy,
} from './types.ts';

/** Values of an `as const` object, as a union. */
export type ValueOf<T> = T[keyof T];

// ------------------------------------------------------------------------------------------------
// Group, versions, kinds
// ------------------------------------------------------------------------------------------------

export const GROUP = 'kubevirt.io';
export const VERSION = 'v1';
export const API_VERSION = 'kubevirt.io/v1';
/** Deprecated served version (`register.go`); qvirt serves only v1. */
export const DEPRECATED_VERSION = 'v1alpha3';
export const SUBRESOURCE_GROUP = 'subresources.kubevirt.io';
export const SUBRESOURCE_API_VERSION = 'subresources.kubevirt.io/v1';

export const Kind = {
  VirtualMachineInstance: 'VirtualMachineInstance',
  VirtualMachine: 'VirtualMachine',
  VirtualMachineInstanceReplicaSet: 'VirtualMachineInstanceReplicaSet',
  VirtualMachineInstanceMigration: 'VirtualMachineInstanceMigration',
} as const;
export type Kind = ValueOf<typeof Kind>;

export interface ResourceNames {
  readonly kind: Kind;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
}

/** Names per kind exactly as KubeVirt's CRDs declare them (`crds.go`). */
export const Resources = {
  VirtualMachineInstance: {
    kind: 'VirtualMachineInstance',
    listKind: 'VirtualMachineInstanceList',
    plural: 'virtualmachineinstances',
    singular: 'virtualmachineinstance',
    shortNames: ['vmi', 'vmis'],
  },
  VirtualMachine: {
    kind: 'VirtualMachine',
    listKind: 'VirtualMachineList',
    plural: 'virtualmachines',
    singular: 'virtualmachine',
    shortNames: ['vm', 'vms'],
  },
  VirtualMachineInstanceReplicaSet: {
    kind: 'VirtualMachineInstanceReplicaSet',
    listKind: 'VirtualMachineInstanceReplicaSetList',
    plural: 'virtualmachineinstancereplicasets',
    singular: 'virtualmachineinstancereplicaset',
    shortNames: ['vmirs', 'vmirss'],
  },
  VirtualMachineInstanceMigration: {
    kind: 'VirtualMachineInstanceMigration',
    listKind: 'VirtualMachineInstanceMigrationList',
    plural: 'virtualmachineinstancemigrations',
    singular: 'virtualmachineinstancemigration',
    shortNames: ['vmim', 'vmims'],
  },
} as const satisfies Record<Kind, ResourceNames>;

/** CRD category every KubeVirt CRD is in (`kubectl get all`). */
export const CRD_CATEGORY = 'all';

// ------------------------------------------------------------------------------------------------
// Defaults that are constants, not cluster configuration
// ------------------------------------------------------------------------------------------------

/** `v1.DefaultGracePeriodSeconds`: used when `spec.terminationGracePeriodSeconds` is nil (never written). */
export const DEFAULT_GRACE_PERIOD_SECONDS = 30;
/** uid/gid the launcher runs as for non-root VMIs (`status.runtimeUser`). */
export const NON_ROOT_UID = 107;
export const ROOT_UID = 0;
/** Namespace UUID for `uuid.NewSHA1(ns, vmName)`: the firmware UUID of a VM's VMI (`vm.go`). */
export const FIRMWARE_UUID_NAMESPACE = '6a1a24a1-4061-4607-8bf4-a3963d0c5895';
/** Name of the default pod network / interface the defaulter adds. */
export const DEFAULT_NETWORK_NAME = 'default';
export const DEFAULT_CPU_MODEL = 'host-model';
export const CPU_MODEL_HOST_PASSTHROUGH = 'host-passthrough';
export const DEFAULT_ARCHITECTURE = 'amd64';
/** Default machine type per architecture. */
export const DefaultMachineType = {
  amd64: 'q35',
  arm64: 'virt',
  s390x: 's390-ccw-virtio',
} as const;
/** Default `spinlocks` of `features.hyperv.spinlocks` when enabled. */
export const DEFAULT_HYPERV_SPINLOCKS = 4096;
/** Probe defaults (`SetDefaults_Probe`). */
export const ProbeDefaults = {
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
} as const;

// ------------------------------------------------------------------------------------------------
// Phases
// ------------------------------------------------------------------------------------------------

export const VMIPhase = {
  Unset: '',
  Pending: 'Pending',
  Scheduling: 'Scheduling',
  Scheduled: 'Scheduled',
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  WaitingForSync: 'WaitingForSync',
  Unknown: 'Unknown',
} as const satisfies Record<string, VirtualMachineInstancePhase>;

/** `IsFinal`: Succeeded or Failed. */
export function isFinalVMIPhase(phase: VirtualMachineInstancePhase | string | undefined): boolean {
  return phase === VMIPhase.Succeeded || phase === VMIPhase.Failed;
}
/** `IsUnprocessed`: Pending or unset. */
export function isUnprocessedVMIPhase(phase: VirtualMachineInstancePhase | undefined): boolean {
  return phase === undefined || phase === VMIPhase.Unset || phase === VMIPhase.Pending;
}

export const MigrationPhase = {
  Unset: '',
  Pending: 'Pending',
  Scheduling: 'Scheduling',
  Scheduled: 'Scheduled',
  PreparingTarget: 'PreparingTarget',
  TargetReady: 'TargetReady',
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  WaitingForSync: 'WaitingForSync',
  Synchronizing: 'Synchronizing',
} as const satisfies Record<string, VirtualMachineInstanceMigrationPhase>;

/** `IsFinal`: Succeeded or Failed. */
export function isFinalMigrationPhase(phase: VirtualMachineInstanceMigrationPhase | string | undefined): boolean {
  return phase === MigrationPhase.Succeeded || phase === MigrationPhase.Failed;
}

export const MigrationAbortStatus = { Succeeded: 'Succeeded', Failed: 'Failed', Aborting: 'Aborting' } as const;
export const MigrationMode = { PreCopy: 'PreCopy', PostCopy: 'PostCopy', Paused: 'Paused' } as const;
export const MigrationMethod = { BlockMigration: 'BlockMigration', LiveMigration: 'LiveMigration' } as const;
export const MigrationTransport = { Unix: 'Unix' } as const;

export const VolumePhase = {
  Pending: 'Pending',
  Bound: 'Bound',
  AttachedToNode: 'AttachedToNode',
  MountedToPod: 'MountedToPod',
  Ready: 'Ready',
  Detaching: 'Detaching',
  UnMountedFromPod: 'UnMountedFromPod',
  MemoryDumpCompleted: 'MemoryDumpCompleted',
  MemoryDumpInProgress: 'MemoryDumpInProgress',
  MemoryDumpFailed: 'MemoryDumpFailed',
} as const;

/** VirtualMachine status.memoryDumpRequest.phase (v1.MemoryDumpPhase). */
export const MemoryDumpPhase = {
  Associating: 'Associating',
  InProgress: 'InProgress',
  Unmounting: 'Unmounting',
  Completed: 'Completed',
  Dissociating: 'Dissociating',
  Failed: 'Failed',
} as const;

// ------------------------------------------------------------------------------------------------
// Conditions
// ------------------------------------------------------------------------------------------------

export const ConditionStatus = { True: 'True', False: 'False', Unknown: 'Unknown' } as const;

export const VMIConditionType = {
  PodScheduled: 'PodScheduled',
  Provisioning: 'Provisioning',
  Ready: 'Ready',
  Synchronized: 'Synchronized',
  Paused: 'Paused',
  AgentConnected: 'AgentConnected',
  AccessCredentialsSynchronized: 'AccessCredentialsSynchronized',
  AgentVersionNotSupported: 'AgentVersionNotSupported',
  LiveMigratable: 'LiveMigratable',
  HotVCPUChange: 'HotVCPUChange',
  HotMemoryChange: 'HotMemoryChange',
  VolumesChange: 'VolumesChange',
  DataVolumesReady: 'DataVolumesReady',
  StorageLiveMigratable: 'StorageLiveMigratable',
  DecentralizedLiveMigrationFailure: 'DecentralizedLiveMigrationFailure',
  MigrationRequired: 'MigrationRequired',
  EvictionRequested: 'EvictionRequested',
  SoftwareEmulation: 'SoftwareEmulation',
} as const satisfies Record<string, VirtualMachineInstanceConditionType>;

export const VMConditionType = {
  Failure: 'Failure',
  Ready: 'Ready',
  Paused: 'Paused',
  RestartRequired: 'RestartRequired',
  ManualRecoveryRequired: 'ManualRecoveryRequired',
} as const;

export const ReplicaSetConditionType = {
  ReplicaFailure: 'ReplicaFailure',
  ReplicaPaused: 'ReplicaPaused',
} as const;

export const MigrationConditionType = {
  AbortRequested: 'migrationAbortRequested',
  RejectedByResourceQuota: 'migrationRejectedByResourceQuota',
  BlockedByUtilityVolumes: 'migrationBlockedByUtilityVolumes',
  DecentralizedMigrationBlocked: 'decentralizedMigrationBlocked',
  BlockedByBackup: 'migrationBlockedByBackup',
} as const satisfies Record<string, VirtualMachineInstanceMigrationConditionType>;

/** The launcher pod's readiness gate / condition the VMI controller maintains. */
export const POD_CONDITION_VM_UNPAUSED = 'kubevirt.io/virtual-machine-unpaused';

/** Condition reasons (`types.go`, VMI/VM controllers, handler). */
export const ConditionReason = {
  // VMI Ready
  PodNotExists: 'PodNotExists',
  PodTerminating: 'PodTerminating',
  GuestNotRunning: 'GuestNotRunning',
  PodConditionMissing: 'PodConditionMissing',
  // VM Ready
  VMINotExists: 'VMINotExists',
  VMIConditionMissing: 'VMIConditionMissing',
  // Paused
  PausedByUser: 'PausedByUser',
  PausedByMigrationMonitor: 'PausedByMigrationMonitor',
  PausedIOError: 'PausedIOError',
  // launcher pod readiness gate
  NotPaused: 'NotPaused',
  Paused: 'Paused',
  // LiveMigratable=False
  DisksNotLiveMigratable: 'DisksNotLiveMigratable',
  InterfaceNotLiveMigratable: 'InterfaceNotLiveMigratable',
  HotplugNotLiveMigratable: 'HotplugNotLiveMigratable',
  CPUModeNotLiveMigratable: 'CPUModeLiveMigratable',
  VirtIOFSNotLiveMigratable: 'VirtIOFSNotLiveMigratable',
  HostDeviceNotLiveMigratable: 'HostDeviceNotLiveMigratable',
  SEVNotLiveMigratable: 'SEVNotLiveMigratable',
  SecureExecutionNotLiveMigratable: 'SecureExecutionNotLiveMigratable',
  TDXNotLiveMigratable: 'TDXNotLiveMigratable',
  NoTSCFrequencyNotLiveMigratable: 'NoTSCFrequencyNotLiveMigratable',
  HypervPassthroughNotLiveMigratable: 'HypervPassthroughNotLiveMigratable',
  PersistentReservationNotLiveMigratable: 'PersistentReservationNotLiveMigratable',
  NotMigratable: 'NotMigratable',
  // DataVolumesReady
  AllDVsReady: 'AllDVsReady',
  NotAllDVsReady: 'NotAllDVsReady',
  EvictionRequested: 'EvictionRequested',
  // Synchronized=False (sync-error reasons)
  FailedCreate: 'FailedCreate',
  FailedDelete: 'FailedDelete',
  FailedPvcNotFound: 'FailedPvcNotFound',
  ErrImagePull: 'ErrImagePull',
  ImagePullBackOff: 'ImagePullBackOff',
  FailedGuaranteeResources: 'FailedGuaranteeResources',
  /** The handler's sync-failure reason, verbatim (with spaces and the final dot). */
  SynchronizingWithDomainFailed: 'Synchronizing with the Domain failed.',
  // PodScheduled=False
  Unschedulable: 'Unschedulable',
  // VMI status.reason set by the node controller
  NodeUnresponsive: 'NodeUnresponsive',
  // SoftwareEmulation
  CrossArchitectureEmulation: 'CrossArchitectureEmulation',
  // VM Failure condition
  HotPlugVolumeError: 'HotPlugVolumeError',
  /** A hotplug volume's claim is not bound (yet), or gone: its volumeStatus reason. */
  PVCNotReady: 'PVCNotReady',
} as const;

// ------------------------------------------------------------------------------------------------
// VirtualMachine
// ------------------------------------------------------------------------------------------------

export const RunStrategy = {
  Unknown: '',
  Always: 'Always',
  Halted: 'Halted',
  Manual: 'Manual',
  RerunOnFailure: 'RerunOnFailure',
  Once: 'Once',
  WaitAsReceiver: 'WaitAsReceiver',
} as const satisfies Record<string, VirtualMachineRunStrategy>;

export const PrintableStatus = {
  Stopped: 'Stopped',
  Provisioning: 'Provisioning',
  Starting: 'Starting',
  Running: 'Running',
  Paused: 'Paused',
  Stopping: 'Stopping',
  Terminating: 'Terminating',
  CrashLoopBackOff: 'CrashLoopBackOff',
  Migrating: 'Migrating',
  Unknown: 'Unknown',
  ErrorUnschedulable: 'ErrorUnschedulable',
  ErrImagePull: 'ErrImagePull',
  ImagePullBackOff: 'ImagePullBackOff',
  ErrorPvcNotFound: 'ErrorPvcNotFound',
  DataVolumeError: 'DataVolumeError',
  WaitingForVolumeBinding: 'WaitingForVolumeBinding',
  WaitingForReceiver: 'WaitingForReceiver',
} as const satisfies Record<string, VirtualMachinePrintableStatus>;

export const StateChangeRequestAction = { Start: 'Start', Stop: 'Stop' } as const;
/** `stateChangeRequests[].data` key for a paused start, value `"true"`. */
export const START_REQUEST_DATA_PAUSED_KEY = 'paused';
export const START_REQUEST_DATA_PAUSED_TRUE = 'true';

/** `defaultMaxCrashLoopBackoffDelaySeconds`. */
export const MAX_CRASH_LOOP_BACKOFF_DELAY_SECONDS = 300;

export const EvictionStrategy = {
  None: 'None',
  LiveMigrate: 'LiveMigrate',
  LiveMigrateIfPossible: 'LiveMigrateIfPossible',
  External: 'External',
} as const satisfies Record<string, EvictionStrategyType>;

export const StartStrategy = { Paused: 'Paused' } as const;

// ------------------------------------------------------------------------------------------------
// Device and volume enumerations
// ------------------------------------------------------------------------------------------------

export const DiskBus = { VirtIO: 'virtio', SATA: 'sata', SCSI: 'scsi', USB: 'usb' } as const;
export const InputBus = { USB: 'usb', VirtIO: 'virtio' } as const;
export const InputType = { Tablet: 'tablet', Keyboard: 'keyboard' } as const;
export const WatchdogAction = { Poweroff: 'poweroff', Reset: 'reset', Shutdown: 'shutdown' } as const;
export const DriverCache = { None: 'none', WriteThrough: 'writethrough', WriteBack: 'writeback' } as const;
export const DriverIO = { Threads: 'threads', Native: 'native' } as const;
export const DiskErrorPolicy = { Stop: 'stop', Ignore: 'ignore', Report: 'report', Enospace: 'enospace' } as const;
export const TrayState = { Open: 'open', Closed: 'closed' } as const;
export const HostDiskType = { Disk: 'Disk', DiskOrCreate: 'DiskOrCreate' } as const;
export const PullPolicy = { Always: 'Always', Never: 'Never', IfNotPresent: 'IfNotPresent' } as const;
export const IOThreadsPolicy = { Shared: 'shared', Auto: 'auto', SupplementalPool: 'supplementalPool' } as const;
export const InterfaceState = { Absent: 'absent', Up: 'up', Down: 'down' } as const;
export const PanicDeviceModel = { Hyperv: 'hyperv', ISA: 'isa', PVPanic: 'pvpanic' } as const;
export const RebootPolicy = { Reboot: 'Reboot', Terminate: 'Terminate' } as const;
export const MigrationPriority = {
  SystemCritical: 'system-critical',
  UserTriggered: 'user-triggered',
  SystemMaintenance: 'system-maintenance',
} as const;
/** Interface NIC models accepted by the VMI admitter (`validInterfaceModels`). */
export const InterfaceModels = [
  'e1000',
  'e1000e',
  'igb',
  'ne2k_pci',
  'pcnet',
  'rtl8139',
  'virtio',
] as const;
export const DEFAULT_INTERFACE_MODEL = 'virtio';
/** Interface binding method keys of `Interface` (one of). */
export const InterfaceBindingMethods = [
  'bridge',
  'slirp',
  'masquerade',
  'sriov',
  'macvtap',
  'passt',
  'passtBinding',
] as const;
/** Disk target keys of `Disk` (one of). */
export const DiskTargets = ['disk', 'lun', 'cdrom'] as const;
/** Volume source keys of `Volume` (one of). */
export const VolumeSources = [
  'hostDisk',
  'persistentVolumeClaim',
  'cloudInitNoCloud',
  'cloudInitConfigDrive',
  'sysprep',
  'containerDisk',
  'ephemeral',
  'emptyDisk',
  'dataVolume',
  'configMap',
  'secret',
  'downwardAPI',
  'serviceAccount',
  'downwardMetrics',
  'memoryDump',
  'containerPath',
] as const;
/** Network source keys of `Network` (one of). */
export const NetworkSources = ['pod', 'multus', 'resourceClaim'] as const;

// ------------------------------------------------------------------------------------------------
// Labels, annotations, finalizers (§4)
// ------------------------------------------------------------------------------------------------

export const Label = {
  /** `kubevirt.io`: `virt-launcher` on launcher pods; `""` on CRDs. */
  App: 'kubevirt.io',
  CreatedBy: 'kubevirt.io/created-by',
  NodeName: 'kubevirt.io/nodeName',
  MigrationTargetNodeName: 'kubevirt.io/migrationTargetNodeName',
  OutdatedLauncherImage: 'kubevirt.io/outdatedLauncherImage',
  MigrationJobUID: 'kubevirt.io/migrationJobUID',
  MigrationName: 'kubevirt.io/migrationName',
  /** On VMIMs: the VMI being migrated (`MigrationSelectorLabel`). */
  MigrationSelector: 'kubevirt.io/vmi-name',
  /** Launcher pod: sanitized hostname (`DeprecatedVirtualMachineNameLabel`). */
  DeprecatedVirtualMachineName: 'vm.kubevirt.io/name',
  /** Launcher pod → VMI name, hashed down to 63 characters (`VirtualMachineInstanceIDLabel`). */
  VirtualMachineInstanceID: 'vmi.kubevirt.io/id',
  /** Node → whether virt-handler (qvirt's handler) runs there and is healthy (`NodeSchedulable`). */
  NodeSchedulable: 'kubevirt.io/schedulable',
  CPUManager: 'cpumanager',
  KubevirtCPUManager: 'kubevirt.io/cpumanager',
  /** Conventional label the example ReplicaSets select on. */
  VMReplicaSet: 'kubevirt.io/vmReplicaSet',
  Realtime: 'kubevirt.io/realtime',
  SEV: 'kubevirt.io/sev',
  SEVES: 'kubevirt.io/sev-es',
  SEVSNP: 'kubevirt.io/sev-snp',
  TDX: 'kubevirt.io/tdx',
  SecureExecution: 'kubevirt.io/s390-pv',
  NodeHostModelIsObsolete: 'node-labeller.kubevirt.io/obsolete-host-model',
  /** Namespace label: ratio for automatic memory limits. */
  AutoMemoryLimitsRatio: 'alpha.kubevirt.io/auto-memory-limits-ratio',
  KubernetesArch: 'kubernetes.io/arch',
  KubernetesHostname: 'kubernetes.io/hostname',
  LogVerbosity: 'logVerbosity',
  DebugLogs: 'debugLogs',
  VirtiofsdDebugLogs: 'virtiofsdDebugLogs',
} as const;

/** Node label prefixes (`<prefix><name>: "true"`). */
export const LabelPrefix = {
  CPUFeature: 'cpu-feature.node.kubevirt.io/',
  CPUModel: 'cpu-model.node.kubevirt.io/',
  CPUTimer: 'cpu-timer.node.kubevirt.io/',
  CPUVendor: 'cpu-vendor.node.kubevirt.io/',
  Hyperv: 'hyperv.node.kubevirt.io/',
  MachineType: 'machine-type.node.kubevirt.io/',
  HostModelCPU: 'host-model-cpu.node.kubevirt.io/',
  HostModelRequiredFeatures: 'host-model-required-features.node.kubevirt.io/',
  SupportedHostModelMigrationCPU: 'cpu-model-migration.node.kubevirt.io/',
} as const;

/** Value of the `kubevirt.io` label on launcher pods. */
export const LAUNCHER_APP_LABEL_VALUE = 'virt-launcher';
/** The label selector of every launcher pod in a namespace (what `launcherPodOf` picks from). */
export const LAUNCHER_POD_SELECTOR = `${Label.App}=${LAUNCHER_APP_LABEL_VALUE}`;
/** Value of the `kubevirt.io` label on hotplug attachment pods (template.go's `hotplugDisk`). */
export const HOTPLUG_DISK_APP_LABEL_VALUE = 'hotplug-disk';

export const Annotation = {
  Domain: 'kubevirt.io/domain',
  DefaultContainer: 'kubectl.kubernetes.io/default-container',
  /** On a memory dump claim: the dump's file name, or "Memory dump failed" (v1.PVCMemoryDumpAnnotation). */
  PVCMemoryDump: 'kubevirt.io/memory-dump',
  MigrationJobName: 'kubevirt.io/migrationJobName',
  LatestObservedAPIVersion: 'kubevirt.io/latest-observed-api-version',
  StorageObservedAPIVersion: 'kubevirt.io/storage-observed-api-version',
  MigrationTransportUnix: 'kubevirt.io/migrationTransportUnix',
  RequestEvictOnly: 'descheduler.alpha.kubernetes.io/request-evict-only',
  EvictionInProgress: 'descheduler.alpha.kubernetes.io/eviction-in-progress',
  MultusNetworks: 'k8s.v1.cni.cncf.io/networks',
  MultusDefaultNetwork: 'v1.multus-cni.io/default-network',
  MultusNetworkStatus: 'k8s.v1.cni.cncf.io/network-status',
  MemoryOverheadBytes: 'kubevirt.io/memory-overhead-bytes',
  EphemeralProvisioning: 'kubevirt.io/ephemeral-provisioning',
  Heartbeat: 'kubevirt.io/heartbeat',
  /** VMI → generation of the VM that created it. */
  VirtualMachineGeneration: 'kubevirt.io/vm-generation',
  CreateMigrationTarget: 'kubevirt.io/create-migration-target',
  RestoreRunStrategy: 'kubevirt.io/restore-run-strategy',
  HookSidecars: 'hooks.kubevirt.io/hookSidecars',
  /** VMI annotation (prefix match) → launcher flag `--keep-after-failure`. */
  KeepLauncherAfterFailure: 'kubevirt.io/keep-launcher-alive-after-failure',
  CustomLibvirtLogFilters: 'kubevirt.io/libvirt-log-filters',
  FuncTestLauncherFailFast: 'kubevirt.io/func-test-virt-launcher-fail-fast',
  EmulatorThreadCompleteToEvenParity: 'alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity',
  MigrationUnschedulablePodTimeoutSeconds: 'kubevirt.io/migrationUnschedulablePodTimeoutSeconds',
  MigrationPendingPodTimeoutSeconds: 'kubevirt.io/migrationPendingPodTimeoutSeconds',
  EvacuationMigration: 'kubevirt.io/evacuationMigration',
  WorkloadUpdateMigration: 'kubevirt.io/workloadUpdateMigration',
  IstioInject: 'sidecar.istio.io/inject',
  DeprecatedNonRootVMI: 'kubevirt.io/nonroot',
  AllowPodBridgeNetworkLiveMigration: 'kubevirt.io/allow-pod-bridge-network-live-migration',
  IgnitionData: 'kubevirt.io/ignitiondata',
  EvictionSource: 'kubevirt.io/eviction-source',
  /** Attachment pod → the VMI it attaches volumes for (the owner chain goes through the launcher pod). */
  OwnerVMIName: 'kubevirt.io/owner-vmi-name',
  OwnerVMIUID: 'kubevirt.io/owner-vmi-uid',
} as const;

/** Annotations of a VMI that are not copied onto its launcher pod (besides `kubectl.kubernetes.io*`). */
export const ANNOTATIONS_NOT_COPIED_TO_POD = [
  Annotation.StorageObservedAPIVersion,
  Annotation.LatestObservedAPIVersion,
] as const;

export const Finalizer = {
  /** Added to every VMI by the create webhook/defaulting. */
  VirtualMachineInstance: 'kubevirt.io/foregroundDeleteVirtualMachine',
  /** Legacy spelling, migrated away by the VMI controller. */
  DeprecatedVirtualMachineInstance: 'foregroundDeleteVirtualMachine',
  /** Added by the VM controller to VMs and to the VMIs it creates. */
  VirtualMachineController: 'kubevirt.io/virtualMachineControllerFinalize',
  Migration: 'kubevirt.io/migrationJobFinalize',
} as const;

// ------------------------------------------------------------------------------------------------
// Event reasons
// ------------------------------------------------------------------------------------------------

/** `v1.SyncEvent` reasons recorded on VMIs (handler/launcher). */
export const SyncEvent = {
  Created: 'Created',
  Deleted: 'Deleted',
  Started: 'Started',
  ShuttingDown: 'ShuttingDown',
  Stopped: 'Stopped',
  PreparingTarget: 'PreparingTarget',
  Migrating: 'Migrating',
  Migrated: 'Migrated',
  SyncFailed: 'SyncFailed',
  Resumed: 'Resumed',
  AccessCredentialsSyncFailed: 'AccessCredentialsSyncFailed',
  AccessCredentialsSyncSuccess: 'AccessCredentialsSyncSuccess',
} as const;

/** Controller event reasons (virt-controller). Several KubeVirt constants share a string. */
export const EventReason = {
  SuccessfulCreate: 'SuccessfulCreate',
  FailedCreate: 'FailedCreate',
  SuccessfulDelete: 'SuccessfulDelete',
  FailedDelete: 'FailedDelete',
  SuccessfulUpdate: 'SuccessfulUpdate',
  FailedUpdate: 'FailedUpdate',
  SuccessfulPaused: 'SuccessfulPaused',
  SuccessfulResumed: 'SuccessfulResumed',
  SuccessfulMigration: 'SuccessfulMigration',
  FailedMigration: 'FailedMigration',
  SuccessfulAbortMigration: 'SuccessfulAbortMigration',
  FailedAbortMigration: 'FailedAbortMigration',
  SuccessfulHandOver: 'SuccessfulHandOver',
  FailedHandOver: 'FailedHandOver',
  FailedGuaranteeResources: 'FailedGuaranteeResources',
  FailedPvcNotFound: 'FailedPvcNotFound',
  FailedPodPatch: 'FailedPodPatch',
  NodeUnresponsive: 'NodeUnresponsive',
  MigrationBackoff: 'MigrationBackoff',
  SuccessfulEvict: 'SuccessfulEvict',
  FailedEvict: 'FailedEvict',
  FirmwareUUIDError: 'FirmwareUUIDError',
  IOerror: 'IOerror',
  GuestPanicked: 'GuestPanicked',
  MigrationTargetPodUnschedulable: 'migrationTargetPodUnschedulable',
} as const;

// ------------------------------------------------------------------------------------------------
// Paths inside the launcher pod (§6.1, §8, §10)
// ------------------------------------------------------------------------------------------------

export const PodPath = {
  Private: '/var/run/kubevirt-private',
  Public: '/var/run/kubevirt',
  Sockets: '/var/run/kubevirt/sockets',
  LauncherInitSocket: '/var/run/kubevirt/sockets/launcher-init-sock',
  LauncherSocket: '/var/run/kubevirt/sockets/launcher-sock',
  LauncherUnresponsiveMarker: '/var/run/kubevirt/sockets/launcher-unresponsive',
  EphemeralDisks: '/var/run/kubevirt-ephemeral-disks',
  CloudInitData: '/var/run/kubevirt-ephemeral-disks/cloud-init-data',
  ContainerDisks: '/var/run/kubevirt/container-disks',
  HotplugDisks: '/var/run/kubevirt/hotplug-disks',
  Hooks: '/var/run/kubevirt-hooks',
  Plugins: '/var/run/kubevirt-plugin',
  LibvirtRuntime: '/var/run/libvirt',
  EmptyDisks: '/var/run/libvirt/empty-disks',
  VMIDisks: '/var/run/kubevirt-private/vmi-disks',
  SecretVolumes: '/var/run/kubevirt-private/secret',
  ConfigMapVolumes: '/var/run/kubevirt-private/config-map',
  DownwardAPIVolumes: '/var/run/kubevirt-private/downwardapi',
  SysprepVolumes: '/var/run/kubevirt-private/sysprep',
  DownwardMetricsDisk: '/var/run/kubevirt-private/downwardmetric-disk',
  ServiceAccountToken: '/var/run/secrets/kubernetes.io/serviceaccount/',
  DomainNotifyPipe: '/var/run/kubevirt/domain-notify-pipe.sock',
  MigrationProxy: '/var/run/kubevirt/migrationproxy',
  HugePages: '/dev/hugepages',
  OVMF: '/usr/share/edk2/ovmf',
  OVMFArm64: '/usr/share/AAVMF',
  /** Where the container-disk-binary init container writes (mounted `virt-bin-share-dir`). */
  InitBinDir: '/init/usr/bin',
  /** Where disk containers see `virt-bin-share-dir`. */
  DiskContainerBinDir: '/usr/bin',
} as const;

/** Handler-side paths (§8). */
export const HandlerPath = {
  DomainNotifySocket: '/var/run/kubevirt/domain-notify.sock',
  GhostRecords: '/var/run/kubevirt-private/ghost-records',
  KubeletPods: '/pods',
} as const;

export const LauncherContainer = {
  Compute: 'compute',
  GuestConsoleLog: 'guest-console-log',
  ContainerDiskBinary: 'container-disk-binary',
  KernelBootVolume: 'kernel-boot-volume',
  IstioProxy: 'istio-proxy',
  /** The attachment pod's one container. */
  HotplugDisk: 'hotplug-disk',
} as const;

/** Serial-console socket and log file names inside `<Private>/<vmiUID>/`. */
export const ConsoleFile = {
  Serial: 'virt-serial0',
  SerialLog: 'virt-serial0-log',
  VNC: 'virt-vnc',
} as const;

export const ResourceName = {
  KVM: 'devices.kubevirt.io/kvm',
  Tun: 'devices.kubevirt.io/tun',
  VhostNet: 'devices.kubevirt.io/vhost-net',
  VhostVsock: 'devices.kubevirt.io/vhost-vsock',
  SEV: 'devices.kubevirt.io/sev',
} as const;

/** Service accounts whose requests may change VMI status (the VMI has no status subresource). */
export const KUBEVIRT_SERVICE_ACCOUNTS = [
  'kubevirt-controller',
  'kubevirt-handler',
  'kubevirt-apiserver',
] as const;

/** The deprecation warning KubeVirt returns for `spec.running`. */
export const RUNNING_DEPRECATION_WARNING =
  'spec.running is deprecated, please use spec.runStrategy instead.';

// ------------------------------------------------------------------------------------------------
// The node agent's subresource endpoint (what virt-api reaches on virt-handler; qvirt's CLI calls it
// directly): the handler publishes where it listens and the CA of its serving certificate on its Node.
// ------------------------------------------------------------------------------------------------

/** Node annotation: `https://HOST:PORT` of the node agent's subresource endpoint. */
export const HANDLER_ENDPOINT_ANNOTATION = 'qvirt.io/handler-endpoint';
/** Node annotation: base64 of the PEM CA certificate that signed the endpoint's serving certificate. */
export const HANDLER_CA_ANNOTATION = 'qvirt.io/handler-ca';
/** The `Upgrade` protocol of the console and VNC streams (KubeVirt's plain stream). */
export const HANDLER_STREAM_PROTOCOL = 'plain.kubevirt.io';

/**
 * VMI annotation the node agent writes when a passt-bound VMI first runs: the addresses passt gave
 * the guest in that first pod (src/net/passt-guest-addresses.ts). The guest keeps them across live
 * migrations, so each migration target's passt is started with them.
 */
export const PASST_GUEST_ADDRESSES_ANNOTATION = 'qvirt.io/passt-guest-addresses';
