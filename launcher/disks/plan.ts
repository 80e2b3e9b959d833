// Where each volume's disk will be, without touching the filesystem: KubeVirt's converter mapping
// (pkg/virt-launcher/virtwrap/converter/storage/volume.go) from volume source to the file or device
// QEMU opens and its format. Pure, for the command-line builder and for planning a migration target;
// prepareVolumes makes these files exist and agrees with this table (tested).
import type { VirtualMachineInstance, Volume } from '../../src/api/types.ts';
import {
  configDriveIso, configMapIso, downwardAPIIso, downwardMetricsDisk, emptyDisk, ephemeralOverlay, hostDiskMounted, hotplugBlockDevice,
  hotplugFilesystemImage, noCloudIso, pvcBlockDevice, pvcFilesystemImage, secretIso, serviceAccountIso, sysprepIso, type DiskDirs,
} from './paths.ts';
import { volumeSourceKind, type ImageFormat, type VolumeSourceKind } from './prepared.ts';

export interface PlannedVolume {
  readonly name: string;
  readonly source: VolumeSourceKind;
  readonly type: 'file' | 'block';
  readonly path: string;
  readonly format: ImageFormat;
}

export interface PlanFacts {
  /** The PVC / DataVolume / ephemeral backing is a block device. */
  readonly isBlock?: boolean;
  /** The volume is hotplugged. */
  readonly hotplug?: boolean;
  /** See PrepareOptions.hostDiskView. */
  readonly hostDiskView?: 'pod' | 'host';
}

/** The disk of one volume, or undefined for sources that are not disks (memoryDump, containerPath). */
export function planVolume(vmi: VirtualMachineInstance, volume: Volume, dirs: DiskDirs, facts: PlanFacts = {}): PlannedVolume | undefined {
  const source = volumeSourceKind(volume);
  if (!source) return undefined;
  const ns = vmi.metadata?.namespace ?? '';
  const name = vmi.metadata?.name ?? '';
  const file = (path: string, format: ImageFormat): PlannedVolume => ({ name: volume.name, source, type: 'file', path, format });
  switch (source) {
    case 'containerDisk':
    case 'ephemeral':
      return file(ephemeralOverlay(dirs, volume.name), 'qcow2');
    case 'emptyDisk':
      return file(emptyDisk(dirs, volume.name), 'qcow2');
    case 'persistentVolumeClaim':
    case 'dataVolume':
      if (facts.hotplug) {
        return facts.isBlock
          ? { name: volume.name, source, type: 'block', path: hotplugBlockDevice(dirs, volume.name), format: 'raw' }
          : file(hotplugFilesystemImage(dirs, volume.name), 'raw');
      }
      return facts.isBlock
        ? { name: volume.name, source, type: 'block', path: pvcBlockDevice(dirs, volume.name), format: 'raw' }
        : file(pvcFilesystemImage(dirs, volume.name), 'raw');
    case 'hostDisk':
      return file(facts.hostDiskView === 'host' ? (volume.hostDisk?.path ?? '') : hostDiskMounted(dirs, volume.name, volume.hostDisk?.path ?? ''), 'raw');
    case 'cloudInitNoCloud':
      return file(noCloudIso(dirs, ns, name), 'raw');
    case 'cloudInitConfigDrive':
      return file(configDriveIso(dirs, ns, name), 'raw');
    case 'configMap':
      return file(configMapIso(dirs, volume.name), 'raw');
    case 'secret':
      return file(secretIso(dirs, volume.name), 'raw');
    case 'downwardAPI':
      return file(downwardAPIIso(dirs, volume.name), 'raw');
    case 'serviceAccount':
      return file(serviceAccountIso(dirs), 'raw');
    case 'sysprep':
      return file(sysprepIso(dirs, volume.name), 'raw');
    case 'downwardMetrics':
      return file(downwardMetricsDisk(dirs), 'raw');
    case 'memoryDump':
    case 'containerPath':
      return undefined;
  }
}
