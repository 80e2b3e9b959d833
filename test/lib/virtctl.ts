// KubeVirt's own virtctl (v1.9.0, ../shared/virtctl/): unpacked once into the repo's .cache after
// its archive's checksum is verified, and run as a user runs it — a subprocess with a kubeconfig.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SHARED = join(root, '..', 'shared', 'virtctl');
const ARCHIVE = 'virtctl-v1.9.0-linux-amd64.xz';

/** The path of KubeVirt's virtctl binary, unpacking and verifying it on first use. */
export async function virtctlPath(): Promise<string> {
  const out = join(root, '.cache', 'virtctl', 'virtctl-v1.9.0');
  if (existsSync(out)) return out;
  const archive = join(SHARED, ARCHIVE);
  if (!existsSync(archive)) throw new Error(`KubeVirt's virtctl is not at ${archive}: the virtctl tests need ../shared/virtctl (see its README)`);
  const data = readFileSync(archive);
  const want = readFileSync(`${archive}.sha256`, 'utf8').split(/\s+/)[0];
  const got = createHash('sha256').update(data).digest('hex');
  if (got !== want) throw new Error(`${archive}: sha256 ${got}, expected ${want}`);
  mkdirSync(join(root, '.cache', 'virtctl'), { recursive: true });
  const tmp = `${out}.${process.pid}`;
  const { stdout } = await promisify(execFile)('xz', ['-dc', archive], { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 });
  writeFileSync(tmp, stdout);
  chmodSync(tmp, 0o755);
  renameSync(tmp, out);
  return out;
}

export interface VirtctlResult { readonly code: number; readonly out: string; readonly err: string }

/** `virtctl ARGS...` with `kubeconfig`; never throws. */
export async function virtctl(kubeconfig: string, args: readonly string[], o: { timeoutMs?: number; env?: Record<string, string>; input?: string } = {}): Promise<VirtctlResult> {
  const bin = await virtctlPath();
  return new Promise((resolve) => {
    const child = execFile(bin, ['--kubeconfig', kubeconfig, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...o.env }, timeout: o.timeoutMs ?? 60_000 }, (err, out, errOut) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) });
    });
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}

/** `virtctl ARGS...` as a long-running child (console, port-forward), stdio piped. */
export async function virtctlSpawn(kubeconfig: string, args: readonly string[], env: Record<string, string> = {}): Promise<ChildProcess> {
  const bin = await virtctlPath();
  return spawn(bin, ['--kubeconfig', kubeconfig, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
}
