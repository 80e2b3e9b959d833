// An image's root filesystem from its layers, as a container runtime's snapshotter builds it: the
// layers of the manifest applied in order into one directory, each layer's whiteouts honoured
// (`.wh.NAME` removes NAME of the layers below, `.wh..wh..opq` hides everything the layers below
// put in its directory). Reads the `dir:` layout skopeo writes (manifest.json + one file per blob,
// named by its digest's hex). Layers are unpacked with node-tar (gzip, zstd or plain, detected
// from the bytes), which refuses absolute paths, `..` and extraction through symlinks, so a layer
// cannot write outside the root.
import { createHash } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { lstat, open, readdir, readFile } from 'node:fs/promises';
import { createGunzip, createInflateRaw, createZstdDecompress } from 'node:zlib';
import { join, posix } from 'node:path';
import { PassThrough } from 'node:stream';
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

/**
 * The length of the gzip member header (RFC 1952) at the start of `b`: undefined when `b` is not a
 * deflate member's header or does not hold all of it. Pure.
 */
export function gzipHeaderLength(b: Buffer): number | undefined {
  if (b.length < 10 || b[0] !== 0x1f || b[1] !== 0x8b || b[2] !== 8) return undefined;
  const flags = b[3]!;
  if (flags & 0xe0) return undefined;
  let n = 10;
  if (flags & 4) { if (b.length < n + 2) return undefined; n += 2 + b.readUInt16LE(n); }
  for (const bit of [8, 16]) {
    if (!(flags & bit)) continue;
    const nul = b.indexOf(0, n);
    if (nul < 0) return undefined;
    n = nul + 1;
  }
  if (flags & 2) n += 2;
  return n <= b.length ? n : undefined;
}

/** Fills `buf` with a layer's next bytes: 0 at its end. */
export type LayerReader = (buf: Buffer) => Promise<number>;

export interface ApplyOptions {
  /**
   * The layer's compressed bytes are checked against its digest (skopeo verifies every blob it
   * copies): a single-member gzip layer is then inflated without computing its CRC-32 again over
   * the uncompressed bytes (a third of the CPU of unpacking a disk image), its member's end and
   * length still checked. Anything else is decompressed as usual.
   */
  readonly digestChecked?: boolean;
}

const CHUNK = 1 << 20;

/** Applies one layer blob onto `root`. */
export async function applyLayer(blob: string, root: string): Promise<void> {
  const fh = await open(blob, 'r');
  let pos = 0;
  try {
    await applyLayerFrom(async (buf) => { const { bytesRead } = await fh.read(buf, 0, buf.length, pos); pos += bytesRead; return bytesRead; }, root, posix.basename(blob));
  } finally { await fh.close(); }
}

/**
 * Applies one layer onto `root`, its bytes from `read`, its compression (gzip, zstd or none) from
 * its first bytes. Decompressed here with 1 MiB output chunks (node-tar's own gunzip works in
 * small ones: 2-3x slower on a disk image), the compressed bytes read into two buffers in turn
 * (one read while the other inflates: no allocation, and no garbage, per chunk).
 */
export async function applyLayerFrom(read: LayerReader, root: string, name: string, o: ApplyOptions = {}): Promise<void> {
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
    await feedLayer(read, unpack, o);
  } catch (err) {
    throw new ImageFormatError(`layer ${name} is not a readable tar archive: ${(err as Error).message}`);
  }
  if (warnings.some((w) => /SymlinkError|TAR_BAD_ARCHIVE|TAR_ABORT/.test(w))) throw new ImageFormatError(`layer ${name}: ${warnings.join('; ')}`);
}

/** Reads the layer, decompresses it and writes the tar stream into `unpack`, until both ended. */
async function feedLayer(read: LayerReader, unpack: Unpack, o: ApplyOptions): Promise<void> {
  const bufs = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
  let n = 0;
  for (let got = -1; got !== 0 && n < CHUNK;) { got = await read(bufs[0]!.subarray(n)); n += got; }
  const first = bufs[0]!.subarray(0, n);
  const compression = first.length >= 4 ? compressionOf(first) : 'none';
  const header = compression === 'gzip' && o.digestChecked ? gzipHeaderLength(first) : undefined;
  const raw = header !== undefined ? createInflateRaw({ chunkSize: CHUNK }) : undefined;
  const decoder = raw ?? (compression === 'gzip' ? createGunzip({ chunkSize: CHUNK })
    : compression === 'zstd' ? createZstdDecompress({ chunkSize: CHUNK })
    : new PassThrough({ highWaterMark: CHUNK }));
  // A decoder's output is its own: the input buffer is free again once written. Plain tar passes
  // through as it is, so each of its chunks is a buffer of its own.
  const reuse = compression !== 'none';
  let inflated = 0;
  raw?.on('data', (d: Buffer) => { inflated += d.length; });
  const done = pipeline(decoder, unpack);
  const failed = new Promise<never>((_, reject) => { done.catch(reject); });
  failed.catch(() => undefined);
  // Awaited only after the next read: a failure meanwhile must not count as an unhandled rejection.
  const write = (b: Buffer) => {
    const written = Promise.race([new Promise<void>((resolve) => decoder.write(b, () => resolve())), failed]);
    written.catch(() => undefined);
    return written;
  };
  // The last 8 bytes: a gzip member's trailer (CRC-32, length).
  const tail = Buffer.alloc(8);
  let total = n;
  const keepTail = (b: Buffer) => {
    if (b.length >= 8) b.copy(tail, 0, b.length - 8);
    else { tail.copy(tail, 0, b.length); b.copy(tail, 8 - b.length); }
  };
  try {
    keepTail(first);
    let pending = first.length > (header ?? 0) ? write(first.subarray(header ?? 0)) : Promise.resolve();
    for (let k = 1; n > 0; k++) {
      const buf = reuse ? bufs[k & 1]! : Buffer.allocUnsafe(CHUNK);
      n = await read(buf);
      await pending;
      if (n === 0) break;
      total += n;
      keepTail(buf.subarray(0, n));
      pending = write(buf.subarray(0, n));
    }
    decoder.end();
    await done;
  } catch (err) {
    decoder.destroy(err as Error);
    await done.catch(() => undefined);
    throw err;
  }
  if (raw && (header! + raw.bytesWritten + 8 !== total || tail.readUInt32LE(4) !== inflated % 2 ** 32)) {
    throw new Error('not a single gzip member (or truncated)');
  }
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
