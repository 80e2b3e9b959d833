// A helper process QEMU connects to over a unix socket it creates (passt for the pod network, swtpm
// for the emulated TPM, as libvirt starts them beside QEMU): spawned, waited for until its socket
// exists, against a spawn error, an early exit and a deadline; stopped with SIGTERM, then SIGKILL
// after 2 s, and its socket removed (neither removes its own). Optionally it dies with the launcher
// (the parent-death signal, as QEMU does: src/process/parent-death.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { rm, stat } from '../fs/async.ts';
import { parentDeathTools, withParentDeathSignal } from '../../src/process/parent-death.ts';
import type { Logger } from '../../src/log/logger.ts';

export interface SocketHelperOptions {
  /** The program: a name on PATH or a path. */
  readonly binary: string;
  readonly args: readonly string[];
  /** The socket it creates and QEMU connects to. */
  readonly socket: string;
  /** The VMI field every error names. */
  readonly field: string;
  /** How long it may take to create its socket. */
  readonly waitMs: number;
  /** Whether it gets the launcher's parent-death signal. */
  readonly parentDeath?: boolean;
  /** What its stderr says, less noise (passt's syslog complaints). */
  readonly said?: (stderr: string) => string;
  /** Appended to the "cannot start" error (what to install). */
  readonly spawnHint?: string;
  /** Appended to the deadline's error (what usually keeps it from creating its socket). */
  readonly timeoutHint?: string;
  readonly log: Logger;
  /** Extra fields of its log lines. */
  readonly logFields?: Record<string, unknown>;
}

export interface SocketHelper {
  readonly pid: number | undefined;
  /** SIGTERM, SIGKILL after 2 s, then its socket removed. */
  stop(): Promise<void>;
}

/** How often the socket is looked for. */
const POLL_MS = 20;
/** How long a stopped helper has before SIGKILL. */
const STOP_GRACE_MS = 2000;

/** Starts the helper and waits for its socket. Throws naming `field` (its stderr in the message). */
export async function startSocketHelper(o: SocketHelperOptions): Promise<SocketHelper> {
  const name = o.binary.slice(o.binary.lastIndexOf('/') + 1);
  const said = () => (o.said ?? ((s: string) => s))(stderr).trim();
  await rm(o.socket, { force: true });
  const cmd = o.parentDeath
    ? withParentDeathSignal(parentDeathTools(), process.pid, o.binary, [...o.args])
    : { file: o.binary, args: [...o.args] };
  const child: ChildProcess = spawn(cmd.file, cmd.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const gone = new Promise<void>((resolve) => child.once('exit', (code, signal) => {
    exited = { code, signal };
    o.log.info({ ...o.logFields, code, signal, stderr: said() || undefined }, `${name} exited`);
    resolve();
  }));
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    if (await stat(o.socket).then((s) => s.isSocket(), () => false)) break;
    const err = await Promise.race([spawnError, new Promise<undefined>((r) => { setTimeout(() => r(undefined), POLL_MS); })]);
    if (err) throw new Error(`${o.field}: cannot start ${name}: ${err.message}${o.spawnHint ? ` ${o.spawnHint}` : ''}`);
    if (exited) throw new Error(`${o.field}: ${name} exited (${exited.signal ?? `code ${exited.code}`}) before listening: ${said() || 'no output'}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await gone;
      throw new Error(`${o.field}: ${name} did not create ${o.socket} within ${o.waitMs / 1000} s${o.timeoutHint ? ` ${o.timeoutHint}` : ''}${said() ? `: ${said()}` : ''}`);
    }
  }
  o.log.info({ ...o.logFields, pid: child.pid, socket: o.socket }, `${name} started`);
  return {
    pid: child.pid,
    stop: async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await gone;
        clearTimeout(t);
      }
      await rm(o.socket, { force: true }).catch(() => undefined);
    },
  };
}
