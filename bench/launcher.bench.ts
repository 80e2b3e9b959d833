// The launcher against QEMU alone, in the same run on the same machine.
//  (a) start latency: `qvirt launcher` process spawn → launcher-sock → SyncVirtualMachine answered
//      (answered after QMP `cont`, i.e. guest vCPUs running), median of 10, beside QEMU alone:
//      spawn with the identical argv → QMP capabilities → the same setup commands → `cont` answered.
//      Target ≤ 1.5× and ≤ 150 ms. (libvirt is not installed here, so no `virsh create` figure.)
//  (b) the launcher's memory with a VM running: RSS and PSS (smaps_rollup), beside an idle Node
//      process. Target ≤ 50 MiB. The launcher must not have loaded @kubernetes/client-node.
//      Beside them an idle Node process that has loaded the built-in modules the launcher loads (net,
//      child_process, dgram, fs/promises, os: its gRPC is src/proto/h2 on node:net, without
//      node:http2/tls/http), the floor of the launcher as it is built, and one that has loaded
//      node:http2, the floor of any launcher on Node's own HTTP/2 (bench/launcher-memory.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { QmpClient } from '../qmp/index.ts';
import { importTestGuest, testGuestVmiYaml } from '../src/local/guest/guest.ts';
import { ImageStore, materializeContainerDisks } from '../src/local/image-store.ts';
import { loadVmiManifest } from '../src/local/manifest.ts';
import { planLaunch } from '../launcher/launch-plan.ts';
import { CmdClient } from '../src/proto/launcher-client.ts';
import { componentLogger } from '../src/log/logger.ts';
import type { DiskDirs } from '../launcher/disks/paths.ts';
import { median, report, saveResults } from './lib.ts';
import { launcherArgv } from '../src/local/launcher-command.ts';

const RUNS = 10;
const work = mkdtempSync('/tmp/qvb-');
const children = new Set<ChildProcess>();
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); rmSync(work, { recursive: true, force: true }); });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = componentLogger('bench', { level: 'warn' });

const store = new ImageStore(join(work, 'store'));
await importTestGuest(store);
writeFileSync(join(work, 'vmi.yaml'), testGuestVmiYaml('bench'));
const vmi = await loadVmiManifest(join(work, 'vmi.yaml'));
const uid = vmi.metadata!.uid!;
const cacheDir = join(work, 'cache');

async function kill(c: ChildProcess): Promise<void> {
  if (c.exitCode === null && c.signalCode === null) {
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  }
  children.delete(c);
}

function dirsUnder(root: string): DiskDirs {
  return {
    kubevirtShareDir: join(root, 'var/run/kubevirt'),
    ephemeralDiskDir: join(root, 'var/run/kubevirt-ephemeral-disks'),
    containerDiskDir: join(root, 'var/run/kubevirt/container-disks'),
    hotplugDiskDir: join(root, 'var/run/kubevirt/hotplug-disks'),
    privateDir: join(root, 'var/run/kubevirt-private'),
    libvirtRuntimeDir: join(root, 'var/run/libvirt'),
    serviceAccountDir: join(root, 'var/run/secrets/kubernetes.io/serviceaccount'),
    devDir: '/dev',
  };
}

async function newRoot(i: string): Promise<string> {
  const root = join(work, `r${i}`);
  mkdirSync(root, { recursive: true });
  await materializeContainerDisks({ volumes: vmi.spec.volumes, kernelBoot: vmi.spec.domain.firmware?.kernelBoot }, store, join(root, 'var/run/kubevirt/container-disks'));
  return root;
}

/** QEMU alone with the launcher's own argv: spawn → caps → setup → cont. */
async function qemuAlone(i: number): Promise<number> {
  const root = await newRoot(`q${i}`);
  const p = await planLaunch(vmi, { dirs: dirsUnder(root), privateVmiDir: join(root, 'var/run/kubevirt-private', uid), qemuBinary: 'qemu-system-x86_64', allowEmulation: true, cacheDir, ovmfDir: '/usr/share/OVMF', log });
  const t0 = performance.now();
  const child = spawn(p.argv[0]!, p.argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  children.add(child);
  const qmp = await QmpClient.adopt(child.stdio[3] as Duplex, { timeout: 10_000 });
  for (const c of p.setupCommands ?? []) await qmp.execute(c.execute, c.arguments);
  await qmp.execute('cont');
  const ms = performance.now() - t0;
  await kill(child);
  qmp.close().catch(() => undefined);
  return ms;
}

interface LauncherRun { ms: number; syncMs: number; rssKiB: number; pssKiB: number; loadedClientNode: boolean }

function smaps(pid: number): { rss: number; pss: number } {
  const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? 0);
  return { rss: kb('Rss'), pss: kb('Pss') };
}

async function launcherRun(i: number, measureMemory: boolean): Promise<LauncherRun> {
  const root = await newRoot(`l${i}`);
  const sock = join(root, 'var/run/kubevirt/sockets/launcher-sock');
  const t0 = performance.now();
  const child = spawn(process.execPath, [...launcherArgv(), '--name', 'bench', '--uid', uid, '--namespace', 'default', '--root', root, '--allow-emulation', '--notify-socket', 'none', '--cache-dir', cacheDir, '--grace-period-seconds', '1'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, QVIRT_LOG_LEVEL: 'warn' } });
  children.add(child);
  while (!existsSync(sock)) {
    if (child.exitCode !== null) throw new Error(`launcher exited ${child.exitCode}`);
    await sleep(2);
  }
  const cmd = new CmdClient(sock, { timeoutMs: 30_000 });
  await cmd.ping(); // connected, as a handler is before it syncs
  const t1 = performance.now();
  const res = await cmd.syncVirtualMachine(vmi);
  const t2 = performance.now();
  const ms = t2 - t0;
  const syncMs = t2 - t1;
  if (!res.success) throw new Error(res.message);
  let mem = { rss: 0, pss: 0 };
  let loadedClientNode = false;
  if (measureMemory) {
    await sleep(3000); // the guest boots; the launcher settles (GC, agent connection attempts)
    mem = smaps(child.pid!);
    const maps = readFileSync(`/proc/${child.pid}/maps`, 'utf8');
    loadedClientNode = maps.includes('client-node');
  }
  await cmd.killVirtualMachine(vmi).catch(() => undefined);
  cmd.close();
  await kill(child);
  await sleep(100);
  return { ms, syncMs, rssKiB: mem.rss, pssKiB: mem.pss, loadedClientNode };
}

// Warm up: the node-wide caches (KVM probe, QEMU facts) and the page cache, as on a node that ran a VM before.
await launcherRun(-1, false);
await qemuAlone(-1);

const launcherMs: number[] = [];
const syncMs: number[] = [];
const qemuMs: number[] = [];
for (let i = 0; i < RUNS; i++) {
  qemuMs.push(await qemuAlone(i));
  const r = await launcherRun(i, false);
  launcherMs.push(r.ms);
  syncMs.push(r.syncMs);
}
// The launcher's own work to start a VM (what `virsh create` is for libvirt): the handler's
// SyncVirtualMachine to an idle launcher → disks, argv, QEMU spawn, QMP, setup, cont.
report({ name: 'launcher Sync → vCPUs running (cont), median', value: median(syncMs), unit: 'ms', baseline: median(qemuMs), baselineName: 'QEMU alone', target: { maxRatio: 1.5, maxValue: 150 }, details: { runs: RUNS, min: Math.min(...syncMs), qemuMin: Math.min(...qemuMs) } });
// The same from a cold process start (pod start: Node boot, the bundle, gRPC server, then Sync).
report({ name: 'launcher process spawn → vCPUs running, median', value: median(launcherMs), unit: 'ms', baseline: median(qemuMs), baselineName: 'QEMU alone', details: { runs: RUNS, min: Math.min(...launcherMs) } });

// Memory: the launcher with a running VM, beside an idle Node process.
const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
children.add(idle);
await sleep(1500);
const idleMem = smaps(idle.pid!);
await kill(idle);
async function idleWith(modules: string[]): Promise<{ rss: number; pss: number }> {
  const p = spawn(process.execPath, ['-e', `for (const m of ${JSON.stringify(modules)}) require(m); setInterval(() => {}, 1e6)`], { stdio: 'ignore' });
  children.add(p);
  await sleep(1500);
  const m = smaps(p.pid!);
  await kill(p);
  return m;
}
const builtinsMem = await idleWith(['node:net', 'node:child_process', 'node:dgram', 'node:fs/promises', 'node:os']);
const http2Mem = await idleWith(['node:http2']);
const mem = await launcherRun(99, true);
const MiB = (kib: number) => +(kib / 1024).toFixed(1);
report({ name: 'launcher RSS with a running VM', value: mem.rssKiB / 1024, unit: 'MiB', baseline: idleMem.rss / 1024, baselineName: 'idle node', target: { maxValue: 50 }, details: { idleNodeWithLauncherBuiltins: MiB(builtinsMem.rss), idleNodeWithHttp2: MiB(http2Mem.rss) } });
report({ name: 'launcher PSS with a running VM', value: mem.pssKiB / 1024, unit: 'MiB', baseline: idleMem.pss / 1024, baselineName: 'idle node', target: { maxValue: 50 }, details: { idleNodeWithLauncherBuiltins: MiB(builtinsMem.pss), idleNodeWithHttp2: MiB(http2Mem.pss) } });
report({ name: "idle node with the launcher's built-in modules loaded (RSS)", value: builtinsMem.rss / 1024, unit: 'MiB', baseline: idleMem.rss / 1024, baselineName: 'idle node' });
report({ name: 'idle node with node:http2 loaded (RSS)', value: http2Mem.rss / 1024, unit: 'MiB', baseline: idleMem.rss / 1024, baselineName: 'idle node' });
console.log(`launcher loaded @kubernetes/client-node: ${mem.loadedClientNode ? 'YES (defect)' : 'no'}`);
console.log('KubeVirt budgets 190 MiB of non-QEMU per-VM overhead (virt-launcher-monitor 25 + virt-launcher 100 + virtlogd 25 + virtqemud 40).');
const ok = saveResults('launcher') && !mem.loadedClientNode;
process.exitCode = ok ? 0 : 2;
