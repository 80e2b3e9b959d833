/**
 * KubeVirt's exact strings for instance types and preferences: the instancetype.kubevirt.io group
 * (`staging/src/kubevirt.io/api/instancetype/register.go`, `v1beta1/register.go`), the CRDs' names
 * (`virt-operator/.../components/crds.go`), the ControllerRevision labels, the VMI annotations
 * (`core/v1/types.go`), and the messages and reasons of `pkg/instancetype` and the VM controller.
 * Every value lives here once.
 */
import type { PreferredCPUTopology, SpreadAcross } from './types.ts';

export const INSTANCETYPE_GROUP = 'instancetype.kubevirt.io';
/** The one version KubeVirt serves and stores (`LatestVersion`). */
export const INSTANCETYPE_VERSION = 'v1beta1';
export const INSTANCETYPE_API_VERSION = `${INSTANCETYPE_GROUP}/${INSTANCETYPE_VERSION}`;

export const InstancetypeKind = {
  VirtualMachineInstancetype: 'VirtualMachineInstancetype',
  VirtualMachineClusterInstancetype: 'VirtualMachineClusterInstancetype',
  VirtualMachinePreference: 'VirtualMachinePreference',
  VirtualMachineClusterPreference: 'VirtualMachineClusterPreference',
} as const;
export type InstancetypeKind = (typeof InstancetypeKind)[keyof typeof InstancetypeKind];

export interface InstancetypeResourceNames {
  readonly kind: InstancetypeKind;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  /** Only the namespaced kinds are in category `all` (crds.go). */
  readonly categories: readonly string[];
}

/** Names, scope and short names exactly as KubeVirt's CRDs declare them. */
export const InstancetypeResources = {
  VirtualMachineInstancetype: {
    kind: 'VirtualMachineInstancetype',
    listKind: 'VirtualMachineInstancetypeList',
    plural: 'virtualmachineinstancetypes',
    singular: 'virtualmachineinstancetype',
    shortNames: ['vminstancetype', 'vminstancetypes', 'vmf', 'vmfs'],
    scope: 'Namespaced',
    categories: ['all'],
  },
  VirtualMachineClusterInstancetype: {
    kind: 'VirtualMachineClusterInstancetype',
    listKind: 'VirtualMachineClusterInstancetypeList',
    plural: 'virtualmachineclusterinstancetypes',
    singular: 'virtualmachineclusterinstancetype',
    shortNames: ['vmclusterinstancetype', 'vmclusterinstancetypes', 'vmcf', 'vmcfs'],
    scope: 'Cluster',
    categories: [],
  },
  VirtualMachinePreference: {
    kind: 'VirtualMachinePreference',
    listKind: 'VirtualMachinePreferenceList',
    plural: 'virtualmachinepreferences',
    singular: 'virtualmachinepreference',
    shortNames: ['vmpref', 'vmprefs', 'vmp', 'vmps'],
    scope: 'Namespaced',
    categories: ['all'],
  },
  VirtualMachineClusterPreference: {
    kind: 'VirtualMachineClusterPreference',
    listKind: 'VirtualMachineClusterPreferenceList',
    plural: 'virtualmachineclusterpreferences',
    singular: 'virtualmachineclusterpreference',
    shortNames: ['vmcp', 'vmcps'],
    scope: 'Cluster',
    categories: [],
  },
} as const satisfies Record<InstancetypeKind, InstancetypeResourceNames>;

/** ControllerRevision labels (`ControllerRevisionObject*Label`). */
export const RevisionLabels = {
  ObjectGeneration: 'instancetype.kubevirt.io/object-generation',
  ObjectKind: 'instancetype.kubevirt.io/object-kind',
  ObjectName: 'instancetype.kubevirt.io/object-name',
  ObjectUID: 'instancetype.kubevirt.io/object-uid',
  ObjectVersion: 'instancetype.kubevirt.io/object-version',
} as const;

/** Labels on a volume's claim (or DataVolume, DataSource) naming the defaults to infer. */
export const DefaultLabels = {
  Instancetype: 'instancetype.kubevirt.io/default-instancetype',
  InstancetypeKind: 'instancetype.kubevirt.io/default-instancetype-kind',
  Preference: 'instancetype.kubevirt.io/default-preference',
  PreferenceKind: 'instancetype.kubevirt.io/default-preference-kind',
} as const;

/** VMI annotations naming what the VM referenced (`v1.*InstancetypeAnnotation`, `v1.*PreferenceAnnotation`). */
export const InstancetypeAnnotations = {
  Instancetype: 'kubevirt.io/instancetype-name',
  ClusterInstancetype: 'kubevirt.io/cluster-instancetype-name',
  Preference: 'kubevirt.io/preference-name',
  ClusterPreference: 'kubevirt.io/cluster-preference-name',
} as const;

export const PreferredCPUTopologies = {
  DeprecatedPreferCores: 'preferCores',
  DeprecatedPreferSockets: 'preferSockets',
  DeprecatedPreferThreads: 'preferThreads',
  DeprecatedPreferSpread: 'preferSpread',
  DeprecatedPreferAny: 'preferAny',
  Cores: 'cores',
  Sockets: 'sockets',
  Threads: 'threads',
  Spread: 'spread',
  Any: 'any',
} as const satisfies Record<string, PreferredCPUTopology>;

/** The deprecated spelling → its replacement (preference admitter's warning). */
export const DeprecatedTopologies: Readonly<Record<string, PreferredCPUTopology>> = {
  preferSockets: 'sockets',
  preferCores: 'cores',
  preferThreads: 'threads',
  preferSpread: 'spread',
  preferAny: 'any',
};

export const SpreadAcrossValues = {
  SocketsCoresThreads: 'SocketsCoresThreads',
  SocketsCores: 'SocketsCores',
  CoresThreads: 'CoresThreads',
} as const satisfies Record<string, SpreadAcross>;

export const DEFAULT_SPREAD_RATIO = 2;
export const THREADS_PER_CORE = 2;

/** VM controller sync error reasons (instancetype/controller/vm/controller.go, vm.go). */
export const InstancetypeReasons = {
  FailedFindInstancetype: 'FailedFindInstancetype',
  FailedFindPreference: 'FailedFindPreference',
  /** `common.FailedCreateVirtualMachineReason`. */
  FailedCreate: 'FailedCreate',
} as const;

/** KubeVirt's messages, as functions of what they name. */
export const InstancetypeMessages = {
  /** conflict.go `conflictsErrorFmt`. */
  conflicts: (fields: string) => `VM field(s) ${fields} conflicts with selected instance type`,
  /** The VM controller's ApplyToVMI error. */
  vmiConflicts: (fields: string) => `VMI conflicts with instancetype spec in fields: [${fields}]`,
  /** ApplyToVM (expand, live update). */
  vmConflicts: (fields: string) => `VM conflicts with instancetype spec in fields: [${fields}]`,
  /** vm.go `startingVMIFailureFmt`: the sync error when the VMI could not be started. */
  startingVMIFailure: (err: string) => `Failure while starting VMI: ${err}`,
  /** The event when ApplyToVMI fails at start (reason FailedCreate). */
  failedApplyInstancetype: (err: string) => `Error creating virtual machine instance: Failed to apply instancetype: ${err}`,
  /** find/spec.go. */
  unexpectedInstancetypeKind: (kind: string) => `got unexpected kind in InstancetypeMatcher: ${kind}`,
  unexpectedPreferenceKind: (kind: string) => `got unexpected kind in PreferenceMatcher: ${kind}`,
  /** The API server's NotFound message for a named object (`<plural>.<group> "<name>" not found`). */
  notFound: (plural: string, name: string) => `${plural}.${INSTANCETYPE_GROUP} "${name}" not found`,
  /** A ControllerRevision named by a matcher or status ref that is not there. */
  revisionNotFound: (name: string) => `controllerrevisions.apps "${name}" not found`,
  /** compatibility.go. */
  unexpectedRevisionType: (kind: string) => `unexpected type in ControllerRevision: ${kind}`,
  decodeRevision: (why: string) => `failed to decode object in ControllerRevision: ${why}`,
  /** revision/store.go. */
  storeRevisions: (err: string) => `error encountered while storing instancetype.kubevirt.io controllerRevisions: ${err}`,
  unexpectedRevisionData: (name: string) => `found existing ControllerRevision with unexpected data: ${name}`,
  failedCreateRevision: (err: string) => `failed to create ControllerRevision: ${err}`,
  /** The VM mutator's matcher checks (webhooks/vm/mutator.go). */
  instancetypeMatcherNameOrInfer: 'Either Name or InferFromVolume should be provided within the InstancetypeMatcher',
  preferenceMatcherNameOrInfer: 'Either Name or InferFromVolume should be provided within the PreferenceMatcher',
  nameSetWithInfer: 'Name already set, should be cleared before setting inferFromVolume',
  kindSetWithInfer: 'Kind already set, should be cleared before setting inferFromVolume',
  invalidFailurePolicy: (policy: string) => `Invalid value '${policy}' for InferFromVolumeFailurePolicy`,
  matcherNameWithoutRevision: 'the Matcher Name has been updated without updating the RevisionName',
  /** validation/cpu.go: spread topology the instance type's vCPUs do not divide into. */
  spreadSocketsCores: (guest: number, ratio: number) =>
    `${guest} vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of ${ratio} provided by the preference`,
  spreadCoresThreads: (guest: number, ratio: number) => `${guest} vCPUs provided by the instance type are not divisible by the number of threads per core ${ratio}`,
  spreadSocketsCoresThreads: (guest: number, threads: number, ratio: number) =>
    `${guest} vCPUs provided by the instance type are not divisible by the number of threads per core ${threads} and Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of ${ratio}`,
  /** preference/requirements. */
  insufficientInstancetypeCPU: (have: number, want: number) => `insufficient CPU resources of ${have} vCPU provided by instance type, preference requires ${want} vCPU`,
  insufficientVMCPU: (have: number, want: number, as: string) => `insufficient CPU resources of ${have} vCPU provided by VirtualMachine, preference requires ${want} vCPU provided as ${as}`,
  noVMCPU: (want: number) => `no CPU resources provided by VirtualMachine, preference requires ${want} vCPU`,
  insufficientInstancetypeMemory: (have: string, want: string) => `insufficient Memory resources of ${have} provided by instance type, preference requires ${want}`,
  insufficientVMMemory: (have: string, want: string) => `insufficient Memory resources of ${have} provided by VirtualMachine, preference requires ${want}`,
  requiredArchitecture: (want: string, have: string) => `preference requires architecture ${want} but ${have} is being requested`,
  /** The VM admitter wraps a requirements failure so. */
  requirementsFailure: (err: string) => `failure checking preference requirements: ${err}`,
  /** infer/volume.go. */
  unsupportedVolumeType: (volume: string) => `unable to infer defaults from volume ${volume} as type is not supported`,
  missingLabel: (label: string) => `unable to find required ${label} label on the volume`,
  volumeNotFound: (volume: string) => `unable to find volume ${volume} to infer defaults`,
  unsupportedDataVolumeSource: 'unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported',
  unsupportedDataVolumeSourceRef: (kind: string) => `unable to infer defaults from DataVolumeSourceRef as Kind ${kind} is not supported`,
  missingDataSourceSource: 'unable to infer defaults from DataSource that doesn\'t provide DataVolumeSourcePVC or DataVolumeSourceSnapshot',
  /** Instance type and preference admitters. */
  percentRange: (field: string, value: number) => `${field} '${value}': must be in range between 0 and 100.`,
  overcommitWithHugepages: (overcommit: string, hugepages: string) => `${overcommit} and ${hugepages} should not be requested together.`,
  deprecatedLaunchSecurity: 'launchSecurity is deprecated and will be removed in a future release. Use preference instead.',
  unknownTopology: (t: string) => `unknown preferredCPUTopology ${t}`,
  spreadAcrossCoresThreadsRatio: 'only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs over cores and threads',
  spreadAcrossUnsupported: (across: string) => `across ${across} is not supported`,
  deprecatedTopology: (t: string, use: string) => `PreferredCPUTopology ${t} is deprecated for removal in a future release, please use ${use} instead`,
} as const;

/** Where the spread check names the instance type's vCPUs (`instancetypeCPUGuestPath`). */
export const INSTANCETYPE_CPU_GUEST_PATH = 'instancetype.spec.cpu.guest';
