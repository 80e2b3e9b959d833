// Event subscriptions: each subscriber gets its own bounded FIFO of the events it asked for,
// consumed as an async iterable. Delivery into the buffer is synchronous and never waits for the
// consumer, so a slow subscriber can never hold up command replies (Kata govmm's blocking-send
// flaw). When a buffer is full the loss is always reported: counted in `dropped`, passed to the
// client's overflow hook, and (with the default `overflow: 'error'`) thrown to the consumer after
// the events that did fit.
import { QmpEventOverflowError } from './errors.ts';
import type { QmpEvent } from './messages.ts';

export type EventFilter = (ev: QmpEvent) => boolean;

export interface SubscribeOptions {
  /** Event names to deliver (e.g. `['STOP', 'RESUME']`); all events when omitted. */
  names?: string | readonly string[];
  /** Further predicate; an exception from it ends the subscription with that error. */
  filter?: EventFilter;
  /** Events held for the consumer before overflow. Default 1024. */
  bufferSize?: number;
  /**
   * What a full buffer does with a new event.
   * - `'error'` (default): stop the subscription; the consumer gets the buffered events, then a
   *   `QmpEventOverflowError`. Right for consumers that must see every event (state machines).
   * - `'drop-oldest'`: keep the newest events, count the dropped ones in `dropped`. Right for
   *   consumers that only need recent state.
   */
  overflow?: 'error' | 'drop-oldest';
}

export const DEFAULT_SUBSCRIPTION_BUFFER = 1024;

/** Builds the name+predicate match used by subscriptions and waits. */
export function eventMatcher(names: string | readonly string[] | undefined, filter: EventFilter | undefined): EventFilter {
  const set = names === undefined ? undefined : new Set(typeof names === 'string' ? [names] : names);
  if (set === undefined) return filter ?? (() => true);
  if (filter === undefined) return (ev) => set.has(ev.event);
  return (ev) => set.has(ev.event) && filter(ev);
}

export class EventSubscription implements AsyncIterable<QmpEvent> {
  /** Events lost to overflow so far. */
  dropped = 0;
  readonly bufferSize: number;
  readonly overflow: 'error' | 'drop-oldest';
  private readonly match: EventFilter;
  private buf: QmpEvent[] = [];
  private head = 0;
  private waiter: { resolve: (r: IteratorResult<QmpEvent>) => void; reject: (e: unknown) => void } | undefined;
  /** Set once no more events will be accepted; the error (if any) is thrown after the buffer drains. */
  private ended = false;
  private endError: Error | undefined;
  private readonly detach: (sub: EventSubscription) => void;
  private readonly onOverflow: ((sub: EventSubscription) => void) | undefined;

  /** @internal — use `QmpClient.subscribe()`. */
  constructor(opts: SubscribeOptions, detach: (sub: EventSubscription) => void, onOverflow?: (sub: EventSubscription) => void) {
    const size = opts.bufferSize ?? DEFAULT_SUBSCRIPTION_BUFFER;
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`subscribe: bufferSize must be a positive integer, got ${size}`);
    this.bufferSize = size;
    this.overflow = opts.overflow ?? 'error';
    this.match = eventMatcher(opts.names, opts.filter);
    this.detach = detach;
    this.onOverflow = onOverflow;
  }

  /** Events buffered and not yet consumed. */
  get pending(): number {
    return this.buf.length - this.head;
  }

  /** True once the subscription accepts no more events (closed, overflowed, or the connection ended). */
  get closed(): boolean {
    return this.ended;
  }

  /** @internal Offer one event; called synchronously by the client's reader. */
  deliver(ev: QmpEvent): void {
    if (this.ended) return;
    let ok: boolean;
    try {
      ok = this.match(ev);
    } catch (err) {
      this.finish(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (!ok) return;
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      w.resolve({ value: ev, done: false });
      return;
    }
    if (this.pending >= this.bufferSize) {
      this.dropped++;
      if (this.overflow === 'drop-oldest') {
        this.head++;
        this.buf.push(ev);
        this.compact();
      } else {
        this.finish(new QmpEventOverflowError(`event subscription overflowed its buffer of ${this.bufferSize} events; dropped ${ev.event} (seq ${ev.seq}) and stopped`, this.dropped));
      }
      this.onOverflow?.(this);
      return;
    }
    this.buf.push(ev);
  }

  /** @internal No more events: the consumer drains what is buffered, then ends (or gets `err`). */
  finish(err?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.endError = err;
    this.detach(this);
    if (this.waiter !== undefined && this.pending === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      if (err) w.reject(err);
      else w.resolve({ value: undefined, done: true });
    }
  }

  /** Stop receiving events and discard the buffer; a pending `next()` ends. Idempotent. */
  close(): void {
    this.buf = [];
    this.head = 0;
    this.endError = undefined;
    if (!this.ended) this.finish();
  }

  next(): Promise<IteratorResult<QmpEvent>> {
    if (this.head < this.buf.length) {
      const value = this.buf[this.head]!;
      this.buf[this.head++] = undefined as unknown as QmpEvent;
      this.compact();
      return Promise.resolve({ value, done: false });
    }
    if (this.ended) {
      const err = this.endError;
      if (err) {
        this.endError = undefined; // thrown once; later calls just end
        return Promise.reject(err);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    if (this.waiter !== undefined) return Promise.reject(new Error('EventSubscription: next() called again before the previous call settled'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<QmpEvent>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<QmpEvent> {
    return this;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  private compact(): void {
    if (this.head === this.buf.length) {
      this.buf = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.buf.length) {
      this.buf = this.buf.slice(this.head);
      this.head = 0;
    }
  }
}
