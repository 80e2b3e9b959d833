// The threads of a process as /proc shows them: name, scheduler state, kernel wait channel and nice
// value — what tests read to check a thread's priority, or report where a hung process sits.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcThread { tid: number; comm: string; state: string; wchan: string; nice: number }

/** The threads of `pid` (the thread group leader first); [] when the process is gone. */
export function procThreads(pid: number): ProcThread[] {
  let tids: string[];
  try { tids = readdirSync(`/proc/${pid}/task`); } catch { return []; }
  const out: ProcThread[] = [];
  for (const tid of tids.sort((a, b) => Number(a) - Number(b))) {
    const read = (f: string) => { try { return readFileSync(`/proc/${pid}/task/${tid}/${f}`, 'utf8').trim(); } catch { return ''; } };
    const stat = read('stat');
    if (!stat) continue;
    // After "pid (comm) ": state is field 3, nice field 19 (index 16 from state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.push({ tid: Number(tid), comm: read('comm'), state: fields[0] ?? '?', wchan: read('wchan') || '0', nice: Number(fields[16]) });
  }
  return out;
}

/** One line for a failure message: `tid:comm:state:wchan` per thread, or that the process is gone. */
export function threadsReport(pid: number): string {
  const t = procThreads(pid);
  return t.length === 0 ? `process ${pid} is gone` : t.map((x) => `${x.tid}:${x.comm}:${x.state}:${x.wchan}`).join(' ');
}

/** A QEMU vCPU thread's name: `CPU 0/TCG`, `CPU 1/KVM`. */
export const isVcpuThread = (t: ProcThread): boolean => /^CPU \d+\/(TCG|KVM)$/.test(t.comm);
