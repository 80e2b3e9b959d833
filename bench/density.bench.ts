// KubeVirt's density protocol scaled to this machine, in the local mode (API server, controllers,
// handler and pod runner in this one process; a launcher + QEMU process pair per VM): DENSITY_VMS
// (default 20) VMs created 100 ms apart, creation → VMI Running, p50 and p95, each beside the same
// measurement for one VM created alone on the idle system (median of BASELINE_RUNS) in this run.
// Per-phase breakdown, all on this process's clock (ms):
//   controller   VM create sent → VMI seen → launcher pod seen        (watch events)
//   scheduling   pod seen → pod bound to the node                      (watch events)
//   pod runner   bound → compute container process spawned             (pod runner's log line)
//   launcher     spawned → the launcher's first log line (Node start)  (compute container's CRI log)
//   QEMU start   launcher up → QEMU started paused, QMP connected       (launcher's log; includes the handler's Sync), split into
//                launcherInit (→ 'launcher ready'), handlerWait (→ the handler sends SyncVirtualMachine: it found the
//                socket, a worker was free, the node side was prepared), syncToSpawn (→ 'starting QEMU': the launcher's plan),
//                qemuProcess (→ QMP connected)
//   → Running    QEMU up → VMI phase Running                           (watch event; handler + cont)
// Memory with the VMs running: this process's RSS (the whole local control plane, plus this
// harness's informers), per-VM launcher and QEMU PSS beside KubeVirt's 240 MiB per-VM overhead budget.
// Launchers run from the bundle (scripts/build.ts, run first). Guests: the test guest with 128 MiB (the
// least it boots with: 64 MiB guests die in early boot and would spare the CPU), TCG when KVM cannot run guests.
// Also: this process's CPU time and event-loop delay while the VMs start (is the control plane the bottleneck?).
// Machine baseline (bench/bare-qemu.ts): the same protocol with no qvirt at all — DENSITY_VMS QEMUs spawned
// 100 ms apart with the argv the launcher's converter builds for the same VMI (checked against the argv the
// launcher logged), spawn → QMP → `cont` → "running". Run once before and once after qvirt's run (this host's
// memory is cheaper to touch the second time), both pooled. qvirt's p50/p95 are reported also as its ratio.
// CPU isolation: the local mode's pod runner puts this process in its system-reserved cgroup and each launcher pod
// in kubepods-…/<qos>/pod<uid> (src/local/pod-runner/cgroup-manager.ts), both below one qvirt/ cgroup; the bare
// QEMUs are this process's children, so they start in system-reserved: the baseline and qvirt's run each compete
// with the rest of the (shared) machine as that one qvirt/ cgroup. The mode and the load average are printed.
import { execFileSync } from 'node:child_process';
import { openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { importTestGuest } from '../src/local/guest/guest.ts';
import { testGuestVm } from './test-guest-vm.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../src/local/up.ts';
import { Informer } from '../src/kube/informer.ts';
import type { KubeObject } from '../src/kube/client.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import { median, percentile, report, saveResults } from './lib.ts';
import { isVcpuThread, processCpuMs, threadCpuMs } from './proc-cpu.ts';
import { argvDifference, bareDensity, prepareBareQemu, type BareQemu, type BareStart } from './bare-qemu.ts';
import type { VirtualMachineInstance } from '../src/api/types.ts';

const VMS = Number(process.env.DENSITY_VMS ?? 20);
const BASELINE_RUNS = Number(process.env.DENSITY_BASELINE_RUNS ?? 3);
// DENSITY_ROUNDS (default 1): qvirt's run and the machine baseline's alternate this many times (bare, qvirt,
// bare, qvirt, …, bare). On a shared machine one run's bare p50 moves 400–940 ms from run to run, so a
// single ratio says little; rounds give each qvirt run its own neighbouring baseline and the median ratio.
const ROUNDS = Math.max(1, Number(process.env.DENSITY_ROUNDS ?? 1));
const GAP_MS = 100;
const KUBEVIRT_PER_VM_OVERHEAD_MIB = 240;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const PHASES = ['controller', 'scheduling', 'podRunner', 'launcher', 'qemuStart', 'toRunning'] as const;
/** qemuStart split by the launcher's log: its own start-up, the handler's Sync until QEMU is spawned, QEMU's start. */
const QEMU_START_PARTS = ['launcherInit', 'handlerWait', 'syncToSpawn', 'qemuProcess'] as const;
/** handlerWait split by the node agent's steps: the launcher's socket seen (attach: notify server, GetDomain), then its node side (container disks, pod network, devices) until the Sync goes. */
const HANDLER_WAIT_PARTS = ['toLauncherFound', 'foundToSync'] as const;
type Phase = (typeof PHASES)[number] | (typeof QEMU_START_PARTS)[number] | (typeof HANDLER_WAIT_PARTS)[number];
/** CPU time (ms) a start cost, read when the VMI is first seen Running. */
interface StartCpu { launcher: number; qemu: number; vcpu: number; local: number; otherContainers: number }
interface Times { qemuArgv?: string[]; created: number; cpu0?: number; cpu?: StartCpu; vmi?: number; pod?: number; bound?: number; spawned?: number; launcherUp?: number; ready?: number; qemuSpawn?: number; qemuUp?: number; running?: number; podUid?: string; pid?: number }

// The local mode's own log lines (pod runner: 'started container') are read as they are written.
const spawnedAt = new Map<string, number>(); // pod name → time of the compute container's spawn
// DENSITY_LOG=<file>: every log line of the local mode also goes there (to see where a phase waits).
const logCopy = process.env.DENSITY_LOG ? openSync(process.env.DENSITY_LOG, 'w') : undefined;
const logSink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    if (logCopy !== undefined) writeSync(logCopy, chunk);
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.includes('"started container"') || !line.includes('"container":"compute"')) continue;
      try {
        const o = JSON.parse(line) as { time: string; pod: string };
        spawnedAt.set(o.pod, Date.parse(o.time));
      } catch { /* not JSON */ }
    }
    cb();
  },
});
const log = componentLogger('density', { level: 'info', destination: logSink });

// Launchers run from the pre-built bundle, as `qvirt local up` runs them once built (src/local/launcher-command.ts).
execFileSync(process.execPath, [join(import.meta.dirname, '../scripts/build.ts')], { stdio: 'ignore' });

const work = tempDir('qdb');
const store = new ImageStore(join(work.path, 'store'));
await importTestGuest(store);
// When the node agent sent each VMI its SyncVirtualMachine (this process's clock), by VMI name.
const syncSentAt = new Map<string, number>();
const launcherFoundAt = new Map<string, number>();
const onStartStep = (key: string, step: string) => {
  const name = key.slice(key.indexOf('/') + 1);
  if (step === 'syncSent' && !syncSentAt.has(name)) syncSentAt.set(name, Date.now());
  if (step === 'launcherFound' && !launcherFoundAt.has(name)) launcherFoundAt.set(name, Date.now());
};
const local: LocalMode = await startLocalMode({ dataDir: join(work.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log, onStartStep });
// How the node weighs its pods against the control plane: the pod runner's CPU cgroups (this process in
// system-reserved, each launcher pod in kubepods-…/<qos>/pod<uid>) or, where none can be written, nice values.
const cpuCgroup = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(l) || (l.startsWith('0::') && l.includes('/qvirt/')));
console.log(`CPU isolation: ${cpuCgroup?.includes('/qvirt/') ? `cgroups, control plane in ${cpuCgroup.slice(cpuCgroup.lastIndexOf(':') + 1)}` : 'nice values (no writable CPU cgroup)'}`);
const loads = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`load average at start: ${loads()}`);
const podsDir = join(work.path, 'data', 'pods');

const times = new Map<string, Times>();
const vmName = (podName: string) => /^virt-launcher-(.+)-[a-z0-9]{5}$/.exec(podName)?.[1];
const vmis = new Informer<KubeObject & { status?: { phase?: string } }>(local.client, Resources.virtualMachineInstances, { log });
/** The first VMI seen Running, as the handler hands it to its launcher: the machine baseline runs its argv. */
let runningVmi: VirtualMachineInstance | undefined;
const onVmi = (o: KubeObject & { status?: { phase?: string } }) => {
  const t = times.get(o.metadata?.name ?? '');
  if (!t) return;
  const now = Date.now();
  t.vmi ??= now;
  if (o.status?.phase === 'Running' && t.running === undefined) {
    t.running = now;
    t.cpu = startCpu(t);
    runningVmi ??= structuredClone(o) as unknown as VirtualMachineInstance;
  }
};
vmis.on('add', onVmi).on('update', (_o, n) => onVmi(n));
const pods = new Informer<KubeObject & { spec?: { nodeName?: string } }>(local.client, Resources.pods, { log });
const onPod = (p: KubeObject & { spec?: { nodeName?: string } }) => {
  const t = times.get(vmName(p.metadata?.name ?? '') ?? '');
  if (!t) return;
  const now = Date.now();
  t.pod ??= now;
  t.podUid ??= p.metadata?.uid;
  if (p.spec?.nodeName) t.bound ??= now;
};
pods.on('add', onPod).on('update', (_o, n) => onPod(n));
await vmis.start();
await pods.start();

const vm = testGuestVm;

/** What the start cost in CPU so far: the launcher process, QEMU apart from its vCPU threads (its start, paused),
 *  the vCPU threads (the guest, since `cont`), the pod's other container processes (guest-console-log), and this process (API server, controllers, handler, pod runner,
 *  plus this harness's two informers) since the VM was created. */
function startCpu(t: Times): StartCpu | undefined {
  type Status = { name: string; containerID?: string };
  const pod = [...pods.list()].find((p) => p.metadata?.uid === t.podUid) as (KubeObject & { status?: { containerStatuses?: Status[]; initContainerStatuses?: Status[] } }) | undefined;
  const pidOf = (c: Status) => { const m = /^local:\/\/(\d+)$/.exec(c.containerID ?? ''); return m ? Number(m[1]) : undefined; };
  const statuses = [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])];
  const compute = statuses.find((c) => c.name === 'compute');
  const launcher = compute && pidOf(compute);
  if (launcher === undefined || t.cpu0 === undefined) return undefined;
  const others = statuses.filter((c) => c !== compute).map(pidOf).filter((p): p is number => p !== undefined);
  const qemu = qemuChild(launcher);
  const u = process.cpuUsage();
  const vcpu = qemu === undefined ? NaN : threadCpuMs(qemu, isVcpuThread).part;
  const qemuAll = qemu === undefined ? NaN : processCpuMs(qemu);
  return {
    launcher: processCpuMs(launcher), qemu: qemuAll - vcpu, vcpu, local: (u.user + u.system) / 1000 - t.cpu0,
    otherContainers: others.reduce((a, p) => a + processCpuMs(p), 0),
  };
}

/** The launcher's log (compute container CRI log): its first line's time and QEMU's start. */
function launcherTimes(t: Times): void {
  if (!t.podUid) return;
  try {
    for (const rec of readFileSync(join(podsDir, t.podUid, 'logs/compute/0.log'), 'utf8').split('\n')) {
      const json = rec.slice(rec.indexOf('{'));
      if (!json.startsWith('{')) continue;
      let o: { time?: string; msg?: string; pid?: number; argv?: string[] };
      try { o = JSON.parse(json) as typeof o; } catch { continue; }
      if (!o.time) continue;
      t.launcherUp ??= Date.parse(o.time);
      if (o.msg === 'launcher ready') t.ready ??= Date.parse(o.time);
      if (o.msg === 'starting QEMU') { t.qemuSpawn ??= Date.parse(o.time); t.qemuArgv ??= o.argv; }
      if (o.msg === 'QEMU started paused, QMP connected') { t.qemuUp ??= Date.parse(o.time); t.pid = o.pid; }
    }
  } catch { /* not there */ }
}

function phases(name: string): Record<Phase, number> & { total: number } {
  const t = times.get(name)!;
  t.spawned = spawnedAt.get([...pods.list()].find((p) => vmName(p.metadata?.name ?? '') === name)?.metadata?.name ?? '');
  launcherTimes(t);
  const need = (v: number | undefined, what: string): number => { if (v === undefined) throw new Error(`${name}: no ${what} time`); return v; };
  const vmiT = need(t.vmi, 'VMI'); const pod = need(t.pod, 'pod'); const bound = need(t.bound, 'bound'); const spawned = need(t.spawned, 'spawn');
  const up = need(t.launcherUp, 'launcher log'); const qemu = need(t.qemuUp, 'QEMU start'); const running = need(t.running, 'Running');
  const ready = need(t.ready, 'launcher ready'); const qemuSpawn = need(t.qemuSpawn, 'starting QEMU'); const syncSent = need(syncSentAt.get(name), 'Sync sent');
  void vmiT;
  return { controller: pod - t.created, scheduling: bound - pod, podRunner: spawned - bound, launcher: up - spawned, qemuStart: qemu - up, toRunning: running - qemu, total: running - t.created,
    launcherInit: ready - up, handlerWait: syncSent - ready, syncToSpawn: qemuSpawn - syncSent, qemuProcess: qemu - qemuSpawn,
    toLauncherFound: need(launcherFoundAt.get(name), 'launcher found') - ready, foundToSync: syncSent - need(launcherFoundAt.get(name), 'launcher found') };
}

async function createAndWait(names: string[], gapMs: number, timeoutMs: number): Promise<void> {
  for (const [i, name] of names.entries()) {
    if (i > 0) await sleep(gapMs);
    const u = process.cpuUsage();
    times.set(name, { created: Date.now(), cpu0: (u.user + u.system) / 1000 });
    void local.client.create(Resources.virtualMachines, vm(name)).catch((err: Error) => { console.error(`create ${name}: ${err.message}`); });
  }
  const end = Date.now() + timeoutMs;
  while (names.some((n) => times.get(n)!.running === undefined)) {
    if (Date.now() > end) throw new Error(`not Running within ${timeoutMs} ms: ${names.filter((n) => times.get(n)!.running === undefined).join(' ')}`);
    await sleep(50);
  }
}

async function deleteAndWait(names: string[]): Promise<void> {
  for (const n of names) await local.client.delete(Resources.virtualMachines, 'default', n).catch(() => undefined);
  const end = Date.now() + 120_000;
  while (pods.list().some((p) => names.includes(vmName(p.metadata?.name ?? '') ?? '')) && Date.now() < end) await sleep(100);
}

/** Proportional set size of a process in KiB (its share of shared pages), from smaps_rollup. */
function pssKiB(pid: number): number {
  const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}
function qemuChild(pid: number): number | undefined {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)) {
      try { if (readFileSync(`/proc/${c}/comm`, 'utf8').startsWith('qemu')) return c; } catch { /* gone */ }
    }
  }
  return undefined;
}
function launcherPids(): number[] {
  const out: number[] = [];
  for (const p of pods.list() as Array<KubeObject & { status?: { containerStatuses?: Array<{ name: string; containerID?: string }> } }>) {
    const id = p.status?.containerStatuses?.find((c) => c.name === 'compute')?.containerID;
    const m = id ? /^local:\/\/(\d+)$/.exec(id) : null;
    if (m) out.push(Number(m[1]));
  }
  return out;
}

const STEADY_MS = Number(process.env.DENSITY_STEADY_MS ?? 10_000);
/** CPU per second of this process (the control plane), of the launchers and of their QEMUs apart from vCPUs, over `ms`. */
async function steadyCpu(ms: number): Promise<{ local: number; launchers: number; qemus: number }> {
  const launchers = launcherPids();
  const qemus = launchers.map(qemuChild).filter((p): p is number => p !== undefined);
  const qemuMain = (pid: number) => processCpuMs(pid) - threadCpuMs(pid, isVcpuThread).part;
  const sum = (pids: number[], f: (p: number) => number) => pids.reduce((a, p) => { try { return a + f(p); } catch { return a; } }, 0);
  const l0 = sum(launchers, processCpuMs); const q0 = sum(qemus, qemuMain); const c0 = process.cpuUsage(); const t0 = performance.now();
  await sleep(ms);
  const c = process.cpuUsage(c0); const sec = (performance.now() - t0) / 1000;
  return { local: (c.user + c.system) / 1000 / sec, launchers: (sum(launchers, processCpuMs) - l0) / sec, qemus: (sum(qemus, qemuMain) - q0) / sec };
}

let ok = false;
try {
  const idleRss = process.memoryUsage().rss;
  // What the control plane costs with no VM at all (its own periodic work): the baseline of the steady state below.
  const idleCpu = await steadyCpu(STEADY_MS);
  // Baseline: one VM at a time on the idle system.
  const single: Array<Record<Phase, number> & { total: number }> = [];
  for (let i = 0; i < BASELINE_RUNS; i++) {
    const name = `alone-${i}`;
    await createAndWait([name], 0, 120_000);
    await sleep(300);
    single.push(phases(name));
    await deleteAndWait([name]);
    await sleep(1000);
  }
  const base = (k: Phase | 'total') => median(single.map((s) => s[k]));
  // CPU per start, one VM alone: what a start costs, whatever else the machine is doing.
  const cpus = Array.from({ length: BASELINE_RUNS }, (_, i) => times.get(`alone-${i}`)?.cpu).filter((c): c is StartCpu => c !== undefined);
  if (cpus.length) {
    const c = (k: keyof StartCpu) => median(cpus.map((x) => x[k]));
    const total = c('launcher') + c('qemu') + c('otherContainers') + c('local');
    console.log(`CPU per VM start, one VM alone (ms of CPU, median of ${cpus.length}; baseline: the start's wall time, creation → Running)`);
    report({ name: 'start CPU: launcher process', value: c('launcher'), unit: 'ms', baseline: base('total'), baselineName: 'wall' });
    report({ name: 'start CPU: QEMU (not vCPU threads)', value: c('qemu'), unit: 'ms', baseline: base('total'), baselineName: 'wall' });
    report({ name: 'start CPU: other pod containers', value: c('otherContainers'), unit: 'ms', baseline: base('total'), baselineName: 'wall' });
    report({ name: 'start CPU: local control plane process', value: c('local'), unit: 'ms', baseline: base('total'), baselineName: 'wall' });
    report({ name: 'start CPU: total (excl. guest vCPU)', value: total, unit: 'ms', baseline: base('total'), baselineName: 'wall', details: { vcpuUntilRunning: c('vcpu') } });
  }

  // The machine baseline's QEMUs: the launcher's converter on the VMI the handler synced, one root per VM.
  if (!runningVmi) throw new Error('no VMI was seen Running: nothing to build the machine baseline from');
  const bareOpts = { store, cacheDir: join(work.path, 'bc'), log };
  const bare: BareQemu[] = [];
  for (let i = 0; i < VMS; i++) bare.push(await prepareBareQemu(runningVmi, join(work.path, `b${i}`), bareOpts));
  const launched = times.get('alone-0')?.qemuArgv;
  const launchedPidfile = launched?.[launched.indexOf('-pidfile') + 1];
  const launchedRoot = launchedPidfile?.slice(0, launchedPidfile.indexOf('/var/run/kubevirt-private/'));
  const argvDiff = launched && launchedRoot ? argvDifference({ args: launched, root: launchedRoot }, bare[0]!) : 'the launcher logged no argv';
  console.log(`machine baseline argv ${argvDiff === undefined ? 'is the launcher\'s' : `differs from the launcher's (${argvDiff})`}: ${bare[0]!.binary} ${bare[0]!.args.length} arguments`);
  const bareAlone: BareStart[] = [];
  for (let i = 0; i < BASELINE_RUNS; i++) { bareAlone.push(...await bareDensity([bare[i % VMS]!], 0)); await sleep(500); }
  const bareRuns: BareStart[][] = [await bareDensity(bare, GAP_MS)];
  await sleep(1000);

  // Event-loop delay per round (a histogram left enabled between rounds would count the gap as one delay).
  const loopDelays: Array<{ p50: number; p99: number; max: number }> = [];
  const rounds: Array<Array<ReturnType<typeof phases>>> = [];
  const names: string[] = [];
  let cpuMs = 0;
  let wall = 0;
  let memory: { rss: number; lPss: number[]; qPss: number[] } | undefined;
  let steady: Awaited<ReturnType<typeof steadyCpu>> | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const roundNames = Array.from({ length: VMS }, (_, i) => `density-${ROUNDS > 1 ? `${round}-` : ''}${String(i).padStart(2, '0')}`);
    names.push(...roundNames);
    console.log(`load average before qvirt's density run${ROUNDS > 1 ? ` (round ${round + 1} of ${ROUNDS})` : ''}: ${loads()}`);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    await createAndWait(roundNames, GAP_MS, 300_000);
    const cpu = process.cpuUsage(cpu0);
    cpuMs += (cpu.user + cpu.system) / 1000;
    wall += performance.now() - wall0;
    loopDelay.disable();
    loopDelays.push({ p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 });
    if (round === ROUNDS - 1) {
      // Memory with the VMs running (let the guests boot a little first).
      await sleep(3000);
      const launchers = launcherPids();
      memory = {
        rss: process.memoryUsage().rss,
        lPss: launchers.map(pssKiB).filter((x) => !Number.isNaN(x)).map((k) => k / 1024),
        qPss: launchers.map(qemuChild).filter((p): p is number => p !== undefined).map(pssKiB).filter((x) => !Number.isNaN(x)).map((k) => k / 1024),
      };
      // The steady state: what the running VMs cost the node's components each second (periodic work that grows
      // with the number of VMs competes with every later start).
      steady = await steadyCpu(STEADY_MS);
    } else {
      await sleep(500);
    }
    // Each VM's phases while its pod and its launcher's log are there.
    rounds.push(roundNames.map(phases));
    await deleteAndWait(roundNames);
    await sleep(1000);
    bareRuns.push(await bareDensity(bare, GAP_MS));
  }
  const all = rounds.flat();
  const totals = all.map((s) => s.total);
  console.log(`${VMS} VMs created ${GAP_MS} ms apart${ROUNDS > 1 ? `, ${ROUNDS} rounds pooled` : ''}, creation → VMI Running (ms; baseline: one VM alone, median of ${BASELINE_RUNS})`);
  report({ name: `density p50 (${VMS} VMs)`, value: percentile(totals, 50), unit: 'ms', baseline: base('total'), baselineName: 'one VM alone', target: { maxValue: 1500 }, details: { min: Math.min(...totals), max: Math.max(...totals) } });
  report({ name: `density p95 (${VMS} VMs)`, value: percentile(totals, 95), unit: 'ms', baseline: base('total'), baselineName: 'one VM alone', target: { maxValue: 3000 } });
  console.log(`control plane process while they started: ${cpuMs.toFixed(0)} ms CPU in ${wall.toFixed(0)} ms (${(cpuMs * 100 / wall).toFixed(0)}% of one core); event-loop delay p50 ${loopDelays.map((d) => d.p50.toFixed(0)).join('/')} ms, p99 ${loopDelays.map((d) => d.p99.toFixed(0)).join('/')} ms, max ${loopDelays.map((d) => d.max.toFixed(0)).join('/')} ms${ROUNDS > 1 ? ' (per round)' : ''}`);
  for (const k of [...PHASES, ...QEMU_START_PARTS, ...HANDLER_WAIT_PARTS]) {
    const xs = all.map((s) => s[k]);
    const label = (QEMU_START_PARTS as readonly string[]).includes(k) ? `    qemuStart: ${k}` : (HANDLER_WAIT_PARTS as readonly string[]).includes(k) ? `      handlerWait: ${k}` : `  phase ${k}`;
    report({ name: `${label} p50 (p95 ${percentile(xs, 95).toFixed(0)})`, value: percentile(xs, 50), unit: 'ms', baseline: Math.max(1, base(k)), baselineName: 'alone' });
  }
  const { rss, lPss, qPss } = memory!;
  report({ name: `local control plane RSS, ${VMS} VMs running`, value: rss / 2 ** 20, unit: 'MiB', baseline: idleRss / 2 ** 20, baselineName: 'idle' });
  report({ name: `launcher PSS per VM (median of ${lPss.length})`, value: median(lPss), unit: 'MiB', baseline: KUBEVIRT_PER_VM_OVERHEAD_MIB, baselineName: 'KubeVirt per-VM overhead budget' });
  report({ name: `QEMU PSS per VM incl. 128 MiB guest (median of ${qPss.length})`, value: median(qPss), unit: 'MiB', baseline: KUBEVIRT_PER_VM_OVERHEAD_MIB, baselineName: 'KubeVirt per-VM overhead budget' });
  // An upper bound of our per-VM overhead: QEMU's PSS also holds the guest RAM the guest touched.
  report({ name: 'launcher + QEMU PSS per VM (incl. guest RAM)', value: median(lPss) + median(qPss), unit: 'MiB', baseline: KUBEVIRT_PER_VM_OVERHEAD_MIB, baselineName: 'KubeVirt per-VM overhead budget', target: { maxRatio: 1 } });
  if (steady) {
    console.log(`steady state, ${VMS} VMs running, over ${STEADY_MS} ms (ms of CPU per second; baseline: the control plane with no VM)`);
    report({ name: `local control plane CPU/s, ${VMS} VMs running`, value: steady.local, unit: 'ms/s', baseline: idleCpu.local, baselineName: 'no VM' });
    report({ name: `launchers' CPU/s, all ${VMS}`, value: steady.launchers, unit: 'ms/s', baseline: idleCpu.local, baselineName: 'control plane, no VM' });
    report({ name: `QEMUs' CPU/s apart from vCPUs, all ${VMS}`, value: steady.qemus, unit: 'ms/s', baseline: idleCpu.local, baselineName: 'control plane, no VM' });
  }
  await Promise.all(bare.map((q) => q.cleanup()));

  // The machine baseline and qvirt's figures as a ratio to it.
  const bareMs = bareRuns.flat().map((r) => r.ms);
  const bareAloneMs = median(bareAlone.map((r) => r.ms));
  console.log(`machine baseline: bare QEMU, the launcher's argv, ${VMS} started ${GAP_MS} ms apart, spawn → running (ms; ${bareRuns.length} runs pooled: before and after qvirt's; baseline: one bare QEMU alone, median of ${bareAlone.length})`);
  const bareP50 = percentile(bareMs, 50);
  const bareP95 = percentile(bareMs, 95);
  report({ name: `machine baseline p50 (${VMS} bare QEMUs)`, value: bareP50, unit: 'ms', baseline: bareAloneMs, baselineName: 'one bare QEMU alone', details: { perRun: bareRuns.map((r) => percentile(r.map((x) => x.ms), 50).toFixed(0)).join(' / ') } });
  report({ name: `machine baseline p95 (${VMS} bare QEMUs)`, value: bareP95, unit: 'ms', baseline: bareAloneMs, baselineName: 'one bare QEMU alone', details: { perRun: bareRuns.map((r) => percentile(r.map((x) => x.ms), 95).toFixed(0)).join(' / ') } });
  report({ name: `start CPU: bare QEMU (not vCPU threads), median`, value: median(bareRuns.flat().map((r) => r.qemuCpuMs)), unit: 'ms', baseline: median(bareAlone.map((r) => r.qemuCpuMs)), baselineName: 'one bare QEMU alone' });
  // Under the same contention, does QEMU cost more when qvirt starts it? (The control plane's share cannot be
  // told apart per VM while 20 start at once; the launcher's is its own process.)
  const densityCpu = names.map((n) => times.get(n)?.cpu).filter((c): c is StartCpu => c !== undefined);
  report({ name: `start CPU: QEMU (not vCPU threads) in qvirt's density run, median of ${densityCpu.length}`, value: median(densityCpu.map((c) => c.qemu)), unit: 'ms', baseline: median(bareRuns.flat().map((r) => r.qemuCpuMs)), baselineName: 'bare QEMU in its density runs' });
  report({ name: `start CPU: launcher process in qvirt's density run, median of ${densityCpu.length}`, value: median(densityCpu.map((c) => c.launcher)), unit: 'ms', baseline: median(cpus.map((c) => c.launcher)), baselineName: 'launcher, one VM alone' });
  // The CPU floor: on a saturated machine a start's wall time follows the CPU it needs. qvirt's per start: its launcher,
  // QEMU (not vCPUs), the pod's other containers, and the control plane's CPU during the run shared out per VM.
  const cpPerVm = cpuMs / names.length;
  const qvirtStartCpu = median(densityCpu.map((c) => c.launcher + c.qemu + c.otherContainers)) + cpPerVm;
  report({ name: 'start CPU per VM in the density run: launcher + QEMU + other containers + control plane / VMs', value: qvirtStartCpu, unit: 'ms', baseline: median(bareRuns.flat().map((r) => r.qemuCpuMs)), baselineName: 'bare QEMU in its density runs', details: { controlPlanePerVm: cpPerVm.toFixed(0) } });
  console.log(`qvirt against the machine baseline (same protocol, same argv, this run)`);
  report({ name: `density p50 (${VMS} VMs) vs bare QEMU`, value: percentile(totals, 50), unit: 'ms', baseline: bareP50, baselineName: 'machine baseline p50' });
  report({ name: `density p95 (${VMS} VMs) vs bare QEMU`, value: percentile(totals, 95), unit: 'ms', baseline: bareP95, baselineName: 'machine baseline p95' });
  if (ROUNDS > 1) {
    // Each round against the two bare runs beside it (before and after).
    for (const q of [50, 95] as const) {
      const ratios = rounds.map((ph, r) => percentile(ph.map((x) => x.total), q) / percentile([...bareRuns[r]!, ...bareRuns[r + 1]!].map((x) => x.ms), q));
      report({ name: `density p${q} vs bare QEMU, median of ${ROUNDS} rounds' ratios (each round against the bare runs beside it)`, value: median(ratios), unit: '×', baseline: 1, baselineName: 'bare QEMU', details: { perRound: ratios.map((x) => x.toFixed(2)).join(' / ') } });
      console.log(`  per round: ${ratios.map((x) => x.toFixed(2)).join(' / ')}; qvirt's p${q}: ${rounds.map((ph) => percentile(ph.map((x) => x.total), q).toFixed(0)).join(' / ')} ms; the bare runs' p${q}: ${bareRuns.map((b) => percentile(b.map((x) => x.ms), q).toFixed(0)).join(' / ')} ms`);
    }
  }
  report({ name: 'one VM alone vs one bare QEMU alone', value: base('total'), unit: 'ms', baseline: bareAloneMs, baselineName: 'bare QEMU alone' });
  if (argvDiff !== undefined) console.log(`NOTE: the machine baseline's argv is not the launcher's (${argvDiff})`);
  console.log(`load average at the end: ${loads()} (2 cores; the machine is shared)`);
  ok = saveResults('density') && argvDiff === undefined;
} finally {
  vmis.stop();
  pods.stop();
  await local.stop();
  work.cleanup();
}
process.exitCode = ok ? 0 : 2;
