// A client for the QEMU guest agent (qemu-ga) over the agent channel's unix socket (the host side
// of the org.qemu.guest_agent.0 virtio-serial port). One client may talk to the agent at a time,
// and the agent can hold stale input or stale replies, so every (re)connection and every timeout is
// followed by a resync: a 0xFF byte resets the agent's parser, then `guest-sync-delimited` with a
// random id; its reply is prefixed by 0xFF, and everything before the reply carrying our id is
// discarded (qemu-qmp.md §3.9). Commands run one at a time, in order.
import { createConnection, type Socket } from 'node:net';
import type { Logger } from '../../src/log/logger.ts';

export class GuestAgentError extends Error {
  override readonly name = 'GuestAgentError';
  readonly command: string;
  /** The agent's error class (`CommandNotFound`, `GenericError`...), when it answered with one. */
  readonly errorClass: string | undefined;
  constructor(command: string, message: string, errorClass?: string) {
    super(`guest agent command '${command}' failed: ${message}`);
    this.command = command;
    this.errorClass = errorClass;
  }
}

export interface GuestAgentOptions {
  log: Logger;
  /** Reply timeout per command (default 10 s). */
  timeoutMs?: number;
  /** Timeout of the resync handshake (default 5 s). */
  syncTimeoutMs?: number;
}

export interface AgentExecuteOptions {
  timeoutMs?: number;
  /**
   * The command gives no reply when it succeeds (guest-shutdown, guest-suspend-*): an error reply
   * within the timeout fails it, silence counts as success.
   */
  noReplyOnSuccess?: boolean;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class GuestAgentClient {
  readonly socketPath: string;
  private readonly log: Logger;
  private readonly timeoutMs: number;
  private readonly syncTimeoutMs: number;
  private socket: Socket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  /** `sync`: waiting for the 0xFF-delimited reply to guest-sync-delimited with `syncId`. */
  private mode: 'sync' | 'lines' = 'lines';
  private syncId = 0;
  private needsSync = true;
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(socketPath: string, opts: GuestAgentOptions) {
    this.socketPath = socketPath;
    this.log = opts.log;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.syncTimeoutMs = opts.syncTimeoutMs ?? 5000;
  }

  /** Runs `command` with `args`; resolves with the agent's `return` value. */
  execute<T = unknown>(command: string, args?: Record<string, unknown>, opts: AgentExecuteOptions = {}): Promise<T> {
    const run = this.queue.then(() => this.run(command, args, opts));
    this.queue = run.catch(() => undefined);
    return run as Promise<T>;
  }

  /** Drops the connection (a later command reconnects). */
  close(): void {
    this.closed = true;
    this.drop(new GuestAgentError('(connection)', 'client closed'));
  }

  private drop(err: Error): void {
    const s = this.socket;
    this.socket = undefined;
    this.needsSync = true;
    this.buf = Buffer.alloc(0);
    if (s) s.destroy();
    const p = this.pending;
    this.pending = undefined;
    p?.reject(err);
  }

  private async connect(): Promise<Socket> {
    if (this.socket && !this.socket.destroyed) return this.socket;
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = createConnection(this.socketPath);
      s.once('connect', () => { s.off('error', reject); resolve(s); });
      s.once('error', (err) => reject(new GuestAgentError('(connect)', `cannot connect to agent socket ${this.socketPath}: ${err.message}`)));
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.log.debug({ err: err.message }, 'guest agent socket error'));
    socket.on('close', () => {
      if (this.socket === socket) this.drop(new GuestAgentError('(connection)', 'agent socket closed'));
    });
    this.socket = socket;
    this.needsSync = true;
    return socket;
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (this.mode === 'sync') {
        const ff = this.buf.lastIndexOf(0xff);
        if (ff >= 0) this.buf = this.buf.subarray(ff + 1);
      }
      const nl = this.buf.indexOf(0x0a);
      if (nl < 0) return;
      const line = this.buf.subarray(0, nl).toString('utf8').replace(/^[\s\xff]+/, '').trim();
      this.buf = this.buf.subarray(nl + 1);
      if (!line) continue;
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        this.log.debug({ line: line.slice(0, 200) }, 'guest agent sent an unparsable line: ignored');
        continue;
      }
      this.onMessage(msg);
    }
  }

  private onMessage(msg: unknown): void {
    const obj = (msg && typeof msg === 'object' ? msg : {}) as { return?: unknown; error?: { class?: string; desc?: string } };
    if (this.mode === 'sync') {
      if (obj.return === this.syncId) {
        this.mode = 'lines';
        const p = this.pending;
        this.pending = undefined;
        p?.resolve(obj.return);
      }
      return; // stale output from before the resync
    }
    const p = this.pending;
    if (!p) {
      this.log.debug({ msg }, 'guest agent reply without a pending command: ignored');
      return;
    }
    this.pending = undefined;
    if (obj.error) p.reject(new GuestAgentError('', obj.error.desc ?? 'error', obj.error.class));
    else p.resolve(obj.return);
  }

  private send(socket: Socket, payload: string | Buffer, timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending?.resolve === done) this.pending = undefined;
        this.needsSync = true;
        reject(new GuestAgentError('', `no reply within ${timeoutMs} ms`, 'Timeout'));
      }, timeoutMs);
      const done = (v: unknown) => { clearTimeout(timer); resolve(v); };
      this.pending = { resolve: done, reject: (e) => { clearTimeout(timer); reject(e); } };
      socket.write(payload);
    });
  }

  private async resync(socket: Socket): Promise<void> {
    // Only has to differ from the ids of earlier syncs whose replies may still be queued: Math.random,
    // not node:crypto, which the launcher does not load otherwise (bench/launcher-memory.md).
    this.syncId = 1 + Math.floor(Math.random() * (2 ** 31 - 2));
    this.mode = 'sync';
    this.buf = Buffer.alloc(0);
    const cmd = JSON.stringify({ execute: 'guest-sync-delimited', arguments: { id: this.syncId } });
    try {
      await this.send(socket, Buffer.concat([Buffer.from([0xff]), Buffer.from(`${cmd}\n`)]), this.syncTimeoutMs);
    } catch (err) {
      this.mode = 'lines';
      throw new GuestAgentError('guest-sync-delimited', `agent not responding on ${this.socketPath}: ${(err as Error).message}`, (err as GuestAgentError).errorClass);
    }
    this.needsSync = false;
  }

  private async run(command: string, args: Record<string, unknown> | undefined, opts: AgentExecuteOptions): Promise<unknown> {
    if (this.closed) throw new GuestAgentError(command, 'client closed');
    const socket = await this.connect();
    if (this.needsSync) await this.resync(socket);
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const payload = `${JSON.stringify(args === undefined ? { execute: command } : { execute: command, arguments: args })}\n`;
    try {
      return await this.send(socket, payload, timeoutMs);
    } catch (err) {
      const ge = err as GuestAgentError;
      // Silence or the channel going away (the guest went down) is what success looks like here.
      if (opts.noReplyOnSuccess && (ge.errorClass === 'Timeout' || ge.command === '(connection)')) return undefined;
      throw new GuestAgentError(command, ge.message.replace(/^guest agent command '' failed: /, ''), ge.errorClass);
    }
  }
}
