// A Prometheus scrape of the node agent's /metrics with BENCH_VMS (default 20) running VMIs (issue 20),
// in the local mode (API server, controllers, node agent and pod runner in this process; a launcher +
// QEMU pair per VM, the launchers from the bundle as `qvirt local up` runs them). Measured, each
// beside a baseline taken in the same run, rounds interleaved:
// - wall time of one scrape: GET /metrics over HTTPS on the agent's endpoint with the local mode's
//   admin token (keep-alive, as Prometheus scrapes), median of BENCH_ROUNDS; the agent asks every
//   launcher for GetDomainStats over its command socket (≤ 16 at once, handler/metrics/scrape.ts),
//   the launcher runs the QMP queries (launcher/supervise/domain-stats.ts).
//   Baseline: BENCH_VMS `query-status` round trips, one per VMI, over the same sockets — the launchers'
//   QMP passthrough (qvirt.qmp.v1.QmpPassthrough on the command socket), warm connections as the
//   agent keeps them — concurrently (≤ 16 at once, as the scrape) and one after another; and the same
//   through the node agent's own `qmp` subresource (HTTPS, one request per VMI, concurrently).
// - QMP commands and QMP round trips per VMI per scrape, counted at QEMU: each QEMU's
//   `handle_qmp_command` / `monitor_qmp_respond` trace events (enabled at run time through the
//   passthrough, written to a log file per VM). A "turn" is a request that reaches QEMU while every
//   earlier request on that monitor has been answered. It is not the launcher's wait: the launcher
//   writes the stats queries together (Promise.all, up to 8 in flight: one wait), but QEMU 7.2 reads
//   a QMP socket one byte per poll (monitor_can_read), so it often answers the first of them before
//   it has read the next; turns are what QEMU serialised, an upper bound of the round trips.
//   Commands the launchers send on their own are counted in an idle window and subtracted at that rate.
// - the launchers' CPU per scrape: utime+stime of every launcher process (per-thread schedstat,
//   bench/proc-cpu.ts) across one scrape, summed, less their idle rate; beside the same for the
//   BENCH_VMS query-status round trips.
//
//   node bench/metrics-scrape.bench.ts      (BENCH_VMS, BENCH_ROUNDS override the VM count and rounds)
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, fstatSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { importTestGuest } from '../src/local/guest/guest.ts';
import { testGuestVm } from './test-guest-vm.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode } from '../src/local/up.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import { HANDLER_CA_ANNOTATION, HANDLER_ENDPOINT_ANNOTATION } from '../src/api/constants.ts';
import { QmpPassthroughClient } from '../src/proto/launcher-client.ts';
import { findLauncher, shortSocketPath } from '../handler/launcher/sockets.ts';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import { median, report, saveResults } from './lib.ts';
import { processCpuMs } from './proc-cpu.ts';

const VMS = Number(process.env.BENCH_VMS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
/** GetDomainStats calls the agent has in flight at once (DomainStatsScraper's default): the concurrent baseline uses the same. */
const CONCURRENCY = 16;
const IDLE_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

execFileSync(process.execPath, [join(import.meta.dirname, '../scripts/build.ts')], { stdio: 'ignore' });

const log = componentLogger('bench', { level: 'warn' });
const work = tempDir('qms');
const store = new ImageStore(join(work.path, 'store'));
await importTestGuest(store);
const dataDir = join(work.path, 'data');
const local = await startLocalMode({ dataDir, port: 0, emulation: 'auto', imageStore: store, log });
const podsDir = join(dataDir, 'pods');
const traceDir = join(work.path, 'trace');
mkdirSync(traceDir, { recursive: true });

const names = Array.from({ length: VMS }, (_, i) => `scrape-${String(i).padStart(2, '0')}`);
const vm = testGuestVm;

/** Polls until `fn` gives something truthy; throws naming `what` after `ms`. */
async function until<T>(what: string, ms: number, fn: () => Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + ms;
  let last = '';
  for (;;) {
    try { const v = await fn(); if (v) return v; } catch (err) { last = (err as Error).message; }
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms${last ? ` (${last})` : ''}`);
    await sleep(500);
  }
}

/** The agent's endpoint: GET/POST with the admin token, one keep-alive connection pool. */
interface AgentClient { get(path: string): Promise<string>; post(path: string, body: unknown): Promise<string> }
function agentClient(endpoint: string, ca: string, token: string): AgentClient & { close(): void } {
  const agent = new Agent({ keepAlive: true, ca, maxSockets: CONCURRENCY });
  const call = (method: string, path: string, body?: unknown) => new Promise<string>((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(new URL(path, endpoint), { method, agent, headers: { authorization: `Bearer ${token}`, ...(data ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`)); else resolve(text);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
  return { get: (p) => call('GET', p), post: (p, b) => call('POST', p, b), close: () => agent.destroy() };
}

/** Runs `fn` over `items`, at most `n` at once. */
async function pool<T>(items: readonly T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i]!);
  }));
}

/** The VMI names a scrape has per-VMI series for. */
const scrapedVmis = (text: string): Set<string> => new Set([...text.matchAll(/^kubevirt_vmi_cpu_usage_seconds_total\{[^}]*\bname="([^"]+)"/gm)].map((m) => m[1]!));

/**
 * One QEMU's QMP trace, read as it grows: commands and round trips (a request reaching QEMU while
 * nothing earlier on its monitor awaits an answer), per command name.
 */
class QmpTrace {
  private offset = 0;
  private partial = '';
  private readonly outstanding = new Map<string, number>();
  commands = 0;
  roundTrips = 0;
  readonly byCommand = new Map<string, number>();
  readonly file: string;
  constructor(file: string) { this.file = file; }

  /** Reads what QEMU wrote since the last read. */
  read(): void {
    let fd: number;
    try { fd = openSync(this.file, 'r'); } catch { return; }
    try {
      const size = fstatSync(fd).size;
      if (size <= this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      readSync(fd, buf, 0, buf.length, this.offset);
      this.offset = size;
      const lines = (this.partial + buf.toString('utf8')).split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) this.line(line);
    } finally { closeSync(fd); }
  }

  private line(line: string): void {
    const m = /(handle_qmp_command|monitor_qmp_respond) mon (0x[0-9a-f]+) (?:req|resp): (.*)$/.exec(line);
    if (!m) return;
    const [, ev, mon, json] = m as unknown as [string, string, string, string];
    let o: Record<string, unknown>;
    try { o = JSON.parse(json) as Record<string, unknown>; } catch { return; }
    const out = this.outstanding.get(mon) ?? 0;
    if (ev === 'handle_qmp_command') {
      const cmd = String(o.execute ?? o['exec-oob'] ?? '?');
      this.commands++;
      this.byCommand.set(cmd, (this.byCommand.get(cmd) ?? 0) + 1);
      if (out === 0) this.roundTrips++;
      this.outstanding.set(mon, out + 1);
    } else if ('return' in o || 'error' in o) {
      this.outstanding.set(mon, Math.max(0, out - 1));
    }
  }

  snapshot() { return { commands: this.commands, roundTrips: this.roundTrips, byCommand: new Map(this.byCommand) }; }
}

interface Launcher { name: string; pid: number; qmp: QmpPassthroughClient; trace: QmpTrace }
const launchers: Launcher[] = [];
let agent: (AgentClient & { close(): void }) | undefined;

/** What a measured step cost: wall ms, launcher CPU ms (all launchers), QMP commands / round trips at the QEMUs. */
interface Cost { ms: number; cpu: number; commands: number; roundTrips: number; byCommand: Map<string, number> }

const launcherCpu = () => launchers.reduce((a, l) => a + processCpuMs(l.pid), 0);
async function traced(fn: () => Promise<void>): Promise<Cost> {
  for (const l of launchers) l.trace.read();
  const before = launchers.map((l) => l.trace.snapshot());
  const cpu0 = launcherCpu();
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  const cpu = launcherCpu() - cpu0;
  // QEMU writes each trace line as it handles the command; give the last ones a moment to reach the file.
  await sleep(150);
  let commands = 0, roundTrips = 0;
  const byCommand = new Map<string, number>();
  launchers.forEach((l, i) => {
    l.trace.read();
    const a = before[i]!, b = l.trace.snapshot();
    commands += b.commands - a.commands;
    roundTrips += b.roundTrips - a.roundTrips;
    for (const [k, v] of b.byCommand) { const d = v - (a.byCommand.get(k) ?? 0); if (d) byCommand.set(k, (byCommand.get(k) ?? 0) + d); }
  });
  return { ms, cpu, commands, roundTrips, byCommand };
}

let ok = false;
try {
  // 1. The VMs, all Running.
  const t0 = Date.now();
  await Promise.all(names.map((n) => local.client.create(Resources.virtualMachines, vm(n))));
  const vmis = await until(`${VMS} VMIs Running`, 900_000, async () => {
    const list = (await local.client.list(Resources.virtualMachineInstances, { namespace: 'default' })).items as unknown as VirtualMachineInstance[];
    const running = list.filter((v) => names.includes(v.metadata?.name ?? '') && v.status?.phase === 'Running');
    return running.length === VMS ? running : undefined;
  });
  console.log(`${VMS} VMIs Running after ${((Date.now() - t0) / 1000).toFixed(0)} s (TCG: ${local.useEmulation})`);

  // 2. The agent's endpoint and the admin token (as test/virtctl/metrics-prometheus.test.ts reaches it).
  const node = await local.client.get<{ metadata?: { annotations?: Record<string, string> } }>(Resources.nodes, undefined, local.nodeName);
  const endpoint = node.metadata?.annotations?.[HANDLER_ENDPOINT_ANNOTATION] ?? '';
  const ca = Buffer.from(node.metadata?.annotations?.[HANDLER_CA_ANNOTATION] ?? '', 'base64').toString('utf8');
  if (!endpoint || !ca) throw new Error('the node agent advertises no endpoint/CA on its Node');
  const token = readFileSync(join(dataDir, 'api', 'pki', 'token'), 'utf8').trim();
  agent = agentClient(endpoint, ca, token);
  const a = agent;
  // The agent has a launcher with a domain for every VMI once a scrape has series for all of them.
  await until(`a scrape with series for all ${VMS} VMIs`, 300_000, async () => scrapedVmis(await a.get('/metrics')).size === VMS);

  // 3. Per VM: launcher pid, a warm passthrough client on its command socket, QEMU's QMP trace to a file.
  const pods = (await local.client.list(Resources.pods, { namespace: 'default' })).items as unknown as Array<{ metadata?: { uid?: string }; status?: { containerStatuses?: Array<{ name: string; containerID?: string }> } }>;
  for (const v of vmis) {
    const name = v.metadata!.name!;
    const paths = findLauncher(v, local.nodeName, podsDir);
    const pod = pods.find((p) => p.metadata?.uid === paths.podUid);
    const m = /^local:\/\/(\d+)$/.exec(pod?.status?.containerStatuses?.find((c) => c.name === 'compute')?.containerID ?? '');
    if (!m) throw new Error(`${name}: no compute container pid in its launcher pod's status`);
    const qmp = new QmpPassthroughClient(await shortSocketPath(paths.socket, join(work.path, 'run')), { timeoutMs: 30_000 });
    const file = join(traceDir, `${name}.log`);
    const run = async (command: string, args?: Record<string, unknown>) => {
      const r = await qmp.execute(command, args, { unsafe: true, caller: 'bench:metrics-scrape', timeoutSeconds: 10 });
      if (!r.success) throw new Error(`${name}: ${command}: ${r.message}`);
    };
    await run('human-monitor-command', { 'command-line': `logfile ${file}` });
    for (const ev of ['handle_qmp_command', 'monitor_qmp_respond']) await run('trace-event-set-state', { name: ev, enable: true });
    launchers.push({ name, pid: Number(m[1]), qmp, trace: new QmpTrace(file) });
  }
  await sleep(500);
  for (const l of launchers) l.trace.read();
  if (launchers.some((l) => l.trace.commands === 0)) throw new Error(`no QMP trace in ${launchers.filter((l) => l.trace.commands === 0).map((l) => l.trace.file).join(' ')}`);

  const queryStatus = async (l: Launcher) => {
    const r = await l.qmp.execute('query-status', undefined, { caller: 'bench:metrics-scrape', timeoutSeconds: 10 });
    if (!r.success) throw new Error(`${l.name}: query-status: ${r.message}`);
  };
  const steps: Record<string, () => Promise<void>> = {
    scrape: async () => {
      const n = scrapedVmis(await a.get('/metrics')).size;
      if (n !== VMS) throw new Error(`a scrape had series for ${n} of ${VMS} VMIs`);
    },
    statusConcurrent: () => pool(launchers, CONCURRENCY, async (l) => { await queryStatus(l); }),
    statusSequential: async () => { for (const l of launchers) await queryStatus(l); },
    statusViaAgent: () => pool(launchers, CONCURRENCY, async (l) => {
      const body = JSON.parse(await a.post(`/v1/namespaces/default/virtualmachineinstances/${l.name}/qmp`, { execute: 'query-status' })) as { return?: { status?: string } };
      if (!body.return?.status) throw new Error(`${l.name}: qmp query-status via the agent answered ${JSON.stringify(body)}`);
    }),
  };
  // Warm-up: connections, the agent's auth cache, JIT.
  for (const s of Object.values(steps)) { await s(); await s(); }

  // 4. What the launchers do on their own: QMP commands and CPU over an idle window.
  const idle = await traced(async () => { await sleep(IDLE_MS); });
  const idleCmdPerMs = idle.commands / idle.ms, idleRtPerMs = idle.roundTrips / idle.ms, idleCpuPerMs = idle.cpu / idle.ms;
  console.log(`idle ${idle.ms.toFixed(0)} ms: ${idle.commands} QMP commands (${[...idle.byCommand].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}), launchers' CPU ${idle.cpu.toFixed(1)} ms`);

  // 5. Rounds, interleaved.
  const costs: Record<string, Cost[]> = Object.fromEntries(Object.keys(steps).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, s] of Object.entries(steps)) {
      costs[k]!.push(await traced(s));
      await sleep(200);
    }
  }
  const net = (c: Cost) => ({
    ms: c.ms,
    cpu: c.cpu - idleCpuPerMs * c.ms,
    commands: c.commands - idleCmdPerMs * c.ms,
    roundTrips: c.roundTrips - idleRtPerMs * c.ms,
  });
  const med = (k: string, f: 'ms' | 'cpu' | 'commands' | 'roundTrips') => median(costs[k]!.map(net).map((c) => c[f]));
  const names2 = (k: string) => [...costs[k]!.reduce((m, c) => { for (const [n, v] of c.byCommand) m.set(n, (m.get(n) ?? 0) + v); return m; }, new Map<string, number>())]
    .map(([n, v]) => `${n} ${(v / ROUNDS / VMS).toFixed(2)}`).join(', ');
  console.log(`QMP commands per VMI per round, by name: scrape: ${names2('scrape')}; query-status baseline: ${names2('statusConcurrent')}`);

  console.log(`scrape of the node agent's /metrics with ${VMS} running VMIs (median of ${ROUNDS}; baselines: ${VMS} query-status round trips over the same launcher sockets, this run)`);
  const scrapeMs = med('scrape', 'ms');
  report({ name: `scrape wall time (${VMS} VMIs)`, value: scrapeMs, unit: 'ms', baseline: med('statusConcurrent', 'ms'), baselineName: `${VMS} query-status, ≤${CONCURRENCY} at once`, details: { min: Math.min(...costs.scrape!.map((c) => c.ms)), max: Math.max(...costs.scrape!.map((c) => c.ms)) } });
  report({ name: `scrape wall time (${VMS} VMIs)`, value: scrapeMs, unit: 'ms', baseline: med('statusSequential', 'ms'), baselineName: `${VMS} query-status one by one` });
  report({ name: `scrape wall time (${VMS} VMIs)`, value: scrapeMs, unit: 'ms', baseline: med('statusViaAgent', 'ms'), baselineName: `${VMS} query-status via the agent's qmp subresource` });
  const perVmi = (k: string, f: 'commands' | 'roundTrips') => med(k, f) / VMS;
  report({ name: 'QMP commands per VMI per scrape', value: perVmi('scrape', 'commands'), unit: '', baseline: perVmi('statusConcurrent', 'commands'), baselineName: 'per query-status round' });
  report({ name: 'QMP turns at QEMU per VMI per scrape', value: perVmi('scrape', 'roundTrips'), unit: '', baseline: perVmi('statusConcurrent', 'roundTrips'), baselineName: 'per query-status round' });
  report({ name: `launchers' CPU per scrape (all ${VMS})`, value: med('scrape', 'cpu'), unit: 'ms', baseline: med('statusConcurrent', 'cpu'), baselineName: `${VMS} query-status`, details: { idleCpuMsPerSecond: idleCpuPerMs * 1000, rawMedian: median(costs.scrape!.map((c) => c.cpu)) } });
  report({ name: 'launcher CPU per scrape, per launcher', value: med('scrape', 'cpu') / VMS, unit: 'ms', baseline: med('statusConcurrent', 'cpu') / VMS, baselineName: 'one query-status' });
  ok = saveResults('metrics-scrape');
} finally {
  for (const l of launchers) l.qmp.close();
  agent?.close();
  await local.stop();
  // No QEMU of this run may outlive it.
  const left = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(work.path); } catch { return false; }
  });
  work.cleanup();
  if (left.length) { console.error(`processes of this run left behind: ${left.join(' ')}`); ok = false; }
}
process.exitCode = ok ? 0 : 2;
