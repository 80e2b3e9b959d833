// The QMP connection as a state machine without I/O (python qemu.qmp's protocol.py, sans-I/O):
// no sockets, no timers, no emitter. It owns the connection state, command ids, the in-flight and
// held commands, the resync procedure and the id-less-error accounting, and it classifies every
// server message. Each input (a server message, a command to send, a timeout, an abort, the end of
// the stream) returns the effects the I/O shell (client.ts) must apply, in order: bytes to write,
// callers to release, events to deliver, the resync deadline to (re)arm or drop, log lines, and the
// end of the connection.
//
// Rules (python qemu.qmp / libvirt / govmm, reference/anchors.md §3):
// - In-band commands are written while the connection is in sync (`handshake`, `ready`) and fewer
//   than `maxInFlight` are unanswered; the rest are held in send order. `exec-oob` is written at once.
// - A timeout or abort releases the caller; a written command keeps its id slot until its late
//   reply arrives, which is then discarded.
// - A timeout of a written command makes the connection suspect (`resyncing`): nothing more is
//   written, 0xFF resets QEMU's JSON parser (answered by one id-less error, in order with in-band
//   replies) and `query-status` under a fresh id probes the stream. Its reply, success or error,
//   proves sync: in-band commands written before the probe and still unanswered were lost (in-band
//   replies come in send order) and are failed, held commands flow. Every reply while resyncing is
//   progress and re-arms the resync deadline; its expiry ends the connection.
// - An id-less error no 0xFF provoked, or an id-less success, means QEMU did not understand one of
//   our inputs and that command's reply will never come: protocol error, connection closed.
// - Replies with an unknown id are logged and dropped. A second greeting is a protocol error.
// - The end of the stream is expected after close()/quit() or after a SHUTDOWN that no RESUME or
//   RESET followed; any other end is reported as QmpDisconnectedError.
import { QmpDisconnectedError, QmpError, QmpProtocolError, QmpTimeoutError } from './errors.ts';
import { parseServerMessage, type QmpGreeting, type QmpServerMessage } from './messages.ts';

export type QmpConnectionState = 'handshake' | 'ready' | 'resyncing' | 'closed';
export type QmpCommandOutcome = 'ok' | 'error' | 'timeout' | 'aborted' | 'disconnected';
export type QmpLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One command the protocol has numbered. `ctx` is the shell's handle for the caller. */
export interface QmpCommand<C> {
  readonly id: string;
  /** Send order: the numeric part of the id. */
  readonly n: number;
  readonly command: string;
  readonly oob: boolean;
  /** The JSON line written for it, `\n`-terminated. */
  readonly line: string;
  readonly ctx: C;
  /** Written to the stream (set by the protocol). */
  sent: boolean;
  /** The caller has been released (set by the protocol). */
  settled: boolean;
}

export type QmpEffect<C> =
  /** Write these bytes: a command line, or the 0xFF parser reset. */
  | { readonly kind: 'write'; readonly data: string | Uint8Array }
  /** Release the command's caller: resolve with `value` when `outcome` is `ok`, else reject with it. */
  | { readonly kind: 'settle'; readonly cmd: QmpCommand<C>; readonly outcome: QmpCommandOutcome; readonly value: unknown; readonly errorClass?: string }
  /** The server's greeting arrived (handshake only). */
  | Extract<QmpServerMessage, { kind: 'greeting' }>
  /** An event to deliver, in arrival order. */
  | Extract<QmpServerMessage, { kind: 'event' }>
  /** (Re)start the resync deadline: `resyncExpired()` unless progress re-arms it within `ms`. */
  | { readonly kind: 'arm-resync'; readonly ms: number }
  | { readonly kind: 'disarm-resync' }
  | { readonly kind: 'log'; readonly level: QmpLogLevel; readonly msg: string; readonly fields?: Record<string, unknown> }
  /** The connection is over (every caller already released): undefined `error` means an expected end; `why` is for other waiters. */
  | { readonly kind: 'closed'; readonly error: Error | undefined; readonly why: string };

export interface QmpProtocolOptions {
  /** In-band commands written before their replies arrive. Default 8 (the QMP spec's limit). */
  maxInFlight?: number;
  /** Resync deadline without progress, ms; 0 = none. Default 10 000. */
  resyncTimeout?: number;
  /** Prefix of command ids. Default `q`. */
  idPrefix?: string;
  /** Clock for the resync duration logged; default `Date.now`. */
  now?: () => number;
}

/** 0xFF never occurs in UTF-8: QEMU's JSON lexer resets on it and answers with one id-less error. */
export const PARSER_RESET: Uint8Array = Uint8Array.of(0xff);

/** The capabilities to enable: `oob` when wanted and offered. */
export function capabilitiesToEnable(greeting: QmpGreeting, wantOob: boolean): string[] {
  return wantOob && greeting.capabilities.includes('oob') ? ['oob'] : [];
}

type Out<C> = QmpEffect<C>[];

export class QmpProtocol<C> {
  private readonly maxInFlight: number;
  private readonly resyncTimeout: number;
  private readonly idPrefix: string;
  private readonly now: () => number;

  private st: QmpConnectionState = 'handshake';
  private greeted = false;
  private nextId = 0;
  /** Written and unanswered, by id (including released callers whose late reply is awaited). */
  private readonly inflight = new Map<string, QmpCommand<C>>();
  private inBandInFlight = 0;
  /** Held in-band commands in send order; `queueHead` is the first not yet taken. */
  private queue: QmpCommand<C>[] = [];
  private queueHead = 0;
  /** Id-less errors we provoked (0xFF) and will consume. */
  private expectIdless = 0;
  /** The resync probe while one is unanswered; it has no caller and never surfaces as `settle`. */
  private probe: QmpCommand<C> | undefined;
  private resyncCause = '';
  private resyncStarted = 0;
  private closeExpected = false;
  /** A SHUTDOWN was the last run-state event: an EOF now is QEMU exiting as asked. */
  private shutdownSeen = false;

  constructor(opts: QmpProtocolOptions = {}) {
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 8);
    this.resyncTimeout = opts.resyncTimeout ?? 10_000;
    this.idPrefix = opts.idPrefix ?? 'q';
    this.now = opts.now ?? Date.now;
  }

  get state(): QmpConnectionState {
    return this.st;
  }

  /** Commands written and not yet answered. */
  get inFlight(): number {
    return this.inflight.size;
  }

  /** In-band commands held back (not yet written), released callers included until skipped. */
  get held(): number {
    return this.queue.length - this.queueHead;
  }

  /** Number a command and write or hold it. On a closed connection it is released at once. */
  request(command: string, args: object | undefined, oob: boolean, ctx: C): { cmd: QmpCommand<C>; effects: QmpEffect<C>[] } {
    const out: Out<C> = [];
    const cmd = this.newCommand(command, args, oob, ctx);
    if (this.st === 'closed') this.settle(out, cmd, 'disconnected', new QmpDisconnectedError('connection is closed', { command }));
    else if (oob || (this.canSend() && this.queueHead === this.queue.length)) this.write(out, cmd);
    else this.queue.push(cmd);
    return { cmd, effects: out };
  }

  /** Capabilities negotiated: `handshake` → `ready`; held commands flow. */
  negotiated(): QmpEffect<C>[] {
    const out: Out<C> = [];
    if (this.st !== 'handshake') return out;
    this.st = 'ready';
    this.pump(out);
    return out;
  }

  /** One JSON value the framer parsed from the stream. */
  receive(raw: unknown): QmpEffect<C>[] {
    const out: Out<C> = [];
    if (this.st === 'closed') return out;
    let m: QmpServerMessage;
    try {
      m = parseServerMessage(raw);
    } catch (err) {
      this.end(out, err as Error);
      return out;
    }
    switch (m.kind) {
      case 'return':
      case 'error':
        this.onReply(out, m);
        break;
      case 'event':
        if (m.event === 'SHUTDOWN') this.shutdownSeen = true;
        else if (m.event === 'RESUME' || m.event === 'RESET') this.shutdownSeen = false;
        out.push(m);
        break;
      case 'greeting':
        if (this.st !== 'handshake' || this.greeted) {
          this.end(out, new QmpProtocolError('a second greeting arrived on an established connection'));
        } else {
          this.greeted = true;
          out.push(m);
        }
        break;
    }
    return out;
  }

  /** The command's timeout expired. Releases its caller; a written command makes the connection suspect. */
  timeout(cmd: QmpCommand<C>, timeoutMs: number): QmpEffect<C>[] {
    const out: Out<C> = [];
    if (cmd.settled) return out;
    this.settle(out, cmd, 'timeout', new QmpTimeoutError(cmd.command, timeoutMs));
    if (!cmd.sent) return out; // never written: nothing to recover, pump() skips it
    out.push({ kind: 'log', level: 'warn', msg: 'QMP command timed out; its late reply will be discarded', fields: { command: cmd.command, id: cmd.id, timeoutMs } });
    this.resync(out, cmd);
    return out;
  }

  /** The caller gave up (AbortSignal): rejected with `reason`; no resync, the late reply is discarded. */
  abort(cmd: QmpCommand<C>, reason: unknown): QmpEffect<C>[] {
    const out: Out<C> = [];
    if (cmd.settled) return out;
    this.settle(out, cmd, 'aborted', reason);
    if (cmd.sent) out.push({ kind: 'log', level: 'debug', msg: 'QMP command aborted; its late reply will be discarded', fields: { command: cmd.command, id: cmd.id } });
    return out;
  }

  /** The resync deadline passed without progress: the connection is dead. */
  resyncExpired(): QmpEffect<C>[] {
    const out: Out<C> = [];
    if (this.st !== 'resyncing' || this.resyncTimeout <= 0) return out; // stale, or no deadline was armed
    this.end(out, new QmpDisconnectedError(`QEMU made no progress for ${this.resyncTimeout} ms while resynchronising after '${this.resyncCause}' timed out (no reply to the query-status probe)`));
    return out;
  }

  /** The end of the stream that follows now is asked for (`quit` sent). */
  expectClose(): void {
    this.closeExpected = true;
  }

  /** The stream ended or failed; the reason is reported unless the end was expected. */
  streamEnded(cause?: Error): QmpEffect<C>[] {
    const out: Out<C> = [];
    const expected = this.closeExpected || this.shutdownSeen;
    this.end(out, expected ? undefined : cause === undefined ? new QmpDisconnectedError('QEMU closed the connection') : new QmpDisconnectedError(`connection failed: ${cause.message}`, { cause }));
    return out;
  }

  /** The client ends the connection: an expected end; outstanding callers are told `message`. */
  close(message = 'connection closed by the client'): QmpEffect<C>[] {
    const out: Out<C> = [];
    this.closeExpected = true;
    this.end(out, undefined, message);
    return out;
  }

  /** The connection failed for `err` (framing, handshake). */
  fail(err: Error): QmpEffect<C>[] {
    const out: Out<C> = [];
    this.end(out, err);
    return out;
  }

  // ————————————————————————————————————————————————————————————— internals

  private newCommand(command: string, args: object | undefined, oob: boolean, ctx: C): QmpCommand<C> {
    const n = ++this.nextId;
    const id = this.idPrefix + n;
    const msg = oob ? (args === undefined ? { 'exec-oob': command, id } : { 'exec-oob': command, arguments: args, id }) : args === undefined ? { execute: command, id } : { execute: command, arguments: args, id };
    return { id, n, command, oob, line: JSON.stringify(msg) + '\n', ctx, sent: false, settled: false };
  }

  private canSend(): boolean {
    return (this.st === 'ready' || this.st === 'handshake') && this.inBandInFlight < this.maxInFlight;
  }

  private write(out: Out<C>, cmd: QmpCommand<C>): void {
    cmd.sent = true;
    this.inflight.set(cmd.id, cmd);
    if (!cmd.oob) this.inBandInFlight++;
    out.push({ kind: 'write', data: cmd.line });
  }

  /** Write held commands while the connection is in sync and under the in-flight cap. */
  private pump(out: Out<C>): void {
    while (this.queueHead < this.queue.length && this.canSend()) {
      const cmd = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = undefined as unknown as QmpCommand<C>;
      if (!cmd.settled) this.write(out, cmd);
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

  /** Release the caller once (the probe has none). The id slot, if written, stays until the reply. */
  private settle(out: Out<C>, cmd: QmpCommand<C>, outcome: QmpCommandOutcome, value: unknown, errorClass?: string): void {
    if (cmd.settled) return;
    cmd.settled = true;
    if (cmd === this.probe) return;
    out.push(errorClass === undefined ? { kind: 'settle', cmd, outcome, value } : { kind: 'settle', cmd, outcome, value, errorClass });
  }

  private onReply(out: Out<C>, m: Extract<QmpServerMessage, { kind: 'return' | 'error' }>): void {
    const id = m.id;
    if (id === undefined) {
      if (m.kind === 'error' && this.expectIdless > 0) {
        this.expectIdless--;
        out.push({ kind: 'log', level: 'debug', msg: 'QMP parser reset acknowledged', fields: { desc: m.error.desc } });
        return;
      }
      const what = m.kind === 'error' ? `${m.error.class}: ${m.error.desc}` : 'a success reply';
      this.end(out, new QmpProtocolError(`id-less reply (${what}) while no id-less input was pending: a command was not understood and its reply will never come`));
      return;
    }
    const cmd = typeof id === 'string' ? this.inflight.get(id) : undefined;
    if (cmd === undefined) {
      out.push({ kind: 'log', level: 'warn', msg: 'QMP reply with an unknown id dropped', fields: { id } });
      return;
    }
    this.inflight.delete(id as string);
    if (!cmd.oob) this.inBandInFlight--;
    if (cmd === this.probe) {
      this.resynced(out, cmd); // a success or an error: either proves the stream is in sync
      return;
    }
    if (this.st === 'resyncing' && this.resyncTimeout > 0) out.push({ kind: 'arm-resync', ms: this.resyncTimeout });
    if (cmd.settled) out.push({ kind: 'log', level: 'debug', msg: 'QMP late reply discarded', fields: { command: cmd.command, id: cmd.id } });
    else if (m.kind === 'return') this.settle(out, cmd, 'ok', m.value);
    else this.settle(out, cmd, 'error', new QmpError(cmd.command, cmd.id, m.error.class, m.error.desc), m.error.class);
    if (this.queueHead < this.queue.length) this.pump(out);
  }

  /**
   * After a timeout: stop writing, reset QEMU's JSON parser with 0xFF and probe with a fresh id,
   * ahead of the held commands. QEMU answers the 0xFF with one id-less parse error, in order with
   * in-band replies, so once the probe's reply is in, that error has been consumed too.
   */
  private resync(out: Out<C>, cause: QmpCommand<C>): void {
    if (this.st !== 'ready') return;
    this.st = 'resyncing';
    out.push({ kind: 'log', level: 'warn', msg: 'QMP connection suspect after a timeout; resynchronising', fields: { command: cause.command, id: cause.id } });
    this.expectIdless++;
    out.push({ kind: 'write', data: PARSER_RESET });
    const probe = this.newCommand('query-status', undefined, false, undefined as C);
    this.probe = probe;
    this.resyncCause = cause.command;
    this.resyncStarted = this.now();
    this.write(out, probe);
    if (this.resyncTimeout > 0) out.push({ kind: 'arm-resync', ms: this.resyncTimeout });
  }

  private resynced(out: Out<C>, probe: QmpCommand<C>): void {
    probe.settled = true;
    this.probe = undefined;
    this.expectIdless = 0;
    out.push({ kind: 'disarm-resync' });
    if (this.st !== 'resyncing') return;
    // In-band replies come in send order, so an in-band command written before the probe that is
    // still unanswered never will be (QEMU lost its input). Free its slot and say so.
    for (const q of [...this.inflight.values()]) {
      if (q.oob || q.n >= probe.n) continue;
      this.inflight.delete(q.id);
      this.inBandInFlight--;
      out.push({ kind: 'log', level: 'warn', msg: 'QMP command lost: QEMU answered a later command first', fields: { command: q.command, id: q.id } });
      this.settle(out, q, 'disconnected', new QmpProtocolError(`no reply to '${q.command}' (id ${q.id}): QEMU answered a later command first, so this one was lost`));
    }
    this.st = 'ready';
    out.push({ kind: 'log', level: 'info', msg: 'QMP connection resynchronised', fields: { ms: this.now() - this.resyncStarted } });
    this.pump(out);
  }

  /** End the connection once: every outstanding caller is released, then `closed`. */
  private end(out: Out<C>, err: Error | undefined, message?: string): void {
    if (this.st === 'closed') return;
    this.st = 'closed';
    const why = message ?? (err ? err.message : 'connection closed');
    if (err) out.push({ kind: 'log', level: 'warn', msg: 'QMP connection lost', fields: { err: err.message, pending: this.inflight.size } });
    for (const cmd of this.inflight.values()) this.settle(out, cmd, 'disconnected', new QmpDisconnectedError(why, { command: cmd.command, cause: err }));
    this.inflight.clear();
    this.inBandInFlight = 0;
    for (let i = this.queueHead; i < this.queue.length; i++) {
      const cmd = this.queue[i]!;
      this.settle(out, cmd, 'disconnected', new QmpDisconnectedError(why, { command: cmd.command, cause: err }));
    }
    this.queue = [];
    this.queueHead = 0;
    this.probe = undefined;
    this.expectIdless = 0;
    out.push({ kind: 'closed', error: err, why });
  }
}
