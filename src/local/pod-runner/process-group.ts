// A container's processes end with its main process, as on a real node: a container's PID
// namespace goes when its init dies (the kernel SIGKILLs everything left in it). Here a container
// is a process group (its main process is spawned detached, a group and session leader), so when
// the main process ends the runner SIGKILLs what is left of its group: a launcher's QEMU, passt,
// any helper that did not leave the group.
//
// The group's id is the main process's pid. While a member lives the kernel never gives that pid
// to a new process; once the group is empty it may, and a process that then makes its own group
// would have that id. So the group is killed only when the pid is free or still the container's
// own (same start time, a zombie not yet reaped): never when another process holds it.
import { readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat the runner reads. */
export interface ProcStat {
  /** R, S, D, Z, T... */
  readonly state: string;
  /** The process group id. */
  readonly pgrp: number;
  /** Start time in clock ticks since boot (field 22): tells a reused pid from the original. */
  readonly startTicks: string;
}

/** Parses /proc/<pid>/stat (the command name in parentheses may itself hold spaces and parentheses). Pure. */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).trim().split(' ');
  const [state, pgrp, startTicks] = [fields[0], fields[2], fields[19]];
  if (!state || pgrp === undefined || !startTicks || !/^\d+$/.test(pgrp)) return undefined;
  return { state, pgrp: Number(pgrp), startTicks };
}

/** /proc/<pid>/stat, parsed; undefined when there is no such process. */
export function readProcStat(pid: number): ProcStat | undefined {
  try { return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return undefined; }
}

/**
 * Whether the process group `pid` is still the container's (the one whose main process had pid
 * `pid` and started at `startTicks`), given what holds `pid` now. Pure.
 */
export function groupIsTheContainers(holder: ProcStat | undefined, startTicks: string): boolean {
  if (holder === undefined) return true;
  return startTicks !== '' && holder.startTicks === startTicks;
}

/**
 * SIGKILL to what is left of a container's process group once its main process (`pid`, started at
 * `startTicks`) has ended. Returns whether the signal was sent to a group with members.
 */
export function killContainerGroup(pid: number, startTicks: string): boolean {
  if (!groupIsTheContainers(readProcStat(pid), startTicks)) return false;
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
