// The local mode as a process the fault tests can kill (local-up-process.ts), started again on the
// same data dir, port and pod network; and what such a test counts as possibly orphaned: QEMUs,
// processes naming the test's directory, unix sockets and mounts under it, the pod network's nft
// table, bridge and namespaces.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.ts';
import { podNetworkNames } from '../../src/local/pod-runner/pod-network.ts';
import { tempDir } from '../lib/tmp.ts';
import { within } from '../lib/within.ts';
import { QVIRT } from '../virtctl/lib.ts';

const SCRIPT = fileURLToPath(new URL('./local-up-process.ts', import.meta.url));

/** A port free on 127.0.0.1 now (the local mode keeps it across restarts, so the kubeconfig stays valid). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

export interface LocalProcess {
  readonly dir: string;
  readonly dataDir: string;
  readonly podsDir: string;
  readonly bridge: string;
  /** The client of the running local mode (a new one after each start). */
  readonly client: KubeClient;
  readonly kubeconfig: string;
  readonly nodeNames: readonly string[];
  readonly pid: number;
  /** Starts the local mode (again) on the same data dir; resolves once it serves. */
  start(): Promise<void>;
  /** Sends `signal` to the local mode's process and waits for it to exit (a SIGTERM drains first). */
  kill(signal: NodeJS.Signals, timeoutMs?: number): Promise<void>;
  /** `qvirt ARGS...` against it; never throws. */
  qvirt(...args: string[]): Promise<{ code: number; out: string; err: string }>;
  /** Stops it gracefully (if running) and removes the directory. */
  cleanup(): Promise<void>;
}

export async function localProcess(prefix: string, o: { nodes?: number; clusterConfig?: Record<string, unknown> } = {}): Promise<LocalProcess> {
  const t = tempDir(prefix);
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const port = await freePort();
  const n = process.pid % 200;
  const bridge = `qvk${process.pid % 100000}`;
  const args = JSON.stringify({ dataDir: join(t.path, 'data'), imageStore: store.root, port, nodes: o.nodes ?? 1, bridge, subnet: `10.251.${n}.0/24`, ...(o.clusterConfig ? { clusterConfig: o.clusterConfig } : {}) });
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let client: KubeClient | undefined;
  let kubeconfig = '';
  let nodeNames: string[] = [];
  const env = { PATH: process.env.PATH ?? '', HOME: t.path, QVIRT_RUNTIME_DIR: join(t.path, 'run'), QVIRT_LOG_LEVEL: 'warn' };
  const lp: LocalProcess = {
    dir: t.path,
    dataDir: join(t.path, 'data'),
    podsDir: join(t.path, 'data', 'pods'),
    bridge,
    get client() { return client!; },
    get kubeconfig() { return kubeconfig; },
    get nodeNames() { return nodeNames; },
    get pid() { return child?.pid ?? 0; },
    start: async () => {
      const c = spawn(process.execPath, [SCRIPT, args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
      child = c;
      exited = new Promise((r) => c.once('exit', () => r()));
      const ready = await within(new Promise<{ kubeconfig: string; nodeNames: string[] }>((resolve, reject) => {
        let buf = '';
        c.stdout!.on('data', (d: Buffer) => {
          buf += d.toString();
          for (const line of buf.split('\n').slice(0, -1)) if (line.startsWith('{')) resolve(JSON.parse(line) as { kubeconfig: string; nodeNames: string[] });
          buf = buf.slice(buf.lastIndexOf('\n') + 1);
        });
        c.once('exit', (code, sig) => reject(new Error(`the local mode exited before it served (${code ?? sig})`)));
      }), 120_000, 'the local mode to serve');
      client?.close();
      kubeconfig = ready.kubeconfig;
      nodeNames = ready.nodeNames;
      client = new KubeClient(loadKubeConfig(kubeconfig));
    },
    kill: async (signal, timeoutMs = 90_000) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await within(exited, timeoutMs, `the local mode to exit after ${signal}`);
      client?.close();
    },
    qvirt: (...a) => new Promise((resolve) => {
      execFile(QVIRT, a, { env: { ...env, KUBECONFIG: kubeconfig }, timeout: 60_000 }, (err, out, errOut) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) });
      });
    }),
    cleanup: async () => {
      try {
        // A local mode a test left killed is started again so its drain removes what it owns (pods, their
        // networks, the bridge); whatever still runs after is killed, the host's pod network removed.
        if (!child || child.exitCode !== null || child.signalCode !== null) await lp.start().catch(() => undefined);
        await lp.kill('SIGTERM').catch(() => undefined);
      } finally {
        if (child && child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; }
        for (const l of processesUnder(t.path)) { try { process.kill(Number(l.split(' ')[0]), 'SIGKILL'); } catch { /* gone */ } }
        if (podNetworkLeft(bridge).length) { run('nft', ['delete', 'table', 'inet', `qvirt-${bridge}`]); run('ip', ['link', 'del', bridge]); }
        t.cleanup();
      }
    },
  };
  return lp;
}

const lines = (s: string) => s.split('\n').filter(Boolean);
function run(cmd: string, args: string[]): string {
  try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }); } catch { return ''; }
}

/**
 * Processes whose command line names `dir` (launchers, QEMUs, tails, the local mode itself...), but not
 * `except`. Two looks 300 ms apart, and only what both saw: a process the local mode is starting (`ip`,
 * `nft`, a container) shows its parent's command line between fork and exec, and is not a leftover.
 */
export function processesUnder(dir: string, except: readonly number[] = []): string[] {
  const look = () => lines(run('pgrep', ['-af', dir])).filter((l) => !except.includes(Number(l.split(' ')[0])));
  const first = look();
  if (first.length === 0) return first;
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
  const again = new Set(look());
  return first.filter((l) => again.has(l));
}

/** Unix sockets under `dir`. */
export function socketsUnder(dir: string): string[] {
  return lines(run('find', [dir, '-type', 's'])).sort();
}

/** Mount points at or under `dir`. */
export function mountsUnder(dir: string): string[] {
  return lines(run('findmnt', ['-rn', '-o', 'TARGET'])).filter((m) => m === dir || m.startsWith(`${dir}/`));
}

/** The pod network's leftovers on the host: its nft table (outbound-nat.ts: `inet qvirt-<bridge>`), its bridge. */
export function podNetworkLeft(bridge: string): string[] {
  const left: string[] = [];
  if (lines(run('nft', ['list', 'tables'])).includes(`table inet qvirt-${bridge}`)) left.push(`nft table inet qvirt-${bridge}`);
  if (run('ip', ['-o', 'link', 'show', 'dev', bridge]).trim()) left.push(`bridge ${bridge}`);
  return left;
}

/** What of these pods' networks (pod-network.ts: namespace `qvirt-<uid hex>`, host veth) still exists. */
export function podNetnsLeft(podUids: readonly string[]): string[] {
  const netns = lines(run('ip', ['netns', 'list'])).map((l) => l.split(' ')[0]!);
  const links = run('ip', ['-o', 'link', 'show']);
  const left: string[] = [];
  for (const uid of podUids) {
    const { netnsName, hostVeth } = podNetworkNames(uid);
    if (netns.includes(netnsName)) left.push(`netns ${netnsName}`);
    if (links.includes(` ${hostVeth}@`) || links.includes(` ${hostVeth}:`)) left.push(`veth ${hostVeth}`);
  }
  return left;
}
