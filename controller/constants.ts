// The exact strings the cluster controllers read and write: KubeVirt's labels, annotations,
// finalizers, reasons, condition types, resource names and in-pod paths (from
// pkg/virt-controller/{watch,services}, staging/src/kubevirt.io/api/core/v1). qvirt's own launcher
// binary and its subcommands are named here too, next to the KubeVirt names they replace.
// Nothing else in controller/ spells one of these out.

import { ConditionReason } from '../src/api/constants.ts';

// Shared with the API package: phases, run strategies, printable statuses, condition types.
export {
  VMIPhase,
  MigrationPhase,
  RunStrategy,
  PrintableStatus,
  VMIConditionType,
  VMConditionType,
  ReplicaSetConditionType,
  MigrationConditionType,
  StateChangeRequestAction,
  START_REQUEST_DATA_PAUSED_KEY,
  START_REQUEST_DATA_PAUSED_TRUE,
  POD_CONDITION_VM_UNPAUSED,
  DEFAULT_GRACE_PERIOD_SECONDS,
  NON_ROOT_UID,
  ROOT_UID,
  FIRMWARE_UUID_NAMESPACE,
  MAX_CRASH_LOOP_BACKOFF_DELAY_SECONDS,
  isFinalVMIPhase,
  isUnprocessedVMIPhase,
  isFinalMigrationPhase,
} from '../src/api/constants.ts';


// ---------------------------------------------------------------------------------------------
// API identity
export const KUBEVIRT_API_VERSION = 'kubevirt.io/v1';
export const Kinds = {
  VirtualMachine: 'VirtualMachine',
  VirtualMachineInstance: 'VirtualMachineInstance',
  VirtualMachineInstanceReplicaSet: 'VirtualMachineInstanceReplicaSet',
  VirtualMachineInstanceMigration: 'VirtualMachineInstanceMigration',
} as const;

// ---------------------------------------------------------------------------------------------
// Labels
export const Labels = {
  /** `kubevirt.io=virt-launcher` on every launcher pod. */
  App: 'kubevirt.io',
  /** Launcher pod → UID of the VMI that created it (used by migration anti-affinity). */
  CreatedBy: 'kubevirt.io/created-by',
  /** Launcher pod → sanitized hostname (historical name; not the VM name). */
  DeprecatedVirtualMachineName: 'vm.kubevirt.io/name',
  /** Launcher pod → VMI name, hashed down to 63 characters. */
  VirtualMachineInstanceID: 'vmi.kubevirt.io/id',
  /** VMI → node it runs on (set at Scheduled); virt-handler's watch selector. */
  NodeName: 'kubevirt.io/nodeName',
  /** VMI → migration target node (set at handoff). */
  MigrationTargetNodeName: 'kubevirt.io/migrationTargetNodeName',
  /** VMI whose launcher image is not the current one. */
  OutdatedLauncherImage: 'kubevirt.io/outdatedLauncherImage',
  /** Migration target pod → UID of its VirtualMachineInstanceMigration. */
  MigrationJobUID: 'kubevirt.io/migrationJobUID',
  /** VMIM → name of the VMI it migrates (create mutator). */
  MigrationVMIName: 'kubevirt.io/vmi-name',
  /** Node → whether virt-handler (qvirt's handler) runs there and is healthy. */
  NodeSchedulable: 'kubevirt.io/schedulable',
  CPUManager: 'kubevirt.io/cpumanager',
  Realtime: 'kubevirt.io/realtime',
  SEV: 'kubevirt.io/sev',
  SEVES: 'kubevirt.io/sev-es',
  SEVSNP: 'kubevirt.io/sev-snp',
  SecureExecution: 'kubevirt.io/s390-pv',
  TDX: 'kubevirt.io/tdx',
  /** Prefixes completed with a model, feature or machine type. */
  CPUModelPrefix: 'cpu-model.node.kubevirt.io/',
  CPUFeaturePrefix: 'cpu-feature.node.kubevirt.io/',
  SupportedMachineTypePrefix: 'machine-type.node.kubevirt.io/',
  HostModelCPUPrefix: 'host-model-cpu.node.kubevirt.io/',
  SupportedHostModelMigrationCPUPrefix: 'cpu-model-migration.node.kubevirt.io/',
  HostModelRequiredFeaturesPrefix: 'host-model-required-features.node.kubevirt.io/',
  CPUVendorPrefix: 'cpu-vendor.node.kubevirt.io/',
  NodeHostModelIsObsolete: 'node-labeller.kubevirt.io/obsolete-host-model',
  /** Kubernetes well-known labels. */
  Arch: 'kubernetes.io/arch',
  Hostname: 'kubernetes.io/hostname',
  /** Istio sidecar injection label copied from the VMI annotation of the same name. */
  IstioInject: 'sidecar.istio.io/inject',
  /** VMI labels that tune launcher logging. */
  LogVerbosity: 'logVerbosity',
  DebugLogs: 'debugLogs',
  VirtiofsDebugLogs: 'virtiofsdDebugLogs',
} as const;

/** The value of `kubevirt.io` on launcher pods. */
export const VIRT_LAUNCHER_APP = 'virt-launcher';
/** The value of `kubevirt.io` on hotplug attachment pods (template.go's `hotplugDisk`). */
export const HOTPLUG_DISK_APP = 'hotplug-disk';

// ---------------------------------------------------------------------------------------------
// Annotations
export const Annotations = {
  /** Launcher pod → VMI name. */
  Domain: 'kubevirt.io/domain',
  /** `kubectl logs` picks this container by default. */
  DefaultContainer: 'kubectl.kubernetes.io/default-container',
  MigrationTransportUnix: 'kubevirt.io/migrationTransportUnix',
  EvictOnly: 'descheduler.alpha.kubernetes.io/request-evict-only',
  EvictionInProgress: 'descheduler.alpha.kubernetes.io/eviction-in-progress',
  EphemeralProvisioning: 'kubevirt.io/ephemeral-provisioning',
  MemoryOverheadBytes: 'kubevirt.io/memory-overhead-bytes',
  /** VMI → generation of the VM that created it. */
  VirtualMachineGeneration: 'kubevirt.io/vm-generation',
  LatestObservedAPIVersion: 'kubevirt.io/latest-observed-api-version',
  StorageObservedAPIVersion: 'kubevirt.io/storage-observed-api-version',
  /** Receiver VMI of a decentralized migration. */
  CreateMigrationTarget: 'kubevirt.io/create-migration-target',
  RestoreRunStrategy: 'kubevirt.io/restore-run-strategy',
  /** VMI annotation (prefix match) → launcher flag `--keep-after-failure`. */
  KeepLauncherAfterFailure: 'kubevirt.io/keep-launcher-alive-after-failure',
  CustomLibvirtLogFilters: 'kubevirt.io/libvirt-log-filters',
  FuncTestLauncherFailFast: 'kubevirt.io/func-test-virt-launcher-fail-fast',
  /** Migration target pod → name of its VMIM. */
  MigrationJobName: 'kubevirt.io/migrationJobName',
  MigrationUnschedulablePodTimeoutSeconds: 'kubevirt.io/migrationUnschedulablePodTimeoutSeconds',
  MigrationPendingPodTimeoutSeconds: 'kubevirt.io/migrationPendingPodTimeoutSeconds',
  EmulatorThreadCompleteToEvenParity: 'alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity',
  /** Node → last virt-handler heartbeat (RFC 3339). */
  Heartbeat: 'kubevirt.io/heartbeat',
  IstioInjectSidecar: 'sidecar.istio.io/inject',
  /** Evacuation migration → the node it moves the VMI off. */
  EvacuationMigration: 'kubevirt.io/evacuationMigration',
  /** VMI → who asked for its eviction (`descheduler`). */
  EvictionSource: 'kubevirt.io/eviction-source',
  /** Attachment pod → the VMI it attaches volumes for (the owner chain goes through the launcher pod). */
  OwnerVMIName: 'kubevirt.io/owner-vmi-name',
  OwnerVMIUID: 'kubevirt.io/owner-vmi-uid',
} as const;

/** VMI annotation key prefixes that are not copied onto the launcher pod. */
export const POD_ANNOTATION_EXCLUDED_PREFIXES = [
  'kubectl.kubernetes.io',
  'kubevirt.io/storage-observed-api-version',
  'kubevirt.io/latest-observed-api-version',
] as const;

// ---------------------------------------------------------------------------------------------
// Finalizers
export const Finalizers = {
  /** Added to every VMI by the create webhook; removed by the VMI controller once no pod is left. */
  VirtualMachineInstance: 'kubevirt.io/foregroundDeleteVirtualMachine',
  DeprecatedVirtualMachineInstance: 'foregroundDeleteVirtualMachine',
  /** Added by the VM controller to VMs and to the VMIs it creates. */
  VirtualMachineController: 'kubevirt.io/virtualMachineControllerFinalize',
  Migration: 'kubevirt.io/migrationJobFinalize',
} as const;

export const PodPhase = {
  Pending: 'Pending',
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Unknown: 'Unknown',
} as const;

// ---------------------------------------------------------------------------------------------
// Conditions and reasons
export const POD_CONDITION_READY = 'Ready';
export const POD_CONDITION_SCHEDULED = 'PodScheduled';

/** Condition and sync-error reasons: the API's, plus the ones only controllers write. */
export const Reasons = {
  ...ConditionReason,
  // replica set
  ReplicaSetPaused: 'Paused',
  // VMI controller sync errors
  FailedCreatePod: 'FailedCreate',
  FailedDeletePod: 'FailedDelete',
  /** A hotplug volume's claim is not bound (yet), or gone: its volumeStatus reason. */
  PVCNotReady: 'PVCNotReady',
} as const;

export const Messages = {
  PodNotExists: 'virt-launcher pod has not yet been scheduled',
  PodTerminating: 'virt-launcher pod is terminating',
  GuestNotRunning: 'Guest VM is not reported as running',
  PodConditionMissing: 'virt-launcher pod is missing the Ready condition',
  NotPaused: 'the virtual machine is not paused',
  Paused: 'the virtual machine is paused',
  VMINotExists: 'VMI does not exist',
  VMIConditionMissing: 'VMI is missing the Ready condition',
  ReplicaSetPaused: 'Controller got paused',
  EvictionRequested: 'VMI is marked for eviction',
  NonReceiverVMI: 'Found non receiver VMI while VM is receiver',
} as const;

export const Events = {
  SuccessfulCreate: 'SuccessfulCreate',
  FailedCreate: 'FailedCreate',
  SuccessfulDelete: 'SuccessfulDelete',
  FailedDelete: 'FailedDelete',
  /** watch/vm hotplugVolumeErrorReason: a volume request could not be applied. */
  HotPlugVolumeError: 'HotPlugVolumeError',
  SuccessfulPaused: 'SuccessfulPaused',
  SuccessfulResumed: 'SuccessfulResumed',
  SuccessfulMigration: 'SuccessfulMigration',
  FailedMigration: 'FailedMigration',
  SuccessfulHandOverPod: 'SuccessfulHandOver',
  MigrationTargetPodUnschedulable: 'migrationTargetPodUnschedulable',
  NodeUnresponsive: 'NodeUnresponsive',
} as const;

// ---------------------------------------------------------------------------------------------
// Launcher pod: names, images, commands, paths
export const Containers = {
  Compute: 'compute',
  GuestConsoleLog: 'guest-console-log',
  ContainerDiskBinary: 'container-disk-binary',
  KernelBootVolume: 'kernel-boot-volume',
  IstioProxy: 'istio-proxy',
  /** The attachment pod's one container. */
  HotplugDisk: 'hotplug-disk',
} as const;

/** Prefix of container-disk containers: `volume<volumeName>` (+ `-init`). */
export const CONTAINER_DISK_CONTAINER_PREFIX = 'volume';
export const KERNEL_BOOT_NAME = 'kernel-boot';
export const KERNEL_BOOT_VOLUME_NAME = 'kernel-boot-volume';
export const LAUNCHER_POD_GENERATE_NAME_PREFIX = 'virt-launcher-';
export const ATTACHMENT_POD_GENERATE_NAME_PREFIX = 'hp-volume-';

/**
 * qvirt's single binary. KubeVirt ships `/usr/bin/virt-launcher-monitor`, `/usr/bin/virt-tail`,
 * `/usr/bin/container-disk` and `/usr/bin/virt-probe`; qvirt replaces each with a subcommand of
 * one executable, keeping the pod's shape and virt-launcher's flag set.
 */
export const QVIRT_BINARY = '/usr/bin/qvirt';
export const LAUNCHER_COMMAND = [QVIRT_BINARY, 'launcher'] as const;
export const TAIL_COMMAND = [QVIRT_BINARY, 'tail'] as const;
export const PROBE_COMMAND = [QVIRT_BINARY, 'probe'] as const;
/** The container-disk helper is copied into the shared bin dir and run from each disk image. */
export const CONTAINER_DISK_BINARY_NAME = 'container-disk';
export const CONTAINER_DISK_BINARY_SOURCE = '/usr/bin/container-disk';
export const CONTAINER_DISK_BINARY_INIT_TARGET = '/init/usr/bin/container-disk';
export const CONTAINER_DISK_COMMAND = ['/usr/bin/container-disk'] as const;
/**
 * The attachment pod's command (KubeVirt runs it through `/bin/sh -c`): the container-disk helper
 * listening on `/path/hp.sock` in the pod's hotplug-disks emptyDir (mounted at `/path`), up until the
 * pod is deleted. The pod exists only so that the kubelet attaches and mounts its claims on the node.
 */
export const HOTPLUG_ATTACHMENT_DIR = '/path';
export const HOTPLUG_ATTACHMENT_COMMAND = [CONTAINER_DISK_BINARY_SOURCE, '--copy-path', `${HOTPLUG_ATTACHMENT_DIR}/hp`] as const;

export const PodVolumes = {
  Private: 'private',
  Public: 'public',
  Sockets: 'sockets',
  VirtBinShareDir: 'virt-bin-share-dir',
  LibvirtRuntime: 'libvirt-runtime',
  EphemeralDisks: 'ephemeral-disks',
  ContainerDisks: 'container-disks',
  HotplugDisks: 'hotplug-disks',
  HookSidecarSockets: 'hook-sidecar-sockets',
  Hugepages: 'hugepages',
  HugetlbfsDir: 'hugetblfs-dir',
} as const;

export const Paths = {
  VirtPrivateDir: '/var/run/kubevirt-private',
  VirtShareDir: '/var/run/kubevirt',
  EphemeralDiskDir: '/var/run/kubevirt-ephemeral-disks',
  ContainerDiskDir: '/var/run/kubevirt/container-disks',
  HotplugDiskDir: '/var/run/kubevirt/hotplug-disks',
  SocketsDir: '/var/run/kubevirt/sockets',
  LibvirtRuntime: '/var/run/libvirt',
  HookSidecarSockets: '/var/run/kubevirt-hooks',
  /** Where the container-disk-binary init container writes (mounted `virt-bin-share-dir`). */
  InitBinDir: '/init/usr/bin',
  /** Where disk containers see `virt-bin-share-dir`. */
  DiskContainerBinDir: '/usr/bin',
  HostDiskDir: '/var/run/kubevirt-private/vmi-disks',
  SecretSourceDir: '/var/run/kubevirt-private/secret',
  ConfigMapSourceDir: '/var/run/kubevirt-private/config-map',
  DownwardAPISourceDir: '/var/run/kubevirt-private/downwardapi',
  SysprepSourceDir: '/var/run/kubevirt-private/sysprep',
  DownwardMetricDisksDir: '/var/run/kubevirt-private/downwardmetric-disk',
  Hugepages: '/dev/hugepages',
  OVMFAmd64: '/usr/share/edk2/ovmf',
  OVMFArm64: '/usr/share/AAVMF',
} as const;

/** Kubernetes extended resources served by the node agent's device plugins. */
export const DeviceResources = {
  Kvm: 'devices.kubevirt.io/kvm',
  Tun: 'devices.kubevirt.io/tun',
  VhostNet: 'devices.kubevirt.io/vhost-net',
  VhostVsock: 'devices.kubevirt.io/vhost-vsock',
  Sev: 'devices.kubevirt.io/sev',
} as const;

/** virt-launcher's grace period is the VMI's plus this; the pod's is the VMI's plus twice this. */
export const GRACE_PERIOD_PADDING_SECONDS = 15;
/** The base of `--qemu-timeout`; a jitter in [0, 120) seconds is added per pod. */
export const DEFAULT_LAUNCHER_QEMU_TIMEOUT_SECONDS = 240;
export const QEMU_TIMEOUT_JITTER_RANGE_SECONDS = 120;
/** virt-probe's startup allowance added to user probes' initialDelaySeconds. */
export const LIBVIRT_STARTUP_DELAY_SECONDS = 10;
/** `--disk-memory-limit` default (diskVerification.memoryLimit: 2000M). */
export const DEFAULT_DISK_MEMORY_LIMIT_BYTES = 2_097_152_000;
export const EPHEMERAL_STORAGE_OVERHEAD = '50M';
export const CAP_NET_BIND_SERVICE = 'NET_BIND_SERVICE';
export const CAP_SYS_NICE = 'SYS_NICE';

// ---------------------------------------------------------------------------------------------
// Controller tunables (KubeVirt defaults)
export const REPLICASET_BURST_REPLICAS = 250;
export const FINALIZED_MIGRATION_GC_BUFFER = 5;
export const DEFAULT_PARALLEL_MIGRATIONS_PER_CLUSTER = 5;
export const DEFAULT_PARALLEL_OUTBOUND_MIGRATIONS_PER_NODE = 2;
export const DEFAULT_UNSCHEDULABLE_PENDING_TIMEOUT_SECONDS = 5 * 60;
export const DEFAULT_CATCH_ALL_PENDING_TIMEOUT_SECONDS = 15 * 60;
export const NODE_HEARTBEAT_TIMEOUT_MS = 5 * 60 * 1000;
export const NODE_RECHECK_INTERVAL_MS = 60 * 1000;

// ---------------------------------------------------------------------------------------------
// Event messages the controllers record (KubeVirt's exact wording, parameterised)
export const EventMessages = {
  /** VM controller (reason SuccessfulCreate) and ReplicaSet controller (same wording). */
  startedVMI: (vmiName: string) => `Started the virtual machine by creating the new virtual machine instance ${vmiName}`,
  /** VM / ReplicaSet controller (reason SuccessfulDelete): names the VMI's UID. */
  stoppedVMI: (vmiUID: string) => `Stopped the virtual machine by deleting the virtual machine instance ${vmiUID}`,
  /** VM controller (reason FailedCreate). */
  failedCreateVMI: (err: string) => `Error creating virtual machine instance: ${err}`,
  /** VM controller (reason FailedDelete). */
  failedDeleteVMI: (vmiName: string, err: string) => `Error deleting virtual machine instance ${vmiName}: ${err}`,
  /** ReplicaSet controller cleaning up finished VMIs (reason SuccessfulDelete). */
  deletedFinishedVMI: (vmiUID: string) => `Deleted finished virtual machine: ${vmiUID}`,
  /** VMI controller (reason SuccessfulCreate / SuccessfulDelete / FailedCreate). */
  createdPod: (podName: string) => `Created virtual machine pod ${podName}`,
  deletedPod: (podName: string) => `Deleted virtual machine pod ${podName}`,
  failedCreatePod: (err: string) => `Error creating pod: ${err}`,
  failedDeletePod: (podName: string) => `Failed to delete virtual machine pod ${podName}`,
  /** VMI controller, hotplug attachment pods (hotplug.go). */
  createdAttachmentPod: (podName: string) => `Created attachment pod ${podName}`,
  failedCreateAttachmentPod: (err: string) => `Error creating attachment pod: ${err}`,
  deletedAttachmentPod: (podName: string) => `Deleted attachment pod ${podName}`,
  failedDeleteAttachmentPod: (podName: string) => `Failed to delete attachment pod ${podName}`,
  /** Migration controller. */
  createdTargetPod: (podName: string) => `Created migration target pod ${podName}`,
  handedOff: 'Migration target pod is ready for preparation by virt-handler.',
  targetPodUnschedulable: (namespace: string, vmiName: string) => `Migration target pod for VMI [${namespace}/${vmiName}] is currently unschedulable.`,
  /** Node controller, on the VMI (reason NodeUnresponsive). */
  nodeUnresponsive: 'virt-handler is not responsive, marking node as unresponsive',
} as const;
