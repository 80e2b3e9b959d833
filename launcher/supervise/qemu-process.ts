// One QEMU process, in the foreground, as the launcher's child: spawned paused (-S) with its
// main QMP monitor on a private spawn-time socketpair (fd 3: race-free, no connect/retry loop),
// an optional path-based second monitor for passthrough and debugging, a locked -pidfile,
// -no-shutdown so a guest power-off leaves the decision to the launcher, and stderr kept
// (last 64 KiB) for the failure reason. The launcher is QEMU's parent and reaps it, and QEMU
// gets the kernel's parent-death signal (parent-death.ts): it never outlives the launcher.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../src/log/logger.ts';
import { QmpClient } from '../../qmp/client.ts';
import { errorMessage, type QmpConnection } from './qmp-connection.ts';
import { parentDeathTools, withParentDeathSignal } from '../../src/process/parent-death.ts';

export const DEFAULT_QEMU_BINARY = 'qemu-system-x86_64';
const STDERR_TAIL_BYTES = 64 * 1024;

/** QEMU's stderr: its last STDERR_TAIL_BYTES, and how much it wrote in all. */
interface StderrTail { text: string; total: number }

/** The ids the supervisor gives its own monitors (distinct from anything a converter emits). */
export const MONITOR_CHARDEV_ID = 'qvirt-qmp';
export const DEBUG_MONITOR_CHARDEV_ID = 'qvirt-qmp-debug';

export interface QemuProcessOptions {
  /**
   * The machine's argv. When argv[0] is not an option it is the QEMU binary (a converter's
   * LaunchPlan.argv). -S, -no-shutdown, -pidfile and the fd-3 QMP monitor are added unless present.
   */
  argv: readonly string[];
  /** QEMU binary when argv does not start with one; default qemu-system-x86_64 from PATH. */
  binary?: string | undefined;
  /** Where QEMU writes (and locks) its pid; must match the argv's -pidfile when it has one. */
  pidfile: string;
  /** A second, path-based QMP monitor (server=on,wait=off) for passthrough/debugging; added unless the argv has it. */
  debugMonitorSocket?: string | undefined;
  log: Logger;
  /** How long to wait for QMP's greeting after spawn. Default 30 s (TCG on a busy host). */
  qmpTimeoutMs?: number | undefined;
  env?: Record<string, string> | undefined;
  /** Kill a QEMU still holding the pidfile from an earlier launcher (default true). */
  killLeftover?: boolean | undefined;
  /** Connects the QMP client to the fd-3 stream; default QmpClient.adopt. */
  adoptQmp?: ((stream: Duplex) => Promise<QmpConnection>) | undefined;
}

export interface QemuExit {
  code: number | null;
  signal: string | null;
  /** The last ~64 KiB QEMU wrote to stderr. */
  stderrTail: string;
}

const QEMU_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z /gm;

/**
 * QEMU's stderr as a failure reason: trimmed, without the timestamp `-msg timestamp=on` puts before
 * each line — a reason that changes with every attempt made each retry of a failing start a new
 * SyncFailed event and a new VMI condition, whose write requeued the VMI past its backoff.
 */
export function stderrReason(stderr: string): string {
  return stderr.replace(QEMU_TIMESTAMP, '').trim();
}

/** QEMU failed before its QMP monitor came up (bad argv, missing file, locked pidfile...). */
export class QemuStartError extends Error {
  override readonly name = 'QemuStartError';
  readonly exit: QemuExit | undefined;
  constructor(message: string, exit?: QemuExit, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.exit = exit;
  }
}

/** The value of `flag` in argv (`-pidfile P` → P). */
function flagValue(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * The binary and full argv QEMU is spawned with: the machine's argv plus whatever supervision
 * flags it lacks. Pure. Throws on -daemonize (QEMU must stay our child) and on a -pidfile that
 * differs from the supervisor's.
 */
export function supervisedArgv(argv: readonly string[], opts: { binary?: string | undefined; pidfile: string; debugMonitorSocket?: string | undefined }): { binary: string; args: string[] } {
  let binary = opts.binary ?? DEFAULT_QEMU_BINARY;
  let args = [...argv];
  if (args[0] !== undefined && !args[0].startsWith('-')) {
    binary = args[0];
    args = args.slice(1);
  }
  if (args.includes('-daemonize')) throw new Error('QEMU argv must not contain -daemonize: the launcher supervises QEMU as its foreground child');
  const pidfile = flagValue(args, '-pidfile');
  if (pidfile !== undefined && pidfile !== opts.pidfile) {
    throw new Error(`QEMU argv has -pidfile ${pidfile} but the supervisor was given ${opts.pidfile}`);
  }
  // An incoming migration waits by itself (inmigrate) and must run as soon as it completes.
  if (!args.includes('-S') && !args.includes('-incoming')) args.push('-S');
  if (!args.includes('-no-shutdown')) args.push('-no-shutdown');
  if (pidfile === undefined) args.push('-pidfile', opts.pidfile);
  const hasFd3Monitor = args.some((a, i) => args[i - 1] === '-chardev' && /(^|,)fd=3(,|$)/.test(a));
  if (!hasFd3Monitor) {
    args.push('-chardev', `socket,id=${MONITOR_CHARDEV_ID},fd=3`, '-mon', `chardev=${MONITOR_CHARDEV_ID},mode=control`);
  }
  const dbg = opts.debugMonitorSocket;
  if (dbg && !args.some((a) => a.includes(`path=${dbg}`))) {
    args.push('-chardev', `socket,id=${DEBUG_MONITOR_CHARDEV_ID},path=${dbg},server=on,wait=off`,
      '-mon', `chardev=${DEBUG_MONITOR_CHARDEV_ID},mode=control`);
  }
  return { binary, args };
}

/** The pid of a live QEMU recorded in `pidfile`, if there is one. */
export function leftoverQemuPid(pidfile: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(pidfile, 'utf8').trim();
  } catch {
    return undefined;
  }
  const pid = Number(text);
  if (!Number.isInteger(pid) || pid <= 1) return undefined;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const status = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie (state Z) is already dead; it only waits for its parent.
    const state = status.slice(status.lastIndexOf(')') + 2, status.lastIndexOf(')') + 3);
    if (state === 'Z') return undefined;
    return cmdline.includes('qemu') ? pid : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function killLeftover(pid: number, log: Logger): Promise<void> {
  log.warn({ pid }, 'a QEMU from an earlier launcher still holds the pidfile: terminating it');
  try { process.kill(pid, 'SIGTERM'); } catch { return; }
  for (let i = 0; i < 50 && pidAlive(pid); i++) await sleep(100);
  if (pidAlive(pid)) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    for (let i = 0; i < 50 && pidAlive(pid); i++) await sleep(100);
  }
}

function defaultAdopt(log: Logger): (stream: Duplex) => Promise<QmpConnection> {
  return async (stream) => {
    const client = await QmpClient.adopt(stream, {
      log: (level, msg, fields) => log[level](fields ?? {}, `qmp: ${msg}`),
    });
    return client as unknown as QmpConnection;
  };
}

export class QemuProcess {
  readonly pid: number;
  readonly qmp: QmpConnection;
  readonly argv: readonly string[];
  readonly pidfile: string;
  readonly debugMonitorSocket: string | undefined;
  /** Settles when QEMU has exited and been reaped. Never rejects. */
  readonly exited: Promise<QemuExit>;
  private exitInfo: QemuExit | undefined;
  private readonly child: ChildProcess;
  private readonly log: Logger;
  private readonly tail: StderrTail;

  private constructor(child: ChildProcess, qmp: QmpConnection, exited: Promise<QemuExit>, opts: QemuProcessOptions, argv: string[], tail: StderrTail) {
    this.child = child;
    this.pid = child.pid!;
    this.qmp = qmp;
    this.argv = argv;
    this.pidfile = opts.pidfile;
    this.debugMonitorSocket = opts.debugMonitorSocket;
    this.log = opts.log;
    this.exited = exited;
    this.tail = tail;
    void this.exited.then((e) => { this.exitInfo = e; });
  }

  /**
   * Spawns QEMU paused (prelaunch) and connects QMP on fd 3. Resolves once QMP is negotiated;
   * rejects with QemuStartError (carrying stderr) if QEMU exits or QMP does not come up.
   */
  static async start(opts: QemuProcessOptions): Promise<QemuProcess> {
    const log = opts.log;
    const leftover = leftoverQemuPid(opts.pidfile);
    if (leftover !== undefined) {
      if (opts.killLeftover === false) throw new QemuStartError(`QEMU pid ${leftover} from an earlier launcher still runs (pidfile ${opts.pidfile})`);
      await killLeftover(leftover, log);
    }
    if (opts.debugMonitorSocket) rmSync(opts.debugMonitorSocket, { force: true });
    const { binary, args: argv } = supervisedArgv(opts.argv, { binary: opts.binary, pidfile: opts.pidfile, debugMonitorSocket: opts.debugMonitorSocket });
    log.info({ binary, argv }, 'starting QEMU');
    // SIGKILLed by the kernel when the launcher dies, however it dies (a crash, SIGKILL, the OOM killer).
    const cmd = withParentDeathSignal(parentDeathTools(), process.pid, binary, argv);
    if (cmd.guard !== 'signal-and-check') log.warn({ guard: cmd.guard }, cmd.guard === 'none'
      ? 'no setpriv (util-linux) on PATH: QEMU would outlive a launcher killed with SIGKILL'
      : 'no sh on PATH: QEMU starts with its parent-death signal but unchecked against a launcher that died while it was spawned');
    // child_process directly (execa cost every launcher ≈17 ms of CPU to load).
    const child = spawn(cmd.file, cmd.args, {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...(opts.env ?? {}) },
    });
    // A launcher that exits normally asks QEMU to end (SIGTERM); one that is killed leaves that to the parent-death signal.
    const killOnExit = () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); };
    process.once('exit', killOnExit);
    const tail: StderrTail = { text: '', total: 0 };
    const onOutput = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const text = chunk.toString();
      if (stream === 'stderr') {
        tail.text += text;
        tail.total += text.length;
        if (tail.text.length > STDERR_TAIL_BYTES) tail.text = tail.text.slice(-STDERR_TAIL_BYTES);
      }
      for (const line of text.split('\n')) if (line.trim()) log.info({ qemu: stream }, line.trimEnd());
    };
    child.stdout?.on('data', onOutput('stdout'));
    child.stderr?.on('data', onOutput('stderr'));
    const exited: Promise<QemuExit> = new Promise<QemuExit>((resolve) => {
      child.once('error', (err) => resolve({ code: null, signal: null, stderrTail: tail.text + errorMessage(err) }));
      child.once('exit', (code, signal) => {
        // stderr may still hold QEMU's last words (the failure reason): read it to the end first.
        const done = () => resolve({ code, signal, stderrTail: tail.text });
        if (!child.stderr || child.stderr.readableEnded || child.stderr.destroyed) { done(); return; }
        child.stderr.once('end', done).once('close', done);
        setTimeout(done, 1000).unref();
      });
    }).then((e) => {
      process.removeListener('exit', killOnExit);
      log.info({ code: e.code, signal: e.signal }, 'QEMU exited');
      return e;
    });
    if (child.pid === undefined) {
      const e = await exited;
      throw new QemuStartError(`cannot start ${binary}: ${stderrReason(e.stderrTail) || 'spawn failed'}`, e);
    }
    const stream = child.stdio[3] as Duplex | undefined;
    if (!stream) {
      child.kill('SIGKILL');
      throw new QemuStartError('QEMU was spawned without its fd-3 QMP socketpair');
    }
    const timeoutMs = opts.qmpTimeoutMs ?? 30_000;
    const adopt = opts.adoptQmp ?? defaultAdopt(log);
    let timer: NodeJS.Timeout | undefined;
    try {
      const qmp = await Promise.race([
        adopt(stream),
        exited.then((e) => {
          throw new QemuStartError(`QEMU exited during startup (${e.signal ?? `exit code ${e.code}`}): ${stderrReason(e.stderrTail) || 'no output'}`, e);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new QemuStartError(`QEMU's QMP monitor did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      const proc = new QemuProcess(child, qmp, exited, opts, argv, tail);
      log.info({ pid: proc.pid }, 'QEMU started paused, QMP connected');
      return proc;
    } catch (err) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      const e = await exited;
      if (err instanceof QemuStartError) throw new QemuStartError(err.message, err.exit ?? e);
      throw new QemuStartError(`QEMU's QMP monitor failed during startup: ${errorMessage(err)}; stderr: ${stderrReason(e.stderrTail) || 'none'}`, e, err);
    }
  }

  /** Whether QEMU has exited. */
  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** The last ~64 KiB of QEMU's stderr. */
  get stderrTail(): string {
    return this.tail.text;
  }

  /** How much QEMU has written to stderr so far (characters): a mark for stderrSince. */
  get stderrMark(): number {
    return this.tail.total;
  }

  /** What QEMU wrote to stderr after `mark` (as far as the tail still holds it). */
  stderrSince(mark: number): string {
    const n = this.tail.total - mark;
    return n <= 0 ? '' : this.tail.text.slice(Math.max(0, this.tail.text.length - n));
  }

  /** Sends a signal to QEMU (no-op once it exited). */
  signal(sig: NodeJS.Signals): void {
    if (this.exitInfo) return;
    try { this.child.kill(sig); } catch { /* already gone */ }
  }

  /** Waits for exit up to `ms`; true if it exited. */
  async waitExit(ms: number): Promise<boolean> {
    if (this.exitInfo) return true;
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms); }),
    ]);
    clearTimeout(timer);
    return done;
  }

  /**
   * Ends QEMU for good, escalating: QMP `quit`, then SIGTERM, then SIGKILL, each given its time.
   * Resolves with the exit once QEMU is reaped.
   */
  async terminate(opts: { quitTimeoutMs?: number; termTimeoutMs?: number } = {}): Promise<QemuExit> {
    const quitMs = opts.quitTimeoutMs ?? 5000;
    const termMs = opts.termTimeoutMs ?? 5000;
    if (!this.exitInfo) {
      try {
        await this.qmp.execute('quit', undefined, { timeout: Math.min(quitMs, 3000) });
      } catch (err) {
        // quit's reply may be lost in the socket close; the exit below is what counts.
        this.log.debug({ err: errorMessage(err) }, 'QMP quit did not answer');
      }
      if (!(await this.waitExit(quitMs))) {
        this.log.warn({ pid: this.pid }, 'QEMU did not quit: sending SIGTERM');
        this.signal('SIGTERM');
        if (!(await this.waitExit(termMs))) {
          this.log.warn({ pid: this.pid }, 'QEMU ignored SIGTERM: sending SIGKILL');
          this.signal('SIGKILL');
        }
      }
    }
    const exit = await this.exited;
    this.cleanupFiles();
    return exit;
  }

  /** Removes the files QEMU leaves behind when it does not exit cleanly. */
  cleanupFiles(): void {
    if (!this.exitInfo) return;
    rmSync(this.pidfile, { force: true });
    if (this.debugMonitorSocket) rmSync(this.debugMonitorSocket, { force: true });
    try { this.qmp.close(); } catch { /* closed */ }
  }
}
