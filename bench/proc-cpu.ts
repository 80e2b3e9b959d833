// CPU time of processes and threads from /proc, so a benchmark can state what something costs in
// CPU-seconds, independent of how loaded the machine is. Per thread from schedstat (nanoseconds: a
// start costs tens of ms, and stat's 10 ms ticks would round most of it away), per process the larger
// of that sum and stat's total (which alone still counts threads that have ended).
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s ticks on every architecture Node runs on. */
const TICK_MS = 10;

function statCpuMs(path: string): number {
  const s = readFileSync(path, 'utf8');
  // Fields after the parenthesised command: [0] = field 3 (state) … utime is field 14, stime field 15.
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

/** A thread's time on a CPU in ms from /proc/<pid>/task/<tid>/schedstat (ns), else from its stat ticks. */
function taskCpuMs(pid: number, tid: string): number {
  try {
    const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    if (Number.isFinite(ns)) return ns / 1e6;
  } catch { /* no schedstat: fall back to ticks */ }
  return statCpuMs(`/proc/${pid}/task/${tid}/stat`);
}

/** A process's CPU time (all its threads, not its children); NaN when it is gone. */
export function processCpuMs(pid: number): number {
  let total: number;
  try { total = statCpuMs(`/proc/${pid}/stat`); } catch { return NaN; }
  const live = threadCpuMs(pid, () => true).part;
  return Number.isNaN(live) ? total : Math.max(total, live);
}

/** CPU time of a process's threads split by whether `isPart(threadName)`. */
export function threadCpuMs(pid: number, isPart: (comm: string) => boolean): { part: number; rest: number } {
  const out = { part: 0, rest: 0 };
  let tids: string[];
  try { tids = readdirSync(`/proc/${pid}/task`); } catch { return { part: NaN, rest: NaN }; }
  for (const tid of tids) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const ms = taskCpuMs(pid, tid);
      if (isPart(comm)) out.part += ms; else out.rest += ms;
    } catch { /* thread ended */ }
  }
  return out;
}

/** QEMU's vCPU threads (named with `-name ...,debug-threads=on`): "CPU 0/TCG", "CPU 1/KVM". */
export const isVcpuThread = (comm: string): boolean => /^CPU \d+\//.test(comm);
