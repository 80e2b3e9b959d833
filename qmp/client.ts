// QmpClient: one QMP connection (unix socket, TCP, or an adopted duplex such as a spawn-time
// socketpair). Commands carry monotonically increasing string ids and many may be in flight; replies
// are matched on id. Events are assigned a client-local sequence number, kept in a bounded history,
// and fanned out to subscriptions, waiters and 'event' listeners without ever blocking the reader.
//
// Failure semantics (python qemu.qmp / libvirt / govmm, see reference/anchors.md §3):
// - Per-command timeout and AbortSignal release the caller; a command already written keeps its id
//   slot until its late reply arrives, which is then consumed and discarded.
// - A timeout makes the connection suspect: the client stops sending, writes 0xFF (resets QEMU's
//   JSON parser, answered by an id-less parse error), then probes with `query-status` under a fresh
//   id. The probe's reply (success or error) proves the stream is in sync again and queued commands
//   flow; no reply within `resyncTimeout` tears the connection down.
// - An id-less error while no id-less reply is expected means one of our inputs was lost: protocol
//   error, connection closed (python qemu.qmp does the same). Replies with unknown ids are dropped.
// - Disconnect rejects every outstanding command with QmpDisconnectedError naming the command.
import { EventEmitter } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { QmpDisconnectedError, QmpError, QmpEventOverflowError, QmpProtocolError, QmpTimeoutError } from './errors.ts';
import { EventSubscription, eventMatcher, type EventFilter, type SubscribeOptions } from './events.ts';
import { DeadlineQueue } from './deadlines.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, JsonLineFramer } from './framing.ts';
import { parseServerMessage, type QmpEvent, type QmpGreeting } from './messages.ts';

export type QmpLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type QmpLogFn = (level: QmpLogLevel, msg: string, fields?: Record<string, unknown>) => void;

export type QmpCommandOutcome = 'ok' | 'error' | 'timeout' | 'aborted' | 'disconnected';

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

export type QmpConnectionState = 'handshake' | 'ready' | 'resyncing' | 'closed';

export interface QmpClientEvents {
  event: [ev: QmpEvent];
  close: [err: Error | undefined];
}

interface Pending {
  readonly id: string;
  readonly command: string;
  readonly line: string;
  readonly oob: boolean;
  /** Send order (the numeric part of the id). */
  readonly n: number;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
  readonly started: number;
  /** The command's timeout (0 = none) and its absolute expiry (see DeadlineQueue). */
  timeoutMs: number;
  deadline: number;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** Written to the stream (its id is in `inflight`). */
  sent: boolean;
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

const XFF = Buffer.from([0xff]);
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
  private readonly log: QmpLogFn | undefined;
  private readonly hooks: QmpHooks;
  private readonly commandTimeout: number;
  private readonly maxInFlight: number;
  private readonly resyncTimeout: number;
  private readonly idPrefix: string;
  private readonly historySize: number;

  private st: QmpConnectionState = 'handshake';
  private nextId = 0;
  private readonly inflight = new Map<string, Pending>();
  private inBandInFlight = 0;
  private queue: Pending[] = [];
  private queueHead = 0;
  /** Id-less error replies we provoked (0xFF) and will consume. */
  private expectIdless = 0;
  private probeId: string | undefined;
  /**
   * Deadline of the resync probe. Every reply while resyncing restarts it: QEMU answering the
   * commands queued before the probe is progress, so a slow command (a big blockdev-add, a
   * non-detached dump) does not get a healthy connection torn down.
   */
  private resyncTimer: NodeJS.Timeout | undefined;

  private seq = 0;
  private readonly history: QmpEvent[];
  private readonly subs = new Set<EventSubscription>();
  private readonly waiters = new Set<Waiter>();
  private readonly deadlines = new DeadlineQueue<Pending>((p, ms) => this.onTimeout(p, ms));

  private greetingWaiter: ((g: QmpGreeting) => void) | undefined;
  private closeRequested = false;
  /** A SHUTDOWN was the last run-state event: an EOF now is QEMU exiting as asked. */
  private shutdownSeen = false;
  private resolveClosed!: (err: Error | undefined) => void;
  private readonly streamClosed: Promise<void>;

  private constructor(stream: Duplex, opts: QmpClientOptions) {
    super();
    this.stream = stream;
    this.framer = new JsonLineFramer(opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
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
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 8);
    this.resyncTimeout = opts.resyncTimeout ?? 10_000;
    this.idPrefix = opts.idPrefix ?? 'q';
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
    stream.on('end', () => this.teardown(this.closeReason()));
    stream.on('close', () => this.teardown(this.closeReason()));
    // Always handled: QEMU resets the socket after `quit` (ECONNRESET), which must not crash the process.
    stream.on('error', (err: Error) => {
      if (this.st === 'closed') this.log?.('debug', 'QMP stream error after close', { err: err.message });
      this.teardown(this.closeReason(err));
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
    return this.st;
  }

  /** Whether `exec-oob` is available on this connection. */
  get oob(): boolean {
    return this.capabilities.includes('oob');
  }

  /** Commands written and not yet answered (including timed-out ones whose late reply is awaited). */
  get inFlight(): number {
    return this.inflight.size;
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
    if (this.st === 'closed') sub.finish();
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
    if (this.st === 'closed') return Promise.reject(new QmpDisconnectedError('connection is closed', { command: what }));
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
    this.closeRequested = true;
    this.teardown(undefined, 'connection closed by the client', true);
    await this.waitStreamClosed(2000);
  }

  /**
   * Send `quit` and wait for QEMU to close the connection. The reset/EOF that follows is the
   * expected outcome, not an error. If QEMU has not closed within `timeout` ms the stream is
   * destroyed and QmpTimeoutError is thrown.
   */
  async quit(opts: { timeout?: number } = {}): Promise<void> {
    if (this.st === 'closed') return;
    const timeout = opts.timeout ?? 10_000;
    this.closeRequested = true;
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
      this.teardown(undefined, `QEMU did not close the connection within ${timeout} ms of quit`);
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
      const enable = wantOob && this.greeting.capabilities.includes('oob') ? ['oob'] : [];
      const remaining = deadline === 0 ? 0 : Math.max(1, deadline - Date.now());
      await this.execute('qmp_capabilities', enable.length ? { enable } : undefined, { timeout: remaining });
      this.capabilities = enable;
      this.st = 'ready';
      this.pump();
      const v = this.greeting.version.qemu;
      this.log?.('debug', 'QMP connection ready', { qemu: `${v.major}.${v.minor}.${v.micro}`, capabilities: enable });
    } catch (err) {
      this.teardown(err instanceof Error ? err : new Error(String(err)));
      await this.waitStreamClosed(1000);
      throw err;
    }
  }

  private send(command: string, args: object | undefined, opts: ExecuteOptions, oob: boolean): Promise<unknown> {
    if (this.st === 'closed') return Promise.reject(new QmpDisconnectedError('connection is closed', { command }));
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const n = ++this.nextId;
    const id = this.idPrefix + n;
    const msg = oob ? (args === undefined ? { 'exec-oob': command, id } : { 'exec-oob': command, arguments: args, id }) : args === undefined ? { execute: command, id } : { execute: command, arguments: args, id };
    const line = JSON.stringify(msg) + '\n';
    return new Promise<unknown>((resolve, reject) => {
      const timeout = opts.timeout ?? this.commandTimeout;
      const p: Pending = { id, command, line, oob, n, resolve, reject, started: this.hooks.onCommand ? performance.now() : 0, timeoutMs: timeout > 0 ? timeout : 0, deadline: 0, signal, onAbort: undefined, sent: false, settled: false };
      if (p.timeoutMs > 0) this.deadlines.add(p, p.timeoutMs);
      if (signal) {
        p.onAbort = () => this.onAbort(p);
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      if (oob || (this.canSend() && this.queueHead === this.queue.length)) this.write(p);
      else this.queue.push(p);
    });
  }

  private canSend(): boolean {
    return (this.st === 'ready' || this.st === 'handshake') && this.inBandInFlight < this.maxInFlight;
  }

  private write(p: Pending): void {
    p.sent = true;
    this.inflight.set(p.id, p);
    if (!p.oob) this.inBandInFlight++;
    this.stream.write(p.line);
  }

  /** Write queued commands while the connection is in sync and under the in-flight cap. */
  private pump(): void {
    while (this.queueHead < this.queue.length && this.canSend()) {
      const p = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = undefined as unknown as Pending;
      if (!p.settled) this.write(p);
    }
    if (this.queueHead === this.queue.length) {
      if (this.queueHead > 0) {
        this.queue = [];
        this.queueHead = 0;
      }
    } else if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
  }

  /** Release the caller once. The id slot (if sent) stays until the reply arrives. */
  private settle(p: Pending, outcome: QmpCommandOutcome, value: unknown, errorClass?: string): void {
    if (p.settled) return;
    p.settled = true;
    if (p.timeoutMs > 0) this.deadlines.trim(p.timeoutMs);
    if (p.onAbort !== undefined) p.signal!.removeEventListener('abort', p.onAbort);
    const hook = this.hooks.onCommand;
    if (hook) {
      try {
        hook({ command: p.command, id: p.id, ms: performance.now() - p.started, outcome, ...(errorClass !== undefined ? { errorClass } : {}) });
      } catch (err) {
        this.log?.('error', 'QMP onCommand hook threw', { err: String(err) });
      }
    }
    if (outcome === 'ok') p.resolve(value);
    else p.reject(value);
  }

  private onTimeout(p: Pending, timeout: number): void {
    if (p.settled) return;
    this.settle(p, 'timeout', new QmpTimeoutError(p.command, timeout));
    if (!p.sent) return; // never written: nothing to recover, pump() skips it
    this.log?.('warn', 'QMP command timed out; its late reply will be discarded', { command: p.command, id: p.id, timeoutMs: timeout });
    if (p.id === this.probeId) return; // the probe's own timer tears down, see resync()
    this.resync(p);
  }

  private onAbort(p: Pending): void {
    if (p.settled) return;
    this.settle(p, 'aborted', p.signal!.reason);
    if (p.sent) this.log?.('debug', 'QMP command aborted; its late reply will be discarded', { command: p.command, id: p.id });
  }

  /**
   * After a timeout: stop sending, reset QEMU's JSON parser with 0xFF and probe with a fresh id.
   * QEMU answers the 0xFF with one id-less parse error, queued in order with in-band replies, so
   * once the probe's reply is in, that error has been consumed too.
   */
  private resync(cause: Pending): void {
    if (this.st !== 'ready') return;
    this.st = 'resyncing';
    this.log?.('warn', 'QMP connection suspect after a timeout; resynchronising', { command: cause.command, id: cause.id });
    this.expectIdless++;
    this.stream.write(XFF);
    const started = Date.now();
    const probe = this.send('query-status', undefined, { timeout: 0 }, false);
    // send() queued it (state is resyncing): write it now, ahead of the held queue.
    const p = this.queue.pop()!;
    this.write(p);
    this.probeId = p.id;
    const timer = this.resyncTimeout > 0
      ? setTimeout(() => {
          this.teardown(new QmpDisconnectedError(`QEMU made no progress for ${this.resyncTimeout} ms while resynchronising after '${cause.command}' timed out (no reply to the query-status probe)`));
        }, this.resyncTimeout)
      : undefined;
    this.resyncTimer = timer;
    probe.then(
      () => this.resynced(timer, started, p.n),
      (err: unknown) => {
        clearTimeout(timer);
        if (err instanceof QmpError) this.resynced(undefined, started, p.n); // an error reply still proves the stream is in sync
      },
    );
  }

  private resynced(timer: NodeJS.Timeout | undefined, started: number, probeN: number): void {
    clearTimeout(timer);
    this.resyncTimer = undefined;
    this.probeId = undefined;
    this.expectIdless = 0;
    if (this.st !== 'resyncing') return;
    // In-band replies come in send order, so an in-band command sent before the probe that is still
    // unanswered never will be (QEMU lost its input). Free its slot and say so.
    for (const q of [...this.inflight.values()]) {
      if (q.oob || q.n >= probeN) continue;
      this.inflight.delete(q.id);
      this.inBandInFlight--;
      this.log?.('warn', 'QMP command lost: QEMU answered a later command first', { command: q.command, id: q.id });
      this.settle(q, 'disconnected', new QmpProtocolError(`no reply to '${q.command}' (id ${q.id}): QEMU answered a later command first, so this one was lost`));
    }
    this.st = 'ready';
    this.log?.('info', 'QMP connection resynchronised', { ms: Date.now() - started });
    this.pump();
  }

  private onData(chunk: Buffer): void {
    if (this.st === 'closed') return;
    try {
      this.framer.push(chunk, this.onMessage);
    } catch (err) {
      this.teardown(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private readonly onMessage = (raw: unknown): boolean => {
    const m = parseServerMessage(raw);
    switch (m.kind) {
      case 'return':
      case 'error': {
        const id = m.id;
        if (id === undefined) {
          if (m.kind === 'error' && this.expectIdless > 0) {
            this.expectIdless--;
            this.log?.('debug', 'QMP parser reset acknowledged', { desc: m.error.desc });
            return true;
          }
          const what = m.kind === 'error' ? `${m.error.class}: ${m.error.desc}` : 'a success reply';
          throw new QmpProtocolError(`id-less reply (${what}) while no id-less input was pending: a command was not understood and its reply will never come`);
        }
        const p = typeof id === 'string' ? this.inflight.get(id) : undefined;
        if (p === undefined) {
          this.log?.('warn', 'QMP reply with an unknown id dropped', { id });
          return true;
        }
        this.inflight.delete(id as string);
        if (!p.oob) this.inBandInFlight--;
        if (this.resyncTimer !== undefined) this.resyncTimer.refresh();
        if (p.settled) this.log?.('debug', 'QMP late reply discarded', { command: p.command, id: p.id });
        else if (m.kind === 'return') this.settle(p, 'ok', m.value);
        else this.settle(p, 'error', new QmpError(p.command, p.id, m.error.class, m.error.desc), m.error.class);
        if (this.queueHead < this.queue.length) this.pump();
        return this.st !== 'closed';
      }
      case 'event':
        this.dispatchEvent({ event: m.event, data: m.data, timestamp: m.timestamp, seq: ++this.seq });
        return this.st !== 'closed';
      case 'greeting':
        if (this.greetingWaiter === undefined) throw new QmpProtocolError('a second greeting arrived on an established connection');
        {
          const w = this.greetingWaiter;
          this.greetingWaiter = undefined;
          w(m.greeting);
        }
        return true;
    }
  };

  private dispatchEvent(ev: QmpEvent): void {
    if (this.historySize > 0) this.history[ev.seq % this.historySize] = ev;
    if (ev.event === 'SHUTDOWN') this.shutdownSeen = true;
    else if (ev.event === 'RESUME' || ev.event === 'RESET') this.shutdownSeen = false;
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

  private closeReason(cause?: Error): Error | undefined {
    if (this.closeRequested || this.shutdownSeen) return undefined;
    return cause === undefined
      ? new QmpDisconnectedError('QEMU closed the connection')
      : new QmpDisconnectedError(`connection failed: ${cause.message}`, { cause });
  }

  /** End the connection once: reject everything outstanding, end subscriptions, resolve `closed`, emit 'close'. */
  private teardown(err: Error | undefined, message?: string, graceful = false): void {
    if (this.st === 'closed') return;
    this.st = 'closed';
    clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    this.deadlines.clear();
    const why = message ?? (err ? err.message : 'connection closed');
    if (err) this.log?.('warn', 'QMP connection lost', { err: err.message, pending: this.inflight.size });
    for (const p of this.inflight.values()) this.settle(p, 'disconnected', new QmpDisconnectedError(why, { command: p.command, cause: err }));
    this.inflight.clear();
    this.inBandInFlight = 0;
    for (let i = this.queueHead; i < this.queue.length; i++) {
      const p = this.queue[i]!;
      this.settle(p, 'disconnected', new QmpDisconnectedError(why, { command: p.command, cause: err }));
    }
    this.queue = [];
    this.queueHead = 0;
    for (const w of [...this.waiters]) {
      this.dropWaiter(w);
      w.reject(new QmpDisconnectedError(why, { command: w.what, cause: err }));
    }
    for (const sub of [...this.subs]) sub.finish();
    if (graceful) {
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
