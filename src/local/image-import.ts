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
import { applyLayerFrom, ImageFormatError, readDirImage, treeSize, unpackDirImage, type LayerDescriptor } from './layer-unpack.ts';
import { findGrowingBlob, tailFile, type TailedBlob } from './blob-tail.ts';
import { skopeoCopy, SkopeoError, type SkopeoCopyOptions } from './skopeo.ts';
import { watchLayout } from './pull-progress.ts';

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

/** A single-layer image whose layer may be unpacked while it downloads (see blob-tail.ts). */
export interface StreamHint {
  readonly layer: LayerDescriptor;
  /** The config blob's size: a temporary blob larger than it is the layer. */
  readonly configSize: number;
}

/** The stream hint for a manifest as the registry serves it: single-layer images only. */
export function streamHintOf(raw: Buffer): StreamHint | undefined {
  try {
    const m = JSON.parse(raw.toString('utf8')) as { schemaVersion?: number; layers?: LayerDescriptor[]; config?: { size?: number } };
    if (m.schemaVersion !== 2 || m.layers?.length !== 1 || typeof m.config?.size !== 'number' || typeof m.layers[0]!.size !== 'number') return undefined;
    if (!/^sha256:[0-9a-f]{64}$/.test(m.layers[0]!.digest)) return undefined;
    return { layer: m.layers[0]!, configSize: m.config.size };
  } catch { return undefined; }
}

/**
 * Copies an image (any skopeo source: `oci-archive:`, `oci:`, `docker-archive:`, `dir:`,
 * `docker://`) into the store under `ref`: its manifest digest becomes the image's ID. With a
 * stream hint (asked for once the copy has started) the layer is unpacked while skopeo writes it,
 * and again from the finished blob if what was read is not exactly the layer.
 */
export async function copyImageIntoStore(store: ImageStore, ref: string, transport: string, o: SkopeoCopyOptions & { readonly what?: string; readonly stream?: (() => Promise<StreamHint | undefined>) | undefined; readonly onBytes?: ((done: number) => void) | undefined } = {}): Promise<ImageInfo> {
  const norm = normalizeImageRef(ref);
  const what = o.what ?? transport;
  const scratch = await store.scratchDir('copy');
  let tail: TailedBlob | undefined;
  try {
    const layout = join(scratch, 'image');
    return await store.importTree(norm, async (rootfs) => {
      let copyDone = false;
      const unwatch = o.onBytes ? watchLayout(layout, o.onBytes) : undefined;
      const copy = skopeoCopy(transport, `dir:${layout}`, { ...o, tmpDir: scratch }).finally(() => { copyDone = true; unwatch?.(); });
      let streamed: Promise<{ dev: number; ino: number; size: number } | undefined> = Promise.resolve(undefined);
      if (o.stream) {
        const ask = o.stream;
        const hinted = (async () => ask())();
        streamed = (async () => {
          const hint = await hinted;
          if (!hint) return undefined;
          const file = await findGrowingBlob(layout, hint.layer.digest.slice(7), hint.configSize, () => copyDone);
          if (!file) return undefined;
          tail = await tailFile(file, () => copyDone);
          // Used only when the copy verified it: its digest covers the bytes (digestChecked).
          await applyLayerFrom(tail.read, rootfs, hint.layer.digest, { digestChecked: true });
          return tail.result();
        })().catch(() => undefined);
      }
      try {
        await copy;
      } catch (err) {
        await streamed;
        if (err instanceof SkopeoError) throw new ImageSourceError(`${what}: ${err.message}`, { unauthorized: err.unauthorized, notFound: err.notFound, detail: err.message });
        throw err;
      }
      const got = await streamed;
      let img;
      try {
        img = await readDirImage(layout);
        const only = img.layers.length === 1 ? img.layers[0]! : undefined;
        const blob = only ? await stat(join(layout, only.digest.slice(7))).catch(() => undefined) : undefined;
        if (got && blob && got.dev === blob.dev && got.ino === blob.ino && got.size === blob.size) {
          // Unpacked while it arrived, and it was the layer's blob (skopeo verified it), all of it.
        } else {
          if (o.stream) for (const n of await readdir(rootfs)) await rm(join(rootfs, n), { recursive: true, force: true });
          img = await unpackDirImage(layout, rootfs);
        }
      } catch (err) {
        if (err instanceof ImageFormatError) throw new ImageSourceError(`${what}: ${err.message}`);
        throw err;
      }
      if ((await treeSize(rootfs)) === 0) throw new ImageSourceError(`${what}: the image holds no files (a container disk keeps its disk under /disk/)`);
      return { digest: img.manifestDigest, source: transport };
    });
  } finally {
    // The layer blob read as it arrived is still open: removing the scratch directory only unlinks
    // it, and its last close frees its blocks (tens of milliseconds for a large layer) off the pull's path.
    await rm(scratch, { recursive: true, force: true });
    void tail?.close().catch(() => undefined);
  }
}

/** `qvirt image import NAME PATH`: an archive or layout as an image, a bare disk as a container disk. */
export async function importImage(store: ImageStore, ref: string, path: string, onProgress?: Progress): Promise<ImportResult> {
  let source: ImageSource;
  try { source = await identifySource(path); } catch (err) { throw new ImageStoreError((err as Error).message); }
  if (source.kind === 'disk') return { info: await store.importDisk(ref, path, onProgress), source };
  return { info: await copyImageIntoStore(store, ref, source.transport, { what: path }), source };
}
