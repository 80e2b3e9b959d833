// The local image store: container-disk and kernel-boot images for machines without a container
// runtime (the local mode, `qvirt run`, edge boxes). An image is a directory tree standing in for the
// image's root filesystem: a containerDisk image keeps its disk under `disk/` (KubeVirt's convention),
// a kernel-boot image keeps kernel and initrd wherever its VMI's kernelPath/initrdPath say.
//
// The node side then does what KubeVirt's container-disk containers + virt-handler's mounts do: it
// makes the launcher see `<container-disk-dir>/disk_<volumeIndex>.img` and
// `<container-disk-dir>/kernel-boot/<basename>` (symlinks into the store).
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, realpath, rename, rm, stat, symlink, writeFile, lstat, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { treeSize } from './layer-unpack.ts';
import { basename, join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

export class ImageStoreError extends Error {
  override name = 'ImageStoreError';
}

/** The image is not in the store (yet: the node side may be pulling it). */
export class ImageNotPresentError extends ImageStoreError {
  override name = 'ImageNotPresentError';
}

export interface ImageInfo {
  readonly ref: string;
  readonly dir: string;
  readonly rootfs: string;
  readonly importedAt: string;
  readonly sizeBytes: number;
  /**
   * The image's ID, sha256 hex: the manifest digest of a pulled or archived image (the registry's
   * for a pull), the content digest of an imported file (its sha256) or file set; a runtime's
   * `repo@sha256:<id>` pins it.
   */
  readonly digest: string;
  /** Where the image came from (`docker://...`, `oci-archive:...`, `file:...`). */
  readonly source?: string;
}

/** What image.json holds. */
interface StoredMeta { ref: string; importedAt: string; sizeBytes: number; digest?: string; source?: string }

/** The ID of an image imported before image.json recorded digests: derived from its import. */
export function imageDigest(meta: { ref: string; importedAt: string; sizeBytes: number; digest?: string }): string {
  if (meta.digest && /^sha256:[0-9a-f]{64}$/.test(meta.digest)) return meta.digest.slice(7);
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

/** Copies a file, returning the sha256 hex of its content. */
async function copyWithProgress(src: string, dst: string, onProgress?: Progress): Promise<string> {
  const total = (await stat(src)).size;
  let done = 0;
  const hash = createHash('sha256');
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      done += chunk.length;
      hash.update(chunk);
      onProgress?.(done, total);
      cb(null, chunk);
    },
  });
  await pipeline(createReadStream(src, { highWaterMark: 1 << 20 }), counter, createWriteStream(dst));
  return hash.digest('hex');
}

export class ImageStore {
  readonly root: string;

  constructor(root = defaultImageStoreDir()) {
    this.root = root;
  }

  private dirOf(ref: string): string {
    return join(this.root, keyOf(ref));
  }

  /** A scratch directory on the store's filesystem (downloads, archives being read); the caller removes it. */
  async scratchDir(what: string): Promise<string> {
    const d = join(this.root, '.tmp', `${what}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
    await mkdir(d, { recursive: true });
    return d;
  }

  /**
   * Removes what imports and pulls of processes that are gone left behind (an interrupted import
   * never becomes an image: it is renamed into place only when complete).
   */
  async removeStale(): Promise<void> {
    const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM'; } };
    const stale = (name: string) => { const m = /(?:\.importing-|^[a-z]+-)(\d+)-\d+/.exec(name); return m !== null && Number(m[1]) !== process.pid && !alive(Number(m[1])); };
    for (const n of await readdir(this.root).catch(() => [] as string[])) if (n.includes('.importing-') && stale(n)) await rm(join(this.root, n), { recursive: true, force: true });
    for (const n of await readdir(join(this.root, '.tmp')).catch(() => [] as string[])) if (stale(n)) await rm(join(this.root, '.tmp', n), { recursive: true, force: true });
  }

  /**
   * Adds an image to the store: `fill` writes its root filesystem into the directory it is given;
   * the image replaces what was there under that name only when `fill` succeeded (a rename), so a
   * failed or interrupted import leaves nothing half-written behind.
   */
  async importTree(ref: string, fill: (rootfs: string) => Promise<{ digest: string; source?: string }>): Promise<ImageInfo> {
    const norm = normalizeImageRef(ref);
    const dir = this.dirOf(norm);
    const staging = `${dir}.importing-${process.pid}-${Date.now()}`;
    await mkdir(join(staging, 'rootfs'), { recursive: true });
    try {
      const got = await fill(join(staging, 'rootfs'));
      const info: StoredMeta = { ref: norm, importedAt: new Date().toISOString(), sizeBytes: await treeSize(join(staging, 'rootfs')), digest: got.digest, ...(got.source ? { source: got.source } : {}) };
      await writeFile(join(staging, 'image.json'), `${JSON.stringify(info, null, 2)}\n`);
      // Swap: the old image (if any) is moved aside first, so the name never points at a partial tree.
      const old = `${dir}.importing-${process.pid}-${Date.now()}-old`;
      const hadOld = await rename(dir, old).then(() => true, () => false);
      await rename(staging, dir);
      if (hadOld) await rm(old, { recursive: true, force: true });
      return this.infoOf(info, dir);
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
  }

  private infoOf(meta: StoredMeta, dir: string): ImageInfo {
    return { ref: meta.ref, importedAt: meta.importedAt, sizeBytes: meta.sizeBytes, digest: imageDigest(meta), ...(meta.source ? { source: meta.source } : {}), dir, rootfs: join(dir, 'rootfs') };
  }

  /** Adds files to the store under an image name, replacing what was there (atomically). */
  private put(ref: string, files: ReadonlyArray<{ src: string; dest: string }>, onProgress?: Progress): Promise<ImageInfo> {
    const norm = normalizeImageRef(ref);
    return this.importTree(norm, async (rootfs) => {
      const sums: string[] = [];
      for (const f of files) {
        const st = await stat(f.src).catch(() => undefined);
        if (!st?.isFile()) throw new ImageStoreError(`cannot import ${f.src} as ${norm}: not a readable file`);
        const rel = posix.normalize(`/${f.dest}`);
        const dest = join(rootfs, rel);
        await mkdir(join(dest, '..'), { recursive: true });
        sums.push(`${rel}\0${await copyWithProgress(f.src, dest, onProgress)}`);
      }
      // One file: its sha256 (what `sha256sum` prints); several: the sha256 of their paths and sums.
      const digest = sums.length === 1 ? sums[0]!.split('\0')[1]! : createHash('sha256').update(sums.sort().join('\n')).digest('hex');
      return { digest: `sha256:${digest}`, source: files.length === 1 ? `file:${files[0]!.src}` : `files:${files.length}` };
    });
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
      return this.infoOf(JSON.parse(await readFile(join(dir, 'image.json'), 'utf8')) as StoredMeta, dir);
    } catch {
      return undefined;
    }
  }

  async list(): Promise<ImageInfo[]> {
    const out: ImageInfo[] = [];
    let names: string[] = [];
    try { names = await readdir(this.root); } catch { return out; }
    for (const n of names) {
      if (n.includes('.importing-') || n.startsWith('.')) continue;
      try {
        out.push(this.infoOf(JSON.parse(await readFile(join(this.root, n, 'image.json'), 'utf8')) as StoredMeta, join(this.root, n)));
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
    if (!info) throw new ImageNotPresentError(`image "${normalizeImageRef(ref)}" is not in the local image store (${this.root}); import it with: qvirt image import ${normalizeImageRef(ref)} FILE`);
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
      if (st?.isFile()) return this.inside(info, p, path);
      if (!st?.isDirectory()) throw new ImageStoreError(`image "${info.ref}" has no file or directory ${path}`);
      return this.inside(info, await this.singleFile(info.ref, p), path);
    }
    return this.inside(info, await this.singleFile(info.ref, join(info.rootfs, 'disk')), '/disk');
  }

  private async singleFile(ref: string, dir: string): Promise<string> {
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
    if (names.length !== 1) throw new ImageStoreError(`image "${ref}" must hold exactly one disk file in ${dir.slice(dir.indexOf('/rootfs') + 7) || '/'}, found ${names.length}`);
    return join(dir, names[0]!);
  }

  /** A file inside an image (kernel-boot artifacts); symlinks are followed, never out of the image. */
  async fileIn(ref: string, path: string): Promise<string> {
    const info = await this.require(ref);
    const p = join(info.rootfs, posix.normalize(`/${path}`));
    const st = await stat(p).catch(() => undefined);
    if (!st?.isFile()) throw new ImageStoreError(`image "${info.ref}" has no file ${path}`);
    return this.inside(info, p, path);
  }

  /** The real path of `p`, which must lie inside the image's root (a symlink may not lead out). */
  private async inside(info: ImageInfo, p: string, shown: string): Promise<string> {
    const [real, root] = await Promise.all([realpath(p), realpath(info.rootfs)]);
    if (real !== root && !real.startsWith(`${root}/`)) throw new ImageStoreError(`image "${info.ref}": ${shown} is a symlink leading out of the image`);
    return real;
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
      const E = err instanceof ImageNotPresentError ? ImageNotPresentError : ImageStoreError;
      throw new E(`spec.volumes[${i}].containerDisk.image: ${(err as Error).message}`);
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
        const E = err instanceof ImageNotPresentError ? ImageNotPresentError : ImageStoreError;
        throw new E(`spec.domain.firmware.kernelBoot.container.${field}: ${(err as Error).message}`);
      }
      const link = join(dir, basename(p));
      await replaceSymlink(file, link);
      made.push(link);
    }
  }
  return made;
}
