// Kubelet's and the local pod runner's exact strings that only the pod runner uses (kubelet's volume
// directories: src/kube/kubelet-volume-dirs.ts; the local-path provisioner's names: src/kube/local-path.ts).

/** An init container with this restartPolicy is a native sidecar (stays running). */
export const SIDECAR_RESTART_POLICY = 'Always';

/** Reasons kubelet writes on pod conditions and container states. */
export const PodReasons = {
  ContainersNotInitialized: 'ContainersNotInitialized',
  ContainersNotReady: 'ContainersNotReady',
  ReadinessGatesNotReady: 'ReadinessGatesNotReady',
  PodCompleted: 'PodCompleted',
  Completed: 'Completed',
  Error: 'Error',
  ErrImagePull: 'ErrImagePull',
  ImagePullBackOff: 'ImagePullBackOff',
  ErrImageNeverPull: 'ErrImageNeverPull',
  CreateContainerConfigError: 'CreateContainerConfigError',
  ContainerCreating: 'ContainerCreating',
  PodInitializing: 'PodInitializing',
  ContainerStatusUnknown: 'ContainerStatusUnknown',
  Unschedulable: 'Unschedulable',
} as const;

/** Event reasons (kubelet's). */
export const EventReasons = {
  Scheduled: 'Scheduled',
  Pulling: 'Pulling',
  Pulled: 'Pulled',
  BackOff: 'BackOff',
  Created: 'Created',
  Started: 'Started',
  Killing: 'Killing',
  Failed: 'Failed',
  FailedMount: 'FailedMount',
} as const;

/** Where a service account's credentials are mounted when automounted. */
export const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The binary KubeVirt's containerDisk containers run, and the qvirt binary path in its images. */
export const CONTAINER_DISK_BINARY = '/usr/bin/container-disk';
export const QVIRT_BINARY = '/usr/bin/qvirt';
