// emptyDisk volumes: a sparse qcow2 of `emptyDisk.capacity` (rounded down to a whole MiB) at
// `<libvirt-runtime-dir>/empty-disks/<vol>.qcow2`, created once per pod and kept across launcher
// restarts (emptydisk.go CreateTemporaryDisks). It lives and dies with the pod.
import { mkdir, stat } from '../fs/async.ts';
import { quantityValue } from '../../src/api/quantity.ts';
import type { Volume } from '../../src/api/types.ts';
import { MESSAGES } from './constants.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { emptyDisk, emptyDiskDir, type DiskDirs } from './paths.ts';
import type { PreparedVolume } from './prepared.ts';
import { alignImageSizeTo1MiB } from './pvc.ts';
import { createQcow2 } from './tools.ts';

const SOURCE = 'emptyDisk';

/** The size KubeVirt gives an empty disk: capacity (rounded up to whole bytes) aligned down to 1 MiB. */
export function emptyDiskSize(volume: Volume): number | { error: string } {
  const capacity = volume.emptyDisk?.capacity;
  if (capacity === undefined) return { error: 'emptyDisk.capacity is required' };
  let bytes: bigint;
  try {
    bytes = quantityValue(capacity);
  } catch (err) {
    return { error: `emptyDisk.capacity: ${errorMessage(err)}` };
  }
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { error: `emptyDisk.capacity ${capacity} is too large` };
  const size = alignImageSizeTo1MiB(Number(bytes));
  if (size <= 0) return { error: MESSAGES.sizeTooLow(volume.name) };
  return size;
}

export async function prepareEmptyDisk(volume: Volume, dirs: DiskDirs): Promise<PreparedVolume> {
  const size = emptyDiskSize(volume);
  if (typeof size !== 'number') throw new VolumePreparationError(volume.name, SOURCE, size.error);
  const path = emptyDisk(dirs, volume.name);
  const done = (created: boolean): PreparedVolume => ({ name: volume.name, source: SOURCE, type: 'file', path, format: 'qcow2', readOnly: false, discard: true, created });
  if (await stat(path).catch(() => undefined)) return done(false);
  try {
    await mkdir(emptyDiskDir(dirs), { recursive: true });
    await createQcow2(path, size);
  } catch (err) {
    throw new VolumePreparationError(volume.name, SOURCE, `creating ${path}: ${errorMessage(err)}`, { cause: err });
  }
  return done(true);
}
