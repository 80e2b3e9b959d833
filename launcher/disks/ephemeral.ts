// `ephemeral.persistentVolumeClaim` volumes: the PVC's disk (`<private>/vmi-disks/<vol>/disk.img`, or
// the block device `/dev/<vol>`) is opened read-only as the raw backing file of a qcow2 overlay in
// `<ephemeral-disk-dir>/disk-data/<vol>/disk.qcow2`; writes vanish with the VMI. The overlay helper
// here is shared with containerDisk volumes (KubeVirt's ephemeralDiskCreator).
import { access, chmod, constants, mkdir, stat } from '../fs/async.ts';
import { resolve } from 'node:path';
import type { Volume } from '../../src/api/types.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { ephemeralOverlay, ephemeralVolumeDir, pvcBlockDevice, pvcFilesystemImage, type DiskDirs } from './paths.ts';
import type { PreparedVolume, PvcHint } from './prepared.ts';
import { detectVolumeMode } from './pvc.ts';
import { createOverlay, type ImageFormat } from './tools.ts';

const SOURCE = 'ephemeral';

/**
 * Creates `<ephemeral-disk-dir>/disk-data/<vol>/disk.qcow2` backed by `backing` unless it exists
 * (KubeVirt keeps an existing overlay: a restarted launcher must not lose the guest's writes).
 */
export async function ensureOverlay(dirs: DiskDirs, volume: string, source: string, backing: string, backingFormat: ImageFormat): Promise<{ path: string; created: boolean }> {
  const path = ephemeralOverlay(dirs, volume);
  if (await stat(path).catch(() => undefined)) return { path, created: false };
  try {
    await mkdir(ephemeralVolumeDir(dirs, volume), { recursive: true });
    // qemu-img resolves a relative backing path against the overlay's directory: always record an absolute one
    await createOverlay(path, resolve(backing), backingFormat);
    await chmod(path, 0o640);
  } catch (err) {
    throw new VolumePreparationError(volume, source, `creating overlay ${path} on ${backing}: ${errorMessage(err)}`, { cause: err });
  }
  return { path, created: true };
}

/** Prepares the overlay of an `ephemeral` volume. */
export async function prepareEphemeral(volume: Volume, dirs: DiskDirs, hint: PvcHint | undefined): Promise<PreparedVolume> {
  if (!volume.ephemeral?.persistentVolumeClaim) throw new VolumePreparationError(volume.name, SOURCE, 'ephemeral.persistentVolumeClaim is required');
  const mode = await detectVolumeMode(dirs, volume.name, SOURCE, hint?.volumeMode);
  const backing = mode === 'Block' ? pvcBlockDevice(dirs, volume.name) : pvcFilesystemImage(dirs, volume.name);
  try {
    await access(backing, constants.R_OK);
  } catch (err) {
    throw new VolumePreparationError(volume.name, SOURCE, `backing ${mode === 'Block' ? 'device' : 'image'} ${backing} of claim ${volume.ephemeral.persistentVolumeClaim.claimName} is not readable: ${errorMessage(err)}`);
  }
  const { path, created } = await ensureOverlay(dirs, volume.name, SOURCE, backing, 'raw');
  return {
    name: volume.name, source: SOURCE, type: 'file', path, format: 'qcow2', readOnly: false, discard: true,
    backing: { type: mode === 'Block' ? 'block' : 'file', path: backing, format: 'raw' }, created,
  };
}
