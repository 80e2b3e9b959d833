// What only the cluster controllers spell: the launcher and attachment pods' own names (volumes,
// container-disk helper, qvirt's binary and subcommands, next to the KubeVirt names they replace),
// the controllers' tunables (KubeVirt's defaults), the messages they write and Kubernetes' pod
// phases and conditions they read. KubeVirt's API strings — labels, annotations, finalizers,
// reasons, condition types, phases, in-pod paths, containers, resource names — are
// src/api/constants.ts's; nothing in controller/ spells one of them out.

/** VMI annotation key prefixes that are not copied onto the launcher pod. */
export const POD_ANNOTATION_EXCLUDED_PREFIXES = [
  'kubectl.kubernetes.io',
  'kubevirt.io/storage-observed-api-version',
  'kubevirt.io/latest-observed-api-version',
] as const;

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

// ---------------------------------------------------------------------------------------------
// Launcher pod: names, images, commands, paths

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
  /** VMI controller (reason FailedPvcNotFound, Normal; the sync error's message too): a claim the VMI names is missing. */
  pvcNotFound: (namespace: string, claimName: string) => `PVC ${namespace}/${claimName} does not exist, waiting for it to appear`,
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
