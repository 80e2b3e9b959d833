// What the real-cluster suites share: qvirt's images built and loaded, the test guest packed as the
// images a KubeVirt user has (a kernel-boot container image and a containerDisk image: files in an
// OCI image, no image store), the verbs run as a user runs them, and waits that poll the cluster.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ensureGuest } from '../../src/local/guest/guest.ts';
import { writeLayer, writeOciArchive } from '../../scripts/images/oci.ts';
import { IMAGES_INDEX_FILE, IMAGES_OUT_DIR, parseBuiltImages, type BuiltImage } from '../../src/deploy/images.ts';
import { kubectl, type RealCluster } from '../lib/real-cluster.ts';
import { waitFor } from '../lib/within.ts';

const execFileP = promisify(execFile);
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
export const QVIRT = join(repoRoot, 'bin/qvirt');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `npm run images` (scripts/images.ts): the launcher and virt images as OCI archives. */
export async function buildQvirtImages(): Promise<BuiltImage[]> {
  await execFileP(process.execPath, [join(repoRoot, 'scripts/images.ts')], { cwd: repoRoot, maxBuffer: 16 << 20, timeout: 600_000 });
  return parseBuiltImages(JSON.parse(readFileSync(join(repoRoot, IMAGES_OUT_DIR, IMAGES_INDEX_FILE), 'utf8')));
}

export interface GuestImages {
  /** `docker.io/qvirt/e2e-guest-kernel:<tag>`: /boot/vmlinuz and /boot/initrd.img (kernelBoot.container). */
  readonly kernel: string;
  /** `docker.io/qvirt/e2e-guest-disk:<tag>`: /disk/disk.qcow2, a blank 64 MiB disk (containerDisk). */
  readonly disk: string;
  readonly archives: string[];
}

/** The test guest as a kernel-boot image and a containerDisk image, written as OCI archives in `dir`. */
export async function buildGuestImages(dir: string): Promise<GuestImages> {
  const g = await ensureGuest();
  const config = { Env: [], Entrypoint: [], WorkingDir: '/', Labels: {} };
  const kroot = join(dir, 'kernel-root');
  mkdirSync(join(kroot, 'boot'), { recursive: true });
  copyFileSync(g.kernel, join(kroot, 'boot/vmlinuz'));
  copyFileSync(g.initrd, join(kroot, 'boot/initrd.img'));
  const droot = join(dir, 'disk-root');
  mkdirSync(join(droot, 'disk'), { recursive: true });
  await execFileP('qemu-img', ['create', '-q', '-f', 'qcow2', join(droot, 'disk/disk.qcow2'), '64M']);
  const kernel = await writeOciArchive({ name: 'qvirt/e2e-guest-kernel', config, layer: await writeLayer(kroot, join(dir, 'blobs')), outDir: dir, workDir: dir });
  const disk = await writeOciArchive({ name: 'qvirt/e2e-guest-disk', config, layer: await writeLayer(droot, join(dir, 'blobs')), outDir: dir, workDir: dir });
  return { kernel: `docker.io/${kernel.ref}`, disk: `docker.io/${disk.ref}`, archives: [kernel.archive, disk.archive] };
}

/** Runs `bin/qvirt ARGS --kubeconfig K`; resolves with its output whatever the exit code. */
export async function qvirt(c: RealCluster, args: string[], timeoutMs = 600_000): Promise<{ code: number; out: string }> {
  try {
    const r = await execFileP(QVIRT, [...args, '--kubeconfig', c.kubeconfig], { cwd: repoRoot, maxBuffer: 16 << 20, timeout: timeoutMs, env: { ...process.env, QVIRT_LOG_LEVEL: 'warn' } });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message };
  }
}

/** `kubectl get -o json` parsed; undefined when the object is not there. */
export function getJson<T = Record<string, any>>(c: RealCluster, args: string[]): T | undefined {
  try {
    return JSON.parse(kubectl(c, ['get', ...args, '-o', 'json'])) as T;
  } catch (err) {
    if (/NotFound|not found/.test((err as Error).message)) return undefined;
    throw err;
  }
}

/** `kubectl apply -f -` of objects. */
export function apply(c: RealCluster, objs: unknown[]): string {
  return kubectl(c, ['apply', '-f', '-'], objs.map((o) => JSON.stringify(o)).join('\n'));
}

/**
 * An interactive `qvirt console`: what it prints, `send` to type, `close` with Ctrl-] (as a user
 * leaves). Resolves `waitFor(text)` when the text has appeared.
 */
export function openConsole(c: RealCluster, vmi: string, namespace: string) {
  const child = spawn(QVIRT, ['console', vmi, '-n', namespace, '--kubeconfig', c.kubeconfig], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, QVIRT_LOG_LEVEL: 'warn' } });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    get output() { return out; },
    send(s: string) { child.stdin.write(s); },
    waitFor: (text: string | RegExp, timeoutMs = 60_000) => waitFor(`${String(text)} on the console`, () => (typeof text === 'string' ? out.includes(text) : text.test(out)), timeoutMs, 200),
    async close(): Promise<number | null> {
      child.stdin.write('\x1d');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
