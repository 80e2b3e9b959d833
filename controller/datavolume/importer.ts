// The local importer: what CDI's importer pod does, as a function of this process — fetch an http(s)
// source (a CA from the certConfigMap, basic auth from the secretRef), undo gzip/xz, check that what
// arrived is a qcow2 or raw disk image, convert it to raw with qemu-img and size it for the claim;
// a blank raw image of CDI's size; a copy of another claim's disk. Everything is written in a
// temporary directory inside the claim and renamed to `disk.img` only when complete, so a failed or
// cut-short import leaves no half-written disk. Its processes (curl, gzip/xz, qemu-img) get the
// kernel's parent-death signal through util-linux's setpriv, when there is one: an importer whose
// process is killed (the local mode SIGKILLed) takes them with it, as an importer pod's container
// would, instead of leaving a curl downloading into a deleted temporary directory.
import { parentDeathTools, withParentDeathSignal } from '../../src/process/parent-death.ts';
import { spawn as spawnProcess, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PassThrough, type Readable } from 'node:stream';
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
/** Write buffering: large enough that the file gets few, big writev calls. */
const WRITE_HWM = 8 * 1024 * 1024;
const TMP_PREFIX = '.import-';

/** A fresh temporary directory in the claim, earlier attempts' leftovers removed. */
export async function importTempDir(claimDir: string): Promise<string> {
  const { readdir } = await import('node:fs/promises');
  for (const e of await readdir(claimDir).catch(() => [] as string[])) if (e.startsWith(TMP_PREFIX)) await rm(join(claimDir, e), { recursive: true, force: true });
  const dir = join(claimDir, `${TMP_PREFIX}${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * `cmd args` SIGKILLed by the kernel when this process dies (setpriv sets PR_SET_PDEATHSIG and execs
 * it: same pid, so an abort signal still reaches it).
 */
function spawn(cmd: string, args: readonly string[], opts: SpawnOptions): ChildProcess {
  const c = withParentDeathSignal({ setpriv: parentDeathTools().setpriv, shell: undefined }, process.pid, cmd, args);
  return spawnProcess(c.file, c.args, opts);
}

function run(cmd: string, args: string[], signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    let out = '';
    let err = '';
    p.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    p.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
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

/** A curl config file value: quoted, with backslashes and quotes escaped (curl's --config syntax). */
const curlQuote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The status line and Content-Length of the last response in a `curl -D` header dump (redirects come first). */
function lastResponse(headers: string): { code: number; text: string; length: number | undefined } {
  const blocks = headers.split(/\r?\n\r?\n/).filter((b) => /^HTTP\//.test(b.trim()));
  const last = blocks.at(-1) ?? '';
  const m = /^HTTP\/[\d.]+ (\d+) ?(.*)$/m.exec(last.trim());
  const len = /^content-length:\s*(\d+)/im.exec(last);
  return { code: m ? Number(m[1]) : 0, text: m?.[2]?.trim() ?? '', length: len ? Number(len[1]) : undefined };
}

/**
 * Downloads `src.url` into `dir` with curl (the transfer in a process of its own, at curl's speed;
 * credentials and CA passed through its config on stdin and a file, never on the command line),
 * then undoes gzip/xz: returns the file. `onProgress(received, total)` from the file's growth
 * against the Content-Length, four times a second.
 */
export async function download(src: HttpSource, dir: string, onProgress: (received: number, total: number | undefined) => void, signal?: AbortSignal): Promise<string> {
  let url: URL;
  try { url = new URL(src.url); } catch { throw new ImportError(`Unable to connect to http data source: invalid URL ${JSON.stringify(src.url)}`, true); }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ImportError(`Unable to connect to http data source: unsupported scheme in ${src.url}`, true);
  const raw = join(dir, 'download');
  const hdr = join(dir, 'headers');
  const config: string[] = ['silent', 'show-error', 'location', 'max-redirs = 10', `output = ${curlQuote(raw)}`, `dump-header = ${curlQuote(hdr)}`, 'user-agent = "qvirt-importer"'];
  if (src.auth) config.push(`user = ${curlQuote(`${src.auth.user}:${src.auth.password}`)}`);
  if (src.ca) { const f = join(dir, 'ca.pem'); await writeFile(f, src.ca); config.push(`cacert = ${curlQuote(f)}`); }
  if (src.insecureSkipVerify) config.push('insecure');
  for (const h of src.extraHeaders ?? []) config.push(`header = ${curlQuote(h)}`);
  config.push(`url = ${curlQuote(src.url)}`);
  const child = spawn('curl', ['--config', '-'], { stdio: ['pipe', 'ignore', 'pipe'], ...(signal ? { signal } : {}) });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  child.stdin!.end(`${config.join('\n')}\n`);
  let total: number | undefined;
  const poll = setInterval(() => {
    void (async () => {
      if (total === undefined) total = lastResponse(await readFile(hdr, 'utf8').catch(() => '')).length;
      const size = (await stat(raw).catch(() => undefined))?.size;
      if (size !== undefined) onProgress(size, total);
    })();
  }, 250);
  let code: number | null;
  try {
    [code] = (await once(child, 'close')) as [number | null];
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ImportError(`Unable to connect to http data source ${src.url}: ${(err as Error).message}`, false);
  } finally {
    clearInterval(poll);
  }
  const res = lastResponse(await readFile(hdr, 'utf8').catch(() => ''));
  const got = (await stat(raw).catch(() => undefined))?.size ?? 0;
  const curlError = stderr.trim().split('\n').at(-1) ?? `exit ${code}`;
  if (res.code !== 0 && res.code !== 200) {
    throw new ImportError(`Unable to connect to http data source ${src.url}: expected status code 200, got ${res.code}. Status: ${res.code} ${res.text}`.trimEnd(), res.code >= 400 && res.code < 500 && res.code !== 408 && res.code !== 429);
  }
  if (code === 18 || (code === 0 && res.length !== undefined && got !== res.length)) {
    throw new ImportError(`Unable to transfer source data from ${src.url}: unexpected EOF (${got} of ${res.length ?? '?'} bytes)`, false);
  }
  if (code !== 0) throw new ImportError(`Unable to connect to http data source ${src.url}: ${curlError}`, false);
  onProgress(got, res.length ?? got);
  // Compressed: undone into the file the rest reads.
  const out = join(dir, 'source');
  const fh = await open(raw, 'r');
  const head = Buffer.alloc(6);
  try { await fh.read(head, 0, 6, 0); } finally { await fh.close(); }
  const compression = compressionOf(head);
  if (compression === 'none') { await rename(raw, out); return out; }
  const dst = await open(out, 'w');
  try {
    const p = spawn(compression === 'gzip' ? 'gzip' : 'xz', ['-dc', raw], { stdio: ['ignore', dst.fd, 'pipe'], ...(signal ? { signal } : {}) });
    let err = '';
    p.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    const [c] = (await once(p, 'close')) as [number | null];
    if (c !== 0) throw new ImportError(`Unable to process data from ${src.url}: ${compression} data does not decompress: ${err.trim() || `exit ${c}`}`, true);
  } finally {
    await dst.close();
    await rm(raw, { force: true });
  }
  return out;
}

/**
 * Writes a disk image arriving on `body` (gzip, xz or plain) into `dir`, decompressed; fails when
 * fewer than `total` bytes arrive. `what` names the source in errors.
 */
export async function receive(body: Readable, total: number | undefined, dir: string, what: string, onProgress: (received: number, total: number | undefined) => void, signal?: AbortSignal): Promise<string> {
  let received = 0;
  const out = join(dir, 'source');
  // Bytes are counted as they pass (no extra stream stage: a Transform costs a copy per chunk).
  const counter = new PassThrough({ highWaterMark: WRITE_HWM });
  counter.on('data', (chunk: Buffer) => { received += chunk.length; onProgress(received, total); });
  // The first bytes decide the decompressor; the rest streams through it into the file.
  const head: Buffer = await new Promise((resolve, reject) => {
    const onData = (c: Buffer) => { body.pause(); body.off('data', onData); body.off('end', onEnd); body.off('error', reject); body.unshift(c); resolve(c); };
    const onEnd = () => { body.off('data', onData); resolve(Buffer.alloc(0)); };
    body.on('data', onData).once('end', onEnd).once('error', reject);
  });
  const compression = compressionOf(head);
  const file = compression === 'xz' ? undefined : createWriteStream(out, { highWaterMark: WRITE_HWM });
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

async function pipeThroughXz(res: Readable, counter: PassThrough, out: string, signal?: AbortSignal): Promise<void> {
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
  const info = await sniffImage(source).catch((err: Error) => { throw new ImportError(`Unable to process data from ${what}: ${err.message}`, true); });
  if (info.format !== 'raw' && info.format !== 'qcow2') throw new ImportError(`Unable to process data from ${what}: image format ${info.format} is not supported (qcow2 or raw)`, true);
  if (info.format === 'raw' && info.virtualSize % 512 !== 0) throw new ImportError(`Unable to process data from ${what}: not a disk image (raw data of ${info.virtualSize} bytes, not a whole number of 512-byte sectors)`, true);
  if (info.virtualSize > targetSize) throw new ImportError(`Virtual image size ${info.virtualSize} is larger than the reported available storage ${targetSize}. A larger PVC is required.`, true);
  let raw = source;
  if (info.format === 'qcow2') {
    raw = join(tmp, 'converted.raw');
    // The source stays until the temp dir goes (after the DV is reported: unlinking 200 MiB takes a while).
    await run('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', source, raw], signal).catch((err: Error) => { throw new ImportError(`Unable to convert source data from ${what} to raw: ${err.message}`, true); });
  }
  await growTo(raw, targetSize);
  await finish(raw, claimDir);
}

/**
 * The format of an image file from its first bytes, as qemu-img probes it: qcow2 (magic QFI\xfb,
 * the virtual size at offset 24), the other formats qemu-img knows by their magic (refused), else
 * raw — whose size is the file's own (qemu-img would round it up to whole sectors).
 */
export async function sniffImage(path: string): Promise<ImageInfo> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, 512, 0);
    const size = (await fh.stat()).size;
    if (bytesRead >= 32 && head.readUInt32BE(0) === 0x514649fb) return { format: 'qcow2', virtualSize: Number(head.readBigUInt64BE(24)) };
    const magic: [string, (b: Buffer) => boolean][] = [
      ['vmdk', (b) => b.subarray(0, 4).toString('latin1') === 'KDMV' || b.subarray(0, 21).toString('latin1') === '# Disk DescriptorFile'],
      ['vhdx', (b) => b.subarray(0, 8).toString('latin1') === 'vhdxfile'],
      ['vpc', (b) => b.subarray(0, 8).toString('latin1') === 'conectix'],
      ['vdi', (b) => b.readUInt32LE(64) === 0xbeda107f],
      ['qed', (b) => b.readUInt32LE(0) === 0x00444551],
      ['luks', (b) => b.subarray(0, 6).equals(Buffer.from([0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe]))],
    ];
    for (const [format, test] of magic) if (bytesRead >= 68 && test(head)) return { format, virtualSize: size };
    return { format: 'raw', virtualSize: size };
  } finally {
    await fh.close();
  }
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
