// The local importer: what CDI's importer pod does, as a function of this process — fetch an http(s)
// source (a CA from the certConfigMap, basic auth from the secretRef), undo gzip/xz, check that what
// arrived is a qcow2 or raw disk image, convert it to raw with qemu-img and size it for the claim;
// a blank raw image of CDI's size; a copy of another claim's disk. Everything is written in a
// temporary directory inside the claim and renamed to `disk.img` only when complete, so a failed or
// cut-short import leaves no half-written disk.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { randomBytes } from 'node:crypto';

/** An import attempt that failed: the message for the DV's Running condition; permanent ones are not retried. */
export class ImportError extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean) { super(message); this.permanent = permanent; }
}

export interface HttpSource {
  readonly url: string;
  /** PEM CA certificates to trust (the certConfigMap's values). */
  readonly ca?: string | undefined;
  /** Basic auth (the secretRef's accessKeyId / secretKey). */
  readonly auth?: { readonly user: string; readonly password: string } | undefined;
  readonly insecureSkipVerify?: boolean | undefined;
  readonly extraHeaders?: readonly string[] | undefined;
}

export const DISK_IMAGE = 'disk.img';
const TMP_PREFIX = '.import-';

/** A fresh temporary directory in the claim, earlier attempts' leftovers removed. */
export async function importTempDir(claimDir: string): Promise<string> {
  const { readdir } = await import('node:fs/promises');
  for (const e of await readdir(claimDir).catch(() => [] as string[])) if (e.startsWith(TMP_PREFIX)) await rm(join(claimDir, e), { recursive: true, force: true });
  const dir = join(claimDir, `${TMP_PREFIX}${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

function run(cmd: string, args: string[], signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args[0]}: ${err.trim() || `exit ${code}`}`))));
  });
}

export interface ImageInfo { readonly format: string; readonly virtualSize: number; readonly actualSize?: number }

export async function imageInfo(path: string): Promise<ImageInfo> {
  const j = JSON.parse(await run('qemu-img', ['info', '--output=json', path])) as { format: string; 'virtual-size': number; 'actual-size'?: number };
  return { format: j.format, virtualSize: j['virtual-size'], ...(j['actual-size'] !== undefined ? { actualSize: j['actual-size'] } : {}) };
}

type Compression = 'gzip' | 'xz' | 'none';
const compressionOf = (head: Buffer): Compression =>
  head[0] === 0x1f && head[1] === 0x8b ? 'gzip' : head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) ? 'xz' : 'none';

function get(src: HttpSource, url: URL, signal: AbortSignal | undefined, redirects = 0): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'user-agent': 'qvirt-importer' };
    if (src.auth) headers.authorization = `Basic ${Buffer.from(`${src.auth.user}:${src.auth.password}`).toString('base64')}`;
    for (const h of src.extraHeaders ?? []) { const i = h.indexOf(':'); if (i > 0) headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim(); }
    const opts = { headers, ...(signal ? { signal } : {}), ...(url.protocol === 'https:' ? { ...(src.ca ? { ca: src.ca } : {}), rejectUnauthorized: !src.insecureSkipVerify } : {}) };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, opts, (res) => {
      const code = res.statusCode ?? 0;
      if (code >= 300 && code < 400 && res.headers.location && redirects < 10) {
        res.resume();
        resolve(get(src, new URL(res.headers.location, url), signal, redirects + 1));
        return;
      }
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Downloads `src.url` into `dir`, decompressed: returns the file and how many bytes came over the
 * wire. `onProgress(received, total)` as bytes arrive (total from Content-Length, when given).
 */
export async function download(src: HttpSource, dir: string, onProgress: (received: number, total: number | undefined) => void, signal?: AbortSignal): Promise<string> {
  let url: URL;
  try { url = new URL(src.url); } catch { throw new ImportError(`Unable to connect to http data source: invalid URL ${JSON.stringify(src.url)}`, true); }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ImportError(`Unable to connect to http data source: unsupported scheme in ${src.url}`, true);
  let res: IncomingMessage;
  try {
    res = await get(src, url, signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ImportError(`Unable to connect to http data source ${src.url}: ${(err as Error).message}`, false);
  }
  const code = res.statusCode ?? 0;
  if (code !== 200) {
    res.resume();
    throw new ImportError(`Unable to connect to http data source ${src.url}: expected status code 200, got ${code}. Status: ${code} ${res.statusMessage ?? ''}`.trimEnd(), code >= 400 && code < 500 && code !== 408 && code !== 429);
  }
  const total = res.headers['content-length'] !== undefined ? Number(res.headers['content-length']) : undefined;
  return receive(res, total, dir, src.url, onProgress, signal);
}

/**
 * Writes a disk image arriving on `body` (gzip, xz or plain) into `dir`, decompressed; fails when
 * fewer than `total` bytes arrive. `what` names the source in errors.
 */
export async function receive(body: Readable, total: number | undefined, dir: string, what: string, onProgress: (received: number, total: number | undefined) => void, signal?: AbortSignal): Promise<string> {
  let received = 0;
  const out = join(dir, 'source');
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      received += chunk.length;
      onProgress(received, total);
      cb(null, chunk);
    },
  });
  // The first bytes decide the decompressor; the rest streams through it into the file.
  const head: Buffer = await new Promise((resolve, reject) => {
    const onData = (c: Buffer) => { body.pause(); body.off('data', onData); body.off('end', onEnd); body.off('error', reject); body.unshift(c); resolve(c); };
    const onEnd = () => { body.off('data', onData); resolve(Buffer.alloc(0)); };
    body.on('data', onData).once('end', onEnd).once('error', reject);
  });
  const compression = compressionOf(head);
  const file = compression === 'xz' ? undefined : createWriteStream(out);
  try {
    if (compression === 'gzip') await pipeline(body, counter, createGunzip(), file!);
    else if (compression === 'xz') await pipeThroughXz(body, counter, out, signal);
    else await pipeline(body, counter, file!);
  } catch (err) {
    if (signal?.aborted) throw err;
    const got = total !== undefined ? ` (${received} of ${total} bytes)` : ` (${received} bytes)`;
    throw new ImportError(`Unable to transfer source data from ${what}: ${(err as Error).message}${got}`, false);
  } finally {
    file?.destroy();
  }
  if (total !== undefined && received !== total) throw new ImportError(`Unable to transfer source data from ${what}: unexpected EOF (${received} of ${total} bytes)`, false);
  return out;
}

async function pipeThroughXz(res: Readable, counter: Transform, out: string, signal?: AbortSignal): Promise<void> {
  const fh = await open(out, 'w');
  try {
    const xz = spawn('xz', ['-dc'], { stdio: ['pipe', fh.fd, 'pipe'], ...(signal ? { signal } : {}) });
    let err = '';
    xz.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    const exited = new Promise<void>((resolve, reject) => {
      xz.on('error', reject);
      xz.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`xz: ${err.trim() || `exit ${code}`}`))));
    });
    await Promise.all([pipeline(res, counter, xz.stdin!), exited]);
  } finally {
    await fh.close();
  }
}

/**
 * Makes `source` (qcow2 or raw) the claim's disk: checked, converted to raw when needed, grown to
 * `targetSize` (never shrunk: an image larger than the claim's room fails, as CDI's validation
 * does), then renamed to `<claimDir>/disk.img`.
 */
export async function installImage(source: string, what: string, tmp: string, claimDir: string, targetSize: number, signal?: AbortSignal): Promise<void> {
  let info: ImageInfo;
  try { info = await imageInfo(source); } catch (err) { throw new ImportError(`Unable to process data from ${what}: ${(err as Error).message}`, true); }
  if (info.format !== 'raw' && info.format !== 'qcow2') throw new ImportError(`Unable to process data from ${what}: image format ${info.format} is not supported (qcow2 or raw)`, true);
  // qemu-img rounds a raw file up to whole sectors: the file's own size says whether it is one.
  const bytes = info.format === 'raw' ? (await stat(source)).size : info.virtualSize;
  if (info.format === 'raw' && bytes % 512 !== 0) throw new ImportError(`Unable to process data from ${what}: not a disk image (raw data of ${bytes} bytes, not a whole number of 512-byte sectors)`, true);
  if (info.virtualSize > targetSize) throw new ImportError(`Virtual image size ${info.virtualSize} is larger than the reported available storage ${targetSize}. A larger PVC is required.`, true);
  let raw = source;
  if (info.format === 'qcow2') {
    raw = join(tmp, 'converted.raw');
    try { await run('qemu-img', ['convert', '-t', 'none', '-T', 'none', '-f', 'qcow2', '-O', 'raw', source, raw], signal); }
    catch { await run('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', source, raw], signal).catch((err: Error) => { throw new ImportError(`Unable to convert source data from ${what} to raw: ${err.message}`, true); }); }
    await rm(source, { force: true });
  }
  await growTo(raw, targetSize);
  await finish(raw, claimDir);
}

/** A raw image of `size` bytes (CDI's CreateBlankImage: `qemu-img create -f raw`), installed as the disk. */
export async function createBlank(tmp: string, claimDir: string, size: number): Promise<void> {
  const f = join(tmp, 'blank.raw');
  await run('qemu-img', ['create', '-f', 'raw', f, String(size)]);
  await finish(f, claimDir);
}

/** A copy of another claim's disk (sparse), grown to `targetSize`, installed as the disk. */
export async function cloneDisk(sourceDisk: string, tmp: string, claimDir: string, targetSize: number, signal?: AbortSignal): Promise<void> {
  const size = (await stat(sourceDisk).catch(() => { throw new ImportError(`Unable to clone: source disk ${sourceDisk} does not exist`, false); })).size;
  if (size > targetSize) throw new ImportError(`target resources requests storage size is smaller than the source: ${size} > ${targetSize}`, true);
  const f = join(tmp, 'clone.raw');
  await run('qemu-img', ['convert', '-f', 'raw', '-O', 'raw', sourceDisk, f], signal);
  await growTo(f, targetSize);
  await finish(f, claimDir);
}

async function growTo(path: string, size: number): Promise<void> {
  const fh = await open(path, 'r+');
  try { if ((await fh.stat()).size < size) await fh.truncate(size); } finally { await fh.close(); }
}

async function finish(file: string, claimDir: string): Promise<void> {
  const { chmod } = await import('node:fs/promises');
  await chmod(file, 0o660);
  await rename(file, join(claimDir, DISK_IMAGE));
}
