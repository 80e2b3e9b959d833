// I/O probes on prepared disks that decide cache and aio modes (KubeVirt converter.go):
//  - direct I/O: can the file (or device) be opened with O_DIRECT? Some filesystems refuse it (ramfs,
//    procfs, tmpfs before Linux 6.6), which turns KubeVirt's default cache=none into writethrough. A missing file is probed by creating and removing it.
//    Overlays also need their backing file's filesystem to support it.
//  - preallocated: `qemu-img info` virtual size <= actual size (IsPreAllocated); with cache=none that
//    makes KubeVirt choose io=native.
import { constants } from 'node:fs';
import { closeFd, openFd, rm, stat } from '../fs/async.ts';
import type { PreparedVolume } from './prepared.ts';
import { qemuImgInfo } from './tools.ts';

export interface DiskProbe {
  readonly directIO?: boolean;
  readonly backingDirectIO?: boolean;
  readonly preallocated?: boolean;
}

/** directIOChecker.check: true if O_DIRECT opens, false if the filesystem refuses it (EINVAL); other errors throw. */
export async function supportsDirectIO(path: string, kind: 'file' | 'block' = 'file'): Promise<boolean> {
  let flags = constants.O_RDONLY;
  let created = false;
  if (kind === 'file' && !(await stat(path).catch(() => undefined))) {
    flags |= constants.O_CREAT;
    created = true;
  }
  try {
    const fd = await openFd(path, flags | constants.O_DIRECT, 0o600).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EINVAL') throw err;
      await closeFd(await openFd(path, flags, 0o600));
      return undefined;
    });
    if (fd === undefined) return false;
    await closeFd(fd);
    return true;
  } finally {
    if (created) await rm(path, { force: true });
  }
}

/** IsPreAllocated: qemu-img's actual size covers the virtual size. False when qemu-img cannot tell. */
export async function isPreallocated(path: string): Promise<boolean> {
  try {
    const info = await qemuImgInfo(path);
    return info.actualSize !== undefined && info.virtualSize <= info.actualSize;
  } catch {
    return false;
  }
}

/** The probes for one prepared volume (for the converter's cache/io decisions). */
export async function probeVolume(p: PreparedVolume): Promise<DiskProbe> {
  const directIO = await supportsDirectIO(p.path, p.type).catch(() => undefined);
  const backingDirectIO = p.backing ? await supportsDirectIO(p.backing.path, p.backing.type).catch(() => undefined) : undefined;
  const preallocated = p.type === 'file' ? await isPreallocated(p.path) : undefined;
  return {
    ...(directIO !== undefined ? { directIO } : {}),
    ...(backingDirectIO !== undefined ? { backingDirectIO } : {}),
    ...(preallocated !== undefined ? { preallocated } : {}),
  };
}
