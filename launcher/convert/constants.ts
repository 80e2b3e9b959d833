// Exact strings of the VMI → QEMU conversion: QEMU ids libvirt would give the devices KubeVirt
// defines, file names inside the per-VMI private directory, KubeVirt annotations the converter
// reads, and the numbers of KubeVirt's hotplug-port and memory-hotplug rules. Never retype these.

/** Annotations read by KubeVirt's converter / manager (kubevirt.io/api core/v1 types.go). */
export const ConvertAnnotation = {
  /** "true": put PCI devices straight on pcie.0, no root ports (converter.go PlacePCIDevicesOnRootComplex). */
  PlacePCIDevicesOnRootComplex: 'kubevirt.io/placePCIDevicesOnRootComplex',
  /** Frozen total of NIC placeholder ports (manager.go calculatePlaceholderCount). */
  PciInterfaceSlotCount: 'kubevirt.io/pci-interface-slot-count',
  /** "false": back hugepages with a hugetlbfs file instead of memfd (memory_backing.go isMemfdRequired). */
  MemfdMemoryBackend: 'kubevirt.io/memfd',
  /** "true": disable the 64-bit PCI hole (controllers.go shouldDisablePCIHole64). */
  DisablePCIHole64: 'kubevirt.io/disablePCIHole64',
} as const;

/** File names qvirt's QEMU uses inside `<privateDir>` (= /var/run/kubevirt-private/<uid>). */
export const PrivateFile = {
  /** Path-based QMP monitor (the main one when the launcher does not pass an fd). */
  Qmp: 'qmp.sock',
  /** Second, path-based QMP monitor for debugging and passthrough (one client per socket). */
  QmpDebug: 'qmp-debug.sock',
  /** The org.qemu.guest_agent.0 channel (libvirt picks this path itself; qvirt names it). */
  GuestAgent: 'org.qemu.guest_agent.0',
  /** -pidfile: written and locked by QEMU, removed on clean exit. */
  PidFile: 'qemu.pid',
  /** swtpm's control socket (the emulated TPM, tpm.ts). */
  Swtpm: 'swtpm-sock',
  /** swtpm's state directory. */
  SwtpmState: 'swtpm',
} as const;

/** QEMU ids, as libvirt names the same objects. */
export const QemuId = {
  MonitorChardev: 'charmonitor',
  Monitor: 'monitor',
  DebugMonitorChardev: 'charmonitor-debug',
  DebugMonitor: 'monitor-debug',
  SerialChardev: 'charserial0',
  Serial: 'serial0',
  GuestAgentChardev: 'charchannel0',
  GuestAgentPort: 'channel0',
  VirtioSerial: 'virtio-serial0',
  Scsi: 'scsi0',
  Usb: 'usb',
  Balloon: 'balloon0',
  RngObject: 'objrng0',
  Rng: 'rng0',
  Video: 'video0',
  Audio: 'audio1',
  Vsock: 'vsock0',
  TpmChardev: 'chrtpm',
  TpmBackend: 'tpm-tpm0',
  Tpm: 'tpm0',
  RamBackend: 'pc.ram',
  VirtioMem: 'virtiomem0',
  VirtioMemBackend: 'memvirtiomem0',
  PanicPrefix: 'panic',
  IoThreadPrefix: 'iothread',
  /** Extra AHCI controllers for SATA devices beyond the 6 ports of q35's built-in one. */
  SataPrefix: 'sata',
  /** q35's built-in ICH9 AHCI controller: buses ide.0 … ide.5. */
  BuiltinAhciBus: 'ide',
  PflashCodeStorage: 'libvirt-pflash0-storage',
  PflashCodeFormat: 'libvirt-pflash0-format',
  PflashVarsStorage: 'libvirt-pflash1-storage',
  PflashVarsFormat: 'libvirt-pflash1-format',
} as const;

/** KubeVirt's user-defined alias prefix: a disk `root` is QEMU device `ua-root`. */
export const USER_ALIAS_PREFIX = 'ua-';
/** The NIC backend id prefix libvirt uses for user aliases: netdev `hostua-<name>`. */
export const NETDEV_PREFIX = 'hostua-';

export const GUEST_AGENT_CHANNEL_NAME = 'org.qemu.guest_agent.0';

/** libvirt's seccomp sandbox when qemu.conf leaves seccomp_sandbox unset (KubeVirt's qemu.conf does). */
export const SANDBOX = 'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny';

/** SMBIOS type 1 values virt-handler sends by default (cluster config smbios). */
export const DEFAULT_SMBIOS = { manufacturer: 'KubeVirt', product: 'None', family: 'KubeVirt', version: '', sku: '' } as const;

/** KubeVirt's balloon stats period (virt-config `memBalloonStatsPeriod`, default 10 s). */
export const DEFAULT_BALLOON_STATS_PERIOD_SECONDS = 10;

/** manager.go hotplug port constants (allocateHotplugPorts v1 + v2). */
export const HotplugPorts = {
  /** v1: placeholder NIC count when the VMI has interfaces. */
  V1PlaceholderTotal: 4,
  DefaultTotalPorts: 8,
  MinRequiredFreePorts: 3,
  LargeMemoryThresholdBytes: 2 * 1024 * 1024 * 1024,
  LargeMemoryDefaultTotalPorts: 16,
  LargeMemoryMinRequiredFreePorts: 6,
  /** Highest PCI bus index a root port may take (32 slots on bus 0). */
  MaxBusIndex: 31,
} as const;

/** liveupdate/memory/memory.go. */
export const MemoryHotplug = {
  BlockAlignmentBytes: 0x200000,
  HugePages1GiBlockAlignmentBytes: 0x40000000,
  MinGuestBytes: 0x40000000,
} as const;

/** pcie.0 slots libvirt never hands to root ports or devices (pci-placement.go nextSlot). */
export const RootBusSlot = {
  /** First slot used for root ports (0 = host bridge, 1 = primary video). */
  FirstRootPortSlot: 2,
  Video: 1,
  Reserved: [0x1b, 0x1f] as readonly number[],
  Count: 32,
} as const;

/** Where KubeVirt mounts hugetlbfs for QEMU's file-backed guest memory. */
export const HUGEPAGES_QEMU_DIR = '/dev/hugepages/libvirt/qemu';

/** KubeVirt's NVRAM directory (util.PathForNVram, non-persistent EFI). */
export const DEFAULT_NVRAM_DIR = '/var/run/kubevirt-private/libvirt/qemu/nvram';
