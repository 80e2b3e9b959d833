// Kubelet's and the local pod runner's exact strings, in one place.

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

/** kubelet's on-disk volume plugin directories under `<podsDir>/<uid>/volumes/`. */
export const VolumePluginDirs = {
  emptyDir: 'kubernetes.io~empty-dir',
  secret: 'kubernetes.io~secret',
  configMap: 'kubernetes.io~configmap',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
} as const;

/** Where a service account's credentials are mounted when automounted. */
export const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The annotation the local-path provisioner records a claim's host directory (or block file) in. */
export const LOCAL_PATH_ANNOTATION = 'local.qvirt.io/path';
export const LOCAL_PATH_STORAGE_CLASS = 'local-path';

/** The binary KubeVirt's containerDisk containers run, and the qvirt binary path in its images. */
export const CONTAINER_DISK_BINARY = '/usr/bin/container-disk';
export const QVIRT_BINARY = '/usr/bin/qvirt';
