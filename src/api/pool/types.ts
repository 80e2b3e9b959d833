/**
 * pool.kubevirt.io (`staging/src/kubevirt.io/api/pool/v1beta1/types.go`): the VirtualMachinePool,
 * a set of VirtualMachines made from one template, named `<pool>-<index>`. KubeVirt serves v1alpha1
 * and v1beta1 (the storage version) with the same schema. Names and strings exactly as KubeVirt's.
 */
import type { Duration, IntOrString, NodeSelectorRequirement, ObjectMeta } from '../kube.ts';
import type { LabelSelector } from '../label-selector.ts';
import type { VirtualMachineSpec } from '../types.ts';

export const POOL_GROUP = 'pool.kubevirt.io';
/** The storage version; v1alpha1 is served too. */
export const POOL_VERSION = 'v1beta1';
export const POOL_SERVED_VERSIONS = ['v1alpha1', 'v1beta1'] as const;
export const POOL_API_VERSION = `${POOL_GROUP}/${POOL_VERSION}`;

export const VirtualMachinePoolResource = {
  kind: 'VirtualMachinePool',
  listKind: 'VirtualMachinePoolList',
  plural: 'virtualmachinepools',
  singular: 'virtualmachinepool',
  shortNames: ['vmpool', 'vmpools'],
  categories: ['all'],
} as const;

/** `VirtualMachinePoolControllerFinalizer`: on the pool and on each VM it made. */
export const POOL_FINALIZER = 'pool.kubevirt.io/finalizer';
/** `VirtualMachinePoolRevisionName`: the ControllerRevision (pool spec) a VM and its VMI were made from. */
export const POOL_REVISION_LABEL = 'kubevirt.io/vm-pool-revision-name';

export type VirtualMachinePoolSortPolicy = 'AscendingOrder' | 'DescendingOrder' | 'Newest' | 'Oldest' | 'Random';
export type StatePreservation = 'Disabled' | 'Offline' | 'Online';
export type VirtualMachinePoolConditionType = 'ReplicaFailure' | 'ReplicaPaused';

export interface VirtualMachineTemplateSpec {
  metadata?: ObjectMeta;
  spec: VirtualMachineSpec;
}

export interface VirtualMachinePoolCondition {
  type: VirtualMachinePoolConditionType;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface VirtualMachinePoolStatus {
  replicas?: number;
  readyReplicas?: number;
  conditions?: VirtualMachinePoolCondition[];
  labelSelector?: string;
}

export interface VirtualMachinePoolSelectors {
  labelSelector?: LabelSelector;
  nodeSelectorRequirementMatcher?: NodeSelectorRequirement[];
}

export interface VirtualMachinePoolSelectionPolicy {
  sortPolicy?: VirtualMachinePoolSortPolicy;
  selectors?: VirtualMachinePoolSelectors;
}

export type VirtualMachinePoolUnmanagedStrategy = Record<string, never>;

export interface VirtualMachinePoolScaleInStrategy {
  unmanaged?: VirtualMachinePoolUnmanagedStrategy;
  opportunistic?: { statePreservation?: StatePreservation };
  proactive?: { selectionPolicy?: VirtualMachinePoolSelectionPolicy; statePreservation?: StatePreservation };
}

export interface VirtualMachinePoolUpdateStrategy {
  unmanaged?: VirtualMachinePoolUnmanagedStrategy;
  opportunistic?: Record<string, never>;
  proactive?: { selectionPolicy?: VirtualMachinePoolSelectionPolicy };
}

export interface VirtualMachinePoolNameGeneration {
  appendIndexToConfigMapRefs?: boolean;
  appendIndexToSecretRefs?: boolean;
}

export interface VirtualMachinePoolAutohealingStrategy {
  startUpFailureThreshold?: number;
  minFailingToStartDuration?: Duration;
}

export interface VirtualMachinePoolSpec {
  /** Default 1. */
  replicas?: number;
  selector: LabelSelector;
  virtualMachineTemplate: VirtualMachineTemplateSpec;
  paused?: boolean;
  nameGeneration?: VirtualMachinePoolNameGeneration;
  /** Default 100%. */
  maxUnavailable?: IntOrString;
  scaleInStrategy?: VirtualMachinePoolScaleInStrategy;
  updateStrategy?: VirtualMachinePoolUpdateStrategy;
  autohealing?: VirtualMachinePoolAutohealingStrategy;
}

export interface VirtualMachinePool {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: VirtualMachinePoolSpec;
  status?: VirtualMachinePoolStatus;
}
