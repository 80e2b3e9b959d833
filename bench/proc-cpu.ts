// CPU time of processes and threads from /proc (utime + stime, in ms), so a benchmark can state what
// something costs in CPU-seconds, independent of how loaded the machine is.
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s ticks on every architecture Node runs on. */
const TICK_MS = 10;

function statCpuMs(path: string): number {
  const s = readFileSync(path, 'utf8');
  // Fields after the parenthesised command: [0] = field 3 (state) … utime is field 14, stime field 15.
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

/** A process's CPU time (all its threads, not its children); NaN when it is gone. */
export function processCpuMs(pid: number): number {
  try { return statCpuMs(`/proc/${pid}/stat`); } catch { return NaN; }
}

/** CPU time of a process's threads split by whether `isPart(threadName)`. */
export function threadCpuMs(pid: number, isPart: (comm: string) => boolean): { part: number; rest: number } {
  const out = { part: 0, rest: 0 };
  let tids: string[];
  try { tids = readdirSync(`/proc/${pid}/task`); } catch { return { part: NaN, rest: NaN }; }
  for (const tid of tids) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`);
      if (isPart(comm)) out.part += ms; else out.rest += ms;
    } catch { /* thread ended */ }
  }
  return out;
}

/** QEMU's vCPU threads (named with `-name ...,debug-threads=on`): "CPU 0/TCG", "CPU 1/KVM". */
export const isVcpuThread = (comm: string): boolean => /^CPU \d+\//.test(comm);
