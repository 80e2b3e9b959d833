// The migration proxy's native data path: socat processes carry the bytes, the node agent keeps
// the control (which connection goes where, in which order, the peer check's outcome, cleanup).
// The Node relay (relay-worker.ts) moved every byte through JavaScript streams and TLS sockets —
// ~270 ms CPU per 100 MB migration plain, ~450 ms with TLS, on machines where both QEMUs need the
// CPU too; socat moves them with read/write and OpenSSL directly (measured in
// bench/migration-transport.bench.ts).
//
// Channel order: QEMU 7.2's incoming side takes the first connection it accepts for the main
// migration channel and the rest for multifd channels. socat's forked children connect to QEMU when
// their TLS handshakes finish, in no fixed order, so the target listens twice: one port for the
// main channel (its children connect to QEMU's socket), one for the multifd channels (their
// children connect to a gate: a symlink to QEMU's socket that appears only once the main channel's
// child has connected — until then they retry). The source sends the first connection QEMU makes
// (its main channel) to the main port and the rest to the multifd port. A target that publishes no
// multifd port (the Node relay) orders connections by their TCP accept: then the source lets the
// other channels connect only after the main channel's TCP connection is up.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from '../../src/log/logger.ts';
import { parseSocatLine, sourceChannelArgs, targetListenerArgs, type SocatEvent, type SocatTlsFiles } from './socat-args.ts';
import { findOnPath, withParentDeathSignal } from '../../src/process/parent-death.ts';
import { PRIVATE_DIR_PREFIX, type RelayRecords } from './relay-records.ts';
import { HANDLER_CERT_CN, type MigrationTls } from './tls.ts';

export class SocatRelayError extends Error {
  override readonly name = 'SocatRelayError';
}

/** How long a stopped socat (and its forked children) get after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 2000;


/** The socat executable on PATH, or undefined (then the Node relay carries migrations). */
export function findSocat(): string | undefined {
  return findOnPath('socat');
}

/** A private 0700 directory with the certificate and key (0600) socat reads; removed by `remove`. */
function privateDir(tls: MigrationTls | undefined): { dir: string; files: SocatTlsFiles | undefined; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), PRIVATE_DIR_PREFIX));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (!tls) return { dir, files: undefined, remove };
  try {
    const write = (name: string, content: string) => {
      const p = join(dir, name);
      writeFileSync(p, content, { mode: 0o600 });
      return p;
    };
    return { dir, files: { ca: write('ca.crt', tls.ca), cert: write('tls.crt', tls.cert), key: write('tls.key', tls.key), peerCommonName: HANDLER_CERT_CN }, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/**
 * One socat process (with the children it forks: its own process group), its log as events.
 * Started through `setpriv --pdeathsig KILL` where util-linux has it: the kernel kills it when the
 * node agent dies, however it dies (a listener's forked children do not inherit that; the records
 * cover them). `forks`: a listener, whose record stays until stop() ended its whole group.
 */
class SocatProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  readonly pid: number;
  private readonly tail: string[] = [];
  private done = false;
  private readonly records: RelayRecords | undefined;

  constructor(socat: string, args: string[], stdio: StdioOptions, onEvent: (ev: SocatEvent, line: string) => void, book: { records: RelayRecords | undefined; privateDir: string; link?: string | undefined; forks: boolean }) {
    // The relay dies with the node agent (setpriv --pdeathsig KILL; without setpriv, socat itself).
    const cmd = withParentDeathSignal({ setpriv: findOnPath('setpriv'), shell: undefined }, process.pid, socat, args);
    // detached: a process group of its own, so stop() reaches the children a listener forked
    this.child = spawn(cmd.file, cmd.args, { stdio, detached: true });
    this.exited = new Promise((resolve) => this.child.once('close', () => { this.done = true; resolve(); }));
    this.child.once('error', () => { this.done = true; });
    if (this.child.pid === undefined) throw new SocatRelayError(`could not start ${socat}`);
    this.pid = this.child.pid;
    this.records = book.records;
    try {
      this.records?.add(this.pid, book.privateDir, book.link);
    } catch (err) {
      // unrecorded, a crash of the agent could leave it behind: not started
      this.records = undefined;
      try { process.kill(-this.pid, 'SIGKILL'); } catch { /* gone */ }
      this.child.stderr?.resume();
      throw new SocatRelayError(`recording the relay process ${this.pid} in ${book.records?.dir}: ${(err as Error).message}`);
    }
    if (!book.forks) void this.exited.then(() => this.records?.remove(this.pid));
    createInterface({ input: this.child.stderr! }).on('line', (line) => {
      this.tail.push(line);
      if (this.tail.length > 20) this.tail.shift();
      onEvent(parseSocatLine(line), line);
    });
  }

  get running(): boolean {
    return !this.done;
  }

  /** The last log lines (for an error that says why). */
  lastLines(): string {
    return this.tail.map((l) => l.replace(/^\S+ \S+ /, '')).join(' | ');
  }

  /** SIGTERM to the process group, SIGKILL after a grace period; resolves once the group is gone. */
  async stop(): Promise<void> {
    const group = -this.pid;
    const signal = (s: NodeJS.Signals | 0) => {
      try { process.kill(group, s); return true; } catch { return false; }
    };
    if (signal('SIGTERM')) {
      // forked children leave the group only by exiting
      const deadline = Date.now() + STOP_GRACE_MS;
      while (signal(0) && Date.now() < deadline) await sleep(10);
      // (bounded: a child its parent did not reap stays in the group as a zombie)
      if (signal('SIGKILL')) for (let i = 0; i < 200 && signal(0); i++) await sleep(10);
    }
    await this.exited;
    this.records?.remove(this.pid);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a listening socat; resolves with the port it listens on. */
function startListener(socat: string, args: string[], what: string, onEvent: (ev: SocatEvent, line: string) => void, book: { records: RelayRecords | undefined; privateDir: string; link?: string | undefined }): Promise<{ proc: SocatProcess; port: number }> {
  return new Promise((resolve, reject) => {
    let proc: SocatProcess | undefined;
    let settled = false;
    try {
      proc = new SocatProcess(socat, args, ['ignore', 'ignore', 'pipe'], (ev, line) => {
        if (!settled && ev.kind === 'listening' && ev.pid === proc?.pid) {
          settled = true;
          resolve({ proc, port: ev.port });
        }
        onEvent(ev, line);
      }, { ...book, forks: true });
    } catch (err) {
      reject(err);
      return;
    }
    const p = proc;
    p.child.once('error', (err) => { if (!settled) { settled = true; reject(new SocatRelayError(`${what}: socat: ${err.message}`)); } });
    void p.exited.then(() => {
      if (!settled) { settled = true; reject(new SocatRelayError(`${what}: socat exited (${p.child.exitCode ?? p.child.signalCode}) before listening: ${p.lastLines()}`)); }
    });
  });
}

/** Target side: TLS (or TCP) on two ports of `address` → the target launcher's unix socket. */
export class SocatTargetRelay {
  /** The main channel's port. */
  port = 0;
  /** The multifd channels' port (undefined: one port for all connections, in any order). */
  multifdPort: number | undefined;
  /** Connections forwarded to QEMU. */
  connections = 0;
  private readonly procs: SocatProcess[] = [];
  private remove: () => void = () => {};
  private readonly log: Logger;

  private constructor(log: Logger) {
    this.log = log;
  }

  /**
   * `unixPath`: QEMU's socket (short enough to connect to; `link`: the short symlink it goes through,
   * if any, for the records). `multifd`: listen for gated multifd channels too.
   */
  static async start(o: { socat: string; address: string; unixPath: string; link?: string | undefined; tls: MigrationTls | undefined; log: Logger; multifd: boolean; records?: RelayRecords | undefined }): Promise<SocatTargetRelay> {
    const r = new SocatTargetRelay(o.log);
    const priv = privateDir(o.tls);
    r.remove = priv.remove;
    const gate = join(priv.dir, 'multifd.sock');
    const book = { records: o.records, privateDir: priv.dir, link: o.link };
    let gateOpen = false;
    const onEvent = (port: 'main' | 'multifd') => (ev: SocatEvent, line: string) => {
      switch (ev.kind) {
        case 'connected':
          if (ev.to !== 'unix') break;
          r.connections++;
          // The main channel is in QEMU's accept queue: the multifd channels may follow.
          if (port === 'main' && !gateOpen) {
            gateOpen = true;
            try { symlinkSync(o.unixPath, gate); } catch (err) { o.log.error({ err: (err as Error).message }, 'migration proxy: cannot open the multifd channels\' gate'); }
          }
          break;
        case 'rejected': o.log.warn({ reason: ev.message, port }, 'migration proxy: rejected a peer'); break;
        case 'error': o.log.debug({ err: ev.message, port, pid: ev.pid }, 'migration proxy connection failed'); break;
        default: if (line.includes(' W ')) o.log.debug({ line, port }, 'migration proxy (socat)');
      }
    };
    try {
      const main = await startListener(o.socat, targetListenerArgs({ address: o.address, forwardTo: o.unixPath, tls: priv.files, gated: false }), 'the main channel\'s listener', onEvent('main'), book);
      r.procs.push(main.proc);
      r.port = main.port;
      if (o.multifd) {
        const multifd = await startListener(o.socat, targetListenerArgs({ address: o.address, forwardTo: gate, tls: priv.files, gated: true }), 'the multifd channels\' listener', onEvent('multifd'), book);
        r.procs.push(multifd.proc);
        r.multifdPort = multifd.port;
      }
    } catch (err) {
      await r.close();
      throw err;
    }
    for (const p of r.procs) {
      void p.exited.then(() => { if (r.procs.includes(p)) o.log.error({ pid: p.pid, code: p.child.exitCode, log: p.lastLines() }, 'migration proxy (socat) exited: its connections are gone'); });
    }
    return r;
  }

  async close(): Promise<void> {
    const procs = this.procs.splice(0);
    await Promise.all(procs.map((p) => p.stop()));
    this.remove();
  }
}

/**
 * Source side: a unix socket in the source pod; each connection QEMU makes is handed (its file
 * descriptor) to a socat of its own that connects to the target: the first to the main port, the
 * rest to the multifd port.
 */
export class SocatSourceRelay {
  connections = 0;
  private readonly procs = new Set<SocatProcess>();
  private server: Server | undefined;
  private remove: () => void = () => {};
  private closing = false;

  /** `listenPath`: where to listen (short enough to bind; the socket file lands in the pod). */
  static async start(o: { socat: string; listenPath: string; host: string; port: number; multifdPort: number | undefined; tls: MigrationTls | undefined; log: Logger; records?: RelayRecords | undefined }): Promise<SocatSourceRelay> {
    const r = new SocatSourceRelay();
    const priv = privateDir(o.tls);
    r.remove = priv.remove;
    // built now: bad arguments fail start(), not a connection later
    const mainArgs = sourceChannelArgs({ host: o.host, port: o.port, tls: priv.files });
    const multifdArgs = sourceChannelArgs({ host: o.host, port: o.multifdPort ?? o.port, tls: priv.files });
    let mainUp: () => void = () => {};
    const mainConnected = new Promise<void>((resolve) => { mainUp = resolve; });
    const channel = async (conn: Socket, index: number) => {
      // One port for all (a Node relay target): it keeps the TCP accept order, so the main channel connects first.
      if (index > 0 && o.multifdPort === undefined) await mainConnected;
      if (r.closing || conn.destroyed) { conn.destroy(); return; }
      let proc: SocatProcess;
      try {
        proc = new SocatProcess(o.socat, index === 0 ? mainArgs : multifdArgs, ['ignore', 'ignore', 'pipe', conn], (ev) => {
          if (ev.kind === 'connected' && ev.to === 'tcp' && index === 0) mainUp();
          else if (ev.kind === 'rejected') o.log.warn({ reason: ev.message, channel: index }, 'migration proxy: the target was refused');
          else if (ev.kind === 'error') o.log.debug({ err: ev.message, channel: index }, 'migration proxy connection failed');
        }, { records: o.records, privateDir: priv.dir, forks: false });
      } catch (err) {
        o.log.warn({ err: (err as Error).message, channel: index }, 'migration proxy: cannot start socat');
        if (index === 0) mainUp();
        return;
      } finally {
        // the child has its own copy of the descriptor
        conn.destroy();
      }
      r.procs.add(proc);
      void proc.exited.then(() => {
        r.procs.delete(proc);
        if (index === 0) mainUp();
        if (proc.child.exitCode !== 0 && !r.closing) o.log.warn({ channel: index, code: proc.child.exitCode, log: proc.lastLines() }, 'migration proxy channel ended with an error');
      });
    };
    let accepted = 0;
    const server = createServer({ pauseOnConnect: true }, (conn) => {
      r.connections++;
      void channel(conn, accepted++);
    });
    r.server = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new SocatRelayError(`listening on ${o.listenPath}: ${err.message}`)));
        server.listen(o.listenPath, () => resolve());
      });
    } catch (err) {
      await r.close();
      throw err;
    }
    return r;
  }

  async close(): Promise<void> {
    this.closing = true;
    const s = this.server;
    this.server = undefined;
    if (s?.listening) await new Promise<void>((r) => s.close(() => r()));
    await Promise.all([...this.procs].map((p) => p.stop()));
    this.procs.clear();
    this.remove();
  }
}
