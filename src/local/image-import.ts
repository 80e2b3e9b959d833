// Bringing images into the local image store: `qvirt image import` of what users have (OCI
// archives and layouts, `docker save` archives, bare disks) and the node side's registry pulls.
// Archives and pulls go through skopeo into a scratch `dir:` layout on the store's filesystem,
// whose layers are applied into the image's root (layer-unpack.ts); the store renames the result
// into place only when it is complete.
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { list } from 'tar';
import { ImageStoreError, normalizeImageRef, type ImageInfo, type ImageStore, type Progress } from './image-store.ts';
import { classifyDir, classifyFile, HEAD_BYTES, type ImageSource } from './image-source.ts';
import { ImageFormatError, treeSize, unpackDirImage } from './layer-unpack.ts';
import { skopeoCopy, SkopeoError, type SkopeoCopyOptions } from './skopeo.ts';

/** An image could not be brought in; `unauthorized` / `notFound` say why where the source said so. */
export class ImageSourceError extends ImageStoreError {
  override name = 'ImageSourceError';
  readonly unauthorized: boolean;
  readonly notFound: boolean;
  readonly detail: string;
  constructor(message: string, from: { unauthorized?: boolean; notFound?: boolean; detail?: string } = {}) {
    super(message);
    this.unauthorized = from.unauthorized === true;
    this.notFound = from.notFound === true;
    this.detail = from.detail ?? message;
  }
}

export interface ImportResult { readonly info: ImageInfo; readonly source: ImageSource }

async function tarMembers(path: string): Promise<string[]> {
  const names: string[] = [];
  await list({ file: path, onReadEntry: (e) => { if (names.length < 100_000) names.push(e.path); } });
  return names;
}

/** What `path` is (see image-source.ts); throws a message naming the file and the reason. */
export async function identifySource(path: string): Promise<ImageSource> {
  const st = await stat(path).catch(() => undefined);
  if (!st) throw new ImageStoreError(`${path}: no such file or directory`);
  if (st.isDirectory()) return classifyDir(path, await readdir(path));
  if (!st.isFile()) throw new ImageStoreError(`${path} is not a readable file`);
  const fh = await open(path, 'r');
  let head: Buffer;
  try {
    const buf = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    head = buf.subarray(0, bytesRead);
  } finally { await fh.close(); }
  const tarLike = head.toString('latin1', 257, 262) === 'ustar' || (head[0] === 0x1f && head[1] === 0x8b);
  let members: string[] | undefined;
  if (tarLike) members = await tarMembers(path).catch(() => undefined);
  return classifyFile(path, head, st.size, members);
}

/**
 * Copies an image (any skopeo source: `oci-archive:`, `oci:`, `docker-archive:`, `dir:`,
 * `docker://`) into the store under `ref`: its manifest digest becomes the image's ID.
 */
export async function copyImageIntoStore(store: ImageStore, ref: string, transport: string, o: SkopeoCopyOptions & { readonly what?: string } = {}): Promise<ImageInfo> {
  const norm = normalizeImageRef(ref);
  const scratch = await store.scratchDir('copy');
  try {
    const layout = join(scratch, 'image');
    try {
      await skopeoCopy(transport, `dir:${layout}`, { ...o, tmpDir: scratch });
    } catch (err) {
      if (err instanceof SkopeoError) throw new ImageSourceError(`${o.what ?? transport}: ${err.message}`, { unauthorized: err.unauthorized, notFound: err.notFound, detail: err.message });
      throw err;
    }
    return await store.importTree(norm, async (rootfs) => {
      let img;
      try { img = await unpackDirImage(layout, rootfs); } catch (err) {
        if (err instanceof ImageFormatError) throw new ImageSourceError(`${o.what ?? transport}: ${err.message}`);
        throw err;
      }
      if ((await treeSize(rootfs)) === 0) throw new ImageSourceError(`${o.what ?? transport}: the image holds no files (a container disk keeps its disk under /disk/)`);
      return { digest: img.manifestDigest, source: transport };
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** `qvirt image import NAME PATH`: an archive or layout as an image, a bare disk as a container disk. */
export async function importImage(store: ImageStore, ref: string, path: string, onProgress?: Progress): Promise<ImportResult> {
  let source: ImageSource;
  try { source = await identifySource(path); } catch (err) { throw new ImageStoreError((err as Error).message); }
  if (source.kind === 'disk') return { info: await store.importDisk(ref, path, onProgress), source };
  return { info: await copyImageIntoStore(store, ref, source.transport, { what: path }), source };
}
