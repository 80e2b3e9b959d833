// The parts of a core/v1 Pod (and the objects its volumes name) the local pod runner reads and
// writes, in wire form. src/ cannot import controller/'s Pod model, and the runner must accept any
// pod, not only launcher pods, so it keeps its own narrow, tolerant view.
import type { LabelSelector } from '../../api/label-selector.ts';
import type { KubeObject } from '../../kube/client.ts';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
  };
}

export interface VolumeMount { name: string; mountPath: string; subPath?: string; readOnly?: boolean }
export interface VolumeDevice { name: string; devicePath: string }

export interface ResourceList { [name: string]: string | number }

export interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  volumeMounts?: VolumeMount[];
  volumeDevices?: VolumeDevice[];
  resources?: { requests?: ResourceList; limits?: ResourceList };
  /** `Always` on an init container makes it a native sidecar. */
  restartPolicy?: string;
}

export interface KeyToPath { key: string; path: string; mode?: number }
export interface DownwardFile { path: string; fieldRef?: { fieldPath: string }; mode?: number }

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  hostPath?: { path: string; type?: string };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  downwardAPI?: { items?: DownwardFile[]; defaultMode?: number };
  projected?: {
    defaultMode?: number;
    sources?: Array<{
      secret?: { name?: string; items?: KeyToPath[]; optional?: boolean };
      configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
      downwardAPI?: { items?: DownwardFile[] };
      serviceAccountToken?: { path: string };
    }>;
  };
}

export interface NodeSelectorRequirement { key: string; operator: string; values?: string[] }
export interface NodeSelectorTerm { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] }

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  topologyKey: string;
  namespaces?: string[];
}

export interface PodSpec {
  nodeName?: string;
  schedulerName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: {
    nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } };
    podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] };
  };
  tolerations?: Array<{ key?: string; operator?: string; value?: string; effect?: string }>;
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  readinessGates?: Array<{ conditionType: string }>;
  hostname?: string;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: Array<{ name?: string }>;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
}

export type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | { terminated: { exitCode: number; signal?: number; reason: string; message?: string; startedAt?: string | null; finishedAt: string } };

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  state: ContainerState;
  lastState: Partial<Record<'waiting' | 'running' | 'terminated', unknown>>;
  ready: boolean;
  started: boolean;
  restartCount: number;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  hostIP?: string;
  hostIPs?: Array<{ ip: string }>;
  podIP?: string;
  podIPs?: Array<{ ip: string }>;
  startTime?: string;
  qosClass?: string;
  reason?: string;
  message?: string;
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}
