// What disk preparation hands to the QEMU command-line builder: for every volume, the file or device
// QEMU opens, its format, whether it must be opened read-only, and the backing file of overlays.
import type { Logger } from '../../src/log/logger.ts';
import type { Volume } from '../../src/api/types.ts';
import type { IsoWriter, IsoWriterChoice } from './iso.ts';
import type { ImageFormat } from './tools.ts';

export type { ImageFormat } from './tools.ts';

/** The volume source kinds, named as in the VMI spec. */
export type VolumeSourceKind =
  | 'containerDisk' | 'emptyDisk' | 'ephemeral' | 'persistentVolumeClaim' | 'dataVolume' | 'hostDisk'
  | 'cloudInitNoCloud' | 'cloudInitConfigDrive' | 'configMap' | 'secret' | 'downwardAPI' | 'serviceAccount'
  | 'sysprep' | 'downwardMetrics' | 'memoryDump' | 'containerPath';

const KINDS: readonly VolumeSourceKind[] = [
  'containerDisk', 'cloudInitNoCloud', 'cloudInitConfigDrive', 'sysprep', 'hostDisk', 'persistentVolumeClaim',
  'dataVolume', 'ephemeral', 'emptyDisk', 'configMap', 'secret', 'downwardAPI', 'serviceAccount', 'downwardMetrics',
  'memoryDump', 'containerPath',
];

/** The source of a volume, in the order KubeVirt's converter tests them; undefined if none is set. */
export function volumeSourceKind(volume: Volume): VolumeSourceKind | undefined {
  return KINDS.find((k) => volume[k] !== undefined && volume[k] !== null);
}

export interface BackingStore {
  readonly type: 'file' | 'block';
  readonly path: string;
  readonly format: ImageFormat;
}

export interface PreparedVolume {
  /** The VMI volume name (the disk of the same name uses it). */
  readonly name: string;
  readonly source: VolumeSourceKind;
  /** `file` for images, `block` for devices (`/dev/<vol>`). */
  readonly type: 'file' | 'block';
  /** What QEMU opens. */
  readonly path: string;
  readonly format: ImageFormat;
  /** The source demands read-only access (e.g. a PVC with readOnly: true); the disk target may add more. */
  readonly readOnly: boolean;
  /** KubeVirt's `discard="unmap"` for this source. */
  readonly discard: boolean;
  /** The read-only image under a qcow2 overlay (containerDisk, ephemeral). */
  readonly backing?: BackingStore;
  /** hostDisk `shared`. */
  readonly shared?: boolean;
  /** The volume is hotplugged (its image lives in the hotplug dir). */
  readonly hotplug?: boolean;
  /** This call created the image (false: it existed and was reused, or it is not ours to create). */
  readonly created: boolean;
  /** For ISO disks: which writer made the image. */
  readonly isoWriter?: IsoWriter;
}

export interface PreparedVolumes {
  /** In `spec.volumes` order; volumes that are not disks (virtiofs filesystems, memory dumps) are left out. */
  readonly volumes: readonly PreparedVolume[];
  /** Volumes that were left out, and why. */
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

/** What the launcher knows about a PVC beyond the VMI spec (virt-handler's `persistentVolumeClaimInfo`). */
export interface PvcHint {
  readonly volumeMode?: 'Filesystem' | 'Block';
  /** Bytes: the PVC's status capacity. */
  readonly capacity?: number;
  /** Bytes: the PVC's requested storage. */
  readonly requests?: number;
}

/** One device address for ConfigDrive's `devices` metadata (cloud-init.go DeviceData). */
export interface DeviceMetadata {
  readonly type: 'nic' | 'hostdev';
  readonly bus: string;
  readonly address: string;
  readonly mac?: string;
  readonly serial?: string;
  readonly numaNode?: number;
  readonly alignedCPUs?: readonly number[];
  readonly tags: readonly string[];
}

export interface PrepareOptions {
  /** ISO writer for cloud-init and config disks (default `auto`: xorrisofs if installed). */
  readonly isoWriter?: IsoWriterChoice;
  /** virt-launcher `--disk-memory-limit`, applied to `qemu-img info` of container disks (default 2097152000). */
  readonly diskMemoryLimitBytes?: number;
  /** Cluster `lessPVCSpaceToleration` percent (default 10). */
  readonly lessPVCSpaceToleration?: number;
  /** Cluster `minimumReservePVCBytes` (default 131072). */
  readonly minimumReservePVCBytes?: number;
  /** Per volume name: PVC facts; falls back to `status.volumeStatus[].persistentVolumeClaimInfo`, then to probing. */
  readonly pvcs?: Readonly<Record<string, PvcHint>>;
  /**
   * `pod` (default): a hostDisk is the file `<private>/vmi-disks/<vol>/<basename>` (its directory is a hostPath
   * mount). `host`: no mount namespace (local mode), the launcher opens `hostDisk.path` itself.
   */
  readonly hostDiskView?: 'pod' | 'host';
  /** ConfigDrive `devices` metadata (tagged NICs and host devices with their guest addresses). */
  readonly devices?: readonly DeviceMetadata[];
  /** Migration target: ISOs are zero-filled placeholders of the source's sizes (`status.volumeStatus[].size`). */
  readonly emptyIsos?: boolean;
  /**
   * Owner of the images the launcher makes (KubeVirt: the qemu user 107:107 for non-root VMIs).
   * Unset: files keep the launcher's own uid/gid.
   */
  readonly owner?: { readonly uid: number; readonly gid: number };
  /** Receives KubeVirt's events (reason, message), e.g. ToleratedSmallPV. */
  readonly onEvent?: (reason: string, message: string) => void;
  readonly log?: Logger;
}
