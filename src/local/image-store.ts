// The local image store: container-disk and kernel-boot images for machines without a container
// runtime (the local mode, `qvirt run`, edge boxes). An image is a directory tree standing in for the
// image's root filesystem: a containerDisk image keeps its disk under `disk/` (KubeVirt's convention),
// a kernel-boot image keeps kernel and initrd wherever its VMI's kernelPath/initrdPath say.
//
// The node side then does what KubeVirt's container-disk containers + virt-handler's mounts do: it
// makes the launcher see `<container-disk-dir>/disk_<volumeIndex>.img` and
// `<container-disk-dir>/kernel-boot/<basename>` (symlinks into the store).
import { createHash } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile, lstat, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

export class ImageStoreError extends Error {
  override name = 'ImageStoreError';
}

export interface ImageInfo {
  readonly ref: string;
  readonly dir: string;
  readonly rootfs: string;
  readonly importedAt: string;
  readonly sizeBytes: number;
  /** The image's ID (sha256 hex of what was imported when): a runtime's `repo@sha256:<id>` pins it. */
  readonly digest: string;
}

/** The ID of an imported image: it changes with every import, as a pulled image's digest does. */
export function imageDigest(meta: { ref: string; importedAt: string; sizeBytes: number }): string {
  return createHash('sha256').update(`${meta.ref}\n${meta.importedAt}\n${meta.sizeBytes}`).digest('hex');
}

/** `repo@sha256:<hex>` → [repo, hex]; undefined for a tag reference. */
function digestRef(ref: string): [string, string] | undefined {
  const m = /^(.+)@sha256:([0-9a-f]{64})$/.exec(ref.trim());
  return m ? [m[1]!, m[2]!] : undefined;
}

/** The repository of a normalized reference (`a/b:tag` → `a/b`). */
export function repositoryOf(norm: string): string {
  const at = norm.indexOf('@');
  if (at >= 0) return norm.slice(0, at);
  const lastSlash = norm.lastIndexOf('/');
  const lastColon = norm.lastIndexOf(':');
  return lastColon > lastSlash ? norm.slice(0, lastColon) : norm;
}

/** Normalizes an image reference the way a container runtime keys it: a missing tag means `:latest`. */
export function normalizeImageRef(ref: string): string {
  const r = ref.trim();
  if (!r || /\s/.test(r)) throw new ImageStoreError(`"${ref}" is not an image reference`);
  if (r.includes('@')) return r;
  const lastSlash = r.lastIndexOf('/');
  const lastColon = r.lastIndexOf(':');
  return lastColon > lastSlash ? r : `${r}:latest`;
}

export function defaultImageStoreDir(): string {
  if (process.env.QVIRT_IMAGE_STORE) return process.env.QVIRT_IMAGE_STORE;
  return process.getuid?.() === 0 ? '/var/lib/qvirt/images' : join(homedir(), '.local/share/qvirt/images');
}

const keyOf = (ref: string) => createHash('sha256').update(normalizeImageRef(ref)).digest('hex').slice(0, 32);

export type Progress = (done: number, total: number) => void;

async function copyWithProgress(src: string, dst: string, onProgress?: Progress): Promise<void> {
  const total = (await stat(src)).size;
  if (!onProgress) {
    // A reflink where the filesystem can, a plain copy where it cannot.
    await copyFile(src, dst, constants.COPYFILE_FICLONE);
    return;
  }
  let done = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      done += chunk.length;
      onProgress(done, total);
      cb(null, chunk);
    },
  });
  await pipeline(createReadStream(src), counter, createWriteStream(dst));
}

export class ImageStore {
  readonly root: string;

  constructor(root = defaultImageStoreDir()) {
    this.root = root;
  }

  private dirOf(ref: string): string {
    return join(this.root, keyOf(ref));
  }

  /** Adds a file tree to the store under an image name, replacing what was there (atomically). */
  private async put(ref: string, files: ReadonlyArray<{ src: string; dest: string }>, onProgress?: Progress): Promise<ImageInfo> {
    const norm = normalizeImageRef(ref);
    const dir = this.dirOf(norm);
    const staging = `${dir}.importing-${process.pid}-${Date.now()}`;
    await mkdir(join(staging, 'rootfs'), { recursive: true });
    let size = 0;
    try {
      for (const f of files) {
        const st = await stat(f.src).catch(() => undefined);
        if (!st?.isFile()) throw new ImageStoreError(`cannot import ${f.src} as ${norm}: not a readable file`);
        const dest = join(staging, 'rootfs', posix.normalize(`/${f.dest}`));
        await mkdir(join(dest, '..'), { recursive: true });
        await copyWithProgress(f.src, dest, onProgress);
        size += st.size;
      }
      const info = { ref: norm, importedAt: new Date().toISOString(), sizeBytes: size };
      await writeFile(join(staging, 'image.json'), `${JSON.stringify(info, null, 2)}\n`);
      await rm(dir, { recursive: true, force: true });
      await rename(staging, dir);
      return { ...info, digest: imageDigest(info), dir, rootfs: join(dir, 'rootfs') };
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
  }

  /** Imports a disk image as a containerDisk image: the file lands in the image's `disk/` directory. */
  importDisk(ref: string, file: string, onProgress?: Progress): Promise<ImageInfo> {
    return this.put(ref, [{ src: file, dest: `disk/${basename(file)}` }], onProgress);
  }

  /** Imports arbitrary files at given paths of the image (a kernel-boot image: `/boot/vmlinuz`, ...). */
  importFiles(ref: string, files: ReadonlyArray<{ src: string; dest: string }>, onProgress?: Progress): Promise<ImageInfo> {
    return this.put(ref, files, onProgress);
  }

  async get(ref: string): Promise<ImageInfo | undefined> {
    // `repo@sha256:<id>` (a migration target pinned to its source's image): the image of that repository with that ID.
    const pinned = digestRef(ref);
    if (pinned) return (await this.list()).find((i) => repositoryOf(i.ref) === pinned[0] && i.digest === pinned[1]);
    const dir = this.dirOf(ref);
    try {
      const meta = JSON.parse(await readFile(join(dir, 'image.json'), 'utf8')) as Omit<ImageInfo, 'dir' | 'rootfs' | 'digest'>;
      return { ...meta, digest: imageDigest(meta), dir, rootfs: join(dir, 'rootfs') };
    } catch {
      return undefined;
    }
  }

  async list(): Promise<ImageInfo[]> {
    const out: ImageInfo[] = [];
    let names: string[] = [];
    try { names = await readdir(this.root); } catch { return out; }
    for (const n of names) {
      if (n.includes('.importing-')) continue;
      try {
        const meta = JSON.parse(await readFile(join(this.root, n, 'image.json'), 'utf8')) as Omit<ImageInfo, 'dir' | 'rootfs' | 'digest'>;
        out.push({ ...meta, digest: imageDigest(meta), dir: join(this.root, n), rootfs: join(this.root, n, 'rootfs') });
      } catch { /* not an image */ }
    }
    return out.sort((a, b) => a.ref.localeCompare(b.ref));
  }

  async remove(ref: string): Promise<boolean> {
    const info = await this.get(ref);
    if (!info) return false;
    await rm(info.dir, { recursive: true, force: true });
    return true;
  }

  /** Resolves an image or fails with the error a kubelet would report (ErrImagePull-like). */
  async require(ref: string): Promise<ImageInfo> {
    const info = await this.get(ref);
    if (!info) throw new ImageStoreError(`image "${normalizeImageRef(ref)}" is not in the local image store (${this.root}); import it with: qvirt image import ${normalizeImageRef(ref)} FILE`);
    return info;
  }

  /**
   * The disk file of a containerDisk image: the file at `path` inside the image if given, else the
   * single file in `/disk` (KubeVirt's container-disk convention).
   */
  async containerDiskFile(ref: string, path?: string): Promise<string> {
    const info = await this.require(ref);
    if (path && path !== '/disk' && path !== '/disk/') {
      const p = join(info.rootfs, posix.normalize(`/${path}`));
      const st = await stat(p).catch(() => undefined);
      if (st?.isFile()) return p;
      if (!st?.isDirectory()) throw new ImageStoreError(`image "${info.ref}" has no file or directory ${path}`);
      return this.singleFile(info.ref, p);
    }
    return this.singleFile(info.ref, join(info.rootfs, 'disk'));
  }

  private async singleFile(ref: string, dir: string): Promise<string> {
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
    if (names.length !== 1) throw new ImageStoreError(`image "${ref}" must hold exactly one disk file in ${dir.slice(dir.indexOf('/rootfs') + 7) || '/'}, found ${names.length}`);
    return join(dir, names[0]!);
  }

  /** A file inside an image (kernel-boot artifacts). */
  async fileIn(ref: string, path: string): Promise<string> {
    const info = await this.require(ref);
    const p = join(info.rootfs, posix.normalize(`/${path}`));
    const st = await stat(p).catch(() => undefined);
    if (!st?.isFile()) throw new ImageStoreError(`image "${info.ref}" has no file ${path}`);
    return p;
  }
}

/** The parts of a VMI the node needs to make container disks visible to its launcher. */
export interface ContainerDiskVolumes {
  readonly volumes?: ReadonlyArray<{ readonly name: string; readonly containerDisk?: { readonly image: string; readonly path?: string } }>;
  readonly kernelBoot?: { readonly container?: { readonly image: string; readonly kernelPath?: string; readonly initrdPath?: string } };
}

async function replaceSymlink(target: string, link: string): Promise<void> {
  const st = await lstat(link).catch(() => undefined);
  if (st) await unlink(link);
  await symlink(target, link);
}

/**
 * Makes every containerDisk of a VMI appear where its launcher looks for it:
 * `<containerDiskDir>/disk_<index in spec.volumes>.img`, and the kernel-boot artifacts in
 * `<containerDiskDir>/kernel-boot/`. Returns the links it made.
 */
export async function materializeContainerDisks(spec: ContainerDiskVolumes, store: ImageStore, containerDiskDir: string): Promise<string[]> {
  await mkdir(containerDiskDir, { recursive: true });
  const made: string[] = [];
  const volumes = spec.volumes ?? [];
  for (let i = 0; i < volumes.length; i++) {
    const cd = volumes[i]!.containerDisk;
    if (!cd) continue;
    let file: string;
    try {
      file = await store.containerDiskFile(cd.image, cd.path);
    } catch (err) {
      throw new ImageStoreError(`spec.volumes[${i}].containerDisk.image: ${(err as Error).message}`);
    }
    const link = join(containerDiskDir, `disk_${i}.img`);
    await replaceSymlink(file, link);
    made.push(link);
  }
  const kb = spec.kernelBoot?.container;
  if (kb) {
    const dir = join(containerDiskDir, 'kernel-boot');
    await mkdir(dir, { recursive: true });
    for (const [field, p] of [['kernelPath', kb.kernelPath], ['initrdPath', kb.initrdPath]] as const) {
      if (!p) continue;
      let file: string;
      try {
        file = await store.fileIn(kb.image, p);
      } catch (err) {
        throw new ImageStoreError(`spec.domain.firmware.kernelBoot.container.${field}: ${(err as Error).message}`);
      }
      const link = join(dir, basename(p));
      await replaceSymlink(file, link);
      made.push(link);
    }
  }
  return made;
}
