/**
 * Structural schema of the kubevirt.io/v1 types (VMI, VM, VMIRS and VMIM specs and statuses), one
 * node per Go struct of KubeVirt's `types.go`/`schema.go`, each checked by `tsc` against the
 * interface of the same name in `../types.ts`. CEL rules and list limits are added in
 * `./rules.ts`; the top-level objects are assembled in `./objects.ts`.
 */
import type {
  ACPI,
  AccessCredential,
  AccessCredentialSecretSource,
  AddVolumeOptions,
  BIOS,
  BlockSize,
  Bootloader,
  CDRomTarget,
  CPU,
  CPUFeature,
  CPUTopology,
  ChangedBlockTrackingStatus,
  Chassis,
  ClaimRequest,
  ClientPassthroughDevices,
  Clock,
  ClockOffsetUTC,
  CloudInitConfigDriveSource,
  CloudInitNoCloudSource,
  ConfigDriveSSHPublicKeyAccessCredentialPropagation,
  ConfigMapVolumeSource,
  ContainerDiskInfo,
  ContainerDiskSource,
  ContainerPathVolumeSource,
  ControllerRevisionRef,
  CustomBlockSize,
  DHCPOptions,
  DHCPPrivateOptions,
  DataVolumeSource,
  DataVolumeTemplateDummyStatus,
  DataVolumeTemplateSpec,
  DeprecatedInterfaceMacvtap,
  DeprecatedInterfacePasst,
  DeprecatedInterfaceSlirp,
  Devices,
  Diag288Watchdog,
  Disk,
  DiskIOThreads,
  DiskTarget,
  DomainMemoryDumpInfo,
  DomainSpec,
  DowntimeTuningOptions,
  DownwardAPIVolumeSource,
  DownwardMetrics,
  DownwardMetricsVolumeSource,
  EFI,
  EmptyDiskSource,
  EphemeralVolumeSource,
  ExperimentalMigrationOptions,
  FeatureAPIC,
  FeatureHyperv,
  FeatureKVM,
  FeatureSpinlocks,
  FeatureState,
  FeatureVendorID,
  Features,
  Filesystem,
  FilesystemVirtiofs,
  Firmware,
  GPU,
  GuestAgentPing,
  HPETTimer,
  HostDevice,
  HostDisk,
  HotplugVolumeSource,
  HotplugVolumeStatus,
  Hugepages,
  HyperVPassthrough,
  HypervTimer,
  I6300ESBWatchdog,
  InitrdInfo,
  Input,
  InstancetypeMatcher,
  InstancetypeStatusRef,
  Interface,
  InterfaceBridge,
  InterfaceMasquerade,
  InterfacePasstBinding,
  InterfaceSRIOV,
  KVMTimer,
  KernelBoot,
  KernelBootContainer,
  KernelBootStatus,
  KernelInfo,
  LaunchSecurity,
  LunTarget,
  Machine,
  Memory,
  MemoryDumpVolumeSource,
  MemoryStatus,
  MultusNetwork,
  NUMA,
  NUMAGuestMappingPassthrough,
  Network,
  NoCloudSSHPublicKeyAccessCredentialPropagation,
  PITTimer,
  PanicDevice,
  PersistentVolumeClaimInfo,
  PersistentVolumeClaimVolumeSource,
  PluginBinding,
  PodNetwork,
  Port,
  PortRange,
  PreferenceMatcher,
  Probe,
  QemuGuestAgentSSHPublicKeyAccessCredentialPropagation,
  QemuGuestAgentUserPasswordAccessCredentialPropagation,
  RTCTimer,
  Realtime,
  RemoveVolumeOptions,
  ReservedOverhead,
  ResourceRequirements,
  Rng,
  SEV,
  SEVAttestation,
  SEVPolicy,
  SEVSNP,
  SSHPublicKeyAccessCredential,
  SSHPublicKeyAccessCredentialPropagationMethod,
  SSHPublicKeyAccessCredentialSource,
  SecretVolumeSource,
  ServiceAccountVolumeSource,
  SoundDevice,
  StallDetectorOptions,
  StorageMigratedVolumeInfo,
  SyNICTimer,
  SysprepSource,
  TDX,
  TLBFlush,
  TPMDevice,
  Timer,
  TopologyHints,
  UserPasswordAccessCredential,
  UserPasswordAccessCredentialPropagationMethod,
  UserPasswordAccessCredentialSource,
  UtilityVolume,
  VGPUDisplayOptions,
  VGPUOptions,
  VMIMConfigurationOptions,
  VideoDevice,
  VirtualMachineCondition,
  VirtualMachineInstanceBackupStatus,
  VirtualMachineInstanceBackupVolumeInfo,
  VirtualMachineInstanceCondition,
  VirtualMachineInstanceGuestOSInfo,
  VirtualMachineInstanceMigrationCondition,
  VirtualMachineInstanceMigrationPhaseTransitionTimestamp,
  VirtualMachineInstanceMigrationSource,
  VirtualMachineInstanceMigrationSourceState,
  VirtualMachineInstanceMigrationSpec,
  VirtualMachineInstanceMigrationState,
  VirtualMachineInstanceMigrationStatus,
  VirtualMachineInstanceMigrationTarget,
  VirtualMachineInstanceMigrationTargetState,
  VirtualMachineInstanceNetworkInterface,
  VirtualMachineInstancePhaseTransitionTimestamp,
  VirtualMachineInstanceReplicaSetCondition,
  VirtualMachineInstanceReplicaSetSpec,
  VirtualMachineInstanceReplicaSetStatus,
  VirtualMachineInstanceResourceClaim,
  VirtualMachineInstanceSpec,
  VirtualMachineInstanceStatus,
  VirtualMachineInstanceTemplateSpec,
  VirtualMachineMemoryDumpRequest,
  VirtualMachineSpec,
  VirtualMachineStartFailure,
  VirtualMachineStateChangeRequest,
  VirtualMachineStatus,
  VirtualMachineVolumeRequest,
  Volume,
  VolumeMigrationState,
  VolumeSnapshotStatus,
  VolumeStatus,
  VolumeUpdateState,
  Watchdog
} from '../types.ts';
import {
  DiskBus,
  DiskErrorPolicy,
  DriverCache,
  DriverIO,
  EvictionStrategy,
  HostDiskType,
  IOThreadsPolicy,
  InputBus,
  InputType,
  InterfaceState,
  MigrationPriority,
  PanicDeviceModel,
  PullPolicy,
  RebootPolicy,
  RunStrategy,
  StartStrategy,
  TrayState,
  WatchdogAction,
} from '../constants.ts';
import { arr, bool, enumOf, int32, int64, map, object, quantity, str, stringMap, time } from './dsl.ts';
import {
  AffinitySchema,
  DataVolumeSpecSchema,
  DownwardAPIVolumeFileSchema,
  ExecActionSchema,
  HTTPGetActionSchema,
  K8sPersistentVolumeClaimVolumeSourceSchema,
  LabelSelectorSchema,
  LocalObjectReferenceSchema,
  TemplateObjectMetaSchema,
  PodDNSConfigSchema,
  TCPSocketActionSchema,
  TolerationSchema,
  TopologySpreadConstraintSchema
} from './kube.ts';

const values = <T extends Record<string, string>>(o: T): T[keyof T][] => Object.values(o) as T[keyof T][];

export const ResourceRequirementsSchema = object<ResourceRequirements>()({
  requests: map(quantity()),
  limits: map(quantity()),
  overcommitGuestOverhead: bool(),
});

export const CPUFeatureSchema = object<CPUFeature>()({
  name: str(),
  policy: str(),
}, { required: ['name'] });

export const NUMAGuestMappingPassthroughSchema = object<NUMAGuestMappingPassthrough>()({
});

export const NUMASchema = object<NUMA>()({
  guestMappingPassthrough: NUMAGuestMappingPassthroughSchema,
});

export const RealtimeSchema = object<Realtime>()({
  mask: str(),
});

export const CPUSchema = object<CPU>()({
  cores: int32({ minimum: 0 }),
  sockets: int32({ minimum: 0 }),
  maxSockets: int32({ minimum: 0 }),
  threads: int32({ minimum: 0 }),
  model: str(),
  features: arr(CPUFeatureSchema),
  dedicatedCpuPlacement: bool(),
  numa: NUMASchema,
  isolateEmulatorThread: bool(),
  realtime: RealtimeSchema,
});

export const HugepagesSchema = object<Hugepages>()({
  pageSize: str(),
});

export const ReservedOverheadSchema = object<ReservedOverhead>()({
  addedOverhead: quantity(),
  memLock: str(),
});

export const MemorySchema = object<Memory>()({
  hugepages: HugepagesSchema,
  guest: quantity(),
  maxGuest: quantity(),
  reservedOverhead: ReservedOverheadSchema,
});

export const MachineSchema = object<Machine>()({
  type: str(),
});

export const BIOSSchema = object<BIOS>()({
  useSerial: bool(),
});

export const EFISchema = object<EFI>()({
  secureBoot: bool(),
  persistent: bool(),
});

export const BootloaderSchema = object<Bootloader>()({
  bios: BIOSSchema,
  efi: EFISchema,
});

export const KernelBootContainerSchema = object<KernelBootContainer>()({
  image: str(),
  imagePullSecret: str(),
  imagePullPolicy: enumOf(values(PullPolicy)),
  kernelPath: str(),
  initrdPath: str(),
}, { required: ['image'] });

export const KernelBootSchema = object<KernelBoot>()({
  kernelArgs: str(),
  container: KernelBootContainerSchema,
});

export const ACPISchema = object<ACPI>()({
  slicNameRef: str(),
  msdmNameRef: str(),
});

export const FirmwareSchema = object<Firmware>()({
  uuid: str(),
  bootloader: BootloaderSchema,
  serial: str(),
  kernelBoot: KernelBootSchema,
  acpi: ACPISchema,
});

export const ClockOffsetUTCSchema = object<ClockOffsetUTC>()({
  offsetSeconds: int64(),
});

export const HPETTimerSchema = object<HPETTimer>()({
  tickPolicy: enumOf(['delay', 'catchup', 'merge', 'discard']),
  present: bool(),
});

export const KVMTimerSchema = object<KVMTimer>()({
  present: bool(),
});

export const PITTimerSchema = object<PITTimer>()({
  tickPolicy: enumOf(['delay', 'catchup', 'discard']),
  present: bool(),
});

export const RTCTimerSchema = object<RTCTimer>()({
  tickPolicy: enumOf(['delay', 'catchup']),
  present: bool(),
  track: enumOf(['guest', 'wall']),
});

export const HypervTimerSchema = object<HypervTimer>()({
  present: bool(),
});

export const TimerSchema = object<Timer>()({
  hpet: HPETTimerSchema,
  kvm: KVMTimerSchema,
  pit: PITTimerSchema,
  rtc: RTCTimerSchema,
  hyperv: HypervTimerSchema,
});

export const ClockSchema = object<Clock>()({
  utc: ClockOffsetUTCSchema,
  timezone: str(),
  timer: TimerSchema,
}, { preserveUnknownFields: true });

export const FeatureStateSchema = object<FeatureState>()({
  enabled: bool(),
});

export const FeatureAPICSchema = object<FeatureAPIC>()({
  enabled: bool(),
  endOfInterrupt: bool(),
});

export const HyperVPassthroughSchema = object<HyperVPassthrough>()({
  enabled: bool(),
});

export const FeatureSpinlocksSchema = object<FeatureSpinlocks>()({
  enabled: bool(),
  spinlocks: int32({ minimum: 0 }),
});

export const SyNICTimerSchema = object<SyNICTimer>()({
  enabled: bool(),
  direct: FeatureStateSchema,
});

export const FeatureVendorIDSchema = object<FeatureVendorID>()({
  enabled: bool(),
  vendorid: str(),
});

export const TLBFlushSchema = object<TLBFlush>()({
  enabled: bool(),
  direct: FeatureStateSchema,
  extended: FeatureStateSchema,
});

export const FeatureHypervSchema = object<FeatureHyperv>()({
  relaxed: FeatureStateSchema,
  vapic: FeatureStateSchema,
  spinlocks: FeatureSpinlocksSchema,
  vpindex: FeatureStateSchema,
  runtime: FeatureStateSchema,
  synic: FeatureStateSchema,
  synictimer: SyNICTimerSchema,
  reset: FeatureStateSchema,
  vendorid: FeatureVendorIDSchema,
  frequencies: FeatureStateSchema,
  reenlightenment: FeatureStateSchema,
  tlbflush: TLBFlushSchema,
  ipi: FeatureStateSchema,
  evmcs: FeatureStateSchema,
});

export const FeatureKVMSchema = object<FeatureKVM>()({
  hidden: bool(),
});

export const FeaturesSchema = object<Features>()({
  acpi: FeatureStateSchema,
  apic: FeatureAPICSchema,
  hypervPassthrough: HyperVPassthroughSchema,
  hyperv: FeatureHypervSchema,
  smm: FeatureStateSchema,
  kvm: FeatureKVMSchema,
  pvspinlock: FeatureStateSchema,
});

export const DiskTargetSchema = object<DiskTarget>()({
  bus: enumOf(values(DiskBus)),
  readonly: bool(),
  pciAddress: str(),
});

export const LunTargetSchema = object<LunTarget>()({
  bus: enumOf(values(DiskBus)),
  readonly: bool(),
  reservation: bool(),
});

export const CDRomTargetSchema = object<CDRomTarget>()({
  bus: enumOf(values(DiskBus)),
  readonly: bool(),
  tray: enumOf(values(TrayState)),
});

export const CustomBlockSizeSchema = object<CustomBlockSize>()({
  logical: int64({ minimum: 0 }),
  physical: int64({ minimum: 0 }),
  discardGranularity: int64({ minimum: 0 }),
});

export const BlockSizeSchema = object<BlockSize>()({
  custom: CustomBlockSizeSchema,
  matchVolume: FeatureStateSchema,
});

export const DiskSchema = object<Disk>()({
  name: str(),
  disk: DiskTargetSchema,
  lun: LunTargetSchema,
  cdrom: CDRomTargetSchema,
  bootOrder: int64({ minimum: 0 }),
  serial: str(),
  dedicatedIOThread: bool(),
  cache: enumOf(values(DriverCache)),
  io: enumOf(values(DriverIO)),
  tag: str(),
  blockSize: BlockSizeSchema,
  shareable: bool(),
  errorPolicy: enumOf(values(DiskErrorPolicy)),
  changedBlockTracking: bool(),
}, { required: ['name'] });

export const I6300ESBWatchdogSchema = object<I6300ESBWatchdog>()({
  action: enumOf(values(WatchdogAction)),
});

export const Diag288WatchdogSchema = object<Diag288Watchdog>()({
  action: enumOf(values(WatchdogAction)),
});

export const WatchdogSchema = object<Watchdog>()({
  name: str(),
  i6300esb: I6300ESBWatchdogSchema,
  diag288: Diag288WatchdogSchema,
}, { required: ['name'] });

export const InterfaceBridgeSchema = object<InterfaceBridge>()({
});

export const DeprecatedInterfaceSlirpSchema = object<DeprecatedInterfaceSlirp>()({
});

export const InterfaceMasqueradeSchema = object<InterfaceMasquerade>()({
});

export const InterfaceSRIOVSchema = object<InterfaceSRIOV>()({
});

export const DeprecatedInterfaceMacvtapSchema = object<DeprecatedInterfaceMacvtap>()({
});

export const DeprecatedInterfacePasstSchema = object<DeprecatedInterfacePasst>()({
});

export const InterfacePasstBindingSchema = object<InterfacePasstBinding>()({
});

export const PluginBindingSchema = object<PluginBinding>()({
  name: str(),
}, { required: ['name'] });

export const PortSchema = object<Port>()({
  name: str(),
  protocol: str(),
  port: int32(),
}, { required: ['port'] });

export const PortRangeSchema = object<PortRange>()({
  protocol: str(),
  start: int32(),
  end: int32(),
}, { required: ['protocol', 'start', 'end'] });

export const DHCPPrivateOptionsSchema = object<DHCPPrivateOptions>()({
  option: int64(),
  value: str(),
}, { required: ['option', 'value'] });

export const DHCPOptionsSchema = object<DHCPOptions>()({
  bootFileName: str(),
  tftpServerName: str(),
  ntpServers: arr(str()),
  privateOptions: arr(DHCPPrivateOptionsSchema),
});

export const InterfaceSchema = object<Interface>()({
  name: str(),
  model: str(),
  bridge: InterfaceBridgeSchema,
  slirp: DeprecatedInterfaceSlirpSchema,
  masquerade: InterfaceMasqueradeSchema,
  sriov: InterfaceSRIOVSchema,
  macvtap: DeprecatedInterfaceMacvtapSchema,
  passt: DeprecatedInterfacePasstSchema,
  passtBinding: InterfacePasstBindingSchema,
  binding: PluginBindingSchema,
  ports: arr(PortSchema),
  portRanges: arr(PortRangeSchema),
  macAddress: str(),
  bootOrder: int64({ minimum: 0 }),
  pciAddress: str(),
  dhcpOptions: DHCPOptionsSchema,
  tag: str(),
  acpiIndex: int64(),
  state: enumOf(values(InterfaceState)),
}, { required: ['name'] });

export const InputSchema = object<Input>()({
  bus: enumOf(values(InputBus)),
  type: enumOf(values(InputType)),
  name: str(),
}, { required: ['name'] });

export const RngSchema = object<Rng>()({
});

export const VGPUDisplayOptionsSchema = object<VGPUDisplayOptions>()({
  enabled: bool(),
  ramFB: FeatureStateSchema,
});

export const VGPUOptionsSchema = object<VGPUOptions>()({
  display: VGPUDisplayOptionsSchema,
});

export const GPUSchema = object<GPU>()({
  name: str(),
  deviceName: str(),
  claimName: str(),
  requestName: str(),
  virtualGPUOptions: VGPUOptionsSchema,
  tag: str(),
}, { required: ['name'] });

export const DownwardMetricsSchema = object<DownwardMetrics>()({
});

export const PanicDeviceSchema = object<PanicDevice>()({
  model: enumOf(values(PanicDeviceModel)),
});

export const FilesystemVirtiofsSchema = object<FilesystemVirtiofs>()({
});

export const FilesystemSchema = object<Filesystem>()({
  name: str(),
  virtiofs: FilesystemVirtiofsSchema,
}, { required: ['name', 'virtiofs'] });

export const HostDeviceSchema = object<HostDevice>()({
  name: str(),
  deviceName: str(),
  claimName: str(),
  requestName: str(),
  tag: str(),
}, { required: ['name'] });

export const ClientPassthroughDevicesSchema = object<ClientPassthroughDevices>()({
});

export const SoundDeviceSchema = object<SoundDevice>()({
  name: str(),
  model: str(),
}, { required: ['name'] });

export const TPMDeviceSchema = object<TPMDevice>()({
  enabled: bool(),
  persistent: bool(),
});

export const VideoDeviceSchema = object<VideoDevice>()({
  type: str(),
});

export const DevicesSchema = object<Devices>()({
  useVirtioTransitional: bool(),
  disableHotplug: bool(),
  disks: arr(DiskSchema),
  watchdog: WatchdogSchema,
  interfaces: arr(InterfaceSchema),
  inputs: arr(InputSchema),
  autoattachPodInterface: bool(),
  autoattachGraphicsDevice: bool(),
  autoattachSerialConsole: bool(),
  logSerialConsole: bool(),
  autoattachMemBalloon: bool(),
  autoattachInputDevice: bool(),
  autoattachVSOCK: bool(),
  rng: RngSchema,
  blockMultiQueue: bool(),
  networkInterfaceMultiqueue: bool(),
  gpus: arr(GPUSchema),
  downwardMetrics: DownwardMetricsSchema,
  panicDevices: arr(PanicDeviceSchema),
  filesystems: arr(FilesystemSchema),
  hostDevices: arr(HostDeviceSchema),
  clientPassthrough: ClientPassthroughDevicesSchema,
  sound: SoundDeviceSchema,
  tpm: TPMDeviceSchema,
  video: VideoDeviceSchema,
});

export const DiskIOThreadsSchema = object<DiskIOThreads>()({
  supplementalPoolThreadCount: int32({ minimum: 0 }),
});

export const ChassisSchema = object<Chassis>()({
  manufacturer: str(),
  version: str(),
  serial: str(),
  asset: str(),
  sku: str(),
});

export const SEVPolicySchema = object<SEVPolicy>()({
  encryptedState: bool(),
});

export const SEVAttestationSchema = object<SEVAttestation>()({
});

export const SEVSchema = object<SEV>()({
  policy: SEVPolicySchema,
  attestation: SEVAttestationSchema,
  session: str(),
  dhCert: str(),
});

export const SEVSNPSchema = object<SEVSNP>()({
});

export const TDXSchema = object<TDX>()({
});

export const LaunchSecuritySchema = object<LaunchSecurity>()({
  sev: SEVSchema,
  snp: SEVSNPSchema,
  tdx: TDXSchema,
});

export const DomainSpecSchema = object<DomainSpec>()({
  resources: ResourceRequirementsSchema,
  cpu: CPUSchema,
  memory: MemorySchema,
  machine: MachineSchema,
  firmware: FirmwareSchema,
  clock: ClockSchema,
  features: FeaturesSchema,
  devices: DevicesSchema,
  ioThreadsPolicy: enumOf(values(IOThreadsPolicy)),
  ioThreads: DiskIOThreadsSchema,
  chassis: ChassisSchema,
  launchSecurity: LaunchSecuritySchema,
  rebootPolicy: enumOf(values(RebootPolicy)),
}, { required: ['devices'] });

export const HostDiskSchema = object<HostDisk>()({
  path: str(),
  type: enumOf(values(HostDiskType)),
  capacity: quantity(),
  shared: bool(),
}, { required: ['path', 'type'] });

export const PersistentVolumeClaimVolumeSourceSchema = object<PersistentVolumeClaimVolumeSource>()({
  claimName: str(),
  readOnly: bool(),
  hotpluggable: bool(),
}, { required: ['claimName'] });

export const CloudInitNoCloudSourceSchema = object<CloudInitNoCloudSource>()({
  secretRef: LocalObjectReferenceSchema,
  userDataBase64: str(),
  userData: str(),
  networkDataSecretRef: LocalObjectReferenceSchema,
  networkDataBase64: str(),
  networkData: str(),
});

export const CloudInitConfigDriveSourceSchema = object<CloudInitConfigDriveSource>()({
  secretRef: LocalObjectReferenceSchema,
  userDataBase64: str(),
  userData: str(),
  networkDataSecretRef: LocalObjectReferenceSchema,
  networkDataBase64: str(),
  networkData: str(),
});

export const SysprepSourceSchema = object<SysprepSource>()({
  secret: LocalObjectReferenceSchema,
  configMap: LocalObjectReferenceSchema,
});

export const ContainerDiskSourceSchema = object<ContainerDiskSource>()({
  image: str(),
  imagePullSecret: str(),
  path: str(),
  imagePullPolicy: enumOf(values(PullPolicy)),
}, { required: ['image'] });

export const EphemeralVolumeSourceSchema = object<EphemeralVolumeSource>()({
  persistentVolumeClaim: K8sPersistentVolumeClaimVolumeSourceSchema,
});

export const EmptyDiskSourceSchema = object<EmptyDiskSource>()({
  capacity: quantity(),
}, { required: ['capacity'] });

export const DataVolumeSourceSchema = object<DataVolumeSource>()({
  name: str(),
  hotpluggable: bool(),
}, { required: ['name'] });

export const ConfigMapVolumeSourceSchema = object<ConfigMapVolumeSource>()({
  name: str(),
  optional: bool(),
  volumeLabel: str(),
});

export const SecretVolumeSourceSchema = object<SecretVolumeSource>()({
  secretName: str(),
  optional: bool(),
  volumeLabel: str(),
});

export const DownwardAPIVolumeSourceSchema = object<DownwardAPIVolumeSource>()({
  fields: arr(DownwardAPIVolumeFileSchema),
  volumeLabel: str(),
});

export const ServiceAccountVolumeSourceSchema = object<ServiceAccountVolumeSource>()({
  serviceAccountName: str(),
});

export const DownwardMetricsVolumeSourceSchema = object<DownwardMetricsVolumeSource>()({
});

export const MemoryDumpVolumeSourceSchema = object<MemoryDumpVolumeSource>()({
  claimName: str(),
  readOnly: bool(),
  hotpluggable: bool(),
}, { required: ['claimName', 'claimName'] });

export const ContainerPathVolumeSourceSchema = object<ContainerPathVolumeSource>()({
  path: str(),
  readOnly: bool(),
}, { required: ['path'] });

export const VolumeSchema = object<Volume>()({
  name: str(),
  hostDisk: HostDiskSchema,
  persistentVolumeClaim: PersistentVolumeClaimVolumeSourceSchema,
  cloudInitNoCloud: CloudInitNoCloudSourceSchema,
  cloudInitConfigDrive: CloudInitConfigDriveSourceSchema,
  sysprep: SysprepSourceSchema,
  containerDisk: ContainerDiskSourceSchema,
  ephemeral: EphemeralVolumeSourceSchema,
  emptyDisk: EmptyDiskSourceSchema,
  dataVolume: DataVolumeSourceSchema,
  configMap: ConfigMapVolumeSourceSchema,
  secret: SecretVolumeSourceSchema,
  downwardAPI: DownwardAPIVolumeSourceSchema,
  serviceAccount: ServiceAccountVolumeSourceSchema,
  downwardMetrics: DownwardMetricsVolumeSourceSchema,
  memoryDump: MemoryDumpVolumeSourceSchema,
  containerPath: ContainerPathVolumeSourceSchema,
}, { required: ['name'] });

export const GuestAgentPingSchema = object<GuestAgentPing>()({
});

export const ProbeSchema = object<Probe>()({
  exec: ExecActionSchema,
  guestAgentPing: GuestAgentPingSchema,
  httpGet: HTTPGetActionSchema,
  tcpSocket: TCPSocketActionSchema,
  initialDelaySeconds: int32(),
  timeoutSeconds: int32(),
  periodSeconds: int32(),
  successThreshold: int32(),
  failureThreshold: int32(),
});

export const PodNetworkSchema = object<PodNetwork>()({
  vmNetworkCIDR: str(),
  vmIPv6NetworkCIDR: str(),
});

export const MultusNetworkSchema = object<MultusNetwork>()({
  networkName: str(),
  default: bool(),
}, { required: ['networkName'] });

export const ClaimRequestSchema = object<ClaimRequest>()({
  claimName: str(),
  requestName: str(),
});

export const NetworkSchema = object<Network>()({
  name: str(),
  pod: PodNetworkSchema,
  multus: MultusNetworkSchema,
  resourceClaim: ClaimRequestSchema,
}, { required: ['name'] });

export const AccessCredentialSecretSourceSchema = object<AccessCredentialSecretSource>()({
  secretName: str(),
}, { required: ['secretName'] });

export const SSHPublicKeyAccessCredentialSourceSchema = object<SSHPublicKeyAccessCredentialSource>()({
  secret: AccessCredentialSecretSourceSchema,
});

export const ConfigDriveSSHPublicKeyAccessCredentialPropagationSchema = object<ConfigDriveSSHPublicKeyAccessCredentialPropagation>()({
});

export const NoCloudSSHPublicKeyAccessCredentialPropagationSchema = object<NoCloudSSHPublicKeyAccessCredentialPropagation>()({
});

export const QemuGuestAgentSSHPublicKeyAccessCredentialPropagationSchema = object<QemuGuestAgentSSHPublicKeyAccessCredentialPropagation>()({
  users: arr(str()),
}, { required: ['users'] });

export const SSHPublicKeyAccessCredentialPropagationMethodSchema = object<SSHPublicKeyAccessCredentialPropagationMethod>()({
  configDrive: ConfigDriveSSHPublicKeyAccessCredentialPropagationSchema,
  noCloud: NoCloudSSHPublicKeyAccessCredentialPropagationSchema,
  qemuGuestAgent: QemuGuestAgentSSHPublicKeyAccessCredentialPropagationSchema,
});

export const SSHPublicKeyAccessCredentialSchema = object<SSHPublicKeyAccessCredential>()({
  source: SSHPublicKeyAccessCredentialSourceSchema,
  propagationMethod: SSHPublicKeyAccessCredentialPropagationMethodSchema,
}, { required: ['source', 'propagationMethod'] });

export const UserPasswordAccessCredentialSourceSchema = object<UserPasswordAccessCredentialSource>()({
  secret: AccessCredentialSecretSourceSchema,
});

export const QemuGuestAgentUserPasswordAccessCredentialPropagationSchema = object<QemuGuestAgentUserPasswordAccessCredentialPropagation>()({
});

export const UserPasswordAccessCredentialPropagationMethodSchema = object<UserPasswordAccessCredentialPropagationMethod>()({
  qemuGuestAgent: QemuGuestAgentUserPasswordAccessCredentialPropagationSchema,
});

export const UserPasswordAccessCredentialSchema = object<UserPasswordAccessCredential>()({
  source: UserPasswordAccessCredentialSourceSchema,
  propagationMethod: UserPasswordAccessCredentialPropagationMethodSchema,
}, { required: ['source', 'propagationMethod'] });

export const AccessCredentialSchema = object<AccessCredential>()({
  sshPublicKey: SSHPublicKeyAccessCredentialSchema,
  userPassword: UserPasswordAccessCredentialSchema,
});

export const VirtualMachineInstanceResourceClaimSchema = object<VirtualMachineInstanceResourceClaim>()({
  name: str(),
  resourceClaimName: str(),
  resourceClaimTemplateName: str(),
}, { required: ['name'] });

export const UtilityVolumeSchema = object<UtilityVolume>()({
  name: str(),
  claimName: str(),
  readOnly: bool(),
  type: enumOf(['MemoryDump', 'Backup']),
}, { required: ['name', 'claimName'] });

export const VirtualMachineInstanceSpecSchema = object<VirtualMachineInstanceSpec>()({
  priorityClassName: str(),
  domain: DomainSpecSchema,
  nodeSelector: stringMap(),
  affinity: AffinitySchema,
  schedulerName: str(),
  serviceAccountName: str(),
  tolerations: arr(TolerationSchema),
  topologySpreadConstraints: arr(TopologySpreadConstraintSchema),
  evictionStrategy: enumOf(values(EvictionStrategy)),
  startStrategy: enumOf(values(StartStrategy)),
  terminationGracePeriodSeconds: int64(),
  volumes: arr(VolumeSchema),
  livenessProbe: ProbeSchema,
  readinessProbe: ProbeSchema,
  hostname: str(),
  subdomain: str(),
  networks: arr(NetworkSchema),
  dnsPolicy: enumOf(['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']),
  dnsConfig: PodDNSConfigSchema,
  accessCredentials: arr(AccessCredentialSchema),
  architecture: str(),
  resourceClaims: arr(VirtualMachineInstanceResourceClaimSchema),
  utilityVolumes: arr(UtilityVolumeSchema),
}, { required: ['domain'] });

export const VirtualMachineInstanceConditionSchema = object<VirtualMachineInstanceCondition>()({
  type: str(),
  status: str(),
  lastProbeTime: time(),
  lastTransitionTime: time(),
  reason: str(),
  message: str(),
}, { required: ['type', 'status'] });

export const VirtualMachineInstancePhaseTransitionTimestampSchema = object<VirtualMachineInstancePhaseTransitionTimestamp>()({
  phase: str(),
  phaseTransitionTimestamp: time(),
});

export const VirtualMachineInstanceNetworkInterfaceSchema = object<VirtualMachineInstanceNetworkInterface>()({
  ipAddress: str(),
  mac: str(),
  name: str(),
  ipAddresses: arr(str()),
  podInterfaceName: str(),
  interfaceName: str(),
  infoSource: str(),
  queueCount: int32(),
  linkState: str(),
});

export const VirtualMachineInstanceGuestOSInfoSchema = object<VirtualMachineInstanceGuestOSInfo>()({
  name: str(),
  kernelRelease: str(),
  version: str(),
  prettyName: str(),
  versionId: str(),
  kernelVersion: str(),
  machine: str(),
  id: str(),
});

export const StallDetectorOptionsSchema = object<StallDetectorOptions>()({
  stallMargin: int64(),
  ewmaAlpha: quantity(),
  stallProgressTimeout: int64(),
  switchoverTimeout: int64(),
  precopyPossibleFactor: quantity(),
  patienceWindowDecayFactor: quantity(),
  searchLocalMinima: bool(),
  completionTimeoutFactor: quantity(),
});

export const DowntimeTuningOptionsSchema = object<DowntimeTuningOptions>()({
  initialMs: int64(),
  steps: int32(),
  startAfterIteration: int64(),
  cooldownSeconds: int32(),
});

export const ExperimentalMigrationOptionsSchema = object<ExperimentalMigrationOptions>()({
  stallDetector: StallDetectorOptionsSchema,
  downtimeTuning: DowntimeTuningOptionsSchema,
  compression: str(),
});

export const VMIMConfigurationOptionsSchema = object<VMIMConfigurationOptions>()({
  nodeDrainTaintKey: str(),
  parallelOutboundMigrationsPerNode: int32({ minimum: 0 }),
  parallelMigrationsPerCluster: int32({ minimum: 0 }),
  allowAutoConverge: bool(),
  bandwidthPerMigration: quantity(),
  completionTimeoutPerGiB: int64(),
  maxDowntimeMs: int64({ minimum: 0 }),
  progressTimeout: int64(),
  utilityVolumesTimeout: int64(),
  unsafeMigrationOverride: bool(),
  allowPostCopy: bool(),
  allowWorkloadDisruption: bool(),
  disableTLS: bool(),
  network: str(),
  matchSELinuxLevelOnMigration: bool(),
  experimental: ExperimentalMigrationOptionsSchema,
});

export const VirtualMachineInstanceMigrationSourceStateSchema = object<VirtualMachineInstanceMigrationSourceState>()({
  node: str(),
  pod: str(),
  migrationUID: str(),
  domainName: str(),
  domainNamespace: str(),
  syncAddress: str(),
  persistentStatePVCName: str(),
  selinuxContext: str(),
  virtualMachineInstanceUID: str(),
  nodeSelectors: stringMap(),
});

export const VirtualMachineInstanceMigrationTargetStateSchema = object<VirtualMachineInstanceMigrationTargetState>()({
  node: str(),
  pod: str(),
  migrationUID: str(),
  domainName: str(),
  domainNamespace: str(),
  syncAddress: str(),
  persistentStatePVCName: str(),
  selinuxContext: str(),
  virtualMachineInstanceUID: str(),
  domainReadyTimestamp: time(),
  domainDetected: bool(),
  nodeAddress: str(),
  directMigrationNodePorts: map(int64()),
  attachmentPodUID: str(),
  cpuSet: arr(int64()),
  nodeTopology: str(),
});

export const VirtualMachineInstanceMigrationStateSchema = object<VirtualMachineInstanceMigrationState>()({
  startTimestamp: time(),
  endTimestamp: time(),
  targetNodeDomainReadyTimestamp: time(),
  targetNodeDomainDetected: bool(),
  targetNodeAddress: str(),
  targetDirectMigrationNodePorts: map(int64()),
  targetNode: str(),
  targetPod: str(),
  targetAttachmentPodUID: str(),
  sourceNode: str(),
  sourcePod: str(),
  completed: bool(),
  failed: bool(),
  abortRequested: bool(),
  abortStatus: str(),
  failureReason: str(),
  migrationUid: str(),
  mode: str(),
  migrationPolicyName: str(),
  migrationConfiguration: VMIMConfigurationOptionsSchema,
  targetCPUSet: arr(int64()),
  targetNodeTopology: str(),
  sourcePersistentStatePVCName: str(),
  targetPersistentStatePVCName: str(),
  sourceState: VirtualMachineInstanceMigrationSourceStateSchema,
  targetState: VirtualMachineInstanceMigrationTargetStateSchema,
  migrationNetworkType: str(),
  targetMemoryOverhead: quantity(),
});

export const PersistentVolumeClaimInfoSchema = object<PersistentVolumeClaimInfo>()({
  claimName: str(),
  accessModes: arr(str()),
  volumeMode: str(),
  capacity: map(quantity()),
  requests: map(quantity()),
  preallocated: bool(),
  filesystemOverhead: str(),
});

export const HotplugVolumeStatusSchema = object<HotplugVolumeStatus>()({
  attachPodName: str(),
  attachPodUID: str(),
});

export const DomainMemoryDumpInfoSchema = object<DomainMemoryDumpInfo>()({
  startTimestamp: time(),
  endTimestamp: time(),
  claimName: str(),
  targetFileName: str(),
});

export const ContainerDiskInfoSchema = object<ContainerDiskInfo>()({
  checksum: int32({ minimum: 0 }),
});

export const VolumeStatusSchema = object<VolumeStatus>()({
  name: str(),
  target: str(),
  phase: str(),
  reason: str(),
  message: str(),
  persistentVolumeClaimInfo: PersistentVolumeClaimInfoSchema,
  hotplugVolume: HotplugVolumeStatusSchema,
  size: int64(),
  memoryDumpVolume: DomainMemoryDumpInfoSchema,
  containerDiskVolume: ContainerDiskInfoSchema,
}, { required: ['name', 'target'] });

export const KernelInfoSchema = object<KernelInfo>()({
  checksum: int32({ minimum: 0 }),
});

export const InitrdInfoSchema = object<InitrdInfo>()({
  checksum: int32({ minimum: 0 }),
});

export const KernelBootStatusSchema = object<KernelBootStatus>()({
  kernelInfo: KernelInfoSchema,
  initrdInfo: InitrdInfoSchema,
});

export const TopologyHintsSchema = object<TopologyHints>()({
  tscFrequency: int64(),
});

export const CPUTopologySchema = object<CPUTopology>()({
  cores: int32({ minimum: 0 }),
  sockets: int32({ minimum: 0 }),
  threads: int32({ minimum: 0 }),
});

export const MemoryStatusSchema = object<MemoryStatus>()({
  guestAtBoot: quantity(),
  guestCurrent: quantity(),
  guestRequested: quantity(),
  memoryOverhead: quantity(),
});

export const StorageMigratedVolumeInfoSchema = object<StorageMigratedVolumeInfo>()({
  volumeName: str(),
  sourcePVCInfo: PersistentVolumeClaimInfoSchema,
  destinationPVCInfo: PersistentVolumeClaimInfoSchema,
}, { required: ['volumeName'] });

export const VirtualMachineInstanceBackupVolumeInfoSchema = object<VirtualMachineInstanceBackupVolumeInfo>()({
  volumeName: str(),
}, { required: ['volumeName'] });

export const VirtualMachineInstanceBackupStatusSchema = object<VirtualMachineInstanceBackupStatus>()({
  backupName: str(),
  startTimestamp: time(),
  endTimestamp: time(),
  completed: bool(),
  failed: bool(),
  backupMsg: str(),
  checkpointName: str(),
  volumes: arr(VirtualMachineInstanceBackupVolumeInfoSchema),
  quiesceStatus: str(),
});

export const ChangedBlockTrackingStatusSchema = object<ChangedBlockTrackingStatus>()({
  state: str(),
  backupStatus: VirtualMachineInstanceBackupStatusSchema,
}, { required: ['state'] });

export const VirtualMachineInstanceStatusSchema = object<VirtualMachineInstanceStatus>()({
  nodeName: str(),
  reason: str(),
  conditions: arr(VirtualMachineInstanceConditionSchema),
  phase: str(),
  phaseTransitionTimestamps: arr(VirtualMachineInstancePhaseTransitionTimestampSchema),
  interfaces: arr(VirtualMachineInstanceNetworkInterfaceSchema),
  guestOSInfo: VirtualMachineInstanceGuestOSInfoSchema,
  migrationState: VirtualMachineInstanceMigrationStateSchema,
  migrationMethod: str(),
  migrationTransport: str(),
  qosClass: str(),
  launcherContainerImageVersion: str(),
  evacuationNodeName: str(),
  activePods: stringMap(),
  volumeStatus: arr(VolumeStatusSchema),
  kernelBootStatus: KernelBootStatusSchema,
  fsFreezeStatus: str(),
  topologyHints: TopologyHintsSchema,
  virtualMachineRevisionName: str(),
  runtimeUser: int64({ minimum: 0 }),
  VSOCKCID: int32({ minimum: 0 }),
  selinuxContext: str(),
  machine: MachineSchema,
  currentCPUTopology: CPUTopologySchema,
  memory: MemoryStatusSchema,
  migratedVolumes: arr(StorageMigratedVolumeInfoSchema),
  changedBlockTracking: ChangedBlockTrackingStatusSchema,
});

export const InstancetypeMatcherSchema = object<InstancetypeMatcher>()({
  name: str(),
  kind: str(),
  revisionName: str(),
  inferFromVolume: str(),
  inferFromVolumeFailurePolicy: enumOf(['Reject', 'Ignore']),
});

export const PreferenceMatcherSchema = object<PreferenceMatcher>()({
  name: str(),
  kind: str(),
  revisionName: str(),
  inferFromVolume: str(),
  inferFromVolumeFailurePolicy: enumOf(['Reject', 'Ignore']),
});

export const VirtualMachineInstanceTemplateSpecSchema = object<VirtualMachineInstanceTemplateSpec>()({
  metadata: TemplateObjectMetaSchema,
  spec: VirtualMachineInstanceSpecSchema,
});

export const DataVolumeTemplateDummyStatusSchema = object<DataVolumeTemplateDummyStatus>()({
});

export const DataVolumeTemplateSpecSchema = object<DataVolumeTemplateSpec>()({
  apiVersion: str(),
  kind: str(),
  metadata: TemplateObjectMetaSchema,
  spec: DataVolumeSpecSchema,
  status: DataVolumeTemplateDummyStatusSchema,
}, { required: ['spec'] });

export const VirtualMachineSpecSchema = object<VirtualMachineSpec>()({
  running: bool(),
  runStrategy: enumOf(values(RunStrategy).filter((s) => s !== '')),
  instancetype: InstancetypeMatcherSchema,
  preference: PreferenceMatcherSchema,
  template: VirtualMachineInstanceTemplateSpecSchema,
  dataVolumeTemplates: arr(DataVolumeTemplateSpecSchema),
  updateVolumesStrategy: enumOf(['Migration', 'Replacement']),
}, { required: ['template'] });

export const VirtualMachineConditionSchema = object<VirtualMachineCondition>()({
  type: str(),
  status: str(),
  lastProbeTime: time(),
  lastTransitionTime: time(),
  reason: str(),
  message: str(),
}, { required: ['type', 'status'] });

export const VirtualMachineStateChangeRequestSchema = object<VirtualMachineStateChangeRequest>()({
  action: str(),
  data: stringMap(),
  uid: str(),
}, { required: ['action'] });

export const HotplugVolumeSourceSchema = object<HotplugVolumeSource>()({
  persistentVolumeClaim: PersistentVolumeClaimVolumeSourceSchema,
  dataVolume: DataVolumeSourceSchema,
});

export const AddVolumeOptionsSchema = object<AddVolumeOptions>()({
  name: str(),
  disk: DiskSchema,
  volumeSource: HotplugVolumeSourceSchema,
  dryRun: arr(str()),
}, { required: ['name', 'disk', 'volumeSource'] });

export const RemoveVolumeOptionsSchema = object<RemoveVolumeOptions>()({
  name: str(),
  dryRun: arr(str()),
}, { required: ['name'] });

export const VirtualMachineVolumeRequestSchema = object<VirtualMachineVolumeRequest>()({
  addVolumeOptions: AddVolumeOptionsSchema,
  removeVolumeOptions: RemoveVolumeOptionsSchema,
});

export const VolumeSnapshotStatusSchema = object<VolumeSnapshotStatus>()({
  name: str(),
  enabled: bool(),
  reason: str(),
}, { required: ['name', 'enabled'] });

export const VirtualMachineStartFailureSchema = object<VirtualMachineStartFailure>()({
  consecutiveFailCount: int64(),
  lastFailedVMIUID: str(),
  retryAfterTimestamp: time(),
});

export const VirtualMachineMemoryDumpRequestSchema = object<VirtualMachineMemoryDumpRequest>()({
  claimName: str(),
  phase: str(),
  remove: bool(),
  startTimestamp: time(),
  endTimestamp: time(),
  fileName: str(),
  message: str(),
}, { required: ['claimName', 'phase'] });

export const VolumeMigrationStateSchema = object<VolumeMigrationState>()({
  migratedVolumes: arr(StorageMigratedVolumeInfoSchema),
});

export const VolumeUpdateStateSchema = object<VolumeUpdateState>()({
  volumeMigrationState: VolumeMigrationStateSchema,
});

export const ControllerRevisionRefSchema = object<ControllerRevisionRef>()({
  name: str(),
});

export const InstancetypeStatusRefSchema = object<InstancetypeStatusRef>()({
  name: str(),
  kind: str(),
  controllerRevisionRef: ControllerRevisionRefSchema,
  inferFromVolume: str(),
  inferFromVolumeFailurePolicy: enumOf(['Reject', 'Ignore']),
});

export const VirtualMachineStatusSchema = object<VirtualMachineStatus>()({
  snapshotInProgress: str(),
  restoreInProgress: str(),
  created: bool(),
  ready: bool(),
  printableStatus: str(),
  conditions: arr(VirtualMachineConditionSchema),
  stateChangeRequests: arr(VirtualMachineStateChangeRequestSchema),
  volumeRequests: arr(VirtualMachineVolumeRequestSchema),
  volumeSnapshotStatuses: arr(VolumeSnapshotStatusSchema),
  startFailure: VirtualMachineStartFailureSchema,
  memoryDumpRequest: VirtualMachineMemoryDumpRequestSchema,
  observedGeneration: int64(),
  desiredGeneration: int64(),
  runStrategy: enumOf(values(RunStrategy).filter((s) => s !== '')),
  volumeUpdateState: VolumeUpdateStateSchema,
  changedBlockTracking: ChangedBlockTrackingStatusSchema,
  instancetypeRef: InstancetypeStatusRefSchema,
  preferenceRef: InstancetypeStatusRefSchema,
});

export const VirtualMachineInstanceReplicaSetSpecSchema = object<VirtualMachineInstanceReplicaSetSpec>()({
  replicas: int32(),
  selector: LabelSelectorSchema,
  template: VirtualMachineInstanceTemplateSpecSchema,
  paused: bool(),
}, { required: ['selector', 'template'] });

export const VirtualMachineInstanceReplicaSetConditionSchema = object<VirtualMachineInstanceReplicaSetCondition>()({
  type: str(),
  status: str(),
  lastProbeTime: time(),
  lastTransitionTime: time(),
  reason: str(),
  message: str(),
}, { required: ['type', 'status'] });

export const VirtualMachineInstanceReplicaSetStatusSchema = object<VirtualMachineInstanceReplicaSetStatus>()({
  replicas: int32(),
  readyReplicas: int32(),
  conditions: arr(VirtualMachineInstanceReplicaSetConditionSchema),
  labelSelector: str(),
});

export const VirtualMachineInstanceMigrationSourceSchema = object<VirtualMachineInstanceMigrationSource>()({
  migrationID: str(),
  connectURL: str(),
}, { required: ['migrationID', 'connectURL'] });

export const VirtualMachineInstanceMigrationTargetSchema = object<VirtualMachineInstanceMigrationTarget>()({
  migrationID: str(),
}, { required: ['migrationID'] });

export const VirtualMachineInstanceMigrationSpecSchema = object<VirtualMachineInstanceMigrationSpec>()({
  vmiName: str(),
  addedNodeSelector: stringMap(),
  sendTo: VirtualMachineInstanceMigrationSourceSchema,
  receive: VirtualMachineInstanceMigrationTargetSchema,
  priority: enumOf(values(MigrationPriority)),
});

export const VirtualMachineInstanceMigrationConditionSchema = object<VirtualMachineInstanceMigrationCondition>()({
  type: str(),
  status: str(),
  lastProbeTime: time(),
  lastTransitionTime: time(),
  reason: str(),
  message: str(),
}, { required: ['type', 'status'] });

export const VirtualMachineInstanceMigrationPhaseTransitionTimestampSchema = object<VirtualMachineInstanceMigrationPhaseTransitionTimestamp>()({
  phase: str(),
  phaseTransitionTimestamp: time(),
});

export const VirtualMachineInstanceMigrationStatusSchema = object<VirtualMachineInstanceMigrationStatus>()({
  phase: str(),
  conditions: arr(VirtualMachineInstanceMigrationConditionSchema),
  phaseTransitionTimestamps: arr(VirtualMachineInstanceMigrationPhaseTransitionTimestampSchema),
  migrationState: VirtualMachineInstanceMigrationStateSchema,
  synchronizationAddresses: arr(str()),
});

