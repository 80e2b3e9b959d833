// The core/v1 Pod and Node as the controllers read and write them: wire form (JSON field names,
// RFC 3339 strings for times), the subset of fields KubeVirt's controllers render or inspect.
// @kubernetes/client-node's model classes turn times into Date objects, which would not survive a
// read-modify-write through qvirt's wire-form client, so the controllers use these instead.
import type {
  Affinity,
  ConditionStatus,
  DownwardAPIVolumeFile,
  ExecAction,
  HTTPGetAction,
  LocalObjectReference,
  ObjectFieldSelector,
  ObjectMeta,
  PodDNSConfig,
  PodQOSClass,
  PullPolicy,
  Quantity,
  ResourceList,
  TCPSocketAction,
  Time,
  Toleration,
  TopologySpreadConstraint,
  DNSPolicy,
} from '../src/api/types.ts';

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: PodSpec;
  status?: PodStatus;
}

export interface PodSpec {
  hostname?: string;
  subdomain?: string;
  securityContext?: PodSecurityContext;
  terminationGracePeriodSeconds?: number;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  containers: Container[];
  initContainers?: Container[];
  nodeSelector?: Record<string, string>;
  nodeName?: string;
  volumes?: PodVolume[];
  imagePullSecrets?: LocalObjectReference[];
  dnsConfig?: PodDNSConfig;
  dnsPolicy?: DNSPolicy;
  readinessGates?: { conditionType: string }[];
  enableServiceLinks?: boolean;
  schedulerName?: string;
  tolerations?: Toleration[];
  topologySpreadConstraints?: TopologySpreadConstraint[];
  affinity?: Affinity;
  priorityClassName?: string;
  runtimeClassName?: string;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  resourceClaims?: { name: string; resourceClaimName?: string; resourceClaimTemplateName?: string }[];
}

export interface PodSecurityContext {
  fsGroup?: number;
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  seccompProfile?: { type: 'RuntimeDefault' | 'Localhost' | 'Unconfined'; localhostProfile?: string };
  seLinuxOptions?: { user?: string; role?: string; type?: string; level?: string };
}

export interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: PullPolicy;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: ContainerPort[];
  resources?: ContainerResources;
  volumeMounts?: VolumeMount[];
  volumeDevices?: { name: string; devicePath: string }[];
  securityContext?: SecurityContext;
  livenessProbe?: ContainerProbe;
  readinessProbe?: ContainerProbe;
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  /** `Always` on an init container makes it a native sidecar. */
  restartPolicy?: 'Always';
}

export interface ContainerResources {
  requests?: ResourceList;
  limits?: ResourceList;
  claims?: { name: string; request?: string }[];
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: ObjectFieldSelector };
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
  mountPropagation?: 'None' | 'HostToContainer' | 'Bidirectional';
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type: 'RuntimeDefault' | 'Localhost' | 'Unconfined'; localhostProfile?: string };
  seLinuxOptions?: { user?: string; role?: string; type?: string; level?: string };
}

export interface ContainerProbe {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

export interface PodVolume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: Quantity };
  hostPath?: { path: string; type?: string };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  secret?: { secretName?: string; optional?: boolean; defaultMode?: number };
  configMap?: { name?: string; optional?: boolean; defaultMode?: number };
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  image?: { reference?: string; pullPolicy?: PullPolicy };
}

export interface PodStatus {
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  qosClass?: PodQOSClass;
  podIP?: string;
}

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  lastProbeTime?: Time | null;
  lastTransitionTime?: Time | null;
  reason?: string;
  message?: string;
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  image?: string;
  imageID?: string;
  restartCount?: number;
  state?: {
    waiting?: { reason?: string; message?: string };
    running?: { startedAt?: Time };
    terminated?: { exitCode: number; reason?: string; message?: string; startedAt?: Time; finishedAt?: Time };
  };
}

export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: { unschedulable?: boolean; taints?: { key: string; value?: string; effect: string; timeAdded?: Time }[] };
  status?: { conditions?: { type: string; status: ConditionStatus }[] };
}
