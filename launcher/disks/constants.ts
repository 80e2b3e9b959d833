// KubeVirt's exact strings for the disks a launcher prepares: file and directory names, ISO volume
// labels, tool invocations and limits. Sources: pkg/cloud-init/cloud-init.go, pkg/config/*.go,
// pkg/ephemeral-disk/ephemeral-disk.go, pkg/container-disk/container-disk.go, pkg/emptydisk,
// pkg/host-disk/host-disk.go, pkg/storage/volumepath, pkg/os/disk, pkg/virt-config/virt-config.go.

/** The launcher's directories as KubeVirt's virt-launcher flags default them (relative to `/`). */
export const DEFAULT_DIRS = {
  kubevirtShareDir: 'var/run/kubevirt',
  ephemeralDiskDir: 'var/run/kubevirt-ephemeral-disks',
  containerDiskDir: 'var/run/kubevirt/container-disks',
  hotplugDiskDir: 'var/run/kubevirt/hotplug-disks',
  privateDir: 'var/run/kubevirt-private',
  libvirtRuntimeDir: 'var/run/libvirt',
  serviceAccountDir: 'var/run/secrets/kubernetes.io/serviceaccount',
  devDir: 'dev',
} as const;

export const DIR_NAMES = {
  /** `<ephemeral-disk-dir>/disk-data/<vol>/disk.qcow2` (NewEphemeralDiskCreator(ephemeralDiskDir/disk-data)). */
  ephemeralDiskData: 'disk-data',
  /** `<ephemeral-disk-dir>/cloud-init-data/<ns>/<name>/`. */
  cloudInitData: 'cloud-init-data',
  /** `<cloud-init base>/data/` holds the files the ISO is made of. */
  cloudInitStaging: 'data',
  /** `/var/run/libvirt/empty-disks/<vol>.qcow2`. */
  emptyDisks: 'empty-disks',
  /** `<private>/vmi-disks/<vol>/`: filesystem PVCs and hostDisk directories are mounted here. */
  vmiDisks: 'vmi-disks',
  configMapSource: 'config-map',
  secretSource: 'secret',
  downwardAPISource: 'downwardapi',
  sysprepSource: 'sysprep',
  configMapDisks: 'config-map-disks',
  secretDisks: 'secret-disks',
  downwardAPIDisks: 'downwardapi-disks',
  sysprepDisks: 'sysprep-disks',
  serviceAccountDisk: 'service-account-disk',
  downwardMetricDisks: 'downwardmetric-disk',
} as const;

export const FILE_NAMES = {
  ephemeralOverlay: 'disk.qcow2',
  pvcDiskImage: 'disk.img',
  noCloudIso: 'noCloud.iso',
  configDriveIso: 'configdrive.iso',
  serviceAccountIso: 'service-account.iso',
  downwardMetricDisk: 'vhostmd0',
  /** Suffix of the file an ISO is written to before it is renamed into place. */
  stagingSuffix: '.staging',
  /** NoCloud seed files. */
  noCloudMetaData: 'meta-data',
  noCloudUserData: 'user-data',
  noCloudNetworkConfig: 'network-config',
  /** ConfigDrive seed files, under `openstack/latest/`. */
  configDriveDir: 'openstack/latest',
  configDriveMetaData: 'meta_data.json',
  configDriveUserData: 'user_data',
  configDriveNetworkData: 'network_data.json',
  /** cloud-init secretRef files, first match wins. */
  secretUserData: ['userdata', 'userData'],
  secretNetworkData: ['networkdata', 'networkData'],
  /** Access-credential secrets are mounted at `<private>/secret/<secret>-access-cred`. */
  accessCredSuffix: '-access-cred',
} as const;

/** `<container-disk-dir>/disk_<volumeIndex>.img` (GetDiskTargetName). */
export const containerDiskTargetName = (volumeIndex: number): string => `disk_${volumeIndex}.img`;
/** The directory form `<container-disk-dir>/disk_<volumeIndex>/` (the container-disk copy path). */
export const containerDiskCopyName = (volumeIndex: number): string => `disk_${volumeIndex}`;
/** Inside a containerDisk image the disk lives in `/disk` unless `containerDisk.path` says otherwise. */
export const CONTAINER_DISK_FALLBACK_PATH = '/disk';

export const ISO_LABELS = {
  noCloud: 'cidata',
  configDrive: 'config-2',
  /** pkg/config defaultCreateIsoImage: used when a config volume has no volumeLabel. */
  configDefault: 'cfgdata',
  /** pkg/config/sysprep.go sysprepVolumeLabel. */
  sysprep: 'unattendCD',
} as const;

/** A sysprep volume must hold one of these (compared case-insensitively). */
export const SYSPREP_ANSWER_FILES = ['autounattend.xml', 'unattend.xml'] as const;

/** `xorrisofs -output <iso> -volid <label> -joliet -rock -partition_cyl_align on <dir>` (cloud-init.go). */
export const xorrisofsCloudInitArgs = (output: string, volumeId: string, dir: string): string[] =>
  ['-output', output, '-volid', volumeId, '-joliet', '-rock', '-partition_cyl_align', 'on', dir];

/**
 * `xorrisofs -output <iso>.staging -follow-links -volid <label> -joliet -rock -graft-points
 * -partition_cyl_align on name=path...` (pkg/config/config.go defaultCreateIsoImage).
 */
export const xorrisofsConfigArgs = (output: string, volumeId: string, graftPoints: readonly string[]): string[] =>
  ['-output', output, '-follow-links', '-volid', volumeId, '-joliet', '-rock', '-graft-points', '-partition_cyl_align', 'on', ...graftPoints];

export const TIMEOUTS = {
  /** cloud-init.go kills xorrisofs after 10 s. */
  cloudInitIsoMs: 10_000,
  /** pkg/config runs xorrisofs without a limit; qvirt bounds it. */
  configIsoMs: 60_000,
  /** pkg/os/disk GetDiskInfoWithValidation: `ulimit -t 10`. */
  qemuImgInfoCpuSeconds: 10,
  qemuImgInfoMs: 30_000,
  qemuImgCreateMs: 60_000,
} as const;

/** virt-launcher `--disk-memory-limit` default (virtconfig.DefaultDiskVerificationMemoryLimitBytes). */
export const DEFAULT_DISK_MEMORY_LIMIT_BYTES = 2_097_152_000;
/** virtconfig.DefaultLessPVCSpaceToleration (percent). */
export const DEFAULT_LESS_PVC_SPACE_TOLERATION = 10;
/** virtconfig.DefaultMinimumReservePVCBytes. */
export const DEFAULT_MINIMUM_RESERVE_PVC_BYTES = 131_072;

/** vmi-create-admitter.go: inline (and base64) user/network data limits, in bytes after decoding. */
export const CLOUD_INIT_USER_MAX_LEN = 2048;
export const CLOUD_INIT_NETWORK_MAX_LEN = 2048;

/** KubeVirt's messages, verbatim where the launcher or webhook produce them. */
export const MESSAGES = {
  cloudInitSourceRequired: 'userDataBase64, userData, networkDataBase64 or networkData is required for a cloud-init data source',
  cloudInitDataRequired: 'UserData or NetworkData is required for cloud-init data source',
  cloudInitNoSecretData: (volume: string) => `no cloud-init data-source found at volume: ${volume}`,
  userDataTooLong: (field: string) => `${field} userdata exceeds ${CLOUD_INIT_USER_MAX_LEN} byte limit. Should use UserDataSecretRef for larger data.`,
  networkDataTooLong: (field: string) => `${field} networkdata exceeds ${CLOUD_INIT_NETWORK_MAX_LEN} byte limit. Should use NetworkDataSecretRef for larger data.`,
  containerDiskMissing: (path: string) => `no supported file disk found for volume found in: ${path}`,
  unsupportedFormat: (format: string) => `unsupported image format: ${format}`,
  unexpectedBackingFile: (file: string) => `expected no backing file, but found ${file}`,
  sizeTooLow: (volume: string) => `the size for volume ${volume} is too low`,
  notEnoughSpace: (path: string, requested: number, available: number, toleration: number) =>
    `unable to create ${path}, not enough space, demanded size ${requested} B is bigger than available space ${available} B, also after taking ${toleration} % toleration into account`,
  toleratedSmallPV: (requested: number, available: number, toleration: number) =>
    `PV size too small: expected ${requested} B, found ${available} B. Using it anyway, it is within ${toleration} % toleration`,
  neitherBlockNorFile: (volume: string) => `neither found block device nor regular file for volume ${volume}`,
  sysprepMissingAnswerFile: 'Sysprep drive should contain autounattend.xml or unattend.xml but neither were found.',
} as const;

/** Event reason virt-handler records when a PVC is a little smaller than asked (host-disk.go). */
export const EVENT_REASON_TOLERATED_SMALL_PV = 'ToleratedSmallPV';
