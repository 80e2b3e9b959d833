// kubelet's on-disk layout of a pod's volumes: `<podsDir>/<podUID>/volumes/<plugin dir>/<volume>`,
// each volume plugin's directory named `kubernetes.io~<plugin>`. The local pod runner lays volumes
// out this way; the node agent finds a launcher's sockets and a hotplugged claim's mount in it.

/** `<podsDir>` on a node: kubelet's default root directory (`--root-dir /var/lib/kubelet`) + `pods`. */
export const KUBELET_PODS_DIR = '/var/lib/kubelet/pods';

export const VolumePluginDirs = {
  emptyDir: 'kubernetes.io~empty-dir',
  secret: 'kubernetes.io~secret',
  configMap: 'kubernetes.io~configmap',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
  /** CSI volumes: the filesystem is one level deeper, in `<volume>/mount`. */
  csi: 'kubernetes.io~csi',
} as const;
