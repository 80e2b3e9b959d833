// Domain statistics in the JSON shape of KubeVirt's stats.DomainStats (GetDomainStats), gathered
// from QMP (query-blockstats, query-balloon, query-cpus-fast) and /proc of the QEMU process
// (CPU time, RSS, per-vCPU thread time) — what libvirt's virDomainListGetStats reports.
import { readFileSync } from 'node:fs';
import type { QmpConnection } from './qmp-connection.ts';

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
}

export interface StatsInputs {
  name: string;
  uuid: string;
  blockstats?: unknown;  // query-blockstats
  balloon?: unknown;     // query-balloon
  cpus?: unknown;        // query-cpus-fast
  proc?: ProcStats | undefined;
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
  const rss = i.proc?.rssKiB;
  const memory = {
    UnusedSet: false, Unused: 0, CachedSet: false, Cached: 0, AvailableSet: false, Available: 0,
    ActualBalloonSet: actualBytes !== undefined, ActualBalloon: actualBytes !== undefined ? Math.floor(actualBytes / 1024) : 0,
    RSSSet: rss !== undefined, RSS: rss ?? 0,
    SwapInSet: false, SwapIn: 0, SwapOutSet: false, SwapOut: 0,
    MajorFaultSet: false, MajorFault: 0, MinorFaultSet: false, MinorFault: 0,
    UsableSet: false, Usable: 0, TotalSet: false, Total: 0,
  };

  const vcpu = (Array.isArray(i.cpus) ? i.cpus : []).filter(isObj)
    .sort((a, b) => (num(a['cpu-index']) ?? 0) - (num(b['cpu-index']) ?? 0))
    .map((c) => {
      const tid = num(c['thread-id']);
      const t = tid !== undefined ? i.proc?.threadTimeNs?.[tid] : undefined;
      // libvirt VcpuState: 1 = running
      return { StateSet: true, State: 1, TimeSet: t !== undefined, Time: t ?? 0, WaitSet: false, Wait: 0, DelaySet: false, Delay: 0 };
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
    Net: [],
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
  for (const tid of threadIds) {
    try {
      const schedstat = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8');
      const ns = Number(schedstat.split(' ')[0]);
      if (Number.isFinite(ns)) threads[tid] = ns;
    } catch { /* thread gone */ }
  }
  out.threadTimeNs = threads;
  return out;
}

/** Gathers everything and builds the stats. */
export async function collectDomainStats(qmp: QmpConnection, pid: number, name: string, uuid: string): Promise<Record<string, unknown>> {
  const [blockstats, balloon, cpus] = await Promise.all([
    qmp.execute('query-blockstats').catch(() => undefined),
    qmp.execute('query-balloon').catch(() => undefined), // no balloon device: error, left out
    qmp.execute('query-cpus-fast').catch(() => undefined),
  ]);
  const tids = (Array.isArray(cpus) ? cpus : []).filter(isObj).map((c) => num(c['thread-id'])).filter((t): t is number => t !== undefined);
  return buildDomainStats({ name, uuid, blockstats, balloon, cpus, proc: readProcStats(pid, tids) });
}
