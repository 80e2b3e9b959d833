// QmpClient: one QMP connection (unix socket, TCP, or an adopted duplex such as a spawn-time
// socketpair). Commands carry monotonically increasing string ids and many may be in flight; replies
// are matched on id. Events are assigned a client-local sequence number, kept in a bounded history,
// and fanned out to subscriptions, waiters and 'event' listeners without ever blocking the reader.
//
// The protocol itself (ids, in-flight cap, held commands, resync after a timeout, id-less errors,
// what an end of stream means) is the I/O-free state machine in protocol.ts; this class is its
// shell: it dials or adopts the stream, frames bytes, runs the timers (command deadlines, the
// resync deadline), listens to AbortSignals, fans events out, logs, and applies the effects the
// protocol returns.
import { EventEmitter } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { QmpDisconnectedError, QmpError, QmpEventOverflowError, QmpTimeoutError } from './errors.ts';
import { EventSubscription, eventMatcher, type EventFilter, type SubscribeOptions } from './events.ts';
import { DeadlineQueue } from './deadlines.ts';
import { monotonicMs } from './monotonic.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, JsonLineFramer } from './framing.ts';
import type { QmpEvent, QmpGreeting } from './messages.ts';
import { QmpProtocol, capabilitiesToEnable, type QmpCommand, type QmpCommandOutcome, type QmpConnectionState, type QmpEffect, type QmpLogLevel } from './protocol.ts';

export type { QmpCommandOutcome, QmpConnectionState, QmpLogLevel } from './protocol.ts';
export type QmpLogFn = (level: QmpLogLevel, msg: string, fields?: Record<string, unknown>) => void;

export interface QmpHooks {
  /** Called once per command when its caller is released (metrics: latency histogram, errors by class). */
  onCommand?: (info: { command: string; id: string; ms: number; outcome: QmpCommandOutcome; errorClass?: string }) => void;
  /** Called when a subscription's buffer overflows. */
  onEventOverflow?: (info: { dropped: number; bufferSize: number; overflow: 'error' | 'drop-oldest' }) => void;
}

export interface QmpClientOptions {
  /** Greeting + capabilities negotiation deadline, ms. Default 10 000. */
  timeout?: number;
  /** Default per-command timeout, ms; 0 = none. Default 10 000 (reference §1.8). */
  commandTimeout?: number;
  /** Structured log sink; the client never imports a logger. */
  log?: QmpLogFn;
  hooks?: QmpHooks;
  /** Negotiate the `oob` capability when the server offers it. Default true. */
  oob?: boolean;
  /** In-band commands written before their replies arrive; QMP spec: "at most eight". Default 8. */
  maxInFlight?: number;
  /** Largest accepted server message. Default 10 MiB (libvirt, python qemu.qmp). */
  maxMessageBytes?: number;
  /** Events kept for `waitEvent(…, { since })`. Default 1000. */
  eventHistory?: number;
  /** How long the post-timeout `query-status` probe may take before the connection is declared dead, ms. Default 10 000. */
  resyncTimeout?: number;
  /** Prefix of command ids (`q1`, `q2`, …). Default `q`. */
  idPrefix?: string;
  /**
   * `connect()` only: while the socket path does not exist yet or refuses connections (QEMU still
   * starting), retry every few ms until `timeout` instead of failing at once. Default false.
   */
  waitForServer?: boolean;
}

export interface ExecuteOptions {
  /** ms; overrides `commandTimeout`; 0 = none. */
  timeout?: number;
  signal?: AbortSignal;
}

export interface WaitEventOptions {
  filter?: EventFilter;
  /** ms; default none (guest-driven events have no natural bound: pass one). */
  timeout?: number;
  signal?: AbortSignal;
  /**
   * A cursor from `eventCursor()` (or an event's `seq`): events that arrived after it, even before
   * this call, are considered first. Take it before sending the command that causes the event.
   */
  since?: number;
}

export interface ExecuteThenEventOptions {
  filter?: EventFilter;
  /** One deadline for the reply and the event, ms, from the call. Default: `commandTimeout` for the reply, none for the event. */
  timeout?: number;
  signal?: AbortSignal;
}

export type QmpTarget = string | { path: string } | { host: string; port: number };

export interface QmpClientEvents {
  event: [ev: QmpEvent];
  close: [err: Error | undefined];
}

/** A caller waiting for a command's reply; the protocol's `QmpCommand` carries it as `ctx`. */
interface Call {
  /** Set right after the protocol numbered the command. */
  cmd: QmpCommand<Call>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
  readonly started: number;
  /** The command's timeout (0 = none) and its absolute expiry (see DeadlineQueue). */
  readonly timeoutMs: number;
  deadline: number;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** The caller has been released (reply, error, timeout, abort, disconnect). */
  settled: boolean;
}

interface Waiter {
  readonly match: EventFilter;
  readonly what: string;
  readonly resolve: (ev: QmpEvent) => void;
  readonly reject: (e: unknown) => void;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

const noop = (): void => {};

export class QmpClient extends EventEmitter<QmpClientEvents> {
  /** The server's greeting (version and offered capabilities). */
  greeting!: QmpGreeting;
  /** Capabilities enabled by negotiation (`['oob']` or `[]`). */
  capabilities: string[] = [];
  /** Resolves when the connection has ended: `undefined` when expected (close(), quit(), EOF after SHUTDOWN), else the reason. Never rejects. */
  readonly closed: Promise<Error | undefined>;

  private readonly stream: Duplex;
  private readonly framer: JsonLineFramer;
  private readonly proto: QmpProtocol<Call>;
  private readonly log: QmpLogFn | undefined;
  private readonly hooks: QmpHooks;
  private readonly commandTimeout: number;
  private readonly historySize: number;

  /**
   * The resync deadline. Every reply while resyncing re-arms it: QEMU answering the commands
   * written before the probe is progress, so a slow command (a big blockdev-add, a non-detached
   * dump) does not get a healthy connection torn down.
   */
  private resyncTimer: NodeJS.Timeout | undefined;

  private seq = 0;
  private readonly history: QmpEvent[];
  private readonly subs = new Set<EventSubscription>();
  private readonly waiters = new Set<Waiter>();
  private readonly deadlines = new DeadlineQueue<Call>((call, ms) => this.apply(this.proto.timeout(call.cmd, ms)));

  private greetingWaiter: ((g: QmpGreeting) => void) | undefined;
  /** close() ends the stream politely (FIN, then destroy after 2 s); every other end destroys it. */
  private endGracefully = false;
  private resolveClosed!: (err: Error | undefined) => void;
  private readonly streamClosed: Promise<void>;

  private constructor(stream: Duplex, opts: QmpClientOptions) {
    super();
    this.stream = stream;
    this.framer = new JsonLineFramer(opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    this.proto = new QmpProtocol<Call>({
      ...(opts.maxInFlight !== undefined ? { maxInFlight: opts.maxInFlight } : {}),
      ...(opts.resyncTimeout !== undefined ? { resyncTimeout: opts.resyncTimeout } : {}),
      ...(opts.idPrefix !== undefined ? { idPrefix: opts.idPrefix } : {}),
    });
    const log = opts.log;
    // A throwing log sink must not break the reader.
    this.log = log === undefined ? undefined : (level, msg, fields) => {
      try {
        log(level, msg, fields);
      } catch {
        /* ignored */
      }
    };
    this.hooks = opts.hooks ?? {};
    this.commandTimeout = opts.commandTimeout ?? 10_000;
    this.historySize = Math.max(0, opts.eventHistory ?? 1000);
    this.history = new Array<QmpEvent>(this.historySize);
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.streamClosed = new Promise((resolve) => {
      if (stream.destroyed && stream.closed) resolve();
      else stream.once('close', () => resolve());
    });
    stream.on('data', (chunk: Buffer | string) => this.onData(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    stream.on('end', () => this.apply(this.proto.streamEnded()));
    stream.on('close', () => this.apply(this.proto.streamEnded()));
    // Always handled: QEMU resets the socket after `quit` (ECONNRESET), which must not crash the process.
    stream.on('error', (err: Error) => {
      if (this.proto.state === 'closed') this.log?.('debug', 'QMP stream error after close', { err: err.message });
      this.apply(this.proto.streamEnded(err));
    });
  }

  /** Connect to a QMP server (unix socket path, `{path}`, or `{host, port}`), read the greeting and negotiate. */
  static async connect(target: QmpTarget, opts: QmpClientOptions = {}): Promise<QmpClient> {
    const timeout = opts.timeout ?? 10_000;
    const desc = typeof target === 'string' ? target : 'path' in target ? target.path : `${target.host}:${target.port}`;
    const started = Date.now();
    const deadline = timeout > 0 ? started + timeout : Infinity;
    let socket: Socket;
    // QEMU creates its socket within tens of ms of exec: poll briskly (a failed connect is one
    // cheap syscall), then back off if it takes longer.
    for (let attempt = 0; ; attempt++) {
      const delay = attempt < 50 ? 2 : 10;
      try {
        socket = await QmpClient.dial(target, desc, deadline);
        break;
      } catch (err) {
        const code = (err as { cause?: { code?: string } }).cause?.code;
        const retriable = opts.waitForServer === true && (code === 'ENOENT' || code === 'ECONNREFUSED');
        if (!retriable || Date.now() + delay >= deadline) throw err;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    if (typeof target !== 'string' && 'host' in target) socket.setNoDelay(true);
    return QmpClient.adopt(socket, { ...opts, timeout: timeout > 0 ? Math.max(1, timeout - (Date.now() - started)) : 0 });
  }

  private static dial(target: QmpTarget, desc: string, deadline: number): Promise<Socket> {
    const socket: Socket = typeof target === 'string' ? createConnection(target) : 'path' in target ? createConnection(target.path) : createConnection(target.port, target.host);
    return new Promise<Socket>((resolve, reject) => {
      const ms = deadline === Infinity ? 0 : Math.max(1, deadline - Date.now());
      const timer = ms > 0 ? setTimeout(() => fail(new QmpTimeoutError(`(connect ${desc})`, ms, 'not connected')), ms) : undefined;
      const fail = (err: Error): void => {
        clearTimeout(timer);
        socket.off('connect', ok);
        socket.destroy();
        reject(err instanceof QmpTimeoutError ? err : new QmpDisconnectedError(`cannot connect to QMP at ${desc}: ${err.message}`, { cause: err }));
      };
      const ok = (): void => {
        clearTimeout(timer);
        socket.off('error', fail);
        resolve(socket);
      };
      socket.once('connect', ok);
      socket.once('error', fail);
    });
  }

  /** Run QMP over an already-open duplex (e.g. `child.stdio[3]` of a spawn-time socketpair). */
  static async adopt(stream: Duplex, opts: QmpClientOptions = {}): Promise<QmpClient> {
    const client = new QmpClient(stream, opts);
    await client.handshake(opts.timeout ?? 10_000, opts.oob ?? true);
    return client;
  }

  get state(): QmpConnectionState {
    return this.proto.state;
  }

  /** Whether `exec-oob` is available on this connection. */
  get oob(): boolean {
    return this.capabilities.includes('oob');
  }

  /** Commands written and not yet answered (including timed-out ones whose late reply is awaited). */
  get inFlight(): number {
    return this.proto.inFlight;
  }

  /** A cursor for `waitEvent(…, { since })`: the sequence number of the last event received (0 if none). */
  eventCursor(): number {
    return this.seq;
  }

  /** Run an in-band command; resolves with its `return` value, rejects with QmpError / QmpTimeoutError / QmpDisconnectedError / the signal's reason. */
  execute<T = unknown>(command: string, args?: object, opts: ExecuteOptions = {}): Promise<T> {
    return this.send(command, args, opts, false) as Promise<T>;
  }

  /**
   * Run a command with `exec-oob`: it overtakes queued in-band commands. Only for commands QEMU
   * marks `allow-oob` (7.2: migrate-recover, migrate-pause, yank, query-yank); requires the oob
   * capability to have been negotiated.
   */
  executeOob<T = unknown>(command: string, args?: object, opts: ExecuteOptions = {}): Promise<T> {
    if (!this.oob) return Promise.reject(new QmpError(command, '', 'GenericError', 'out-of-band execution requires the oob capability, which was not negotiated on this connection'));
    return this.send(command, args, opts, true) as Promise<T>;
  }

  /** A bounded, filtered stream of events (async iterable). Close it when done. */
  subscribe(opts: SubscribeOptions = {}): EventSubscription {
    const sub = new EventSubscription(opts, (s) => this.subs.delete(s), (s) => this.onOverflow(s));
    if (this.proto.state === 'closed') sub.finish();
    else this.subs.add(sub);
    return sub;
  }

  /**
   * The next event named `name` (or one of `name`) matching `filter`. With `since`, events that
   * arrived after that cursor (kept in the history) count too, so an event that precedes the reply
   * of the command that caused it is not missed.
   */
  waitEvent(name: string | readonly string[], opts: WaitEventOptions = {}): Promise<QmpEvent> {
    const what = `(event ${typeof name === 'string' ? name : name.join('|')})`;
    const match = eventMatcher(name, opts.filter);
    if (opts.since !== undefined) {
      const since = opts.since;
      if (!Number.isInteger(since) || since < 0 || since > this.seq) return Promise.reject(new RangeError(`waitEvent ${what}: 'since' must be a cursor from eventCursor() (0..${this.seq}), got ${since}`));
      const oldest = Math.max(1, this.seq - this.historySize + 1);
      if (since + 1 < oldest) {
        return Promise.reject(new QmpEventOverflowError(`waitEvent ${what}: events ${since + 1}..${oldest - 1} after cursor ${since} are no longer in the history of ${this.historySize} events; cannot tell whether one matched`, oldest - since - 1));
      }
      for (let s = since + 1; s <= this.seq; s++) {
        const ev = this.history[s % this.historySize]!;
        try {
          if (match(ev)) return Promise.resolve(ev);
        } catch (err) {
          return Promise.reject(err);
        }
      }
    }
    if (this.proto.state === 'closed') return Promise.reject(new QmpDisconnectedError('connection is closed', { command: what }));
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    return new Promise<QmpEvent>((resolve, reject) => {
      const w: Waiter = { match, what, resolve, reject, timer: undefined, signal: opts.signal, onAbort: undefined };
      const timeout = opts.timeout ?? 0;
      if (timeout > 0) {
        w.timer = setTimeout(() => {
          this.dropWaiter(w);
          reject(new QmpTimeoutError(what, timeout, 'no matching event'));
        }, timeout);
      }
      if (opts.signal) {
        const signal = opts.signal;
        w.onAbort = () => {
          this.dropWaiter(w);
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.add(w);
    });
  }

  /**
   * Send `command` and wait for both its reply and the event it causes. The event wait is armed
   * before the command is written, so an event arriving before the reply is not missed.
   */
  async executeThenEvent<T = unknown>(command: string, args: object | undefined, eventName: string | readonly string[], opts: ExecuteThenEventOptions = {}): Promise<{ result: T; event: QmpEvent }> {
    const cursor = this.seq;
    const ac = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, ac.signal]) : ac.signal;
    const eventP = this.waitEvent(eventName, { filter: opts.filter, since: cursor, signal, ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}) });
    const resultP = this.execute<T>(command, args, { signal, ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}) }).catch((err: unknown) => {
      ac.abort(err);
      throw err;
    });
    const [result, event] = await Promise.all([resultP, eventP]);
    return { result, event };
  }

  /** Close the connection. Outstanding commands are rejected; resolves once the stream is closed. */
  async close(): Promise<void> {
    if (this.proto.state !== 'closed') this.endGracefully = true;
    this.apply(this.proto.close('connection closed by the client'));
    await this.waitStreamClosed(2000);
  }

  /**
   * Send `quit` and wait for QEMU to close the connection. The reset/EOF that follows is the
   * expected outcome, not an error. If QEMU has not closed within `timeout` ms the stream is
   * destroyed and QmpTimeoutError is thrown.
   */
  async quit(opts: { timeout?: number } = {}): Promise<void> {
    if (this.proto.state === 'closed') return;
    const timeout = opts.timeout ?? 10_000;
    this.proto.expectClose();
    const reply = this.execute('quit', undefined, { timeout: 0 }).catch((err: unknown) => {
      if (!(err instanceof QmpDisconnectedError)) throw err;
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      this.streamClosed.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeout);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.apply(this.proto.close(`QEMU did not close the connection within ${timeout} ms of quit`));
      await this.waitStreamClosed(1000);
      await reply.catch(noop);
      throw new QmpTimeoutError('quit', timeout, 'connection not closed');
    }
    await reply;
  }

  // ————————————————————————————————————————————————————————————— internals

  private async handshake(timeout: number, wantOob: boolean): Promise<void> {
    const deadline = timeout > 0 ? Date.now() + timeout : 0;
    try {
      this.greeting = await new Promise<QmpGreeting>((resolve, reject) => {
        const timer = timeout > 0 ? setTimeout(() => reject(new QmpTimeoutError('(greeting)', timeout, 'no greeting')), timeout) : undefined;
        this.greetingWaiter = (g) => {
          clearTimeout(timer);
          resolve(g);
        };
        void this.closed.then((err) => {
          clearTimeout(timer);
          reject(err ?? new QmpDisconnectedError('connection closed before the QMP greeting'));
        });
      });
      const enable = capabilitiesToEnable(this.greeting, wantOob);
      const remaining = deadline === 0 ? 0 : Math.max(1, deadline - Date.now());
      await this.execute('qmp_capabilities', enable.length ? { enable } : undefined, { timeout: remaining });
      this.capabilities = enable;
      this.apply(this.proto.negotiated());
      const v = this.greeting.version.qemu;
      this.log?.('debug', 'QMP connection ready', { qemu: `${v.major}.${v.minor}.${v.micro}`, capabilities: enable });
    } catch (err) {
      this.apply(this.proto.fail(err instanceof Error ? err : new Error(String(err))));
      await this.waitStreamClosed(1000);
      throw err;
    }
  }

  private send(command: string, args: object | undefined, opts: ExecuteOptions, oob: boolean): Promise<unknown> {
    if (this.proto.state === 'closed') return Promise.reject(new QmpDisconnectedError('connection is closed', { command }));
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<unknown>((resolve, reject) => {
      const timeout = opts.timeout ?? this.commandTimeout;
      const call: Call = { cmd: undefined as unknown as QmpCommand<Call>, resolve, reject, started: this.hooks.onCommand ? monotonicMs() : 0, timeoutMs: timeout > 0 ? timeout : 0, deadline: 0, signal, onAbort: undefined, settled: false };
      const { cmd, effects } = this.proto.request(command, args, oob, call);
      call.cmd = cmd;
      if (call.timeoutMs > 0) this.deadlines.add(call, call.timeoutMs);
      if (signal) {
        call.onAbort = () => this.apply(this.proto.abort(cmd, signal.reason));
        signal.addEventListener('abort', call.onAbort, { once: true });
      }
      this.apply(effects);
    });
  }

  /** Carry out what the protocol decided, in order. */
  private apply(effects: QmpEffect<Call>[]): void {
    for (const e of effects) {
      switch (e.kind) {
        case 'write':
          // A listener or hook run by an earlier effect may have closed the connection.
          if (this.proto.state !== 'closed') this.stream.write(e.data);
          break;
        case 'settle':
          this.settle(e.cmd.ctx, e.outcome, e.value, e.errorClass);
          break;
        case 'event':
          this.dispatchEvent({ event: e.event, data: e.data, timestamp: e.timestamp, seq: ++this.seq });
          break;
        case 'greeting': {
          const w = this.greetingWaiter;
          this.greetingWaiter = undefined;
          w?.(e.greeting);
          break;
        }
        case 'arm-resync':
          if (this.resyncTimer !== undefined) this.resyncTimer.refresh();
          else this.resyncTimer = setTimeout(() => {
            this.resyncTimer = undefined;
            this.apply(this.proto.resyncExpired());
          }, e.ms);
          break;
        case 'disarm-resync':
          clearTimeout(this.resyncTimer);
          this.resyncTimer = undefined;
          break;
        case 'log':
          this.log?.(e.level, e.msg, e.fields);
          break;
        case 'closed':
          this.finish(e.error, e.why);
          break;
      }
    }
  }

  /** Release the caller once: its timer and abort listener go, the hook hears of it. */
  private settle(call: Call, outcome: QmpCommandOutcome, value: unknown, errorClass?: string): void {
    if (call.settled) return;
    call.settled = true;
    if (call.timeoutMs > 0) this.deadlines.trim(call.timeoutMs);
    if (call.onAbort !== undefined) call.signal!.removeEventListener('abort', call.onAbort);
    const hook = this.hooks.onCommand;
    if (hook) {
      try {
        hook({ command: call.cmd.command, id: call.cmd.id, ms: monotonicMs() - call.started, outcome, ...(errorClass !== undefined ? { errorClass } : {}) });
      } catch (err) {
        this.log?.('error', 'QMP onCommand hook threw', { err: String(err) });
      }
    }
    if (outcome === 'ok') call.resolve(value);
    else call.reject(value);
  }

  private onData(chunk: Buffer): void {
    if (this.proto.state === 'closed') return;
    try {
      this.framer.push(chunk, this.onMessage);
    } catch (err) {
      this.apply(this.proto.fail(err instanceof Error ? err : new Error(String(err))));
    }
  }

  private readonly onMessage = (raw: unknown): boolean => {
    this.apply(this.proto.receive(raw));
    return this.proto.state !== 'closed';
  };

  private dispatchEvent(ev: QmpEvent): void {
    if (this.historySize > 0) this.history[ev.seq % this.historySize] = ev;
    for (const sub of this.subs) sub.deliver(ev);
    for (const w of this.waiters) {
      let ok: boolean;
      try {
        ok = w.match(ev);
      } catch (err) {
        this.dropWaiter(w);
        w.reject(err);
        continue;
      }
      if (ok) {
        this.dropWaiter(w);
        w.resolve(ev);
      }
    }
    if (this.listenerCount('event') > 0) {
      try {
        this.emit('event', ev);
      } catch (err) {
        // A throwing listener must not desynchronise the reader.
        this.log?.('error', "QMP 'event' listener threw", { event: ev.event, err: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  private dropWaiter(w: Waiter): void {
    this.waiters.delete(w);
    if (w.timer !== undefined) clearTimeout(w.timer);
    if (w.onAbort !== undefined) w.signal!.removeEventListener('abort', w.onAbort);
  }

  private onOverflow(sub: EventSubscription): void {
    this.log?.('warn', 'QMP event subscription overflowed', { dropped: sub.dropped, bufferSize: sub.bufferSize, overflow: sub.overflow });
    try {
      this.hooks.onEventOverflow?.({ dropped: sub.dropped, bufferSize: sub.bufferSize, overflow: sub.overflow });
    } catch (err) {
      this.log?.('error', 'QMP onEventOverflow hook threw', { err: String(err) });
    }
  }

  /**
   * The protocol has ended the connection (every command caller already released): stop the
   * timers, fail the event waits, end subscriptions, close the stream, resolve `closed`, emit 'close'.
   */
  private finish(err: Error | undefined, why: string): void {
    clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    this.deadlines.clear();
    for (const w of [...this.waiters]) {
      this.dropWaiter(w);
      w.reject(new QmpDisconnectedError(why, { command: w.what, cause: err }));
    }
    for (const sub of [...this.subs]) sub.finish();
    if (this.endGracefully) {
      this.stream.end();
      const t = setTimeout(() => this.stream.destroy(), 2000);
      t.unref();
      void this.streamClosed.then(() => clearTimeout(t));
    } else {
      this.stream.destroy();
    }
    this.resolveClosed(err);
    try {
      this.emit('close', err);
    } catch (e) {
      this.log?.('error', "QMP 'close' listener threw", { err: e instanceof Error ? e.message : String(e) });
    }
  }

  private async waitStreamClosed(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.streamClosed, new Promise<void>((r) => { timer = setTimeout(r, ms); })]);
    clearTimeout(timer);
    if (!this.stream.destroyed) this.stream.destroy();
  }
}
