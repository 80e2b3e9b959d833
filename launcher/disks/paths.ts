// Where KubeVirt's launcher finds and puts each volume's disk, as functions of the launcher's
// configured directories. In a pod these are KubeVirt's paths under /var/run; tests and the local
// mode root them anywhere (`diskDirsUnder('/tmp/x')`).
import { basename, join, resolve } from 'node:path';
import { CONTAINER_DISK_FALLBACK_PATH, DEFAULT_DIRS, DIR_NAMES, FILE_NAMES, containerDiskCopyName, containerDiskTargetName } from './constants.ts';

export interface DiskDirs {
  /** `--kubevirt-share-dir` (/var/run/kubevirt). */
  readonly kubevirtShareDir: string;
  /** `--ephemeral-disk-dir` (/var/run/kubevirt-ephemeral-disks). */
  readonly ephemeralDiskDir: string;
  /** `--container-disk-dir` (/var/run/kubevirt/container-disks). */
  readonly containerDiskDir: string;
  /** `--hotplug-disk-dir` (/var/run/kubevirt/hotplug-disks). */
  readonly hotplugDiskDir: string;
  /** The private emptyDir (/var/run/kubevirt-private): PVC/hostDisk mounts, config sources, config ISOs. */
  readonly privateDir: string;
  /** libvirt's runtime dir (/var/run/libvirt), where KubeVirt keeps empty disks. */
  readonly libvirtRuntimeDir: string;
  /** The service account token mount (/var/run/secrets/kubernetes.io/serviceaccount). */
  readonly serviceAccountDir: string;
  /** Where block PVCs appear as devices (/dev). */
  readonly devDir: string;
}

/** KubeVirt's layout rooted at `root` (`/` in a launcher pod). */
export function diskDirsUnder(rootDir: string): DiskDirs {
  const root = resolve(rootDir); // absolute: overlays record their backing file's path
  return {
    kubevirtShareDir: join(root, DEFAULT_DIRS.kubevirtShareDir),
    ephemeralDiskDir: join(root, DEFAULT_DIRS.ephemeralDiskDir),
    containerDiskDir: join(root, DEFAULT_DIRS.containerDiskDir),
    hotplugDiskDir: join(root, DEFAULT_DIRS.hotplugDiskDir),
    privateDir: join(root, DEFAULT_DIRS.privateDir),
    libvirtRuntimeDir: join(root, DEFAULT_DIRS.libvirtRuntimeDir),
    serviceAccountDir: join(root, DEFAULT_DIRS.serviceAccountDir),
    devDir: join(root, DEFAULT_DIRS.devDir),
  };
}

// containerDisk -------------------------------------------------------------------------------

/** The image's disk file as virt-handler bind-mounts it into the launcher: `<cd-dir>/disk_<i>.img`. */
export const containerDiskTarget = (d: DiskDirs, volumeIndex: number): string => join(d.containerDiskDir, containerDiskTargetName(volumeIndex));
/** The directory form: the image's files (its `/disk/*`, or `containerDisk.path`) under `<cd-dir>/disk_<i>/`. */
export const containerDiskCopyDir = (d: DiskDirs, volumeIndex: number): string => join(d.containerDiskDir, containerDiskCopyName(volumeIndex));
export { CONTAINER_DISK_FALLBACK_PATH };

// ephemeral overlays (containerDisk, ephemeral PVC) -------------------------------------------

export const ephemeralDiskDataDir = (d: DiskDirs): string => join(d.ephemeralDiskDir, DIR_NAMES.ephemeralDiskData);
export const ephemeralVolumeDir = (d: DiskDirs, volume: string): string => join(ephemeralDiskDataDir(d), volume);
/** `<ephemeral-disk-dir>/disk-data/<vol>/disk.qcow2` (ephemeralDiskCreator.GetFilePath). */
export const ephemeralOverlay = (d: DiskDirs, volume: string): string => join(ephemeralVolumeDir(d, volume), FILE_NAMES.ephemeralOverlay);

// emptyDisk -----------------------------------------------------------------------------------

export const emptyDiskDir = (d: DiskDirs): string => join(d.libvirtRuntimeDir, DIR_NAMES.emptyDisks);
/** `/var/run/libvirt/empty-disks/<vol>.qcow2`. */
export const emptyDisk = (d: DiskDirs, volume: string): string => join(emptyDiskDir(d), `${volume}.qcow2`);

// PVC / DataVolume / hostDisk -----------------------------------------------------------------

/** `<private>/vmi-disks/<vol>`: a filesystem PVC's mount point, or a hostDisk's directory. */
export const vmiDiskDir = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.vmiDisks, volume);
/** `<private>/vmi-disks/<vol>/disk.img` (volumepath.Filesystem). */
export const pvcFilesystemImage = (d: DiskDirs, volume: string): string => join(vmiDiskDir(d, volume), FILE_NAMES.pvcDiskImage);
/** `/dev/<vol>` (volumepath.BlockDevice). */
export const pvcBlockDevice = (d: DiskDirs, volume: string): string => join(d.devDir, volume);
/** `<hotplug-dir>/<vol>.img` (volumepath.HotplugFilesystem). */
export const hotplugFilesystemImage = (d: DiskDirs, volume: string): string => join(d.hotplugDiskDir, `${volume}.img`);
/** `<hotplug-dir>/<vol>` (volumepath.HotplugBlockDevice). */
export const hotplugBlockDevice = (d: DiskDirs, volume: string): string => join(d.hotplugDiskDir, volume);
/** A hostDisk as the launcher sees it: `<private>/vmi-disks/<vol>/<basename(hostDisk.path)>`. */
export const hostDiskMounted = (d: DiskDirs, volume: string, hostPath: string): string => join(vmiDiskDir(d, volume), basename(hostPath));

// cloud-init ----------------------------------------------------------------------------------

export const cloudInitDir = (d: DiskDirs): string => join(d.ephemeralDiskDir, DIR_NAMES.cloudInitData);
/** `<ephemeral-disk-dir>/cloud-init-data/<ns>/<name>`. */
export const cloudInitBase = (d: DiskDirs, namespace: string, name: string): string => join(cloudInitDir(d), namespace, name);
export const cloudInitStagingDir = (d: DiskDirs, namespace: string, name: string): string => join(cloudInitBase(d, namespace, name), DIR_NAMES.cloudInitStaging);
export const noCloudIso = (d: DiskDirs, namespace: string, name: string): string => join(cloudInitBase(d, namespace, name), FILE_NAMES.noCloudIso);
export const configDriveIso = (d: DiskDirs, namespace: string, name: string): string => join(cloudInitBase(d, namespace, name), FILE_NAMES.configDriveIso);

// config volumes ------------------------------------------------------------------------------

/** `<private>/secret`: secret volumes, cloud-init secretRefs (`<vol>`) and access credentials (`<secret>-access-cred`). */
export const secretSourceDir = (d: DiskDirs): string => join(d.privateDir, DIR_NAMES.secretSource);
export const secretSource = (d: DiskDirs, volume: string): string => join(secretSourceDir(d), volume);
export const configMapSource = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.configMapSource, volume);
export const downwardAPISource = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.downwardAPISource, volume);
export const sysprepSource = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.sysprepSource, volume);
export const accessCredentialSource = (d: DiskDirs, secretName: string): string => join(secretSourceDir(d), `${secretName}${FILE_NAMES.accessCredSuffix}`);

export const configMapIso = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.configMapDisks, `${volume}.iso`);
export const secretIso = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.secretDisks, `${volume}.iso`);
export const downwardAPIIso = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.downwardAPIDisks, `${volume}.iso`);
export const sysprepIso = (d: DiskDirs, volume: string): string => join(d.privateDir, DIR_NAMES.sysprepDisks, `${volume}.iso`);
/** One per VMI: `<private>/service-account-disk/service-account.iso`. */
export const serviceAccountIso = (d: DiskDirs): string => join(d.privateDir, DIR_NAMES.serviceAccountDisk, FILE_NAMES.serviceAccountIso);
/** `<private>/downwardapi-disks/vhostmd0` (config.DownwardMetricDisk). */
export const downwardMetricsDisk = (d: DiskDirs): string => join(d.privateDir, DIR_NAMES.downwardAPIDisks, FILE_NAMES.downwardMetricDisk);
