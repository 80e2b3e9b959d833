// Harness for the node agent: the embedded API server with KubeVirt's CRDs, a Node, VMIs as the VMI
// controller leaves them (Scheduled, nodeName label, status.activePods, a launcher pod object), and
// real launchers started the way the local pod runner starts the compute container: a process
// whose --root maps /var/run/kubevirt{,-private} onto the pod's emptyDirs under the pods dir, laid
// out as kubelet lays them out.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../src/apiserver/index.ts';
import { applyCrdFiles } from '../../src/deploy/crds.ts';
import { kubeConfigForServer } from '../../src/kube/kubeconfig.ts';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger, type Logger } from '../../src/log/logger.ts';
import { Finalizer, Label } from '../../src/api/constants.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { emptyDir, LauncherVolume } from '../../handler/launcher/sockets.ts';
import { launcherArgv } from '../../src/local/launcher-command.ts';

export const log: Logger = componentLogger('handler-test', { level: (process.env.QVIRT_LOG_LEVEL as 'warn' | undefined) ?? 'warn' });
export const NODE = 'node01';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The embedded API server: plain HTTP without auth by default; `tls` (with `dataDir`) as the local mode runs it, plus `users`/`authorize`. */
export async function startCluster(opts: Partial<Omit<ApiServerOptions, 'log'>> = {}): Promise<{ api: ApiServer; client: KubeClient; close(): Promise<void> }> {
  const api = await startApiServer({ tls: false, ...opts, log });
  const client = new KubeClient(api.kubeconfigPath && opts.tls ? loadKubeConfig(api.kubeconfigPath) : kubeConfigForServer(api.url));
  await applyCrdFiles(client);
  await client.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
  return { api, client, close: async () => { await client.close(); await api.stop(); } };
}

export function vmiManifest(name: string, podUid: string): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default', labels: { [Label.NodeName]: NODE }, finalizers: [Finalizer.VirtualMachineInstance] },
    spec: {
      terminationGracePeriodSeconds: 30,
      domain: {
        firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests', container: { image: 'qvirt/test-guest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
        devices: {},
        resources: { requests: { memory: '128Mi' } },
      },
    },
    status: { phase: 'Scheduled', nodeName: NODE, activePods: { [podUid]: NODE }, phaseTransitionTimestamps: [{ phase: 'Scheduled', phaseTransitionTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] },
  } as VirtualMachineInstance;
}

export interface TestLauncher {
  readonly podUid: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  serialLog(): string;
  qemuPid(): number | undefined;
  stop(): Promise<void>;
}

/** Creates the VMI (status as the VMI controller writes it) and starts its launcher "pod". */
export interface CreateOptions {
  /** Changes the VMI before it is created. */
  readonly mutate?: (vmi: VirtualMachineInstance) => void;
  /** Runs after the pod's emptyDirs exist, before the launcher starts (what kubelet would mount). */
  readonly beforeLaunch?: (emptyDirOf: (volume: string) => string) => void;
}

export async function createVmiWithLauncher(client: KubeClient, podsDir: string, name: string, logDir: string, opts: CreateOptions = {}): Promise<{ vmi: VirtualMachineInstance; launcher: TestLauncher }> {
  const podUid = randomUUID();
  const manifest = vmiManifest(name, podUid);
  opts.mutate?.(manifest);
  const created = await client.create(Resources.virtualMachineInstances, manifest);
  // VMIs have no status subresource: create drops nothing, but write the status explicitly to be sure.
  const vmi = await client.update(Resources.virtualMachineInstances, { ...created, status: vmiManifest(name, podUid).status });
  await client.create(Resources.pods, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `virt-launcher-${name}-abcde`, namespace: 'default', uid: podUid, labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': vmi.metadata!.uid! } },
    spec: { nodeName: NODE, containers: [{ name: 'compute', image: 'qvirt/launcher' }] },
  } as never).catch(() => undefined);
  const ed = (v: string) => emptyDir(podsDir, podUid, v);
  for (const v of Object.values(LauncherVolume)) mkdirSync(ed(v), { recursive: true });
  opts.beforeLaunch?.(ed);
  // The launcher's own root is short (QEMU's sockets live under it); its directories are the pod's emptyDirs.
  const root = join(dirname(podsDir), podUid.slice(0, 4));
  mkdirSync(join(root, 'var/run'), { recursive: true });
  symlinkSync(ed(LauncherVolume.Public), join(root, 'var/run/kubevirt'));
  symlinkSync(ed(LauncherVolume.Private), join(root, 'var/run/kubevirt-private'));
  symlinkSync(ed(LauncherVolume.Sockets), join(ed(LauncherVolume.Public), 'sockets'));
  symlinkSync(ed(LauncherVolume.ContainerDisks), join(ed(LauncherVolume.Public), 'container-disks'));
  // As the local pod runner starts the compute container: the launcher bundle when it is built.
  const child = spawn(process.execPath, [...launcherArgv(), '--name', name, '--uid', vmi.metadata!.uid!, '--namespace', 'default', '--root', root, '--allow-emulation', '--grace-period-seconds', '45'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = createWriteStream(join(logDir, `${name}.launcher.log`));
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const serial = join(ed(LauncherVolume.Private), vmi.metadata!.uid!, 'virt-serial0-log');
  const qemuPid = () => {
    try {
      const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      return kids.find((p) => { try { return readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('qemu'); } catch { return false; } });
    } catch { return undefined; }
  };
  let qemuSeen: number | undefined;
  const launcher: TestLauncher = {
    podUid,
    child,
    exited,
    serialLog: () => (existsSync(serial) ? readFileSync(serial, 'utf8') : ''),
    qemuPid: () => { const p = qemuPid(); if (p) qemuSeen = p; return p; },
    stop: async () => {
      launcher.qemuPid();
      if (child.exitCode === null && child.signalCode === null) {
        try { process.kill(child.pid!, 'SIGCONT'); } catch { /* gone */ }
        child.kill('SIGTERM');
        const done = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
        if (!done) child.kill('SIGKILL');
      }
      if (qemuSeen) { try { process.kill(qemuSeen, 'SIGKILL'); } catch { /* gone */ } }
    },
  };
  launcher.qemuPid();
  return { vmi, launcher };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) { last = err; }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(100);
  }
}
