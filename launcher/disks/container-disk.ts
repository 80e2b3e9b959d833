// containerDisk volumes: the image's disk file, made visible to the launcher by the node side
// (virt-handler bind-mounts it at `<container-disk-dir>/disk_<volumeIndex>.img`; qvirt's local image
// store symlinks it there), becomes the read-only backing file of a qcow2 overlay in the ephemeral
// disk dir, so the guest writes go to the pod and the image stays pristine.
import { access, constants, readdir, stat } from '../fs/async.ts';
import { join, normalize } from 'node:path';
import type { Volume } from '../../src/api/types.ts';
import { CONTAINER_DISK_FALLBACK_PATH, MESSAGES } from './constants.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { containerDiskCopyDir, containerDiskTarget, type DiskDirs } from './paths.ts';
import type { PreparedVolume } from './prepared.ts';
import { qemuImgInfo, type ImageFormat, type ImageInfo } from './tools.ts';
import { ensureOverlay } from './ephemeral.ts';

const SOURCE = 'containerDisk';

/** KubeVirt's VerifyImage: raw, or qcow2 without a backing file. Returns the format or a reason. */
export function verifyContainerDiskImage(info: Pick<ImageInfo, 'format' | 'backingFile'>): { format: ImageFormat } | { error: string } {
  if (info.format === 'raw') return { format: 'raw' };
  if (info.format === 'qcow2') {
    if (info.backingFile) return { error: MESSAGES.unexpectedBackingFile(info.backingFile) };
    return { format: 'qcow2' };
  }
  return { error: MESSAGES.unsupportedFormat(info.format) };
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false;
}

async function singleFile(dir: string, volume: string): Promise<string> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
    throw new VolumePreparationError(volume, SOURCE, `cannot list ${dir}: ${errorMessage(err)}`);
  });
  const files: string[] = [];
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name.endsWith('.sock')) continue;
    if (await isFile(join(dir, e.name))) files.push(e.name);
  }
  if (files.length === 0) throw new VolumePreparationError(volume, SOURCE, `no file found in folder ${dir}, no disk present`);
  if (files.length > 1) throw new VolumePreparationError(volume, SOURCE, `more than one file found in folder ${dir} (${files.sort().join(', ')}), only one disk is allowed`);
  return join(dir, files[0]!);
}

/**
 * Where the image's disk file is: `<cd-dir>/disk_<i>.img` (KubeVirt), else the directory form
 * `<cd-dir>/disk_<i>/` holding the image's files: `containerDisk.path` inside it, or its `disk/`
 * folder, or the single file in it.
 */
export async function resolveContainerDiskBase(dirs: DiskDirs, volumeIndex: number, volume: string, imagePath?: string): Promise<string> {
  const target = containerDiskTarget(dirs, volumeIndex);
  if (await isFile(target)) return target;
  const dir = containerDiskCopyDir(dirs, volumeIndex);
  const dst = await stat(dir).catch(() => undefined);
  if (!dst?.isDirectory()) throw new VolumePreparationError(volume, SOURCE, MESSAGES.containerDiskMissing(target));
  if (imagePath && normalize(`/${imagePath}`) !== CONTAINER_DISK_FALLBACK_PATH) {
    const p = join(dir, normalize(`/${imagePath}`));
    const st = await stat(p).catch(() => undefined);
    if (st?.isFile()) return p;
    if (st?.isDirectory()) return singleFile(p, volume);
    throw new VolumePreparationError(volume, SOURCE, `containerDisk.path ${imagePath} not found in ${dir}`);
  }
  const diskDir = join(dir, CONTAINER_DISK_FALLBACK_PATH);
  if ((await stat(diskDir).catch(() => undefined))?.isDirectory()) return singleFile(diskDir, volume);
  return singleFile(dir, volume);
}

export interface ContainerDiskOptions {
  readonly diskMemoryLimitBytes?: number;
}

/** Prepares the overlay of containerDisk volume `volume` (index `volumeIndex` in spec.volumes). */
export async function prepareContainerDisk(volume: Volume, volumeIndex: number, dirs: DiskDirs, opts: ContainerDiskOptions = {}): Promise<PreparedVolume> {
  const cd = volume.containerDisk;
  if (!cd) throw new VolumePreparationError(volume.name, SOURCE, 'volume has no containerDisk source');
  const base = await resolveContainerDiskBase(dirs, volumeIndex, volume.name, cd.path);
  try {
    await access(base, constants.R_OK);
  } catch (err) {
    throw new VolumePreparationError(volume.name, SOURCE, `image ${base} is not readable: ${errorMessage(err)}`);
  }
  let info: ImageInfo;
  try {
    info = await qemuImgInfo(base, opts.diskMemoryLimitBytes !== undefined ? { memoryLimitBytes: opts.diskMemoryLimitBytes } : {});
  } catch (err) {
    throw new VolumePreparationError(volume.name, SOURCE, `failed to get container disk info: ${errorMessage(err)}`, { cause: err });
  }
  const verdict = verifyContainerDiskImage(info);
  if ('error' in verdict) throw new VolumePreparationError(volume.name, SOURCE, `invalid image in containerDisk ${volume.name}: ${verdict.error}`);
  const { path, created } = await ensureOverlay(dirs, volume.name, SOURCE, base, verdict.format);
  return {
    name: volume.name, source: SOURCE, type: 'file', path, format: 'qcow2', readOnly: false, discard: true,
    backing: { type: 'file', path: base, format: verdict.format }, created,
  };
}
