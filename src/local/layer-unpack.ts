// An image's root filesystem from its layers, as a container runtime's snapshotter builds it: the
// layers of the manifest applied in order into one directory, each layer's whiteouts honoured
// (`.wh.NAME` removes NAME of the layers below, `.wh..wh..opq` hides everything the layers below
// put in its directory). Reads the `dir:` layout skopeo writes (manifest.json + one file per blob,
// named by its digest's hex). Layers are unpacked with node-tar (gzip, zstd or plain, detected
// from the bytes), which refuses absolute paths, `..` and extraction through symlinks, so a layer
// cannot write outside the root.
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, rmSync, statSync } from 'node:fs';
import { lstat, open, readdir, readFile } from 'node:fs/promises';
import { createGunzip, createZstdDecompress } from 'node:zlib';
import { join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Unpack } from 'tar';

export class ImageFormatError extends Error {
  override name = 'ImageFormatError';
}

export interface LayerDescriptor { readonly mediaType?: string; readonly digest: string; readonly size?: number }

export interface DirImage {
  /** `sha256:<hex>` of manifest.json as stored (the registry's manifest digest for a pull). */
  readonly manifestDigest: string;
  readonly mediaType: string;
  readonly layers: readonly LayerDescriptor[];
}

const LAYER_TYPES = /^application\/vnd\.(oci\.image\.layer\.v1\.tar|docker\.image\.rootfs\.diff\.tar)(\.gzip|\+gzip|\+zstd)?$/;

/** Reads a `dir:` layout's manifest: the layers to apply and the manifest's digest. */
export async function readDirImage(dir: string): Promise<DirImage> {
  let raw: Buffer;
  try { raw = await readFile(join(dir, 'manifest.json')); } catch { throw new ImageFormatError(`${dir}: no manifest.json`); }
  let m: { schemaVersion?: number; mediaType?: string; layers?: LayerDescriptor[]; manifests?: unknown[]; config?: { mediaType?: string } };
  try { m = JSON.parse(raw.toString('utf8')) as typeof m; } catch { throw new ImageFormatError('the image manifest is not JSON'); }
  if (m.manifests) throw new ImageFormatError('the image is a manifest list with no instance for this platform');
  if (m.schemaVersion !== 2 || !Array.isArray(m.layers)) throw new ImageFormatError(`unsupported image manifest (schemaVersion ${String(m.schemaVersion)}): only Docker schema 2 and OCI images`);
  for (const l of m.layers) {
    if (!/^sha256:[0-9a-f]{64}$/.test(l.digest ?? '')) throw new ImageFormatError(`layer digest ${JSON.stringify(l.digest)} is not a sha256 digest`);
    if (l.mediaType && !LAYER_TYPES.test(l.mediaType)) throw new ImageFormatError(`layer ${l.digest} has media type ${l.mediaType}, not a filesystem layer`);
  }
  return {
    manifestDigest: `sha256:${createHash('sha256').update(raw).digest('hex')}`,
    mediaType: m.mediaType ?? m.config?.mediaType ?? 'application/vnd.oci.image.manifest.v1+json',
    layers: m.layers,
  };
}

/** What a layer entry means for the layers below it (pure). */
export function whiteoutOf(entryPath: string): { kind: 'opaque'; dir: string } | { kind: 'remove'; path: string } | undefined {
  const p = posix.normalize(`/${entryPath}`).replace(/\/+$/, '');
  const base = posix.basename(p);
  if (!base.startsWith('.wh.')) return undefined;
  const dir = posix.dirname(p);
  if (base === '.wh..wh..opq') return { kind: 'opaque', dir };
  return { kind: 'remove', path: posix.join(dir, base.slice(4)) };
}

/** Removes everything in `dir` (under root) that the current layer did not put there. */
function clearOpaque(root: string, dir: string, written: ReadonlySet<string>): void {
  let names: string[];
  try { names = readdirSync(join(root, dir)); } catch { return; }
  for (const n of names) {
    const p = posix.join(dir, n);
    if (written.has(p)) {
      const st = statSync(join(root, p), { throwIfNoEntry: false });
      if (st?.isDirectory()) clearOpaque(root, p, written);
      continue;
    }
    const prefix = `${p}/`;
    if ([...written].some((w) => w.startsWith(prefix))) { clearOpaque(root, p, written); continue; }
    rmSync(join(root, p), { recursive: true, force: true });
  }
}

export type Compression = 'gzip' | 'zstd' | 'none';

/** A layer's compression, from its first bytes (media types are not always honest about it). */
export function compressionOf(head: Buffer): Compression {
  if (head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head.readUInt32LE(0) === 0xfd2fb528) return 'zstd';
  return 'none';
}

/** Reads the first bytes of a file. */
export async function fileHead(path: string, n = 4): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const b = Buffer.alloc(n);
    const { bytesRead } = await fh.read(b, 0, n, 0);
    return b.subarray(0, bytesRead);
  } finally { await fh.close(); }
}

/** Applies one layer blob onto `root`. */
export async function applyLayer(blob: string, root: string): Promise<void> {
  const head = await fileHead(blob);
  return applyLayerStream(createReadStream(blob, { highWaterMark: 1 << 20 }), root, posix.basename(blob), head.length >= 4 ? compressionOf(head) : 'none');
}

/**
 * Applies one layer, read from a stream, onto `root`. The stream is decompressed here with
 * 1 MiB output chunks (node-tar's own gunzip works in small ones: 2-3x slower on a disk image).
 */
export async function applyLayerStream(input: Readable, root: string, name: string, compression: Compression): Promise<void> {
  const written = new Set<string>();
  const warnings: string[] = [];
  const unpack = new Unpack({
    cwd: root,
    // Image content as it is: modes, and owners where we may set them (as root).
    chmod: true,
    processUmask: 0,
    preserveOwner: process.getuid?.() === 0,
    filter: (path, entry) => {
      // An absolute symlink means the image's root (a container sees it so): made relative to the
      // link's directory, it resolves inside the image's root here too (node-tar would only strip the '/').
      if ('type' in entry && entry.type === 'SymbolicLink' && entry.linkpath?.startsWith('/')) {
        entry.linkpath = posix.relative(posix.dirname(posix.normalize(`/${path}`)), posix.normalize(entry.linkpath)) || '.';
      }
      const wh = whiteoutOf(path);
      if (!wh) { written.add(posix.normalize(`/${path}`).replace(/\/+$/, '')); return true; }
      if (wh.kind === 'remove') rmSync(join(root, wh.path), { recursive: true, force: true });
      else clearOpaque(root, wh.dir, written);
      return false;
    },
    onwarn: (code: string, message: string | Error) => { if (warnings.length < 5) warnings.push(`${code}: ${typeof message === 'string' ? message : message.message}`); },
  });
  try {
    const inflate = compression === 'gzip' ? createGunzip({ chunkSize: 1 << 20 }) : compression === 'zstd' ? createZstdDecompress({ chunkSize: 1 << 20 }) : undefined;
    if (inflate) await pipeline(input, inflate, unpack);
    else await pipeline(input, unpack);
  } catch (err) {
    throw new ImageFormatError(`layer ${name} is not a readable tar archive: ${(err as Error).message}`);
  }
  if (warnings.some((w) => /SymlinkError|TAR_BAD_ARCHIVE|TAR_ABORT/.test(w))) throw new ImageFormatError(`layer ${name}: ${warnings.join('; ')}`);
}

/** Builds the root filesystem of the image in `dir` (a `dir:` layout) under `root`. */
export async function unpackDirImage(dir: string, root: string, onLayer?: (index: number, total: number) => void): Promise<DirImage> {
  const img = await readDirImage(dir);
  for (let i = 0; i < img.layers.length; i++) {
    onLayer?.(i, img.layers.length);
    const hex = img.layers[i]!.digest.slice('sha256:'.length);
    const blob = join(dir, hex);
    if (!(await lstat(blob).catch(() => undefined))?.isFile()) throw new ImageFormatError(`layer ${img.layers[i]!.digest} is missing`);
    await applyLayer(blob, root);
  }
  return img;
}

/** The total size of the regular files under a directory. */
export async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += await treeSize(p);
    else if (e.isFile()) total += (await lstat(p)).size;
  }
  return total;
}
