// skopeo, the registry and archive client of the local image store. It speaks the registry
// protocol (token and basic auth, TLS with per-registry CA directories, mirrors and the
// registries.conf of containers-common), reads OCI archives, OCI layouts and `docker save`
// archives, and verifies every blob's digest while it copies: qvirt runs `skopeo copy SRC dir:DEST`
// and unpacks the result itself (layer-unpack.ts). `dir:` keeps the source's manifest byte for
// byte, so the manifest digest qvirt records is the registry's.
import { spawn } from 'node:child_process';
import { findOnPath, parentDeathTools, withParentDeathSignal } from '../process/parent-death.ts';
import { createHash } from 'node:crypto';

export class SkopeoError extends Error {
  override name = 'SkopeoError';
  /** The registry refused the credentials (HTTP 401 / 403). */
  readonly unauthorized: boolean;
  /** The image (tag or digest) or repository does not exist. */
  readonly notFound: boolean;
  readonly detail: string;
  constructor(message: string, detail: string) {
    super(message);
    this.detail = detail;
    this.unauthorized = /\b401\b|unauthorized|authentication required|denied|\b403\b/i.test(detail);
    this.notFound = !this.unauthorized && /manifest unknown|not found|name unknown|\b404\b|no such file/i.test(detail);
  }
}

export interface SkopeoCopyOptions {
  /** A containers-auth.json file with the credentials to present (`--src-authfile`). */
  readonly authFile?: string | undefined;
  /** A directory with `*.crt` CA certificates (and client `*.cert`/`*.key`) for the source registry. */
  readonly certDir?: string | undefined;
  /** false: accept any certificate and plain HTTP from the source registry (the user's `insecure`). */
  readonly tlsVerify?: boolean | undefined;
  /** Where skopeo unpacks archives while it reads them (default: its own, /var/tmp). */
  readonly tmpDir?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** The skopeo binary (tests, benchmarks). */
  readonly bin?: string | undefined;
}

/** The message of skopeo's last `level=fatal msg="..."` line (or its last stderr line). */
export function skopeoMessage(stderr: string): string {
  const lines = stderr.trim().split('\n').filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /level=fatal msg="((?:[^"\\]|\\.)*)"/.exec(lines[i]!);
    if (m) return m[1]!.replace(/\\(.)/g, '$1');
  }
  return lines.at(-1) ?? 'skopeo failed';
}

/** The argv of `skopeo copy SRC DEST` with the source options. */
export function skopeoCopyArgs(src: string, dest: string, o: SkopeoCopyOptions = {}): string[] {
  return [
    '--insecure-policy', 'copy', '--quiet',
    ...(o.authFile ? ['--src-authfile', o.authFile] : []),
    ...(o.certDir ? ['--src-cert-dir', o.certDir] : []),
    ...(src.startsWith('docker://') && o.tlsVerify === false ? ['--src-tls-verify=false'] : []),
    src, dest,
  ];
}

/** Runs `skopeo copy SRC DEST`; rejects with a SkopeoError carrying skopeo's message. */
export async function skopeoCopy(src: string, dest: string, o: SkopeoCopyOptions = {}): Promise<void> {
  await runSkopeo(skopeoCopyArgs(src, dest, o), o);
}

/** The manifest `docker://REF` resolves to now, as the registry serves it (`skopeo inspect --raw`). */
export function skopeoInspectRaw(src: string, o: SkopeoCopyOptions = {}): Promise<Buffer> {
  const args = ['inspect', '--raw',
    ...(o.authFile ? ['--authfile', o.authFile] : []),
    ...(o.certDir ? ['--cert-dir', o.certDir] : []),
    ...(o.tlsVerify === false ? ['--tls-verify=false'] : []),
    src];
  return runSkopeo(args, o);
}

/** The sha256 hex of the manifest `docker://REF` resolves to now. */
export async function skopeoManifestDigest(src: string, o: SkopeoCopyOptions = {}): Promise<string> {
  return createHash('sha256').update(await skopeoInspectRaw(src, o)).digest('hex');
}

function runSkopeo(args: string[], o: SkopeoCopyOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // skopeo dies with the local mode, however it dies (a SIGKILLed `qvirt local up` left it
    // downloading into a temp dir the next start removes): setpriv --pdeathsig KILL execs it.
    const bin = findOnPath(o.bin ?? 'skopeo');
    if (!bin) { reject(new SkopeoError('skopeo is not installed (Debian package skopeo; scripts/setup.sh installs it)', `${o.bin ?? 'skopeo'}: not found`)); return; }
    const cmd = withParentDeathSignal({ setpriv: parentDeathTools().setpriv, shell: undefined }, process.pid, bin, args);
    const child = spawn(cmd.file, cmd.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(o.tmpDir ? { TMPDIR: o.tmpDir } : {}) },
      ...(o.signal ? { signal: o.signal } : {}),
    });
    let stderr = '';
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => { if (stderr.length < 65536) stderr += d; });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') reject(new SkopeoError('skopeo is not installed (Debian package skopeo; scripts/setup.sh installs it)', err.message));
      else reject(new SkopeoError(err.name === 'AbortError' ? 'cancelled' : err.message, err.message));
    });
    child.on('close', (code, signal) => {
      if (code === 0) { resolve(Buffer.concat(out)); return; }
      const msg = skopeoMessage(stderr) || `skopeo exited with ${code ?? signal}`;
      reject(new SkopeoError(msg, msg));
    });
  });
}
