// A volume plugged into a running VM. A claim (addvolume) has been made available by the node in
// the launcher's hotplug dir (`<hotplug-disk-dir>/<vol>.img` or the block device
// `<hotplug-disk-dir>/<vol>`); nothing is created for it. A hostDisk added to a running VMI is
// prepared as at start (DiskOrCreate creates its image) — in local mode, where hostDisks are opened
// at their host path; in a pod its directory would have to be a hostPath mount made at pod creation.
// Same result shape as prepareVolumes', for the converter's hotplug planner.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import type { DiskDirs } from './paths.ts';
import type { PreparedVolume } from './prepared.ts';
import { preparePvc, pvcHintFromStatus } from './pvc.ts';
import { prepareHostDisk } from './host-disk.ts';

export async function prepareHotplugVolume(vmi: VirtualMachineInstance, name: string, dirs: DiskDirs, opts: { hostDiskView?: 'pod' | 'host' } = {}): Promise<PreparedVolume> {
  const volume = (vmi.spec.volumes ?? []).find((v) => v.name === name);
  if (!volume) throw new VolumePreparationError(name, 'unknown', 'no such volume in spec.volumes');
  if (volume.hostDisk) return prepareHostDisk(volume, dirs, opts.hostDiskView ? { view: opts.hostDiskView } : {});
  if (!volume.persistentVolumeClaim && !volume.dataVolume) {
    throw new VolumePreparationError(name, 'unknown', 'only persistentVolumeClaim, dataVolume and hostDisk volumes can be hotplugged');
  }
  let hint;
  try {
    hint = pvcHintFromStatus(vmi, name);
  } catch (err) {
    throw new VolumePreparationError(name, 'persistentVolumeClaim', errorMessage(err));
  }
  return preparePvc(volume, dirs, hint, { hotplug: true });
}
