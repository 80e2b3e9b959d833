// The socat relays a node agent started, on disk, so that a restarted agent ends the ones a previous
// incarnation left. Each socat runs in a process group of its own (a listener's forked children
// join it); a graceful stop kills the groups, but a SIGKILLed agent (or a crashed `qvirt local up`)
// cannot — and a listener's children outlive the parent-death signal (socat-relay.ts) that ends the
// processes the agent spawned itself. So each relay gets a record under the agent's state dir:
// its pid (= its group's id), its start time (field 22 of /proc/<pid>/stat: a pid the kernel
// handed to another process since does not match), its private certificate directory and the short
// symlink to the target QEMU's socket directory it may go through. On start the agent kills every
// recorded group that is still the one it recorded, removes the private directories (they hold the
// handlers' key), the links and the records.
//
// One file per process (`<pid>.json`): relays start and end concurrently, and a file written or
// removed whole needs no read-modify-write.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, readdir, readFile, rm, unlink } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';

/** The records' directory under the node agent's state dir. */
export const RELAY_RECORDS_DIR = 'migration-relays';

/** What is recorded for one relay process. */
export interface RelayRecord {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot) when it was recorded. */
  readonly startTicks: number;
  /** Its private certificate directory (shared by a relay's processes), removed with it. */
  readonly privateDir?: string | undefined;
  /** The short symlink its forward path goes through (src/proto/unix-path.ts), removed with it. */
  readonly link?: string | undefined;
}

/** One process as /proc/<pid>/stat shows it. */
export interface ProcInfo {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  readonly pgrp: number;
  readonly startTicks: number;
}

/** The name the kernel gives socat (and setpriv once it exec'd socat). */
const SOCAT_COMM = 'socat';

/** The private directories socat-relay.ts makes: only those are removed for a record (never a path a broken record names). */
export const PRIVATE_DIR_PREFIX = 'qvirt-relay-';
/** The short links src/proto/unix-path.ts makes: only those (and only as links) are removed for a record. */
const SHORT_LINK_PREFIX = 'qvirt-m-';

/**
 * Which processes of a recorded relay are still alive and still its own: the members of its
 * process group (the pid itself and the children a listener forked) that are socat and started no
 * earlier than it. When the pid now belongs to a process with another start time, the recorded
 * group is gone (Linux does not hand out a pid that is still a group's id): nothing. Zombies are
 * skipped (they are dead already; their parent or init reaps them).
 */
export function orphanPids(record: RelayRecord, procs: readonly ProcInfo[]): number[] {
  const leader = procs.find((p) => p.pid === record.pid);
  if (leader && leader.startTicks !== record.startTicks) return [];
  return procs
    .filter((p) => p.pgrp === record.pid && p.comm === SOCAT_COMM && p.state !== 'Z' && p.startTicks >= record.startTicks)
    .map((p) => p.pid)
    .sort((a, b) => a - b);
}

/** Parses /proc/<pid>/stat (the command name may hold spaces and parentheses: it ends at the last ')'). */
export function parseProcStat(text: string): ProcInfo | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const rest = text.slice(close + 2).split(' ');
  // rest[0] is field 3 (state), rest[2] field 5 (pgrp), rest[19] field 22 (starttime)
  const pgrp = Number(rest[2]);
  const startTicks = Number(rest[19]);
  if (!Number.isInteger(pid) || !Number.isInteger(pgrp) || !Number.isInteger(startTicks) || rest[0] === undefined) return undefined;
  return { pid, comm: text.slice(open + 1, close), state: rest[0], pgrp, startTicks };
}

/** /proc/<pid>/stat of a process, or undefined when it is gone. */
function readProcStat(pid: number): ProcInfo | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The start time of a running process (field 22), or undefined when it is gone. */
export function processStartTicks(pid: number): number | undefined {
  return readProcStat(pid)?.startTicks;
}

async function listProcs(): Promise<ProcInfo[]> {
  const out: ProcInfo[] = [];
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const p = parseProcStat(await readFile(`/proc/${d}/stat`, 'utf8'));
      if (p) out.push(p);
    } catch { /* gone meanwhile */ }
  }
  return out;
}

/** Parses a record file; undefined (and the file is dropped) when it is not one. */
export function parseRelayRecord(text: string): RelayRecord | undefined {
  let v: unknown;
  try { v = JSON.parse(text); } catch { return undefined; }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (!Number.isInteger(r.pid) || (r.pid as number) <= 1 || !Number.isInteger(r.startTicks)) return undefined;
  const privateDir = typeof r.privateDir === 'string' ? r.privateDir : undefined;
  const link = typeof r.link === 'string' ? r.link : undefined;
  return { pid: r.pid as number, startTicks: r.startTicks as number, ...(privateDir ? { privateDir } : {}), ...(link ? { link } : {}) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The records of one node agent's relays (`dir`: under its state dir). */
export class RelayRecords {
  readonly dir: string;
  private made = false;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Records a relay process just spawned (synchronously: the record exists before its first connection). */
  add(pid: number, privateDir: string | undefined, link?: string | undefined): void {
    const startTicks = processStartTicks(pid);
    if (startTicks === undefined) return; // exited already: nothing to leave behind
    if (!this.made) { mkdirSync(this.dir, { recursive: true, mode: 0o700 }); this.made = true; }
    writeFileSync(join(this.dir, `${pid}.json`), JSON.stringify({ pid, startTicks, ...(privateDir ? { privateDir } : {}), ...(link ? { link } : {}) }), { mode: 0o600 });
  }

  /** Forgets a relay process (its group is gone). */
  remove(pid: number): void {
    rmSync(join(this.dir, `${pid}.json`), { force: true });
  }

  /**
   * Ends the relays a previous incarnation left: SIGKILL to every recorded process still its own
   * (and the children it forked), waits until they are gone, removes their private directories
   * and the records. Resolves with the pids it killed.
   */
  async reapOrphans(log: Logger): Promise<number[]> {
    let names: string[];
    try { names = readdirSync(this.dir).filter((n) => n.endsWith('.json')); } catch { return []; }
    if (names.length === 0) return [];
    const procs = await listProcs();
    const killed: number[] = [];
    const dirs = new Set<string>();
    const links = new Set<string>();
    for (const name of names) {
      const file = join(this.dir, name);
      const record = parseRelayRecord(await readFile(file, 'utf8').catch(() => ''));
      if (!record) {
        log.warn({ file }, 'migration proxy: an unreadable relay record was dropped');
        await rm(file, { force: true });
        continue;
      }
      for (const pid of orphanPids(record, procs)) {
        try { process.kill(pid, 'SIGKILL'); killed.push(pid); } catch { /* gone meanwhile */ }
      }
      if (record.privateDir && isOurs(record.privateDir, PRIVATE_DIR_PREFIX)) dirs.add(record.privateDir);
      if (record.link && isOurs(record.link, SHORT_LINK_PREFIX)) links.add(record.link);
    }
    // SIGKILL is not instant: wait (bounded) until the killed pids are gone or zombies.
    for (let i = 0; i < 200 && killed.some((pid) => isLive(pid)); i++) await sleep(10);
    for (const d of dirs) await rm(d, { recursive: true, force: true });
    for (const l of links) {
      // the link only, never what it points to
      if ((await lstat(l).catch(() => undefined))?.isSymbolicLink()) await unlink(l).catch(() => undefined);
    }
    for (const name of names) await rm(join(this.dir, name), { force: true });
    if (killed.length) log.warn({ pids: killed, records: names.length }, 'migration proxy: ended relay processes a previous node agent left behind');
    return killed;
  }
}

function isLive(pid: number): boolean {
  const p = readProcStat(pid);
  return p !== undefined && p.state !== 'Z';
}

/** Only what socat-relay.ts and unix-path.ts make (an absolute `…/<prefix>*`) is removed for a record. */
function isOurs(path: string, prefix: string): boolean {
  return isAbsolute(path) && basename(path).startsWith(prefix) && !path.split('/').includes('..');
}
