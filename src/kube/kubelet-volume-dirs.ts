// kubelet's on-disk layout of a pod's volumes: `<podsDir>/<podUID>/volumes/<plugin dir>/<volume>`,
// each volume plugin's directory named `kubernetes.io~<plugin>`. The local pod runner lays volumes
// out this way; the node agent finds a launcher's sockets and a hotplugged claim's mount in it.
export const VolumePluginDirs = {
  emptyDir: 'kubernetes.io~empty-dir',
  secret: 'kubernetes.io~secret',
  configMap: 'kubernetes.io~configmap',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
  /** CSI volumes: the filesystem is one level deeper, in `<volume>/mount`. */
  csi: 'kubernetes.io~csi',
} as const;
