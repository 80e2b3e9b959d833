// hostDisk volumes: a raw image on the node. In a pod, the directory of `hostDisk.path` is a hostPath
// mount at `<private>/vmi-disks/<vol>` and the launcher opens `<that>/<basename(path)>`. `Disk` needs
// the file to exist; `DiskOrCreate` creates a sparse raw file of `capacity`, shrunk to the free space
// when that is within the cluster's lessPVCSpaceToleration (host-disk.go). Filesystem PVCs use the
// same creation path (KubeVirt replaces them by a DiskOrCreate hostDisk at `.../disk.img`).
import { closeFd, ftruncate, openFd, stat, statfs } from '../fs/async.ts';
import { dirname } from 'node:path';
import { quantityToNumber } from '../../src/api/quantity.ts';
import type { Volume } from '../../src/api/types.ts';
import { DEFAULT_LESS_PVC_SPACE_TOLERATION, DEFAULT_MINIMUM_RESERVE_PVC_BYTES, EVENT_REASON_TOLERATED_SMALL_PV, MESSAGES } from './constants.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { hostDiskMounted, vmiDiskDir, type DiskDirs } from './paths.ts';
import type { PreparedVolume } from './prepared.ts';

const SOURCE = 'hostDisk';

export interface SpaceDecision {
  readonly size: number;
  /** Set when the disk is made smaller than asked (KubeVirt's ToleratedSmallPV event message). */
  readonly tolerated?: string;
}

/**
 * How big a new sparse disk is (handleRequestedSizeAndCreateSparseRaw/shrinkRequestedSize): the
 * requested size if it fits in the free space; the free space if the request is at most
 * `toleration` percent larger; else an error naming the path.
 */
export function decideSparseSize(path: string, requested: number, available: number, toleration: number): SpaceDecision | { error: string } {
  if (requested <= available) return { size: requested };
  const tolerated = Math.floor((requested * (100 - toleration)) / 100);
  if (tolerated > available) return { error: MESSAGES.notEnoughSpace(path, requested, available, toleration) };
  return { size: available, tolerated: MESSAGES.toleratedSmallPV(requested, available, toleration) };
}

/** Free bytes for an unprivileged writer in `dir`, minus `reserve` (dirBytesAvailable). */
export async function bytesAvailable(dir: string, reserve: number): Promise<number> {
  const s = await statfs(dir);
  return Math.max(0, s.bavail * s.bsize - reserve);
}

/** Creates a sparse raw file of exactly `size` bytes; fails if it exists. */
export async function createSparseRaw(path: string, size: number): Promise<void> {
  const fd = await openFd(path, 'wx', 0o666);
  try {
    await ftruncate(fd, size);
  } finally {
    await closeFd(fd);
  }
}

export interface SparseOptions {
  readonly lessPVCSpaceToleration?: number;
  readonly minimumReservePVCBytes?: number;
  readonly onEvent?: (reason: string, message: string) => void;
}

/** Creates `path` as a sparse raw disk of `requested` bytes under KubeVirt's free-space rules. */
export async function createSparseRawWithinSpace(volume: string, source: string, path: string, requested: number, opts: SparseOptions): Promise<number> {
  const toleration = opts.lessPVCSpaceToleration ?? DEFAULT_LESS_PVC_SPACE_TOLERATION;
  const reserve = opts.minimumReservePVCBytes ?? DEFAULT_MINIMUM_RESERVE_PVC_BYTES;
  let available: number;
  try {
    available = await bytesAvailable(dirname(path), reserve);
  } catch (err) {
    throw new VolumePreparationError(volume, source, `cannot measure free space of ${dirname(path)}: ${errorMessage(err)}`);
  }
  const decision = decideSparseSize(path, requested, available, toleration);
  if ('error' in decision) throw new VolumePreparationError(volume, source, decision.error);
  if (decision.tolerated) opts.onEvent?.(EVENT_REASON_TOLERATED_SMALL_PV, decision.tolerated);
  try {
    await createSparseRaw(path, decision.size);
  } catch (err) {
    throw new VolumePreparationError(volume, source, `couldn't create a sparse raw file for disk path ${path}: ${errorMessage(err)}`);
  }
  return decision.size;
}

export interface HostDiskOptions extends SparseOptions {
  readonly view?: 'pod' | 'host';
}

/** The file the launcher opens for a hostDisk volume. */
export function hostDiskPath(dirs: DiskDirs, volume: Volume, view: 'pod' | 'host'): string {
  const path = volume.hostDisk?.path ?? '';
  return view === 'host' ? path : hostDiskMounted(dirs, volume.name, path);
}

export async function prepareHostDisk(volume: Volume, dirs: DiskDirs, opts: HostDiskOptions = {}): Promise<PreparedVolume> {
  const hd = volume.hostDisk;
  if (!hd?.path) throw new VolumePreparationError(volume.name, SOURCE, 'hostDisk.path is required');
  const view = opts.view ?? 'pod';
  const path = hostDiskPath(dirs, volume, view);
  const dir = view === 'host' ? dirname(path) : vmiDiskDir(dirs, volume.name);
  const done = (created: boolean, type: 'file' | 'block'): PreparedVolume => ({
    name: volume.name, source: SOURCE, type, path, format: 'raw', readOnly: false, discard: false, shared: hd.shared ?? false, created,
  });
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw new VolumePreparationError(volume.name, SOURCE, `cannot stat ${path}: ${err.message}`);
  });
  if (st) {
    if (st.isFile()) return done(false, 'file');
    if (st.isBlockDevice()) return done(false, 'block');
    throw new VolumePreparationError(volume.name, SOURCE, `${path} (hostDisk.path ${hd.path}) is neither a regular file nor a block device`);
  }
  if (hd.type === 'Disk') {
    throw new VolumePreparationError(volume.name, SOURCE, `hostDisk.path ${hd.path} of type Disk does not exist (looked for ${path})`);
  }
  if (hd.type !== 'DiskOrCreate') throw new VolumePreparationError(volume.name, SOURCE, `hostDisk.type ${JSON.stringify(hd.type)} must be Disk or DiskOrCreate`);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
    throw new VolumePreparationError(volume.name, SOURCE, `directory ${dir} for hostDisk.path ${hd.path} does not exist${view === 'pod' ? ' (the hostPath volume is not mounted)' : ''}`);
  }
  if (hd.capacity === undefined) throw new VolumePreparationError(volume.name, SOURCE, 'hostDisk.capacity is required to create a DiskOrCreate disk');
  let requested: number;
  try {
    requested = quantityToNumber(hd.capacity);
  } catch (err) {
    throw new VolumePreparationError(volume.name, SOURCE, `hostDisk.capacity: ${errorMessage(err)}`);
  }
  if (requested <= 0) throw new VolumePreparationError(volume.name, SOURCE, MESSAGES.sizeTooLow(volume.name));
  await createSparseRawWithinSpace(volume.name, SOURCE, path, requested, opts);
  return done(true, 'file');
}
