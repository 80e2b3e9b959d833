// A volume plugged into a running VM (addvolume): the node has made its claim available in the
// launcher's hotplug dir (`<hotplug-disk-dir>/<vol>.img` or the block device `<hotplug-disk-dir>/<vol>`);
// nothing is created here. Same result shape as prepareVolumes', for the converter's hotplug planner.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import type { DiskDirs } from './paths.ts';
import type { PreparedVolume } from './prepared.ts';
import { preparePvc, pvcHintFromStatus } from './pvc.ts';

export async function prepareHotplugVolume(vmi: VirtualMachineInstance, name: string, dirs: DiskDirs): Promise<PreparedVolume> {
  const volume = (vmi.spec.volumes ?? []).find((v) => v.name === name);
  if (!volume) throw new VolumePreparationError(name, 'unknown', 'no such volume in spec.volumes');
  if (!volume.persistentVolumeClaim && !volume.dataVolume) {
    throw new VolumePreparationError(name, 'unknown', 'only persistentVolumeClaim and dataVolume volumes can be hotplugged');
  }
  let hint;
  try {
    hint = pvcHintFromStatus(vmi, name);
  } catch (err) {
    throw new VolumePreparationError(name, 'persistentVolumeClaim', errorMessage(err));
  }
  return preparePvc(volume, dirs, hint, { hotplug: true });
}
