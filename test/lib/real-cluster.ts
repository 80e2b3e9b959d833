// The real Kubernetes cluster the suites under test/cluster/ run against: the one named by
// QVIRT_E2E_KUBECONFIG (any cluster: a k3s box, kubeadm, ...), else the single-node Kubernetes in
// ../shared/k8s, which test/run.ts installs, starts (empty) before the first test/cluster/ file and
// stops after the last. A file run on its own starts and stops it itself (`withRealCluster`).
// No cluster, no test: where neither is available a suite fails and says what to do.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const repoRoot = resolve(new URL('../..', import.meta.url).pathname);

/** Where ../shared/k8s lives (beside the checkout, as in CI) and where it is installed. */
export const sharedK8s = {
  source: resolve(repoRoot, '../shared/k8s'),
  home: process.env.K8S_HOME ?? '/var/cache/qvirt-k8s',
};

export interface RealCluster {
  /** The kubeconfig (cluster-admin). */
  readonly kubeconfig: string;
  /** A kubectl matching the server (the shared cluster's own, else `kubectl` on PATH). */
  readonly kubectl: string;
  /**
   * How to load OCI archives into the node's container runtime: a command run with the archives
   * appended (the shared cluster's image-load.sh; `QVIRT_E2E_IMAGE_LOAD`, e.g.
   * "k3s ctr images import", for another cluster).
   */
  readonly imageLoad: readonly string[];
  /** The shared cluster (started by this run), which may be reset; a user's cluster is never reset. */
  readonly shared: boolean;
}

export class NoRealClusterError extends Error {
  override readonly name = 'NoRealClusterError';
}

const howTo = 'set QVIRT_E2E_KUBECONFIG to a cluster\'s kubeconfig (and QVIRT_E2E_IMAGE_LOAD to the command that imports an OCI archive on its node, e.g. "k3s ctr images import"), or run as root beside ../shared/k8s through `node test/run.ts`, which starts that one';

/** The real cluster of this run, as the runner (or `withRealCluster`) exported it. */
export function realCluster(): RealCluster {
  const kubeconfig = process.env.QVIRT_E2E_KUBECONFIG;
  if (!kubeconfig) throw new NoRealClusterError(`no real Kubernetes cluster for this suite: ${howTo}`);
  if (!existsSync(kubeconfig)) throw new NoRealClusterError(`QVIRT_E2E_KUBECONFIG=${kubeconfig}: no such file (${howTo})`);
  const shared = process.env.QVIRT_E2E_SHARED === '1';
  const sharedKubectl = join(sharedK8s.home, 'bin', 'kubectl');
  const kubectl = process.env.QVIRT_E2E_KUBECTL ?? (shared && existsSync(sharedKubectl) ? sharedKubectl : 'kubectl');
  const load = process.env.QVIRT_E2E_IMAGE_LOAD ?? (shared ? join(sharedK8s.home, 'image-load.sh') : '');
  if (!load) throw new NoRealClusterError(`QVIRT_E2E_KUBECONFIG is set but not QVIRT_E2E_IMAGE_LOAD: ${howTo}`);
  return { kubeconfig, kubectl, imageLoad: load.split(/\s+/).filter(Boolean), shared };
}

/** A TCP port free on loopback now (for the API server of the shared cluster). */
async function freePort(preferred: number): Promise<number> {
  const tryPort = (p: number) => new Promise<number | undefined>((res) => {
    const s = createServer();
    s.once('error', () => res(undefined));
    s.listen(p, '0.0.0.0', () => { const a = s.address(); s.close(() => res(typeof a === 'object' && a ? a.port : undefined)); });
  });
  return (await tryPort(preferred)) ?? (await tryPort(0))!;
}

const run = (cmd: string, args: string[], env: Record<string, string> = {}) =>
  execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });

function runAsync(cmd: string, args: string[], env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });
    child.on('error', reject);
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${cmd} failed (${signal ?? `exit ${code}`})`))));
  });
}

/**
 * Installs and starts ../shared/k8s (empty: K8S_RESET=1) and returns the variables that name it
 * (QVIRT_E2E_*). Throws with the reason where it cannot: not root, no ../shared/k8s, a start failure.
 */
export async function startSharedCluster(): Promise<Record<string, string>> {
  if (process.getuid?.() !== 0) throw new NoRealClusterError(`the shared cluster needs root: ${howTo}`);
  if (!existsSync(join(sharedK8s.source, 'install.sh'))) throw new NoRealClusterError(`no ${sharedK8s.source}/install.sh: ${howTo}`);
  run(join(sharedK8s.source, 'install.sh'), [sharedK8s.home]);
  // An earlier run killed before its stop leaves the cluster up: stop it (it refuses to start twice).
  if (existsSync(join(sharedK8s.home, 'run'))) spawnSync(join(sharedK8s.home, 'cluster-stop.sh'), [], { stdio: 'ignore', env: { ...process.env, K8S_POD_STOP_GRACE: '1' } });
  sharedNetnsMount();
  const port = await freePort(6443);
  // Not execFileSync: the test runner's other lanes are running files meanwhile (their output must flow).
  await runAsync(join(sharedK8s.home, 'cluster-start.sh'), [], { K8S_RESET: '1', K8S_API_PORT: String(port) });
  return { QVIRT_E2E_KUBECONFIG: join(sharedK8s.home, 'kubeconfig'), QVIRT_E2E_SHARED: '1' };
}

/**
 * Makes /run/netns a shared bind mount of itself now, as `ip netns add` does the first time it runs.
 * Otherwise a test beside the cluster that runs `ip netns add` (the local mode's pod network) mounts
 * /run/netns over the pods' network namespaces containerd already bound there: containerd can then
 * neither unmount nor remove them, and those pods stay Terminating for good.
 */
function sharedNetnsMount(): void {
  mkdirSync('/run/netns', { recursive: true });
  const mounted = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((l) => l.split(' ')[4] === '/run/netns');
  if (mounted) return;
  run('mount', ['--make-shared', '--bind', '/run/netns', '/run/netns']);
  run('mount', ['--make-shared', '/run/netns']);
}

/** Stops the shared cluster; true when its stop script reports nothing left behind. */
export function stopSharedCluster(): boolean {
  const r = spawnSync(join(sharedK8s.home, 'cluster-stop.sh'), [], { stdio: ['ignore', 'inherit', 'inherit'], env: stopEnv() });
  return r.status === 0;
}

/** stopSharedCluster without blocking the caller's event loop (the test runner's other lanes go on). */
export function stopSharedClusterAsync(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(join(sharedK8s.home, 'cluster-stop.sh'), [], { stdio: ['ignore', 'inherit', 'inherit'], env: stopEnv() });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

const stopEnv = () => ({ ...process.env, K8S_POD_STOP_GRACE: '1' });

/**
 * For a test/cluster/ file run on its own: uses the cluster the runner (or the user) named, else
 * starts the shared one for this process and stops it when the process ends.
 */
export async function withRealCluster(): Promise<RealCluster> {
  if (!process.env.QVIRT_E2E_KUBECONFIG) {
    Object.assign(process.env, await startSharedCluster());
    process.once('exit', () => { stopSharedCluster(); });
  }
  return realCluster();
}

/** `kubectl` against the real cluster; returns stdout, throws with stderr on failure. */
export function kubectl(c: RealCluster, args: string[], input?: string): string {
  const r = spawnSync(c.kubectl, ['--kubeconfig', c.kubeconfig, ...args], { encoding: 'utf8', input, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

/** Loads OCI archives into the cluster's node(s) the way the cluster takes them. */
/**
 * On the shared cluster only (its containerd socket is ours to use): removes qvirt's images of earlier
 * runs (`docker.io/qvirt/...` not in `keep`) and the id references (`sha256:...`) no named image shares
 * a manifest with any more. Each run builds new tags, and the kubelet lists at most 50 images in the
 * node's status (the biggest first): old ones, named or not, would hide the new. Returns what it removed.
 */
export function pruneSharedClusterImages(keep: readonly string[]): string[] {
  const sock = join(sharedK8s.home, 'run', 'containerd.sock');
  if (!existsSync(sock)) return [];
  const ctr = (args: string[]) => execFileSync('ctr', ['-a', sock, '-n', 'k8s.io', ...args], { encoding: 'utf8' });
  const list = () => ctr(['images', 'ls']).split('\n').slice(1).map((l) => l.split(/\s+/)).filter((f) => f.length > 2).map((f) => ({ ref: f[0]!, digest: f[2]! }));
  const want = new Set(keep.map((r) => (r.startsWith('docker.io/') ? r : `docker.io/${r}`)));
  const stale = list().filter((i) => i.ref.startsWith('docker.io/qvirt/') && !want.has(i.ref)).map((i) => i.ref);
  if (stale.length) ctr(['images', 'rm', ...stale]);
  const left = list();
  const named = new Set(left.filter((i) => !i.ref.startsWith('sha256:')).map((i) => i.digest));
  const orphans = left.filter((i) => i.ref.startsWith('sha256:') && !named.has(i.digest)).map((i) => i.ref);
  if (orphans.length) ctr(['images', 'rm', ...orphans]);
  return [...stale, ...orphans];
}

export function loadImages(c: RealCluster, archives: string[]): void {
  run(c.imageLoad[0]!, [...c.imageLoad.slice(1), ...archives]);
}
