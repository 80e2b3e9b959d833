// What to remove when a VMI is gone: what the launcher made for it (overlays, empty disks, seed and
// config ISOs, their staging files). Never a PVC's disk.img, a hostDisk, a block device, or a
// containerDisk base image: those belong to the user or to the node.
import { rm } from '../fs/async.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { FILE_NAMES } from './constants.ts';
import { configVolumeLayout } from './config-volumes.ts';
import { cloudInitBase, emptyDisk, ephemeralVolumeDir, type DiskDirs } from './paths.ts';

/** The paths the launcher owns for this VMI (pure; safe to compute after a launcher restart). */
export function cleanupPaths(vmi: VirtualMachineInstance, dirs: DiskDirs): string[] {
  const out: string[] = [];
  let cloudInit = false;
  let serviceAccount = false;
  for (const v of vmi.spec.volumes ?? []) {
    if (v.containerDisk || v.ephemeral) out.push(ephemeralVolumeDir(dirs, v.name));
    else if (v.emptyDisk) out.push(emptyDisk(dirs, v.name));
    else if (v.cloudInitNoCloud || v.cloudInitConfigDrive) cloudInit = true;
    else {
      const layout = configVolumeLayout(dirs, v);
      if (!layout) continue;
      if (layout.kind === 'serviceAccount') {
        if (serviceAccount) continue;
        serviceAccount = true;
      }
      out.push(layout.iso, `${layout.iso}${FILE_NAMES.stagingSuffix}`);
    }
  }
  // Never compute the base of a nameless VMI: it would be the whole cloud-init-data directory.
  if (cloudInit && vmi.metadata?.name && vmi.metadata.namespace) out.push(cloudInitBase(dirs, vmi.metadata.namespace, vmi.metadata.name));
  return out;
}

/** Removes what `cleanupPaths` names; missing paths are fine. Returns the paths it was asked to remove. */
export async function cleanupVolumes(vmi: VirtualMachineInstance, dirs: DiskDirs): Promise<string[]> {
  const paths = cleanupPaths(vmi, dirs);
  for (const p of paths) await rm(p, { recursive: true, force: true });
  return paths;
}
