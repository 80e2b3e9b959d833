// The converter's contract: what the launcher tells it about the environment (ConvertContext),
// and what it hands back (LaunchPlan). Both are plain data; convertVMI is a pure function of them.

/** One image file or block device of a disk's chain, as launcher/disks prepared it. */
export interface ResolvedImage {
  /** Absolute path of the file or block device node. */
  path: string;
  /** Image format QEMU must open it with. */
  format: 'raw' | 'qcow2';
  /** 'block' for a block device (`host_device` driver), 'file' otherwise. Default 'file'. */
  kind?: 'file' | 'block';
  /** Result of the O_DIRECT probe (KubeVirt's DirectIOChecker). Default true. */
  directIO?: boolean;
}

/** A volume as prepared by launcher/disks, keyed by volume name in ConvertContext.volumes. */
export interface ResolvedVolume extends ResolvedImage {
  /** Read-only backing image (containerDisk / ephemeral PVC under a qcow2 overlay). */
  backing?: ResolvedImage;
  /** The file is fully allocated (KubeVirt's IsPreAllocated): allows io=native with cache=none. */
  preallocated?: boolean;
  /** The source demands read-only access (e.g. a PVC with readOnly: true). */
  readOnly?: boolean;
  /** The volume is listed in KubeVirt's VolumesDiscardIgnore: no discard=unmap. */
  discardIgnore?: boolean;
  /** Detected block sizes for `blockSize.matchVolume` (KubeVirt's getOptimalBlockIO). */
  blockIO?: { logical: number; physical: number; discardGranularity?: number };
}

export interface SmbiosSystem {
  manufacturer?: string;
  product?: string;
  family?: string;
  version?: string;
  sku?: string;
}

export interface OvmfPaths {
  /** OVMF_CODE_4M.fd */
  code: string;
  /** OVMF_VARS_4M.fd (template copied per VM) */
  vars: string;
  /** OVMF_CODE_4M.secboot.fd */
  secureBootCode: string;
  /** OVMF_VARS_4M.ms.fd (Microsoft keys enrolled) */
  secureBootVars: string;
}

/** What the launcher discovered about its environment. */
/** What the launcher prepared for an interface bound to the pod network (launcher/network/pod-network). */
export type PodNetworkBackend =
  | { kind: 'tap'; tap: string; mtu: number; mac: string }
  | { kind: 'passt'; socket: string };

export interface ConvertContext {
  qemu: {
    /** Absolute path of qemu-system-x86_64; argv[0] of the plan. */
    binary: string;
    /** The versioned q35 machine, e.g. `pc-q35-7.2` (from query-machines / -machine help). */
    machine: string;
    version?: { major: number; minor: number; micro: number };
  };
  /** KVM where usable; TCG only when the launcher runs with --allow-emulation. */
  accelerator: 'kvm' | 'tcg';
  paths: {
    /** /var/run/kubevirt-private/<vmi uid>: sockets, serial log, pid file. */
    privateDir: string;
    /** Where the per-VM EFI VARS copy lives. Default /var/run/kubevirt-private/libvirt/qemu/nvram. */
    nvramDir?: string;
    ephemeralDiskDir?: string;
    containerDiskDir?: string;
    hotplugDiskDir?: string;
  };
  /** Prepared disk files by volume name (launcher/disks). */
  volumes: Record<string, ResolvedVolume>;
  /** OVMF firmware; required for EFI VMIs. */
  ovmf?: OvmfPaths;
  /** Kernel-boot artifacts extracted from `firmware.kernelBoot.container`. */
  kernelBoot?: { kernel?: string; initrd?: string };
  /** Backends the launcher prepared for pod-network interfaces, by interface name (absent: user-mode). */
  podNetwork?: Readonly<Record<string, PodNetworkBackend>>;
  /** Ignition file for the `kubevirt.io/ignitiondata` annotation. */
  ignitionFile?: string;
  /**
   * The main QMP monitor as an inherited fd: a connected socketpair end (`listening: false`, the
   * default) or an already-listening unix socket (`listening: true`). Absent: a path-based monitor
   * on `<privateDir>/qmp.sock`.
   */
  monitorFd?: { fd: number; listening?: boolean };
  /** SMBIOS type 1 strings (cluster config); defaults KubeVirt/None/KubeVirt. */
  smbios?: SmbiosSystem;
  /** Wall clock used for `clock.utc.offsetSeconds` (libvirt computes the RTC base at start). */
  now: Date;
  /** Start as a migration target (`-incoming defer`). */
  incomingMigration?: boolean;
  /** Cluster `useBochsForEFIGuests`: EFI guests get bochs-display instead of VGA. */
  useBochsForEFIGuests?: boolean;
  /** Cluster-level free page reporting (default true; off for dedicated CPUs / hugepages anyway). */
  freePageReporting?: boolean;
  /** Cluster `memBalloonStatsPeriod` in seconds (default 10; 0 disables polling). */
  memBalloonStatsPeriod?: number;
  /** Cluster default for serial console logging when `logSerialConsole` is unset (default true). */
  serialConsoleLog?: boolean;
}

/** A pcie-root-port (or, with placePCIDevicesOnRootComplex, a pcie.0 slot) and who sits on it. */
export interface PciPort {
  /** QEMU id, `pci.N`. */
  id: string;
  /** The pcie.0 address of the port, e.g. `0x2.0x3`. */
  addr: string;
  /** False when the port holds a non-NIC device (KubeVirt DisableHotplugOnOccupiedRootPorts). */
  hotplug: boolean;
  /** QEMU id of the device on it; absent for spare (hotplug) ports. */
  occupiedBy?: string;
}

export type DeviceKind =
  | 'disk' | 'cdrom' | 'lun' | 'interface' | 'controller' | 'balloon' | 'rng' | 'watchdog' | 'input'
  | 'video' | 'serial' | 'channel' | 'vsock' | 'memory' | 'panic';

/** A guest device the plan created, for the supervisor and later hotplug/migration code. */
export interface PlanDevice {
  /** KubeVirt's name for it (disk/interface/input/watchdog name), or the QEMU id for built-ins. */
  alias: string;
  kind: DeviceKind;
  /** QEMU device id (`ua-<name>` for user devices). */
  qemuId: string;
  /** QEMU driver, e.g. virtio-blk-pci-non-transitional. */
  driver: string;
  /** The bus it sits on: `pci.N`, `pcie.0`, `ide.N`, `scsi0.0`, `usb.0`, `virtio-serial0.0`, `isa`. */
  bus?: string;
  /** -blockdev node names, top of the chain first; the first one is the device's `drive`. */
  nodeNames?: string[];
  /** Backend id of a NIC (`hostua-<name>`). */
  netdevId?: string;
}

/** A file the launcher must create before spawning QEMU. */
export interface FileToPrepare {
  kind: 'copy';
  source: string;
  destination: string;
  /** Keep an existing destination (EFI VARS survive a QEMU restart within the same pod). */
  onlyIfMissing: boolean;
}

/** A QMP command to issue after the greeting, before `cont` (libvirt's setup over QMP). */
export interface QmpSetupCommand {
  execute: string;
  arguments?: Record<string, unknown>;
  /** Why, for logs. */
  reason: string;
}

/** What the launcher starts before QEMU for an emulated TPM (tpm.ts): swtpm's control socket and state directory. */
export interface TpmPlan {
  readonly socket: string;
  readonly stateDir: string;
}

export interface LaunchPlan {
  /** Full argv; argv[0] is the QEMU binary. Contains `-S`: QEMU waits for `cont`. */
  argv: string[];
  /** Extra environment for QEMU (TZ for `clock.timezone`). */
  env: Record<string, string>;
  /** Fds the spawn must place at these numbers (the QMP fd), in order. */
  inheritedFds: number[];
  /** The main monitor: an inherited fd, or a path to connect to. */
  qmp: { fd: number; listening: boolean } | { path: string };
  /** Path of the second, path-based monitor (debug / passthrough). */
  qmpDebugSocket: string;
  /** Path of the main monitor's socket when it is path-based, else the debug one. */
  qmpSocket: string;
  serialSocket?: string;
  serialLog?: string;
  vncSocket?: string;
  /** The emulated TPM: the swtpm the launcher starts before QEMU (tpm.ts). */
  tpm?: TpmPlan;
  guestAgentSocket: string;
  pidFile: string;
  /** spec.startStrategy Paused: the supervisor must not `cont`. */
  startPaused: boolean;
  pciPorts: PciPort[];
  devices: PlanDevice[];
  /** The next free N for `libvirt-N-storage/format` node names (disk hotplug). */
  nextBlockNodeIndex: number;
  files: FileToPrepare[];
  setupCommands: QmpSetupCommand[];
  /** Harmless VMI settings with no QEMU equivalent that were ignored, one sentence each. */
  warnings: string[];
}

/** The VMI asks for something qvirt cannot express in QEMU (yet). */
export class ConversionError extends Error {
  readonly field: string;
  constructor(field: string, reason: string) {
    super(`${field}: ${reason}`);
    this.name = 'ConversionError';
    this.field = field;
  }
}
