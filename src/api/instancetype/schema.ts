/**
 * Structural schema of instancetype.kubevirt.io/v1beta1 (one node per Go struct of KubeVirt's
 * `v1beta1/types.go`, checked by `tsc` against `./types.ts`), reusing the kubevirt.io/v1 nodes the
 * types embed. As KubeVirt's CRDs (`validations_generated.go`): `spec` required, `cpu.guest` and
 * `memory.guest` required, `overcommitPercent` within 0..100, strings where KubeVirt has strings (the
 * admitters judge topology names, not the schema). It serves `parse.ts` and the CRDs (`./crds.ts`).
 */
import { arr, bool, int32, int64, object, quantity, str, stringMap, type ObjectSchema } from '../schema/dsl.ts';
import { ObjectMetaSchema } from '../schema/kube.ts';
import {
  BlockSizeSchema,
  ClockOffsetUTCSchema,
  CPUFeatureSchema,
  DiskIOThreadsSchema,
  EFISchema,
  FeatureAPICSchema,
  FeatureHypervSchema,
  FeatureKVMSchema,
  FeatureStateSchema,
  GPUSchema,
  HostDeviceSchema,
  HugepagesSchema,
  InterfaceMasqueradeSchema,
  LaunchSecuritySchema,
  NUMASchema,
  RealtimeSchema,
  RngSchema,
  TimerSchema,
  TPMDeviceSchema,
  VGPUOptionsSchema,
} from '../schema/kubevirt.ts';
import type { ClockOffset } from '../types.ts';
import type { InstancetypeKind } from './constants.ts';
import type {
  ClockPreferences,
  CPUInstancetype,
  CPUPreferenceRequirement,
  CPUPreferences,
  DevicePreferences,
  FeaturePreferences,
  FirmwarePreferences,
  MachinePreferences,
  MemoryInstancetype,
  MemoryPreferenceRequirement,
  PreferenceRequirements,
  SpreadOptions,
  VirtualMachineClusterInstancetype,
  VirtualMachineClusterPreference,
  VirtualMachineInstancetype,
  VirtualMachineInstancetypeSpec,
  VirtualMachinePreference,
  VirtualMachinePreferenceSpec,
  VolumePreferences,
} from './types.ts';

// Go uint32 as KubeVirt's OpenAPI spells it (int32, no sign check in the CRD).
const uint32 = () => int32();

export const CPUInstancetypeSchema = object<CPUInstancetype>()({
  guest: uint32(),
  model: str(),
  dedicatedCPUPlacement: bool(),
  numa: NUMASchema,
  isolateEmulatorThread: bool(),
  realtime: RealtimeSchema,
  maxSockets: uint32(),
}, { required: ['guest'], description: 'Required CPU related attributes of the instancetype.' });

export const MemoryInstancetypeSchema = object<MemoryInstancetype>()({
  guest: quantity(),
  hugepages: HugepagesSchema,
  overcommitPercent: { type: 'integer', format: 'int32', minimum: 0, maximum: 100 },
  maxGuest: quantity(),
}, { required: ['guest'], description: 'Required Memory related attributes of the instancetype.' });

export const VirtualMachineInstancetypeSpecSchema = object<VirtualMachineInstancetypeSpec>()({
  nodeSelector: stringMap(),
  schedulerName: str(),
  cpu: CPUInstancetypeSchema,
  memory: MemoryInstancetypeSchema,
  gpus: arr(GPUSchema, { listType: 'atomic' }),
  hostDevices: arr(HostDeviceSchema, { listType: 'atomic' }),
  ioThreadsPolicy: str(),
  ioThreads: DiskIOThreadsSchema,
  launchSecurity: LaunchSecuritySchema,
  annotations: stringMap(),
}, { required: ['cpu', 'memory'], description: 'Required spec describing the instancetype' });

export const ClockOffsetSchema = object<ClockOffset>()({
  utc: ClockOffsetUTCSchema,
  timezone: str(),
});

export const ClockPreferencesSchema = object<ClockPreferences>()({
  preferredClockOffset: ClockOffsetSchema,
  preferredTimer: TimerSchema,
});

export const SpreadOptionsSchema = object<SpreadOptions>()({
  across: str(),
  ratio: uint32(),
});

export const CPUPreferencesSchema = object<CPUPreferences>()({
  preferredCPUTopology: str(),
  spreadOptions: SpreadOptionsSchema,
  preferredCPUFeatures: arr(CPUFeatureSchema),
});

export const DevicePreferencesSchema = object<DevicePreferences>()({
  preferredAutoattachGraphicsDevice: bool(),
  preferredAutoattachMemBalloon: bool(),
  preferredAutoattachPodInterface: bool(),
  preferredAutoattachSerialConsole: bool(),
  preferredAutoattachInputDevice: bool(),
  preferredDisableHotplug: bool(),
  preferredVirtualGPUOptions: VGPUOptionsSchema,
  preferredSoundModel: str(),
  preferredUseVirtioTransitional: bool(),
  preferredInputBus: str(),
  preferredInputType: str(),
  preferredDiskBus: str(),
  preferredLunBus: str(),
  preferredCdromBus: str(),
  preferredDiskDedicatedIoThread: bool(),
  preferredDiskCache: str(),
  preferredDiskIO: str(),
  preferredDiskBlockSize: BlockSizeSchema,
  preferredInterfaceModel: str(),
  preferredRng: RngSchema,
  preferredBlockMultiQueue: bool(),
  preferredNetworkInterfaceMultiQueue: bool(),
  preferredTPM: TPMDeviceSchema,
  preferredInterfaceMasquerade: InterfaceMasqueradeSchema,
  preferredPanicDeviceModel: str(),
  preferredVideoType: str(),
});

export const FeaturePreferencesSchema = object<FeaturePreferences>()({
  preferredAcpi: FeatureStateSchema,
  preferredApic: FeatureAPICSchema,
  preferredHyperv: FeatureHypervSchema,
  preferredKvm: FeatureKVMSchema,
  preferredPvspinlock: FeatureStateSchema,
  preferredSmm: FeatureStateSchema,
});

export const FirmwarePreferencesSchema = object<FirmwarePreferences>()({
  preferredUseBios: bool(),
  preferredUseBiosSerial: bool(),
  preferredUseEfi: bool(),
  preferredUseSecureBoot: bool(),
  preferredEfi: EFISchema,
});

export const MachinePreferencesSchema = object<MachinePreferences>()({
  preferredMachineType: str(),
});

export const VolumePreferencesSchema = object<VolumePreferences>()({
  preferredStorageClassName: str(),
});

export const CPUPreferenceRequirementSchema = object<CPUPreferenceRequirement>()({
  guest: uint32(),
}, { required: ['guest'] });

export const MemoryPreferenceRequirementSchema = object<MemoryPreferenceRequirement>()({
  guest: quantity(),
}, { required: ['guest'] });

export const PreferenceRequirementsSchema = object<PreferenceRequirements>()({
  cpu: CPUPreferenceRequirementSchema,
  memory: MemoryPreferenceRequirementSchema,
  architecture: str(),
});

export const VirtualMachinePreferenceSpecSchema = object<VirtualMachinePreferenceSpec>()({
  clock: ClockPreferencesSchema,
  cpu: CPUPreferencesSchema,
  devices: DevicePreferencesSchema,
  features: FeaturePreferencesSchema,
  firmware: FirmwarePreferencesSchema,
  machine: MachinePreferencesSchema,
  volumes: VolumePreferencesSchema,
  preferredSubdomain: str(),
  preferredTerminationGracePeriodSeconds: int64(),
  requirements: PreferenceRequirementsSchema,
  annotations: stringMap(),
  preferSpreadSocketToCoreRatio: uint32(),
  preferredArchitecture: str(),
  preferredLaunchSecurity: LaunchSecuritySchema,
}, { description: 'Required spec describing the preferences' });

const meta = { apiVersion: str(), kind: str(), metadata: ObjectMetaSchema };

export const VirtualMachineInstancetypeSchema = object<VirtualMachineInstancetype>()({ ...meta, spec: VirtualMachineInstancetypeSpecSchema }, {
  required: ['spec'],
  description: 'VirtualMachineInstancetype resource contains quantitative and resource related VirtualMachine configuration that can be used by multiple VirtualMachine resources.',
});
export const VirtualMachineClusterInstancetypeSchema = object<VirtualMachineClusterInstancetype>()({ ...meta, spec: VirtualMachineInstancetypeSpecSchema }, {
  required: ['spec'],
  description: 'VirtualMachineClusterInstancetype is a cluster scoped version of VirtualMachineInstancetype resource.',
});
export const VirtualMachinePreferenceSchema = object<VirtualMachinePreference>()({ ...meta, spec: VirtualMachinePreferenceSpecSchema }, {
  required: ['spec'],
  description: 'VirtualMachinePreference resource contains optional preferences related to the VirtualMachine.',
});
export const VirtualMachineClusterPreferenceSchema = object<VirtualMachineClusterPreference>()({ ...meta, spec: VirtualMachinePreferenceSpecSchema }, {
  required: ['spec'],
  description: 'VirtualMachineClusterPreference is a cluster scoped version of the VirtualMachinePreference resource.',
});

export const InstancetypeSchemaByKind: Readonly<Record<InstancetypeKind, ObjectSchema>> = {
  VirtualMachineInstancetype: VirtualMachineInstancetypeSchema,
  VirtualMachineClusterInstancetype: VirtualMachineClusterInstancetypeSchema,
  VirtualMachinePreference: VirtualMachinePreferenceSchema,
  VirtualMachineClusterPreference: VirtualMachineClusterPreferenceSchema,
};
