// Where a running `qvirt local up` says that it runs: a small JSON file in a well-known place
// with its pid and the path of its admin kubeconfig, so every `qvirt` cluster verb can find the
// local cluster without --kubeconfig. Written once the local mode is up, removed when it stops; a
// file whose process is gone (a crash, kill -9) is stale and ignored.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface LocalUpRecord {
  readonly pid: number;
  readonly kubeconfig: string;
  readonly url: string;
  readonly dataDir: string;
  readonly nodeName: string;
  readonly startedAt: string;
}

/**
 * The record's path: $QVIRT_RUNTIME_DIR, else /run/qvirt as root, else $XDG_RUNTIME_DIR/qvirt,
 * else ~/.local/share/qvirt (the non-root default data dir) — `local-up.json` in it.
 */
export function localUpRecordPath(env: NodeJS.ProcessEnv = process.env, uid: number | undefined = process.getuid?.(), home = homedir()): string {
  const dir = env.QVIRT_RUNTIME_DIR
    || (uid === 0 ? '/run/qvirt' : env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'qvirt') : join(home, '.local/share/qvirt'));
  return join(dir, 'local-up.json');
}

export function writeLocalUpRecord(path: string, rec: LocalUpRecord): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(rec, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/** Removes the record if it is this process's (another `local up` may have replaced it). */
export function removeLocalUpRecord(path: string, pid = process.pid): void {
  const rec = readRecord(path);
  if (rec && rec.pid !== pid) return;
  rmSync(path, { force: true });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readRecord(path: string): LocalUpRecord | undefined {
  let v: unknown;
  try { v = JSON.parse(readFileSync(path, 'utf8')); } catch { return undefined; }
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Record<string, unknown>;
  if (typeof r.pid !== 'number' || !Number.isInteger(r.pid) || r.pid <= 0 || typeof r.kubeconfig !== 'string') return undefined;
  return {
    pid: r.pid,
    kubeconfig: r.kubeconfig,
    url: typeof r.url === 'string' ? r.url : '',
    dataDir: typeof r.dataDir === 'string' ? r.dataDir : '',
    nodeName: typeof r.nodeName === 'string' ? r.nodeName : '',
    startedAt: typeof r.startedAt === 'string' ? r.startedAt : '',
  };
}

/** The record of a `qvirt local up` that is running now, or undefined (none, unreadable, or stale). */
export function readLiveLocalUpRecord(path = localUpRecordPath()): LocalUpRecord | undefined {
  const rec = readRecord(path);
  if (!rec || !pidAlive(rec.pid) || !existsSync(rec.kubeconfig)) return undefined;
  return rec;
}
