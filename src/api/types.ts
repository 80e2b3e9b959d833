/**
 * The kubevirt.io/v1 API as TypeScript types: exact JSON field names of KubeVirt's
 * `staging/src/kubevirt.io/api/core/v1/{types.go,schema.go}` for VirtualMachineInstance,
 * VirtualMachine, VirtualMachineInstanceReplicaSet and VirtualMachineInstanceMigration.
 *
 * Conventions:
 * - A field is required (no `?`) only where KubeVirt's OpenAPI marks it required; everything else is
 *   optional, as it may be absent on the wire.
 * - Go "one of" unions (volume sources, disk targets, interface bindings, ...) are optional members,
 *   exactly as in the JSON; `validation/` enforces "exactly one".
 * - Quantities stay strings (`Quantity`); `quantity.ts` parses them.
 * - Closed string sets are literal unions; their values also exist as `as const` objects in
 *   `constants.ts` for use in code.
 *
 * Type-only module: no runtime code, safe to import anywhere.
 */
import type {
  Affinity,
  ConditionStatus,
  DNSPolicy,
  DataVolumeSpec,
  DownwardAPIVolumeFile,
  Duration,
  ExecAction,
  HTTPGetAction,
  K8sPersistentVolumeClaimVolumeSource,
  ListMeta,
  LocalObjectReference,
  ObjectMeta,
  PersistentVolumeAccessMode,
  PersistentVolumeMode,
  PodDNSConfig,
  PodQOSClass,
  PullPolicy,
  Quantity,
  ResourceList,
  TCPSocketAction,
  Time,
  Toleration,
  TopologySpreadConstraint,
} from './kube.ts';
import type { LabelSelector } from './label-selector.ts';

export type * from './kube.ts';

export interface VirtualMachineInstance {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** VirtualMachineInstance Spec contains the VirtualMachineInstance specification */
  spec: VirtualMachineInstanceSpec;
  /** Status is the high level overview of how the VirtualMachineInstance is doing */
  status?: VirtualMachineInstanceStatus;
}

export interface VirtualMachineInstanceSpec {
  /** If specified, indicates the pod's priority */
  priorityClassName?: string;
  /** Specification of the desired behavior of the VirtualMachineInstance on the host */
  domain: DomainSpec;
  /** NodeSelector is a selector which must be true for the vmi to fit on a node */
  nodeSelector?: Record<string, string>;
  /** If affinity is specifies, obey all the affinity rules */
  affinity?: Affinity;
  /** If specified, the VMI will be dispatched by specified scheduler */
  schedulerName?: string;
  /** ServiceAccountName is the name of the ServiceAccount to use to run the virt-launcher pod */
  serviceAccountName?: string;
  /** If toleration is specified, obey all the toleration rules */
  tolerations?: Toleration[];
  /** TopologySpreadConstraints describes how a group of VMIs will be spread across a given topology domains */
  topologySpreadConstraints?: TopologySpreadConstraint[];
  /** EvictionStrategy describes the strategy to follow when a node drain occurs */
  evictionStrategy?: EvictionStrategy;
  /** StartStrategy can be set to 'Paused' if Virtual Machine should be started in paused state */
  startStrategy?: StartStrategy;
  /** Grace period observed after signalling a VirtualMachineInstance to stop after which the VirtualMachineInstance is force terminated */
  terminationGracePeriodSeconds?: number;
  /** List of volumes that can be mounted by disks belonging to the vmi */
  volumes?: Volume[];
  /** Periodic probe of VirtualMachineInstance liveness */
  livenessProbe?: Probe;
  /** Periodic probe of VirtualMachineInstance service readiness */
  readinessProbe?: Probe;
  /** Specifies the hostname of the vmi If not specified, the hostname will be set to the name of the vmi, if dhcp or cloud-init is configured properly */
  hostname?: string;
  /** If specified, the fully qualified vmi hostname will be '<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>' */
  subdomain?: string;
  /** List of networks that can be attached to a vm's virtual interface */
  networks?: Network[];
  /** Set DNS policy for the pod */
  dnsPolicy?: DNSPolicy;
  /** Specifies the DNS parameters of a pod */
  dnsConfig?: PodDNSConfig;
  /** Specifies a set of public keys to inject into the vm guest */
  accessCredentials?: AccessCredential[];
  /** Specifies the architecture of the vm guest you are attempting to run */
  architecture?: string;
  /** ResourceClaims define which ResourceClaims must be allocated and reserved before the VMI, hence virt-launcher pod is allowed to start */
  resourceClaims?: VirtualMachineInstanceResourceClaim[];
  /** List of utility volumes that can be mounted to the vmi virt-launcher pod without having a matching disk in the domain */
  utilityVolumes?: UtilityVolume[];
}

export interface DomainSpec {
  /** Resources describes the Compute Resources required by this vmi */
  resources?: ResourceRequirements;
  /** CPU allow specified the detailed CPU topology inside the vmi */
  cpu?: CPU;
  /** Memory allow specifying the VMI memory features */
  memory?: Memory;
  /** Machine type */
  machine?: Machine;
  /** Firmware */
  firmware?: Firmware;
  /** Clock sets the clock and timers of the vmi */
  clock?: Clock;
  /** Features like acpi, apic, hyperv, smm */
  features?: Features;
  /** Devices allows adding disks, network interfaces, and others */
  devices: Devices;
  /** Controls whether or not disks will share IOThreads */
  ioThreadsPolicy?: IOThreadsPolicy;
  /** IOThreads specifies the IOThreads options */
  ioThreads?: DiskIOThreads;
  /** Chassis specifies the chassis info passed to the domain */
  chassis?: Chassis;
  /** Launch Security setting of the vmi */
  launchSecurity?: LaunchSecurity;
  /** RebootPolicy specifies how the guest should behave on reboot */
  rebootPolicy?: RebootPolicy;
}

export interface ResourceRequirements {
  /** Requests is a description of the initial vmi resources */
  requests?: ResourceList;
  /** Limits describes the maximum amount of compute resources allowed */
  limits?: ResourceList;
  /** Don't ask the scheduler to take the guest-management overhead into account */
  overcommitGuestOverhead?: boolean;
}

export interface CPU {
  /** Cores specifies the number of cores inside the vmi */
  cores?: number;
  /** Sockets specifies the number of sockets inside the vmi */
  sockets?: number;
  /** MaxSockets specifies the maximum amount of sockets that can be hotplugged */
  maxSockets?: number;
  /** Threads specifies the number of threads inside the vmi */
  threads?: number;
  /** Model specifies the CPU model inside the VMI */
  model?: string;
  /** Features specifies the CPU features list inside the VMI */
  features?: CPUFeature[];
  /** DedicatedCPUPlacement requests the scheduler to place the VirtualMachineInstance on a node with enough dedicated pCPUs and pin the vCPUs to it */
  dedicatedCpuPlacement?: boolean;
  /** NUMA allows specifying settings for the guest NUMA topology */
  numa?: NUMA;
  /** IsolateEmulatorThread requests one more dedicated pCPU to be allocated for the VMI to place the emulator thread on it */
  isolateEmulatorThread?: boolean;
  /** Realtime instructs the virt-launcher to tune the VMI for lower latency, optional for real time workloads */
  realtime?: Realtime;
}

export interface CPUFeature {
  /** Name of the CPU feature */
  name: string;
  /** Policy is the CPU feature attribute which can have the following attributes: force    - The virtual CPU will claim the feature is supported regardl... */
  policy?: string;
}

export interface NUMA {
  /** GuestMappingPassthrough will create an efficient guest topology based on host CPUs exclusively assigned to a pod */
  guestMappingPassthrough?: NUMAGuestMappingPassthrough;
}

export interface NUMAGuestMappingPassthrough {}

export interface Realtime {
  /** Mask defines the vcpu mask expression that defines which vcpus are used for realtime */
  mask?: string;
}

export interface Memory {
  /** Hugepages allow to use hugepages for the VirtualMachineInstance instead of regular memory */
  hugepages?: Hugepages;
  /** Guest allows to specifying the amount of memory which is visible inside the Guest OS */
  guest?: Quantity;
  /** MaxGuest allows to specify the maximum amount of memory which is visible inside the Guest OS */
  maxGuest?: Quantity;
  /** ReservedOverhead configures the memory overhead applied to a VM and its characteristics */
  reservedOverhead?: ReservedOverhead;
}

export interface Hugepages {
  /** PageSize specifies the hugepage size, for x86_64 architecture valid values are 1Gi and 2Mi */
  pageSize?: string;
}

export interface ReservedOverhead {
  /** AddedOverhead determines the memory overhead that will be reserved for the VM */
  addedOverhead?: Quantity;
  /** RequiresLock determines whether the VM's and its overhead memory need to be locked or not */
  memLock?: MemLockRequirement;
}

export type MemLockRequirement = string;

export interface Machine {
  /** QEMU machine type is the actual chipset of the VirtualMachineInstance */
  type?: string;
}

export interface Firmware {
  /** UUID reported by the vmi bios */
  uuid?: string;
  /** Settings to control the bootloader that is used */
  bootloader?: Bootloader;
  /** The system-serial-number in SMBIOS */
  serial?: string;
  /** Settings to set the kernel for booting */
  kernelBoot?: KernelBoot;
  /** Information that can be set in the ACPI table */
  acpi?: ACPI;
}

export interface Bootloader {
  /** If set (default), BIOS will be used */
  bios?: BIOS;
  /** If set, EFI will be used instead of BIOS */
  efi?: EFI;
}

export interface BIOS {
  /** If set, the BIOS output will be transmitted over serial */
  useSerial?: boolean;
}

export interface EFI {
  /** If set, SecureBoot will be enabled and the OVMF roms will be swapped for SecureBoot-enabled ones */
  secureBoot?: boolean;
  /** If set to true, Persistent will persist the EFI NVRAM across reboots */
  persistent?: boolean;
}

export interface KernelBoot {
  /** Arguments to be passed to the kernel at boot time */
  kernelArgs?: string;
  /** Container defines the container that containes kernel artifacts */
  container?: KernelBootContainer;
}

export interface KernelBootContainer {
  /** Image that contains initrd / kernel files */
  image: string;
  /** ImagePullSecret is the name of the Docker registry secret required to pull the image */
  imagePullSecret?: string;
  /** Image pull policy */
  imagePullPolicy?: PullPolicy;
  /** The fully-qualified path to the kernel image in the host OS */
  kernelPath?: string;
  /** the fully-qualified path to the ramdisk image in the host OS */
  initrdPath?: string;
}

export interface ACPI {
  /** SlicNameRef should match the volume name of a secret object */
  slicNameRef?: string;
  /** Similar to SlicNameRef, another ACPI entry that is used in more recent Windows versions */
  msdmNameRef?: string;
}

export interface Clock extends ClockOffset {
  /** Timer specifies whih timers are attached to the vmi */
  timer?: Timer;
}

export interface ClockOffset {
  /** UTC sets the guest clock to UTC on each boot */
  utc?: ClockOffsetUTC;
  /** Timezone sets the guest clock to the specified timezone */
  timezone?: ClockOffsetTimezone;
}

export interface ClockOffsetUTC {
  /** OffsetSeconds specifies an offset in seconds, relative to UTC */
  offsetSeconds?: number;
}

export type ClockOffsetTimezone = string;

export interface Timer {
  /** HPET (High Precision Event Timer) - multiple timers with periodic interrupts */
  hpet?: HPETTimer;
  /** KVM 	(KVM clock) - lets guests read the host’s wall clock time (paravirtualized) */
  kvm?: KVMTimer;
  /** PIT (Programmable Interval Timer) - a timer with periodic interrupts */
  pit?: PITTimer;
  /** RTC (Real Time Clock) - a continuously running timer with periodic interrupts */
  rtc?: RTCTimer;
  /** Hyperv (Hypervclock) - lets guests read the host’s wall clock time (paravirtualized) */
  hyperv?: HypervTimer;
}

export interface HPETTimer {
  /** TickPolicy determines what happens when QEMU misses a deadline for injecting a tick to the guest */
  tickPolicy?: HPETTickPolicy;
  /** Enabled set to false makes sure that the machine type or a preset can't add the timer */
  present?: boolean;
}

export type HPETTickPolicy = 'delay' | 'catchup' | 'merge' | 'discard';

export interface KVMTimer {
  /** Enabled set to false makes sure that the machine type or a preset can't add the timer */
  present?: boolean;
}

export interface PITTimer {
  /** TickPolicy determines what happens when QEMU misses a deadline for injecting a tick to the guest */
  tickPolicy?: PITTickPolicy;
  /** Enabled set to false makes sure that the machine type or a preset can't add the timer */
  present?: boolean;
}

export type PITTickPolicy = 'delay' | 'catchup' | 'discard';

export interface RTCTimer {
  /** TickPolicy determines what happens when QEMU misses a deadline for injecting a tick to the guest */
  tickPolicy?: RTCTickPolicy;
  /** Enabled set to false makes sure that the machine type or a preset can't add the timer */
  present?: boolean;
  /** Track the guest or the wall clock */
  track?: RTCTimerTrack;
}

export type RTCTickPolicy = 'delay' | 'catchup';

export type RTCTimerTrack = 'guest' | 'wall';

export interface HypervTimer {
  /** Enabled set to false makes sure that the machine type or a preset can't add the timer */
  present?: boolean;
}

export interface Features {
  /** ACPI enables/disables ACPI inside the guest */
  acpi?: FeatureState;
  /** Defaults to the machine type setting */
  apic?: FeatureAPIC;
  /** This enables all supported hyperv flags automatically */
  hypervPassthrough?: HyperVPassthrough;
  /** Defaults to the machine type setting */
  hyperv?: FeatureHyperv;
  /** SMM enables/disables System Management Mode */
  smm?: FeatureState;
  /** Configure how KVM presence is exposed to the guest */
  kvm?: FeatureKVM;
  /** Notify the guest that the host supports paravirtual spinlocks */
  pvspinlock?: FeatureState;
}

export interface FeatureState {
  /** Enabled determines if the feature should be enabled or disabled on the guest */
  enabled?: boolean;
}

export interface FeatureAPIC extends FeatureState {
  /** EndOfInterrupt enables the end of interrupt notification in the guest */
  endOfInterrupt?: boolean;
}

export interface HyperVPassthrough {
  enabled?: boolean;
}

export interface FeatureHyperv {
  /** Relaxed instructs the guest OS to disable watchdog timeouts */
  relaxed?: FeatureState;
  /** VAPIC improves the paravirtualized handling of interrupts */
  vapic?: FeatureState;
  /** Spinlocks allows to configure the spinlock retry attempts */
  spinlocks?: FeatureSpinlocks;
  /** VPIndex enables the Virtual Processor Index to help windows identifying virtual processors */
  vpindex?: FeatureState;
  /** Runtime improves the time accounting to improve scheduling in the guest */
  runtime?: FeatureState;
  /** SyNIC enables the Synthetic Interrupt Controller */
  synic?: FeatureState;
  /** SyNICTimer enables Synthetic Interrupt Controller Timers, reducing CPU load */
  synictimer?: SyNICTimer;
  /** Reset enables Hyperv reboot/reset for the vmi */
  reset?: FeatureState;
  /** VendorID allows setting the hypervisor vendor id */
  vendorid?: FeatureVendorID;
  /** Frequencies improves the TSC clock source handling for Hyper-V on KVM */
  frequencies?: FeatureState;
  /** Reenlightenment enables the notifications on TSC frequency changes */
  reenlightenment?: FeatureState;
  /** TLBFlush improves performances in overcommited environments */
  tlbflush?: TLBFlush;
  /** IPI improves performances in overcommited environments */
  ipi?: FeatureState;
  /** EVMCS Speeds up L2 vmexits, but disables other virtualization features */
  evmcs?: FeatureState;
}

export interface FeatureSpinlocks extends FeatureState {
  /** Retries indicates the number of retries */
  spinlocks?: number;
}

export interface SyNICTimer extends FeatureState {
  direct?: FeatureState;
}

export interface FeatureVendorID extends FeatureState {
  /** VendorID sets the hypervisor vendor id, visible to the vmi */
  vendorid?: string;
}

export interface TLBFlush extends FeatureState {
  /** Direct allows sending the TLB flush command directly to the hypervisor */
  direct?: FeatureState;
  /** Extended allows the guest to execute partial TLB flushes */
  extended?: FeatureState;
}

export interface FeatureKVM {
  /** Hide the KVM hypervisor from standard MSR based discovery */
  hidden?: boolean;
}

export interface Devices {
  /** Fall back to legacy virtio 0.9 support if virtio bus is selected on devices */
  useVirtioTransitional?: boolean;
  /** DisableHotplug disabled the ability to hotplug disks */
  disableHotplug?: boolean;
  /** Disks describes disks, cdroms and luns which are connected to the vmi */
  disks?: Disk[];
  /** Watchdog describes a watchdog device which can be added to the vmi */
  watchdog?: Watchdog;
  /** Interfaces describe network interfaces which are added to the vmi */
  interfaces?: Interface[];
  /** Inputs describe input devices */
  inputs?: Input[];
  /** Whether to attach a pod network interface */
  autoattachPodInterface?: boolean;
  /** Whether to attach the default graphics device or not */
  autoattachGraphicsDevice?: boolean;
  /** Whether to attach the default virtio-serial console or not */
  autoattachSerialConsole?: boolean;
  /** Whether to log the auto-attached default serial console or not */
  logSerialConsole?: boolean;
  /** Whether to attach the Memory balloon device with default period */
  autoattachMemBalloon?: boolean;
  /** Whether to attach an Input Device */
  autoattachInputDevice?: boolean;
  /** Whether to attach the VSOCK CID to the VM or not */
  autoattachVSOCK?: boolean;
  /** Whether to have random number generator from host */
  rng?: Rng;
  /** Whether or not to enable virtio multi-queue for block devices */
  blockMultiQueue?: boolean;
  /** If specified, virtual network interfaces configured with a virtio bus will also enable the vhost multiqueue feature for network devices */
  networkInterfaceMultiqueue?: boolean;
  /** Whether to attach a GPU device to the vmi */
  gpus?: GPU[];
  /** DownwardMetrics creates a virtio serials for exposing the downward metrics to the vmi */
  downwardMetrics?: DownwardMetrics;
  /** PanicDevices provides additional crash information when a guest crashes */
  panicDevices?: PanicDevice[];
  /** Filesystems describes filesystem which is connected to the vmi */
  filesystems?: Filesystem[];
  /** Whether to attach a host device to the vmi */
  hostDevices?: HostDevice[];
  /** To configure and access client devices such as redirecting USB */
  clientPassthrough?: ClientPassthroughDevices;
  /** Whether to emulate a sound device */
  sound?: SoundDevice;
  /** Whether to emulate a TPM device */
  tpm?: TPMDevice;
  /** Video describes the video device configuration for the vmi */
  video?: VideoDevice;
}

export interface Disk extends DiskDevice {
  /** Name is the device name */
  name: string;
  /** BootOrder is an integer value > 0, used to determine ordering of boot devices */
  bootOrder?: number;
  /** Serial provides the ability to specify a serial number for the disk device */
  serial?: string;
  /** dedicatedIOThread indicates this disk should have an exclusive IO Thread */
  dedicatedIOThread?: boolean;
  /** Cache specifies which kvm disk cache mode should be used */
  cache?: DriverCache;
  /** IO specifies which QEMU disk IO mode should be used */
  io?: DriverIO;
  /** If specified, disk address and its tag will be provided to the guest via config drive metadata */
  tag?: string;
  /** If specified, the virtual disk will be presented with the given block sizes */
  blockSize?: BlockSize;
  /** If specified the disk is made sharable and multiple write from different VMs are permitted */
  shareable?: boolean;
  /** If specified, it can change the default error policy (stop) for the disk */
  errorPolicy?: DiskErrorPolicy;
  /** ChangedBlockTracking indicates this disk should have CBT option Defaults to false */
  changedBlockTracking?: boolean;
}

export interface DiskDevice {
  /** Attach a volume as a disk to the vmi */
  disk?: DiskTarget;
  /** Attach a volume as a LUN to the vmi */
  lun?: LunTarget;
  /** Attach a volume as a cdrom to the vmi */
  cdrom?: CDRomTarget;
}

export interface DiskTarget {
  /** Bus indicates the type of disk device to emulate */
  bus?: DiskBus;
  /** ReadOnly */
  readonly?: boolean;
  /** If specified, the virtual disk will be placed on the guests pci address with the specified PCI address */
  pciAddress?: string;
}

export type DiskBus = 'virtio' | 'sata' | 'scsi' | 'usb';

export interface LunTarget {
  /** Bus indicates the type of disk device to emulate */
  bus?: DiskBus;
  /** ReadOnly */
  readonly?: boolean;
  /** Reservation indicates if the disk needs to support the persistent reservation for the SCSI disk */
  reservation?: boolean;
}

export interface CDRomTarget {
  /** Bus indicates the type of disk device to emulate */
  bus?: DiskBus;
  /** ReadOnly */
  readonly?: boolean;
  /** Tray indicates if the tray of the device is open or closed */
  tray?: TrayState;
}

export type TrayState = 'open' | 'closed';

export type DriverCache = 'none' | 'writethrough' | 'writeback';

export type DriverIO = 'threads' | 'native';

export interface BlockSize {
  custom?: CustomBlockSize;
  matchVolume?: FeatureState;
}

export interface CustomBlockSize {
  logical?: number;
  physical?: number;
  discardGranularity?: number;
}

export type DiskErrorPolicy = 'stop' | 'ignore' | 'report' | 'enospace';

export interface Watchdog extends WatchdogDevice {
  /** Name of the watchdog */
  name: string;
}

export interface WatchdogDevice {
  /** i6300esb watchdog device */
  i6300esb?: I6300ESBWatchdog;
  /** diag288 watchdog device (specific to s390x architecture) */
  diag288?: Diag288Watchdog;
}

export interface I6300ESBWatchdog {
  /** The action to take */
  action?: WatchdogAction;
}

export type WatchdogAction = 'poweroff' | 'reset' | 'shutdown';

export interface Diag288Watchdog {
  /** The action to take */
  action?: WatchdogAction;
}

export interface Interface extends InterfaceBindingMethod {
  /** Logical name of the interface as well as a reference to the associated networks */
  name: string;
  /** Interface model */
  model?: string;
  /** Binding specifies the binding plugin that will be used to connect the interface to the guest */
  binding?: PluginBinding;
  /** List of ports to be forwarded to the virtual machine */
  ports?: Port[];
  /** List of port ranges to be forwarded to the virtual machine */
  portRanges?: PortRange[];
  /** Interface MAC address */
  macAddress?: string;
  /** BootOrder is an integer value > 0, used to determine ordering of boot devices */
  bootOrder?: number;
  /** If specified, the virtual network interface will be placed on the guests pci address with the specified PCI address */
  pciAddress?: string;
  /** If specified the network interface will pass additional DHCP options to the VMI */
  dhcpOptions?: DHCPOptions;
  /** If specified, the virtual network interface address and its tag will be provided to the guest via config drive */
  tag?: string;
  /** If specified, the ACPI index is used to provide network interface device naming, that is stable across changes in PCI addresses assigned to the device */
  acpiIndex?: number;
  /** State represents the requested operational state of the interface */
  state?: InterfaceState;
}

export interface InterfaceBindingMethod {
  bridge?: InterfaceBridge;
  /** DeprecatedSlirp is an alias to the deprecated Slirp interface Deprecated: Removed in v1.3 */
  slirp?: DeprecatedInterfaceSlirp;
  masquerade?: InterfaceMasquerade;
  sriov?: InterfaceSRIOV;
  /** DeprecatedMacvtap is an alias to the deprecated Macvtap interface, please refer to Kubevirt user guide for alternatives */
  macvtap?: DeprecatedInterfaceMacvtap;
  /** DeprecatedPasst is an alias to the deprecated Passt interface, please refer to Kubevirt user guide for alternatives */
  passt?: DeprecatedInterfacePasst;
  passtBinding?: InterfacePasstBinding;
}

export interface InterfaceBridge {}

export interface DeprecatedInterfaceSlirp {}

export interface InterfaceMasquerade {}

export interface InterfaceSRIOV {}

export interface DeprecatedInterfaceMacvtap {}

export interface DeprecatedInterfacePasst {}

export interface InterfacePasstBinding {}

export interface PluginBinding {
  /** Name references to the binding name as denined in the kubevirt CR */
  name: string;
}

export interface Port {
  /** If specified, this must be an IANA_SVC_NAME and unique within the pod */
  name?: string;
  /** Protocol for port */
  protocol?: string;
  /** Number of port to expose for the virtual machine */
  port: number;
}

export interface PortRange {
  /** Required */
  protocol: string;
  /** First port of the range to expose for the virtual machine */
  start: number;
  /** Last port of the range to expose for the virtual machine */
  end: number;
}

export interface DHCPOptions {
  /** If specified will pass option 67 to interface's DHCP server */
  bootFileName?: string;
  /** If specified will pass option 66 to interface's DHCP server */
  tftpServerName?: string;
  /** If specified will pass the configured NTP server to the VM via DHCP option 042 */
  ntpServers?: string[];
  /** If specified will pass extra DHCP options for private use, range: 224-254 */
  privateOptions?: DHCPPrivateOptions[];
}

export interface DHCPPrivateOptions {
  /** Option is an Integer value from 224-254 Required */
  option: number;
  /** Value is a String value for the Option provided Required */
  value: string;
}

export type InterfaceState = 'absent' | 'up' | 'down';

export interface Input {
  /** Bus indicates the bus of input device to emulate */
  bus?: InputBus;
  /** Type indicated the type of input device */
  type?: InputType;
  /** Name is the device name */
  name: string;
}

export type InputBus = 'usb' | 'virtio';

export type InputType = 'tablet' | 'keyboard';

export interface Rng {}

export interface GPU extends ClaimRequest {
  /** Name of the GPU device as exposed by a device plugin */
  name: string;
  /** DeviceName is the name of the device provisioned by device-plugins */
  deviceName?: string;
  virtualGPUOptions?: VGPUOptions;
  /** If specified, the virtual network interface address and its tag will be provided to the guest via config drive */
  tag?: string;
}

export interface ClaimRequest {
  /** ClaimName references the name of an entry in the VMI's spec.resourceClaims[] array */
  claimName?: string;
  /** RequestName specifies which request from the ResourceClaim/ResourceClaimTemplate spec.devices.requests array this claim request corresponds to */
  requestName?: string;
}

export interface VGPUOptions {
  display?: VGPUDisplayOptions;
}

export interface VGPUDisplayOptions {
  /** Enabled determines if a display addapter backed by a vGPU should be enabled or disabled on the guest */
  enabled?: boolean;
  /** Enables a boot framebuffer, until the guest OS loads a real GPU driver Defaults to true */
  ramFB?: FeatureState;
}

export interface DownwardMetrics {}

export interface PanicDevice {
  /** Model specifies what type of panic device is provided */
  model?: PanicDeviceModel;
}

export type PanicDeviceModel = 'hyperv' | 'isa' | 'pvpanic';

export interface Filesystem {
  /** Name is the device name */
  name: string;
  /** Virtiofs is supported */
  virtiofs: FilesystemVirtiofs;
}

export interface FilesystemVirtiofs {}

export interface HostDevice extends ClaimRequest {
  name: string;
  /** DeviceName is the name of the device provisioned by device-plugins */
  deviceName?: string;
  /** If specified, the virtual network interface address and its tag will be provided to the guest via config drive */
  tag?: string;
}

export interface ClientPassthroughDevices {}

export interface SoundDevice {
  /** User's defined name for this sound device */
  name: string;
  /** We only support ich9 or ac97 */
  model?: string;
}

export interface TPMDevice {
  /** Enabled allows a user to explicitly disable the vTPM even when one is enabled by a preference referenced by the VirtualMachine Defaults to True */
  enabled?: boolean;
  /** Persistent indicates the state of the TPM device should be kept accross reboots Defaults to false */
  persistent?: boolean;
}

export interface VideoDevice {
  /** Type specifies the video device type (e.g., virtio, vga, bochs, ramfb) */
  type?: string;
}

export type IOThreadsPolicy = 'shared' | 'auto' | 'supplementalPool';

export interface DiskIOThreads {
  /** SupplementalPoolThreadCount specifies how many iothreads are allocated for the supplementalPool policy */
  supplementalPoolThreadCount?: number;
}

export interface Chassis {
  manufacturer?: string;
  version?: string;
  serial?: string;
  asset?: string;
  sku?: string;
}

export interface LaunchSecurity {
  /** AMD Secure Encrypted Virtualization (SEV) */
  sev?: SEV;
  /** AMD SEV-SNP flags defined by the SEV-SNP specifications */
  snp?: SEVSNP;
  /** Intel Trust Domain Extensions (TDX) */
  tdx?: TDX;
}

export interface SEV {
  /** Guest policy flags as defined in AMD SEV API specification */
  policy?: SEVPolicy;
  /** If specified, run the attestation process for a vmi */
  attestation?: SEVAttestation;
  /** Base64 encoded session blob */
  session?: string;
  /** Base64 encoded guest owner's Diffie-Hellman key */
  dhCert?: string;
}

export interface SEVPolicy {
  /** SEV-ES is required */
  encryptedState?: boolean;
}

export interface SEVAttestation {}

export interface SEVSNP {}

export interface TDX {}

export type RebootPolicy = 'Reboot' | 'Terminate';

export type EvictionStrategy = 'None' | 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External';

export type StartStrategy = 'Paused';

export interface Volume extends VolumeSource {
  /** Volume's name */
  name: string;
}

export interface VolumeSource {
  /** HostDisk represents a disk created on the cluster level */
  hostDisk?: HostDisk;
  /** PersistentVolumeClaimVolumeSource represents a reference to a PersistentVolumeClaim in the same namespace */
  persistentVolumeClaim?: PersistentVolumeClaimVolumeSource;
  /** CloudInitNoCloud represents a cloud-init NoCloud user-data source */
  cloudInitNoCloud?: CloudInitNoCloudSource;
  /** CloudInitConfigDrive represents a cloud-init Config Drive user-data source */
  cloudInitConfigDrive?: CloudInitConfigDriveSource;
  /** Represents a Sysprep volume source */
  sysprep?: SysprepSource;
  /** ContainerDisk references a docker image, embedding a qcow or raw disk */
  containerDisk?: ContainerDiskSource;
  /** Ephemeral is a special volume source that 'wraps' specified source and provides copy-on-write image on top of it */
  ephemeral?: EphemeralVolumeSource;
  /** EmptyDisk represents a temporary disk which shares the vmis lifecycle */
  emptyDisk?: EmptyDiskSource;
  /** DataVolume represents the dynamic creation a PVC for this volume as well as the process of populating that PVC with a disk image */
  dataVolume?: DataVolumeSource;
  /** ConfigMapSource represents a reference to a ConfigMap in the same namespace */
  configMap?: ConfigMapVolumeSource;
  /** SecretVolumeSource represents a reference to a secret data in the same namespace */
  secret?: SecretVolumeSource;
  /** DownwardAPI represents downward API about the pod that should populate this volume */
  downwardAPI?: DownwardAPIVolumeSource;
  /** ServiceAccountVolumeSource represents a reference to a service account */
  serviceAccount?: ServiceAccountVolumeSource;
  /** DownwardMetrics adds a very small disk to VMIs which contains a limited view of host and guest metrics */
  downwardMetrics?: DownwardMetricsVolumeSource;
  /** MemoryDump is attached to the virt launcher and is populated with a memory dump of the vmi */
  memoryDump?: MemoryDumpVolumeSource;
  /** ContainerPath exposes a path from the virt-launcher container to the VM via virtiofs */
  containerPath?: ContainerPathVolumeSource;
}

export interface HostDisk {
  /** The path to HostDisk image located on the cluster */
  path: string;
  /** Contains information if disk.img exists or should be created allowed options are 'Disk' and 'DiskOrCreate' */
  type: HostDiskType;
  /** Capacity of the sparse disk */
  capacity?: Quantity;
  /** Shared indicate whether the path is shared between nodes */
  shared?: boolean;
}

export type HostDiskType = 'DiskOrCreate' | 'Disk';

export interface PersistentVolumeClaimVolumeSource extends K8sPersistentVolumeClaimVolumeSource {
  /** Hotpluggable indicates whether the volume can be hotplugged and hotunplugged */
  hotpluggable?: boolean;
}

export interface CloudInitNoCloudSource {
  /** UserDataSecretRef references a k8s secret that contains NoCloud userdata */
  secretRef?: LocalObjectReference;
  /** UserDataBase64 contains NoCloud cloud-init userdata as a base64 encoded string */
  userDataBase64?: string;
  /** UserData contains NoCloud inline cloud-init userdata */
  userData?: string;
  /** NetworkDataSecretRef references a k8s secret that contains NoCloud networkdata */
  networkDataSecretRef?: LocalObjectReference;
  /** NetworkDataBase64 contains NoCloud cloud-init networkdata as a base64 encoded string */
  networkDataBase64?: string;
  /** NetworkData contains NoCloud inline cloud-init networkdata */
  networkData?: string;
}

export interface CloudInitConfigDriveSource {
  /** UserDataSecretRef references a k8s secret that contains config drive userdata */
  secretRef?: LocalObjectReference;
  /** UserDataBase64 contains config drive cloud-init userdata as a base64 encoded string */
  userDataBase64?: string;
  /** UserData contains config drive inline cloud-init userdata */
  userData?: string;
  /** NetworkDataSecretRef references a k8s secret that contains config drive networkdata */
  networkDataSecretRef?: LocalObjectReference;
  /** NetworkDataBase64 contains config drive cloud-init networkdata as a base64 encoded string */
  networkDataBase64?: string;
  /** NetworkData contains config drive inline cloud-init networkdata */
  networkData?: string;
}

export interface SysprepSource {
  /** Secret references a k8s Secret that contains Sysprep answer file named autounattend.xml that should be attached as disk of CDROM type */
  secret?: LocalObjectReference;
  /** ConfigMap references a ConfigMap that contains Sysprep answer file named autounattend.xml that should be attached as disk of CDROM type */
  configMap?: LocalObjectReference;
}

export interface ContainerDiskSource {
  /** Image is the name of the image with the embedded disk */
  image: string;
  /** ImagePullSecret is the name of the Docker registry secret required to pull the image */
  imagePullSecret?: string;
  /** Path defines the path to disk file in the container */
  path?: string;
  /** Image pull policy */
  imagePullPolicy?: PullPolicy;
}

export interface EphemeralVolumeSource {
  /** PersistentVolumeClaimVolumeSource represents a reference to a PersistentVolumeClaim in the same namespace */
  persistentVolumeClaim?: K8sPersistentVolumeClaimVolumeSource;
}

export interface EmptyDiskSource {
  /** Capacity of the sparse disk */
  capacity: Quantity;
}

export interface DataVolumeSource {
  /** Name of both the DataVolume and the PVC in the same namespace */
  name: string;
  /** Hotpluggable indicates whether the volume can be hotplugged and hotunplugged */
  hotpluggable?: boolean;
}

export interface ConfigMapVolumeSource extends LocalObjectReference {
  /** Specify whether the ConfigMap or it's keys must be defined */
  optional?: boolean;
  /** The volume label of the resulting disk inside the VMI */
  volumeLabel?: string;
}

export interface SecretVolumeSource {
  /** Name of the secret in the pod's namespace to use */
  secretName?: string;
  /** Specify whether the Secret or it's keys must be defined */
  optional?: boolean;
  /** The volume label of the resulting disk inside the VMI */
  volumeLabel?: string;
}

export interface DownwardAPIVolumeSource {
  /** Fields is a list of downward API volume file */
  fields?: DownwardAPIVolumeFile[];
  /** The volume label of the resulting disk inside the VMI */
  volumeLabel?: string;
}

export interface ServiceAccountVolumeSource {
  /** Name of the service account in the pod's namespace to use */
  serviceAccountName?: string;
}

export interface DownwardMetricsVolumeSource {}

export interface MemoryDumpVolumeSource extends PersistentVolumeClaimVolumeSource {}

export interface ContainerPathVolumeSource {
  /** Path is the absolute path within the virt-launcher container to expose to the VM */
  path: string;
  /** ReadOnly controls whether the volume is exposed as read-only to the VM */
  readOnly?: boolean;
}

export interface Probe extends Handler {
  /** Number of seconds after the VirtualMachineInstance has started before liveness probes are initiated */
  initialDelaySeconds?: number;
  /** Number of seconds after which the probe times out */
  timeoutSeconds?: number;
  /** How often (in seconds) to perform the probe */
  periodSeconds?: number;
  /** Minimum consecutive successes for the probe to be considered successful after having failed */
  successThreshold?: number;
  /** Minimum consecutive failures for the probe to be considered failed after having succeeded */
  failureThreshold?: number;
}

export interface Handler {
  /** One and only one of the following should be specified */
  exec?: ExecAction;
  /** GuestAgentPing contacts the qemu-guest-agent for availability checks */
  guestAgentPing?: GuestAgentPing;
  /** HTTPGet specifies the http request to perform */
  httpGet?: HTTPGetAction;
  /** TCPSocket specifies an action involving a TCP port */
  tcpSocket?: TCPSocketAction;
}

export interface GuestAgentPing {}

export interface Network extends NetworkSource {
  /** Network name */
  name: string;
}

export interface NetworkSource {
  pod?: PodNetwork;
  multus?: MultusNetwork;
  /** ResourceClaim represents a network resource requested via a VMI spec.resourceClaims[] entry, backed by either a Kubernetes ResourceClaim or Resourc... */
  resourceClaim?: ClaimRequest;
}

export interface PodNetwork {
  /** CIDR for vm network */
  vmNetworkCIDR?: string;
  /** IPv6 CIDR for the vm network */
  vmIPv6NetworkCIDR?: string;
}

export interface MultusNetwork {
  /** References to a NetworkAttachmentDefinition CRD object */
  networkName: string;
  /** Select the default network and add it to the multus-cni.io/default-network annotation */
  default?: boolean;
}

export interface AccessCredential {
  /** SSHPublicKey represents the source and method of applying a ssh public key into a guest virtual machine */
  sshPublicKey?: SSHPublicKeyAccessCredential;
  /** UserPassword represents the source and method for applying a guest user's password */
  userPassword?: UserPasswordAccessCredential;
}

export interface SSHPublicKeyAccessCredential {
  /** Source represents where the public keys are pulled from */
  source: SSHPublicKeyAccessCredentialSource;
  /** PropagationMethod represents how the public key is injected into the vm guest */
  propagationMethod: SSHPublicKeyAccessCredentialPropagationMethod;
}

export interface SSHPublicKeyAccessCredentialSource {
  /** Secret means that the access credential is pulled from a kubernetes secret */
  secret?: AccessCredentialSecretSource;
}

export interface AccessCredentialSecretSource {
  /** SecretName represents the name of the secret in the VMI's namespace */
  secretName: string;
}

export interface SSHPublicKeyAccessCredentialPropagationMethod {
  /** ConfigDrivePropagation means that the ssh public keys are injected into the VM using metadata using the configDrive cloud-init provider */
  configDrive?: ConfigDriveSSHPublicKeyAccessCredentialPropagation;
  /** NoCloudPropagation means that the ssh public keys are injected into the VM using metadata using the noCloud cloud-init provider */
  noCloud?: NoCloudSSHPublicKeyAccessCredentialPropagation;
  /** QemuGuestAgentAccessCredentailPropagation means ssh public keys are dynamically injected into the vm at runtime via the qemu guest agent */
  qemuGuestAgent?: QemuGuestAgentSSHPublicKeyAccessCredentialPropagation;
}

export interface ConfigDriveSSHPublicKeyAccessCredentialPropagation {}

export interface NoCloudSSHPublicKeyAccessCredentialPropagation {}

export interface QemuGuestAgentSSHPublicKeyAccessCredentialPropagation {
  /** Users represents a list of guest users that should have the ssh public keys added to their authorized_keys file */
  users: string[];
}

export interface UserPasswordAccessCredential {
  /** Source represents where the user passwords are pulled from */
  source: UserPasswordAccessCredentialSource;
  /** propagationMethod represents how the user passwords are injected into the vm guest */
  propagationMethod: UserPasswordAccessCredentialPropagationMethod;
}

export interface UserPasswordAccessCredentialSource {
  /** Secret means that the access credential is pulled from a kubernetes secret */
  secret?: AccessCredentialSecretSource;
}

export interface UserPasswordAccessCredentialPropagationMethod {
  /** QemuGuestAgentAccessCredentailPropagation means passwords are dynamically injected into the vm at runtime via the qemu guest agent */
  qemuGuestAgent?: QemuGuestAgentUserPasswordAccessCredentialPropagation;
}

export interface QemuGuestAgentUserPasswordAccessCredentialPropagation {}

export interface VirtualMachineInstanceResourceClaim {
  /** Name uniquely identifies this resource claim inside the VMI */
  name: string;
  /** ResourceClaimName is the name of a ResourceClaim object in the same namespace as this VMI */
  resourceClaimName?: string;
  /** ResourceClaimTemplateName is the name of a ResourceClaimTemplate object in the same namespace as this VMI */
  resourceClaimTemplateName?: string;
}

export interface UtilityVolume extends K8sPersistentVolumeClaimVolumeSource {
  /** UtilityVolume's name */
  name: string;
  /** Type represents the type of the utility volume */
  type?: UtilityVolumeType;
}

export type UtilityVolumeType = 'MemoryDump' | 'Backup';

export interface VirtualMachineInstanceStatus {
  /** NodeName is the name where the VirtualMachineInstance is currently running */
  nodeName?: string;
  /** A brief CamelCase message indicating details about why the VMI is in this state */
  reason?: string;
  /** Conditions are specific points in VirtualMachineInstance's pod runtime */
  conditions?: VirtualMachineInstanceCondition[];
  /** Phase is the status of the VirtualMachineInstance in kubernetes world */
  phase?: VirtualMachineInstancePhase;
  /** PhaseTransitionTimestamp is the timestamp of when the last phase change occurred */
  phaseTransitionTimestamps?: VirtualMachineInstancePhaseTransitionTimestamp[];
  /** Interfaces represent the details of available network interfaces */
  interfaces?: VirtualMachineInstanceNetworkInterface[];
  /** Guest OS Information */
  guestOSInfo?: VirtualMachineInstanceGuestOSInfo;
  /** Represents the status of a live migration */
  migrationState?: VirtualMachineInstanceMigrationState;
  /** Represents the method using which the vmi can be migrated: live migration or block migration */
  migrationMethod?: VirtualMachineInstanceMigrationMethod;
  /** This represents the migration transport */
  migrationTransport?: VirtualMachineInstanceMigrationTransport;
  /** The Quality of Service (QOS) classification assigned to the virtual machine instance based on resource requirements See PodQOSClass type for availa... */
  qosClass?: PodQOSClass;
  /** LauncherContainerImageVersion indicates what container image is currently active for the vmi */
  launcherContainerImageVersion?: string;
  /** EvacuationNodeName is used to track the eviction process of a VMI */
  evacuationNodeName?: string;
  /** ActivePods is a mapping of pod UID to node name */
  activePods?: Record<string, string>;
  /** VolumeStatus contains the statuses of all the volumes */
  volumeStatus?: VolumeStatus[];
  /** KernelBootStatus contains info about the kernelBootContainer */
  kernelBootStatus?: KernelBootStatus;
  /** FSFreezeStatus indicates whether a freeze operation was requested for the guest filesystem */
  fsFreezeStatus?: string;
  topologyHints?: TopologyHints;
  /** VirtualMachineRevisionName is used to get the vm revision of the vmi when doing an online vm snapshot */
  virtualMachineRevisionName?: string;
  /** RuntimeUser is used to determine what user will be used in launcher */
  runtimeUser?: number;
  /** VSOCKCID is used to track the allocated VSOCK CID in the VM */
  VSOCKCID?: number;
  /** SELinuxContext is the actual SELinux context of the virt-launcher pod */
  selinuxContext?: string;
  /** Machine shows the final resulting qemu machine type */
  machine?: Machine;
  /** CurrentCPUTopology specifies the current CPU topology used by the VM workload */
  currentCPUTopology?: CPUTopology;
  /** Memory shows various informations about the VirtualMachine memory */
  memory?: MemoryStatus;
  /** MigratedVolumes lists the source and destination volumes during the volume migration */
  migratedVolumes?: StorageMigratedVolumeInfo[];
  /** ChangedBlockTracking represents the status of the changedBlockTracking */
  changedBlockTracking?: ChangedBlockTrackingStatus;
}

export interface VirtualMachineInstanceCondition {
  type: VirtualMachineInstanceConditionType;
  status: ConditionStatus;
  lastProbeTime?: Time;
  lastTransitionTime?: Time;
  reason?: string;
  message?: string;
}

export type VirtualMachineInstanceConditionType = 'PodScheduled' | 'Provisioning' | 'Ready' | 'Synchronized' | 'Paused' | 'AgentConnected' | 'AccessCredentialsSynchronized' | 'AgentVersionNotSupported' | 'LiveMigratable' | 'HotVCPUChange' | 'HotMemoryChange' | 'VolumesChange' | 'DataVolumesReady' | 'StorageLiveMigratable' | 'DecentralizedLiveMigrationFailure' | 'MigrationRequired' | 'EvictionRequested' | 'SoftwareEmulation';

export type VirtualMachineInstancePhase = '' | 'Pending' | 'Scheduling' | 'Scheduled' | 'Running' | 'Succeeded' | 'Failed' | 'WaitingForSync' | 'Unknown';

export interface VirtualMachineInstancePhaseTransitionTimestamp {
  /** Phase is the status of the VirtualMachineInstance in kubernetes world */
  phase?: VirtualMachineInstancePhase;
  /** PhaseTransitionTimestamp is the timestamp of when the phase change occurred */
  phaseTransitionTimestamp?: Time;
}

export interface VirtualMachineInstanceNetworkInterface {
  /** IP address of a Virtual Machine interface */
  ipAddress?: string;
  /** Hardware address of a Virtual Machine interface */
  mac?: string;
  /** Name of the interface, corresponds to name of the network assigned to the interface */
  name?: string;
  /** List of all IP addresses of a Virtual Machine interface */
  ipAddresses?: string[];
  /** PodInterfaceName represents the name of the pod network interface */
  podInterfaceName?: string;
  /** The interface name inside the Virtual Machine */
  interfaceName?: string;
  /** Specifies the origin of the interface data collected */
  infoSource?: string;
  /** Specifies how many queues are allocated by MultiQueue */
  queueCount?: number;
  /** LinkState Reports the current operational link state` */
  linkState?: string;
}

export interface VirtualMachineInstanceGuestOSInfo {
  /** Name of the Guest OS */
  name?: string;
  /** Guest OS Kernel Release */
  kernelRelease?: string;
  /** Guest OS Version */
  version?: string;
  /** Guest OS Pretty Name */
  prettyName?: string;
  /** Version ID of the Guest OS */
  versionId?: string;
  /** Kernel version of the Guest OS */
  kernelVersion?: string;
  /** Machine type of the Guest OS */
  machine?: string;
  /** Guest OS Id */
  id?: string;
}

export interface VirtualMachineInstanceMigrationState {
  /** The time the migration action began */
  startTimestamp?: Time;
  /** The time the migration action ended */
  endTimestamp?: Time;
  /** The timestamp at which the target node detects the domain is active */
  targetNodeDomainReadyTimestamp?: Time;
  /** The Target Node has seen the Domain Start Event */
  targetNodeDomainDetected?: boolean;
  /** The address of the target node to use for the migration */
  targetNodeAddress?: string;
  /** The list of ports opened for live migration on the destination node */
  targetDirectMigrationNodePorts?: Record<string, number>;
  /** The target node that the VMI is moving to */
  targetNode?: string;
  /** The target pod that the VMI is moving to */
  targetPod?: string;
  /** The UID of the target attachment pod for hotplug volumes */
  targetAttachmentPodUID?: string;
  /** The source node that the VMI originated on */
  sourceNode?: string;
  sourcePod?: string;
  /** Indicates the migration completed */
  completed?: boolean;
  /** Indicates that the migration failed */
  failed?: boolean;
  /** Indicates that the migration has been requested to abort */
  abortRequested?: boolean;
  /** Indicates the final status of the live migration abortion */
  abortStatus?: MigrationAbortStatus;
  /** Contains the reason why the migration failed */
  failureReason?: string;
  /** The VirtualMachineInstanceMigration object associated with this migration */
  migrationUid?: string;
  /** Lets us know if the vmi is currently running pre or post copy migration */
  mode?: MigrationMode;
  /** Name of the migration policy */
  migrationPolicyName?: string;
  /** Migration configurations to apply */
  migrationConfiguration?: VMIMConfigurationOptions;
  /** If the VMI requires dedicated CPUs, this field will hold the dedicated CPU set on the target node */
  targetCPUSet?: number[];
  /** If the VMI requires dedicated CPUs, this field will hold the numa topology on the target node */
  targetNodeTopology?: string;
  /** If the VMI being migrated uses persistent features (backend-storage), its source PVC name is saved here */
  sourcePersistentStatePVCName?: string;
  /** If the VMI being migrated uses persistent features (backend-storage), its target PVC name is saved here */
  targetPersistentStatePVCName?: string;
  /** SourceState contains migration state managed by the source virt handler */
  sourceState?: VirtualMachineInstanceMigrationSourceState;
  /** TargetState contains migration state managed by the target virt handler */
  targetState?: VirtualMachineInstanceMigrationTargetState;
  /** The type of migration network, either 'pod' or 'migration' */
  migrationNetworkType?: MigrationNetworkType;
  /** TargetMemoryOverhead is the memory overhead of the target virt-launcher pod */
  targetMemoryOverhead?: Quantity;
}

export type MigrationAbortStatus = 'Succeeded' | 'Failed' | 'Aborting';

export type MigrationMode = 'PreCopy' | 'PostCopy' | 'Paused';

export interface VMIMConfigurationOptions {
  /** NodeDrainTaintKey defines the taint key that indicates a node should be drained */
  nodeDrainTaintKey?: string;
  /** ParallelOutboundMigrationsPerNode is the maximum number of concurrent outgoing live migrations allowed per node */
  parallelOutboundMigrationsPerNode?: number;
  /** ParallelMigrationsPerCluster is the total number of concurrent live migrations allowed cluster-wide */
  parallelMigrationsPerCluster?: number;
  /** AllowAutoConverge allows the platform to compromise performance/availability of VMIs to guarantee successful VMI live migrations */
  allowAutoConverge?: boolean;
  /** BandwidthPerMigration limits the amount of network bandwidth live migrations are allowed to use */
  bandwidthPerMigration?: Quantity;
  /** CompletionTimeoutPerGiB is the maximum number of seconds per GiB a migration is allowed to take */
  completionTimeoutPerGiB?: number;
  /** MaxDowntimeMs specifies the maximum tolerable downtime (in milliseconds) during switchover */
  maxDowntimeMs?: number;
  /** ProgressTimeout is the maximum number of seconds a live migration is allowed to make no progress */
  progressTimeout?: number;
  /** UtilityVolumesTimeout is the maximum number of seconds a migration can wait in Pending state for utility volumes to be detached */
  utilityVolumesTimeout?: number;
  /** UnsafeMigrationOverride allows live migrations to occur even if the compatibility check indicates the migration will be unsafe to the guest */
  unsafeMigrationOverride?: boolean;
  /** AllowPostCopy enables post-copy live migrations */
  allowPostCopy?: boolean;
  /** AllowWorkloadDisruption indicates that the migration shouldn't be canceled after acceptableCompletionTime is exceeded */
  allowWorkloadDisruption?: boolean;
  /** When set to true, DisableTLS will disable the additional layer of live migration encryption provided by KubeVirt */
  disableTLS?: boolean;
  /** Network is the name of the CNI network to use for live migrations */
  network?: string;
  /** By default, the SELinux level of target virt-launcher pods is forced to the level of the source virt-launcher */
  matchSELinuxLevelOnMigration?: boolean;
  /** ExperimentalMigrationOptions is an alpha API */
  experimental?: ExperimentalMigrationOptions;
}

export interface ExperimentalMigrationOptions {
  stallDetector?: StallDetectorOptions;
  /** DowntimeTuning configures iteration-aware downtime ramping for live migration convergence */
  downtimeTuning?: DowntimeTuningOptions;
  /** Compression selects the algorithm for compressing the live migration data stream */
  compression?: MigrationCompression;
}

export interface StallDetectorOptions {
  /** StallMargin is the fractional tolerance, expressed as a percentage, used when comparing remaining migration bytes against the best observed value t... */
  stallMargin?: number;
  /** EwmaAlpha is the smoothing factor for the exponentially weighted moving average of observed migration bandwidth */
  ewmaAlpha?: Quantity;
  /** StallProgressTimeout is the duration in seconds of the sliding window used to track minimum remaining-bytes and detect when migration progress has ... */
  stallProgressTimeout?: number;
  /** SwitchoverTimeout is the duration in seconds allowed for a stop-and-copy or post-copy switchover to complete after being triggered before the migra... */
  switchoverTimeout?: number;
  /** PrecopyPossibleFactor is the maximum factor by which estimated downtime may exceed MaxDowntime while still attempting a soft stop-and-copy instead ... */
  precopyPossibleFactor?: Quantity;
  /** PatienceWindowDecayFactor is the factor by which the relaxation patience window is multiplied after each best-remaining-bytes relaxation step */
  patienceWindowDecayFactor?: Quantity;
  /** SearchLocalMinima controls whether convergence actions are delayed until remaining bytes reach a local minimum near the best observed value */
  searchLocalMinima?: boolean;
  /** CompletionTimeoutFactor multiplies the computed migration completion timeout to determine the total time budget for deciding whether a forced switc... */
  completionTimeoutFactor?: Quantity;
}

export interface DowntimeTuningOptions {
  /** InitialMs is the initial max_downtime value in milliseconds set at the start of migration */
  initialMs?: number;
  /** Steps is the number of equal increments used to ramp from InitialMs to the cluster-level MaxDowntimeMs */
  steps?: number;
  /** StartAfterIteration is the memory copy iteration after which downtime tuning begins */
  startAfterIteration?: number;
  /** CooldownSeconds is the minimum interval in seconds between successive downtime increases */
  cooldownSeconds?: number;
}

export type MigrationCompression = 'none' | 'zstd';

export interface VirtualMachineInstanceMigrationSourceState extends VirtualMachineInstanceCommonMigrationState {
  /** Node selectors needed by the target to start the receiving pod */
  nodeSelectors?: Record<string, string>;
}

export interface VirtualMachineInstanceCommonMigrationState {
  /** The source node that the VMI originated on */
  node?: string;
  /** The source pod that the VMI is originated on */
  pod?: string;
  /** The Source VirtualMachineInstanceMigration object associated with this migration */
  migrationUID?: string;
  /** The name of the domain on the source libvirt domain */
  domainName?: string;
  /** Namespace used in the name of the source libvirt domain */
  domainNamespace?: string;
  /** The ip address/fqdn:port combination to use to synchronize the VMI with the target */
  syncAddress?: string;
  /** If the VMI being migrated uses persistent features (backend-storage), its source PVC name is saved here */
  persistentStatePVCName?: string;
  /** SELinuxContext is the actual SELinux context of the pod */
  selinuxContext?: string;
  /** VirtualMachineInstanceUID is the UID of the target virtual machine instance */
  virtualMachineInstanceUID?: string;
}

export interface VirtualMachineInstanceMigrationTargetState extends VirtualMachineInstanceCommonMigrationState {
  /** The timestamp at which the target node detects the domain is active */
  domainReadyTimestamp?: Time;
  /** The Target Node has seen the Domain Start Event */
  domainDetected?: boolean;
  /** The address of the target node to use for the migration */
  nodeAddress?: string;
  /** The list of ports opened for live migration on the destination node */
  directMigrationNodePorts?: Record<string, number>;
  /** The UID of the target attachment pod for hotplug volumes */
  attachmentPodUID?: string;
  /** If the VMI requires dedicated CPUs, this field will hold the dedicated CPU set on the target node */
  cpuSet?: number[];
  /** If the VMI requires dedicated CPUs, this field will hold the numa topology on the target node */
  nodeTopology?: string;
}

export type MigrationNetworkType = 'Pod' | 'Migration';

export type VirtualMachineInstanceMigrationMethod = 'BlockMigration' | 'LiveMigration';

export type VirtualMachineInstanceMigrationTransport = 'Unix';

export interface VolumeStatus {
  /** Name is the name of the volume */
  name: string;
  /** Target is the target name used when adding the volume to the VM, eg: vda */
  target: string;
  /** Phase is the phase */
  phase?: VolumePhase;
  /** Reason is a brief description of why we are in the current hotplug volume phase */
  reason?: string;
  /** Message is a detailed message about the current hotplug volume phase */
  message?: string;
  /** PersistentVolumeClaimInfo is information about the PVC that handler requires during start flow */
  persistentVolumeClaimInfo?: PersistentVolumeClaimInfo;
  /** If the volume is hotplug, this will contain the hotplug status */
  hotplugVolume?: HotplugVolumeStatus;
  /** Represents the size of the volume */
  size?: number;
  /** If the volume is memorydump volume, this will contain the memorydump info */
  memoryDumpVolume?: DomainMemoryDumpInfo;
  /** ContainerDiskVolume shows info about the containerdisk, if the volume is a containerdisk */
  containerDiskVolume?: ContainerDiskInfo;
}

export type VolumePhase = 'Pending' | 'Bound' | 'AttachedToNode' | 'MountedToPod' | 'Ready' | 'Detaching' | 'UnMountedFromPod' | 'MemoryDumpCompleted' | 'MemoryDumpInProgress' | 'MemoryDumpFailed';

export interface PersistentVolumeClaimInfo {
  /** ClaimName is the name of the PVC */
  claimName?: string;
  /** AccessModes contains the desired access modes the volume should have */
  accessModes?: PersistentVolumeAccessMode[];
  /** VolumeMode defines what type of volume is required by the claim */
  volumeMode?: PersistentVolumeMode;
  /** Capacity represents the capacity set on the corresponding PVC status */
  capacity?: ResourceList;
  /** Requests represents the resources requested by the corresponding PVC spec */
  requests?: ResourceList;
  /** Preallocated indicates if the PVC's storage is preallocated or not */
  preallocated?: boolean;
  /** Percentage of filesystem's size to be reserved when resizing the PVC */
  filesystemOverhead?: Percent;
}

export type Percent = string;

export interface HotplugVolumeStatus {
  /** AttachPodName is the name of the pod used to attach the volume to the node */
  attachPodName?: string;
  /** AttachPodUID is the UID of the pod used to attach the volume to the node */
  attachPodUID?: string;
}

export interface DomainMemoryDumpInfo {
  /** StartTimestamp is the time when the memory dump started */
  startTimestamp?: Time;
  /** EndTimestamp is the time when the memory dump completed */
  endTimestamp?: Time;
  /** ClaimName is the name of the pvc the memory was dumped to */
  claimName?: string;
  /** TargetFileName is the name of the memory dump output */
  targetFileName?: string;
}

export interface ContainerDiskInfo {
  /** deprecated; Checksum is the checksum of the rootdisk or kernel artifacts inside the containerdisk */
  checksum?: number;
}

export interface KernelBootStatus {
  /** KernelInfo show info about the kernel image */
  kernelInfo?: KernelInfo;
  /** InitrdInfo show info about the initrd file */
  initrdInfo?: InitrdInfo;
}

export interface KernelInfo {
  /** deprecated; Checksum is the checksum of the kernel image */
  checksum?: number;
}

export interface InitrdInfo {
  /** deprecated; Checksum is the checksum of the initrd file */
  checksum?: number;
}

export interface TopologyHints {
  tscFrequency?: number;
}

export interface CPUTopology {
  /** Cores specifies the number of cores inside the vmi */
  cores?: number;
  /** Sockets specifies the number of sockets inside the vmi */
  sockets?: number;
  /** Threads specifies the number of threads inside the vmi */
  threads?: number;
}

export interface MemoryStatus {
  /** GuestAtBoot specifies with how much memory the VirtualMachine intiallly booted with */
  guestAtBoot?: Quantity;
  /** GuestCurrent specifies how much memory is currently available for the VirtualMachine */
  guestCurrent?: Quantity;
  /** GuestRequested specifies how much memory was requested (hotplug) for the VirtualMachine */
  guestRequested?: Quantity;
  /** MemoryOverhead specifies the memory overhead added by the virtualization infrastructure for the virt-launcher pod */
  memoryOverhead?: Quantity;
}

export interface StorageMigratedVolumeInfo {
  /** VolumeName is the name of the volume that is being migrated */
  volumeName: string;
  /** SourcePVCInfo contains the information about the source PVC */
  sourcePVCInfo?: PersistentVolumeClaimInfo;
  /** DestinationPVCInfo contains the information about the destination PVC */
  destinationPVCInfo?: PersistentVolumeClaimInfo;
}

export interface ChangedBlockTrackingStatus {
  /** State represents the current CBT state */
  state: ChangedBlockTrackingState;
  /** BackupStatus represents the status of vmi backup */
  backupStatus?: VirtualMachineInstanceBackupStatus;
}

export type ChangedBlockTrackingState = '' | 'PendingRestart' | 'Initializing' | 'Enabled' | 'Disabled' | 'IncrementalBackupFeatureGateDisabled';

export interface VirtualMachineInstanceBackupStatus {
  /** BackupName is the name of the executed backup */
  backupName?: string;
  /** StartTimestamp is the timestamp when the backup started */
  startTimestamp?: Time;
  /** EndTimestamp is the timestamp when the backup ended */
  endTimestamp?: Time;
  /** Completed indicates the backup completed */
  completed?: boolean;
  /** Failed indicates that the backup failed */
  failed?: boolean;
  /** BackupMsg resturns any relevant information like failure reason unfreeze failed etc */
  backupMsg?: string;
  /** CheckpointName is the name of the checkpoint created for the backup */
  checkpointName?: string;
  /** Volumes lists the volumes included in the backup */
  volumes?: VirtualMachineInstanceBackupVolumeInfo[];
  /** QuiesceStatus indicates whether filesystem freeze succeeded, failed, or was skipped */
  quiesceStatus?: string;
}

export interface VirtualMachineInstanceBackupVolumeInfo {
  /** VolumeName is the volume name from VMI spec */
  volumeName: string;
}

export interface VirtualMachineInstanceList {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: VirtualMachineInstance[];
}

export interface VirtualMachine {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** Spec contains the specification of VirtualMachineInstance created */
  spec: VirtualMachineSpec;
  /** Status holds the current state of the controller and brief information about its associated VirtualMachineInstance */
  status?: VirtualMachineStatus;
}

export interface VirtualMachineSpec {
  /** Running controls whether the associatied VirtualMachineInstance is created or not Mutually exclusive with RunStrategy Deprecated: VirtualMachineIns... */
  running?: boolean;
  /** Running state indicates the requested running state of the VirtualMachineInstance mutually exclusive with Running Following are allowed values: - '... */
  runStrategy?: VirtualMachineRunStrategy;
  /** InstancetypeMatcher references a instancetype that is used to fill fields in Template */
  instancetype?: InstancetypeMatcher;
  /** PreferenceMatcher references a set of preference that is used to fill fields in Template */
  preference?: PreferenceMatcher;
  /** Template is the direct specification of VirtualMachineInstance */
  template: VirtualMachineInstanceTemplateSpec;
  /** dataVolumeTemplates is a list of dataVolumes that the VirtualMachineInstance template can reference */
  dataVolumeTemplates?: DataVolumeTemplateSpec[];
  /** UpdateVolumesStrategy is the strategy to apply on volumes updates */
  updateVolumesStrategy?: UpdateVolumesStrategy;
}

export type VirtualMachineRunStrategy = '' | 'Always' | 'Halted' | 'Manual' | 'RerunOnFailure' | 'Once' | 'WaitAsReceiver';

export interface InstancetypeMatcher {
  /** Name is the name of the VirtualMachineInstancetype or VirtualMachineClusterInstancetype */
  name?: string;
  /** Kind specifies which instancetype resource is referenced */
  kind?: string;
  /** RevisionName specifies a ControllerRevision containing a specific copy of the VirtualMachineInstancetype or VirtualMachineClusterInstancetype to be... */
  revisionName?: string;
  /** InferFromVolume lists the name of a volume that should be used to infer or discover the instancetype to be used through known annotations on the un... */
  inferFromVolume?: string;
  /** InferFromVolumeFailurePolicy controls what should happen on failure when inferring the instancetype */
  inferFromVolumeFailurePolicy?: InferFromVolumeFailurePolicy;
}

export type InferFromVolumeFailurePolicy = 'Reject' | 'Ignore';

export interface PreferenceMatcher {
  /** Name is the name of the VirtualMachinePreference or VirtualMachineClusterPreference */
  name?: string;
  /** Kind specifies which preference resource is referenced */
  kind?: string;
  /** RevisionName specifies a ControllerRevision containing a specific copy of the VirtualMachinePreference or VirtualMachineClusterPreference to be used */
  revisionName?: string;
  /** InferFromVolume lists the name of a volume that should be used to infer or discover the preference to be used through known annotations on the unde... */
  inferFromVolume?: string;
  /** InferFromVolumeFailurePolicy controls what should happen on failure when preference the instancetype */
  inferFromVolumeFailurePolicy?: InferFromVolumeFailurePolicy;
}

export interface VirtualMachineInstanceTemplateSpec {
  metadata?: ObjectMeta;
  /** VirtualMachineInstance Spec contains the VirtualMachineInstance specification */
  spec?: VirtualMachineInstanceSpec;
}

export interface DataVolumeTemplateSpec {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** DataVolumeSpec contains the DataVolume specification */
  spec: DataVolumeSpec;
  /** DataVolumeTemplateDummyStatus is here simply for backwards compatibility with a previous API */
  status?: DataVolumeTemplateDummyStatus;
}

export interface DataVolumeTemplateDummyStatus {}

export type UpdateVolumesStrategy = 'Migration' | 'Replacement';

export interface VirtualMachineStatus {
  /** SnapshotInProgress is the name of the VirtualMachineSnapshot currently executing */
  snapshotInProgress?: string;
  /** RestoreInProgress is the name of the VirtualMachineRestore currently executing */
  restoreInProgress?: string;
  /** Created indicates if the virtual machine is created in the cluster */
  created?: boolean;
  /** Ready indicates if the virtual machine is running and ready */
  ready?: boolean;
  /** PrintableStatus is a human readable, high-level representation of the status of the virtual machine */
  printableStatus?: VirtualMachinePrintableStatus;
  /** Hold the state information of the VirtualMachine and its VirtualMachineInstance */
  conditions?: VirtualMachineCondition[];
  /** StateChangeRequests indicates a list of actions that should be taken on a VMI e.g */
  stateChangeRequests?: VirtualMachineStateChangeRequest[];
  /** VolumeRequests indicates a list of volumes add or remove from the VMI template and hotplug on an active running VMI */
  volumeRequests?: VirtualMachineVolumeRequest[];
  /** VolumeSnapshotStatuses indicates a list of statuses whether snapshotting is supported by each volume */
  volumeSnapshotStatuses?: VolumeSnapshotStatus[];
  /** StartFailure tracks consecutive VMI startup failures for the purposes of crash loop backoffs */
  startFailure?: VirtualMachineStartFailure;
  /** MemoryDumpRequest tracks memory dump request phase and info of getting a memory dump to the given pvc */
  memoryDumpRequest?: VirtualMachineMemoryDumpRequest;
  /** ObservedGeneration is the generation observed by the vmi when started */
  observedGeneration?: number;
  /** DesiredGeneration is the generation which is desired for the VMI */
  desiredGeneration?: number;
  /** RunStrategy tracks the last recorded RunStrategy used by the VM */
  runStrategy?: VirtualMachineRunStrategy;
  /** VolumeUpdateState contains the information about the volumes set updates related to the volumeUpdateStrategy */
  volumeUpdateState?: VolumeUpdateState;
  /** ChangedBlockTracking represents the status of the changedBlockTracking */
  changedBlockTracking?: ChangedBlockTrackingStatus;
  /** InstancetypeRef captures the state of any referenced instance type from the VirtualMachine */
  instancetypeRef?: InstancetypeStatusRef;
  /** PreferenceRef captures the state of any referenced preference from the VirtualMachine */
  preferenceRef?: InstancetypeStatusRef;
}

export type VirtualMachinePrintableStatus = 'Stopped' | 'Provisioning' | 'Starting' | 'Running' | 'Paused' | 'Stopping' | 'Terminating' | 'CrashLoopBackOff' | 'Migrating' | 'Unknown' | 'ErrorUnschedulable' | 'ErrImagePull' | 'ImagePullBackOff' | 'ErrorPvcNotFound' | 'DataVolumeError' | 'WaitingForVolumeBinding' | 'WaitingForReceiver';

export interface VirtualMachineCondition {
  type: VirtualMachineConditionType | VirtualMachineInstanceConditionType;
  status: ConditionStatus;
  lastProbeTime?: Time;
  lastTransitionTime?: Time;
  reason?: string;
  message?: string;
}

export type VirtualMachineConditionType = 'Failure' | 'Ready' | 'Paused' | 'RestartRequired' | 'ManualRecoveryRequired';

export interface VirtualMachineStateChangeRequest {
  /** Indicates the type of action that is requested */
  action: StateChangeRequestAction;
  /** Provides additional data in order to perform the Action */
  data?: Record<string, string>;
  /** Indicates the UUID of an existing Virtual Machine Instance that this change request applies to -- if applicable */
  uid?: string;
}

export type StateChangeRequestAction = 'Start' | 'Stop';

export interface VirtualMachineVolumeRequest {
  /** AddVolumeOptions when set indicates a volume should be added */
  addVolumeOptions?: AddVolumeOptions;
  /** RemoveVolumeOptions when set indicates a volume should be removed */
  removeVolumeOptions?: RemoveVolumeOptions;
}

export interface AddVolumeOptions {
  /** Name represents the name that will be used to map the disk to the corresponding volume */
  name: string;
  /** Disk represents the hotplug disk that will be plugged into the running VMI */
  disk: Disk;
  /** VolumeSource represents the source of the volume to map to the disk */
  volumeSource: HotplugVolumeSource;
  /** When present, indicates that modifications should not be persisted */
  dryRun?: string[];
}

export interface HotplugVolumeSource {
  /** PersistentVolumeClaimVolumeSource represents a reference to a PersistentVolumeClaim in the same namespace */
  persistentVolumeClaim?: PersistentVolumeClaimVolumeSource;
  /** DataVolume represents the dynamic creation a PVC for this volume as well as the process of populating that PVC with a disk image */
  dataVolume?: DataVolumeSource;
}

export interface RemoveVolumeOptions {
  /** Name represents the name that maps to both the disk and volume that should be removed */
  name: string;
  /** When present, indicates that modifications should not be persisted */
  dryRun?: string[];
}

export interface VolumeSnapshotStatus {
  /** Volume name */
  name: string;
  /** True if the volume supports snapshotting */
  enabled: boolean;
  /** Empty if snapshotting is enabled, contains reason otherwise */
  reason?: string;
}

export interface VirtualMachineStartFailure {
  consecutiveFailCount?: number;
  lastFailedVMIUID?: string;
  retryAfterTimestamp?: Time;
}

export interface VirtualMachineMemoryDumpRequest {
  /** ClaimName is the name of the pvc that will contain the memory dump */
  claimName: string;
  /** Phase represents the memory dump phase */
  phase: MemoryDumpPhase;
  /** Remove represents request of dissociating the memory dump pvc */
  remove?: boolean;
  /** StartTimestamp represents the time the memory dump started */
  startTimestamp?: Time;
  /** EndTimestamp represents the time the memory dump was completed */
  endTimestamp?: Time;
  /** FileName represents the name of the output file */
  fileName?: string;
  /** Message is a detailed message about failure of the memory dump */
  message?: string;
}

export type MemoryDumpPhase = 'Associating' | 'InProgress' | 'Unmounting' | 'Completed' | 'Dissociating' | 'Failed';

export interface VolumeUpdateState {
  /** VolumeMigrationState tracks the information related to the volume migration */
  volumeMigrationState?: VolumeMigrationState;
}

export interface VolumeMigrationState {
  /** MigratedVolumes lists the source and destination volumes during the volume migration */
  migratedVolumes?: StorageMigratedVolumeInfo[];
}

export interface InstancetypeStatusRef {
  /** Name is the name of resource */
  name?: string;
  /** Kind specifies the kind of resource */
  kind?: string;
  /** ControllerRef specifies the ControllerRevision storing a copy of the object captured when it is first seen by the VirtualMachine controller */
  controllerRevisionRef?: ControllerRevisionRef;
  /** InferFromVolume lists the name of a volume that should be used to infer or discover the resource */
  inferFromVolume?: string;
  /** InferFromVolumeFailurePolicy controls what should happen on failure when inferring the resource */
  inferFromVolumeFailurePolicy?: InferFromVolumeFailurePolicy;
}

export interface ControllerRevisionRef {
  /** Name of the ControllerRevision */
  name?: string;
}

export interface VirtualMachineList {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: VirtualMachine[];
}

export interface VirtualMachineInstanceReplicaSet {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** VirtualMachineInstance Spec contains the VirtualMachineInstance specification */
  spec: VirtualMachineInstanceReplicaSetSpec;
  /** Status is the high level overview of how the VirtualMachineInstance is doing */
  status?: VirtualMachineInstanceReplicaSetStatus;
}

export interface VirtualMachineInstanceReplicaSetSpec {
  /** Number of desired pods */
  replicas?: number;
  /** Label selector for pods */
  selector: LabelSelector;
  /** Template describes the pods that will be created */
  template: VirtualMachineInstanceTemplateSpec;
  /** Indicates that the replica set is paused */
  paused?: boolean;
}

export interface VirtualMachineInstanceReplicaSetStatus {
  /** Total number of non-terminated pods targeted by this deployment (their labels match the selector) */
  replicas?: number;
  /** The number of ready replicas for this replica set */
  readyReplicas?: number;
  conditions?: VirtualMachineInstanceReplicaSetCondition[];
  /** Canonical form of the label selector for HPA which consumes it through the scale subresource */
  labelSelector?: string;
}

export interface VirtualMachineInstanceReplicaSetCondition {
  type: VirtualMachineInstanceReplicaSetConditionType;
  status: ConditionStatus;
  lastProbeTime?: Time;
  lastTransitionTime?: Time;
  reason?: string;
  message?: string;
}

export type VirtualMachineInstanceReplicaSetConditionType = 'ReplicaFailure' | 'ReplicaPaused';

export interface VirtualMachineInstanceReplicaSetList {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: VirtualMachineInstanceReplicaSet[];
}

export interface VirtualMachineInstanceMigration {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: VirtualMachineInstanceMigrationSpec;
  status?: VirtualMachineInstanceMigrationStatus;
}

export interface VirtualMachineInstanceMigrationSpec {
  /** The name of the VMI to perform the migration on */
  vmiName?: string;
  /** AddedNodeSelector is an additional selector that can be used to complement a NodeSelector or NodeAffinity as set on the VM to restrict the set of a... */
  addedNodeSelector?: Record<string, string>;
  /** If sendTo is specified, this VirtualMachineInstanceMigration will be considered the source */
  sendTo?: VirtualMachineInstanceMigrationSource;
  /** If receieve is specified, this VirtualMachineInstanceMigration will be considered the target */
  receive?: VirtualMachineInstanceMigrationTarget;
  /** Priority of the migration */
  priority?: MigrationPriority;
}

export interface VirtualMachineInstanceMigrationSource {
  /** A unique identifier to identify this migration */
  migrationID: string;
  /** The synchronization controller URL to connect to */
  connectURL: string;
}

export interface VirtualMachineInstanceMigrationTarget {
  /** A unique identifier to identify this migration */
  migrationID: string;
}

export type MigrationPriority = 'system-critical' | 'user-triggered' | 'system-maintenance';

export interface VirtualMachineInstanceMigrationStatus {
  phase?: VirtualMachineInstanceMigrationPhase;
  conditions?: VirtualMachineInstanceMigrationCondition[];
  /** PhaseTransitionTimestamp is the timestamp of when the last phase change occurred */
  phaseTransitionTimestamps?: VirtualMachineInstanceMigrationPhaseTransitionTimestamp[];
  /** Represents the status of a live migration */
  migrationState?: VirtualMachineInstanceMigrationState;
  /** The synchronization addresses one can use to connect to the synchronization controller, includes the port, if multiple addresses are available, the... */
  synchronizationAddresses?: string[];
}

export type VirtualMachineInstanceMigrationPhase = '' | 'Pending' | 'Scheduling' | 'Scheduled' | 'PreparingTarget' | 'TargetReady' | 'Running' | 'Succeeded' | 'Failed' | 'WaitingForSync' | 'Synchronizing';

export interface VirtualMachineInstanceMigrationCondition {
  type: VirtualMachineInstanceMigrationConditionType;
  status: ConditionStatus;
  lastProbeTime?: Time;
  lastTransitionTime?: Time;
  reason?: string;
  message?: string;
}

export type VirtualMachineInstanceMigrationConditionType = 'migrationAbortRequested' | 'migrationRejectedByResourceQuota' | 'migrationBlockedByUtilityVolumes' | 'decentralizedMigrationBlocked' | 'migrationBlockedByBackup';

export interface VirtualMachineInstanceMigrationPhaseTransitionTimestamp {
  /** Phase is the status of the VirtualMachineInstanceMigrationPhase in kubernetes world */
  phase?: VirtualMachineInstanceMigrationPhase;
  /** PhaseTransitionTimestamp is the timestamp of when the phase change occurred */
  phaseTransitionTimestamp?: Time;
}

export interface VirtualMachineInstanceMigrationList {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: VirtualMachineInstanceMigration[];
}

