// Domain statistics in the JSON shape of KubeVirt's stats.DomainStats (GetDomainStats), gathered
// from QMP (query-blockstats, query-balloon, query-cpus-fast, qom-get of the balloon's guest-stats)
// and /proc of the QEMU process (CPU time, RSS, per-vCPU thread run and wait time, the taps'
// counters in the pod's network namespace) — what libvirt's virConnectGetAllDomainStats reports
// for KubeVirt's stats types (balloon, cpu-total, vcpu, interface, block). The QMP queries go out
// together (pipelined: one round trip's wait, not four) with a deadline each, so a scrape never
// holds the launcher's other QMP users for longer than QEMU takes to answer four queries.
import { readFileSync } from 'node:fs';
import type { QmpConnection } from './qmp-connection.ts';
import { netStats, readNetDev, type NetDevCounters, type TapInterface } from './net-stats.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export interface ProcStats {
  /** user + system CPU time of the whole QEMU process, ns. */
  userNs?: number | undefined;
  systemNs?: number | undefined;
  rssKiB?: number | undefined;
  /** Per vCPU thread id: CPU time, ns. */
  threadTimeNs?: Record<number, number> | undefined;
  /** Per vCPU thread id: time spent runnable but waiting for a host CPU, ns (schedstat's run_delay). */
  threadDelayNs?: Record<number, number> | undefined;
}

export interface StatsInputs {
  name: string;
  uuid: string;
  blockstats?: unknown;  // query-blockstats
  balloon?: unknown;     // query-balloon
  cpus?: unknown;        // query-cpus-fast
  /** qom-get of the balloon's `guest-stats` (absent: no balloon, or it failed). */
  guestStats?: unknown;
  proc?: ProcStats | undefined;
  /** The domain's memory, KiB: libvirt's balloon.current when there is no balloon to ask. */
  memoryKiB?: number | undefined;
  /** The NICs on taps and the counters of the pod's network devices. */
  taps?: readonly TapInterface[] | undefined;
  netDev?: ReadonlyMap<string, NetDevCounters> | undefined;
}

/**
 * The balloon driver's guest statistics as libvirt maps them (qemuMonitorJSONGetMemoryStats): QEMU
 * reports bytes (and counts for faults), libvirt KiB; a statistic the guest does not report is -1.
 */
const GUEST_STATS: ReadonlyArray<readonly [qemu: string, field: 'SwapIn' | 'SwapOut' | 'MajorFault' | 'MinorFault' | 'Unused' | 'Available' | 'Usable' | 'Cached', divisor: number]> = [
  ['stat-swap-in', 'SwapIn', 1024],
  ['stat-swap-out', 'SwapOut', 1024],
  ['stat-major-faults', 'MajorFault', 1],
  ['stat-minor-faults', 'MinorFault', 1],
  ['stat-free-memory', 'Unused', 1024],
  ['stat-total-memory', 'Available', 1024],
  ['stat-available-memory', 'Usable', 1024],
  ['stat-disk-caches', 'Cached', 1024],
];

/** stats.DomainStatsMemory fields from the balloon's guest-stats; none until the guest has reported. Pure. */
export function guestMemoryStats(guestStats: unknown): Record<string, number | boolean> {
  const out: Record<string, number | boolean> = {};
  if (!isObj(guestStats) || !isObj(guestStats.stats) || !((num(guestStats['last-update']) ?? 0) > 0)) return out;
  for (const [key, field, divisor] of GUEST_STATS) {
    const v = num(guestStats.stats[key]);
    if (v === undefined || v < 0) continue;
    out[`${field}Set`] = true;
    out[field] = Math.floor(v / divisor);
  }
  return out;
}

/** The device id of a blockstats entry: `qdev` path's peripheral id, else the node name. */
function blockDeviceId(entry: Obj): string {
  const qdev = typeof entry.qdev === 'string' ? entry.qdev : '';
  const m = /\/machine\/peripheral\/([^/]+)/.exec(qdev);
  if (m) return m[1]!;
  if (typeof entry.device === 'string' && entry.device) return entry.device;
  return typeof entry['node-name'] === 'string' ? entry['node-name'] : '';
}

/** Builds stats.DomainStats JSON. Pure. */
export function buildDomainStats(i: StatsInputs): Record<string, unknown> {
  const block = (Array.isArray(i.blockstats) ? i.blockstats : []).filter(isObj).map((entry) => {
    const s = isObj(entry.stats) ? entry.stats : {};
    const id = blockDeviceId(entry);
    const field = (v: unknown) => ({ set: num(v) !== undefined, value: num(v) ?? 0 });
    const rdReqs = field(s.rd_operations), rdBytes = field(s.rd_bytes), rdTimes = field(s.rd_total_time_ns);
    const wrReqs = field(s.wr_operations), wrBytes = field(s.wr_bytes), wrTimes = field(s.wr_total_time_ns);
    const flReqs = field(s.flush_operations), flTimes = field(s.flush_total_time_ns);
    const failed = (num(s.failed_rd_operations) ?? 0) + (num(s.failed_wr_operations) ?? 0) + (num(s.failed_flush_operations) ?? 0);
    return {
      NameSet: id !== '', Name: id,
      Alias: id.startsWith('ua-') ? id.slice(3) : id,
      BackingIndexSet: false, BackingIndex: 0,
      PathSet: false, Path: '',
      RdReqsSet: rdReqs.set, RdReqs: rdReqs.value,
      RdBytesSet: rdBytes.set, RdBytes: rdBytes.value,
      RdTimesSet: rdTimes.set, RdTimes: rdTimes.value,
      WrReqsSet: wrReqs.set, WrReqs: wrReqs.value,
      WrBytesSet: wrBytes.set, WrBytes: wrBytes.value,
      WrTimesSet: wrTimes.set, WrTimes: wrTimes.value,
      FlReqsSet: flReqs.set, FlReqs: flReqs.value,
      FlTimesSet: flTimes.set, FlTimes: flTimes.value,
      ErrorsSet: true, Errors: failed,
      AllocationSet: false, Allocation: 0,
      CapacitySet: false, Capacity: 0,
      PhysicalSet: false, Physical: 0,
    };
  }).filter((b) => b.NameSet);

  const actualBytes = isObj(i.balloon) ? num(i.balloon.actual) : undefined;
  const actualKiB = actualBytes !== undefined ? Math.floor(actualBytes / 1024) : undefined;
  const rss = i.proc?.rssKiB;
  // libvirt's balloon.current (KubeVirt's Memory.Total): the balloon's actual size, else the domain's memory.
  const total = actualKiB ?? i.memoryKiB;
  const memory = {
    UnusedSet: false, Unused: 0, CachedSet: false, Cached: 0, AvailableSet: false, Available: 0,
    ActualBalloonSet: actualKiB !== undefined, ActualBalloon: actualKiB ?? 0,
    RSSSet: rss !== undefined, RSS: rss ?? 0,
    SwapInSet: false, SwapIn: 0, SwapOutSet: false, SwapOut: 0,
    MajorFaultSet: false, MajorFault: 0, MinorFaultSet: false, MinorFault: 0,
    UsableSet: false, Usable: 0, TotalSet: total !== undefined, Total: total ?? 0,
    ...guestMemoryStats(i.guestStats),
  };

  const vcpu = (Array.isArray(i.cpus) ? i.cpus : []).filter(isObj)
    .sort((a, b) => (num(a['cpu-index']) ?? 0) - (num(b['cpu-index']) ?? 0))
    .map((c) => {
      const tid = num(c['thread-id']);
      const t = tid !== undefined ? i.proc?.threadTimeNs?.[tid] : undefined;
      const d = tid !== undefined ? i.proc?.threadDelayNs?.[tid] : undefined;
      // libvirt VcpuState: 1 = running
      return { StateSet: true, State: 1, TimeSet: t !== undefined, Time: t ?? 0, WaitSet: false, Wait: 0, DelaySet: d !== undefined, Delay: d ?? 0 };
    });

  const user = i.proc?.userNs, system = i.proc?.systemNs;
  const cpu = user !== undefined && system !== undefined
    ? { TimeSet: true, Time: user + system, UserSet: true, User: user, SystemSet: true, System: system }
    : null;

  return {
    Name: i.name,
    UUID: i.uuid,
    Cpu: cpu,
    Memory: memory,
    MigrateDomainJobInfo: null,
    Vcpu: vcpu,
    Net: i.taps && i.netDev ? netStats(i.taps, i.netDev) : [],
    Block: block,
    CPUMapSet: false,
    CPUMap: null,
    DirtyRate: null,
    Load: null,
  };
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU times and RSS of a process from /proc. Missing values stay undefined. */
export function readProcStats(pid: number, threadIds: number[]): ProcStats {
  const out: ProcStats = {};
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    const utime = Number(fields[11]), stime = Number(fields[12]);
    if (Number.isFinite(utime) && Number.isFinite(stime)) {
      out.userNs = (utime * 1e9) / CLOCK_TICKS_PER_SECOND;
      out.systemNs = (stime * 1e9) / CLOCK_TICKS_PER_SECOND;
    }
  } catch { /* process gone */ }
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (m) out.rssKiB = Number(m[1]);
  } catch { /* process gone */ }
  const threads: Record<number, number> = {};
  const delays: Record<number, number> = {};
  for (const tid of threadIds) {
    try {
      // schedstat: time on a CPU, time waiting on a run queue (ns), timeslices — finer than stat's ticks.
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      if (Number.isFinite(run)) threads[tid] = run!;
      if (Number.isFinite(wait)) delays[tid] = wait!;
    } catch { /* thread gone */ }
  }
  out.threadTimeNs = threads;
  out.threadDelayNs = delays;
  return out;
}

/** What the domain is made of, for the parts of the stats QMP does not say. */
export interface StatsDomain {
  /** The balloon's QOM path when the domain has one (its guest-stats are read there). */
  balloonPath?: string | undefined;
  memoryKiB?: number | undefined;
  taps?: readonly TapInterface[] | undefined;
}

/** How long each stats query may take: a scrape is abandoned, not waited for (KubeVirt's collector gives up after 10 s). */
export const STATS_QUERY_TIMEOUT_MS = 5000;

/** Gathers everything and builds the stats. */
export async function collectDomainStats(qmp: QmpConnection, pid: number, name: string, uuid: string, domain: StatsDomain = {}): Promise<Record<string, unknown>> {
  const opts = { timeout: STATS_QUERY_TIMEOUT_MS };
  const [blockstats, balloon, cpus, guestStats] = await Promise.all([
    qmp.execute('query-blockstats', undefined, opts).catch(() => undefined),
    domain.balloonPath ? qmp.execute('query-balloon', undefined, opts).catch(() => undefined) : undefined,
    qmp.execute('query-cpus-fast', undefined, opts).catch(() => undefined),
    domain.balloonPath ? qmp.execute('qom-get', { path: domain.balloonPath, property: 'guest-stats' }, opts).catch(() => undefined) : undefined,
  ]);
  const tids = (Array.isArray(cpus) ? cpus : []).filter(isObj).map((c) => num(c['thread-id'])).filter((t): t is number => t !== undefined);
  const taps = domain.taps ?? [];
  return buildDomainStats({
    name, uuid, blockstats, balloon, cpus, guestStats, proc: readProcStats(pid, tids),
    memoryKiB: domain.memoryKiB, taps, netDev: taps.length ? readNetDev(pid) : undefined,
  });
}
