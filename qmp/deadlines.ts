// Command deadlines without a Node timer per command. A setTimeout + clearTimeout pair costs a few
// µs — a measurable share of a ~150 µs QMP round trip — and almost every command uses the same
// timeout. Items with equal timeouts expire in the order they were added, so each distinct timeout
// value gets a FIFO lane with a single timer armed for its head. Settled items are dropped lazily:
// from the head as soon as they settle (commands mostly finish in order, so lanes stay tiny), and
// otherwise when the lane's timer fires.

import { monotonicMs } from './monotonic.ts';

export interface Deadlined {
  /** Absolute expiry, `monotonicMs()`; set by `DeadlineQueue.add`. */
  deadline: number;
  /** Once true the item is ignored. */
  settled: boolean;
}

interface Lane<T> {
  readonly timeoutMs: number;
  items: T[];
  head: number;
  timer: NodeJS.Timeout | undefined;
}

export class DeadlineQueue<T extends Deadlined> {
  private readonly lanes = new Map<number, Lane<T>>();
  private readonly onExpire: (item: T, timeoutMs: number) => void;

  constructor(onExpire: (item: T, timeoutMs: number) => void) {
    this.onExpire = onExpire;
  }

  /** Expire `item` `timeoutMs` from now unless it is settled by then. */
  add(item: T, timeoutMs: number): void {
    item.deadline = monotonicMs() + timeoutMs;
    let lane = this.lanes.get(timeoutMs);
    if (lane === undefined) {
      lane = { timeoutMs, items: [], head: 0, timer: undefined };
      this.lanes.set(timeoutMs, lane);
    }
    lane.items.push(item);
    if (lane.timer === undefined) this.arm(lane, timeoutMs);
  }

  /** Call after settling an item of lane `timeoutMs`: drops settled items from the lane's head. */
  trim(timeoutMs: number): void {
    const lane = this.lanes.get(timeoutMs);
    if (lane === undefined) return;
    while (lane.head < lane.items.length && lane.items[lane.head]!.settled) lane.items[lane.head++] = undefined as unknown as T;
    this.compact(lane);
  }

  /** Items not yet dropped (settled ones may linger until their lane's timer fires). */
  get size(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.items.length - lane.head;
    return n;
  }

  /** Cancel every timer; nothing expires afterwards. */
  clear(): void {
    for (const lane of this.lanes.values()) clearTimeout(lane.timer);
    this.lanes.clear();
  }

  private arm(lane: Lane<T>, ms: number): void {
    lane.timer = setTimeout(() => this.fire(lane), Math.max(1, Math.ceil(ms)));
  }

  private fire(lane: Lane<T>): void {
    lane.timer = undefined;
    // Timers may fire up to a millisecond early relative to monotonicMs().
    const now = monotonicMs() + 1;
    const expired: T[] = [];
    while (lane.head < lane.items.length) {
      const item = lane.items[lane.head]!;
      if (!item.settled && item.deadline > now) break;
      lane.items[lane.head++] = undefined as unknown as T;
      if (!item.settled) expired.push(item);
    }
    this.compact(lane);
    if (lane.head < lane.items.length) this.arm(lane, lane.items[lane.head]!.deadline - monotonicMs());
    else if (this.lanes.get(lane.timeoutMs) === lane) this.lanes.delete(lane.timeoutMs);
    // Callbacks last: they may add items (a resync probe) or clear the queue (teardown).
    for (const item of expired) if (!item.settled) this.onExpire(item, lane.timeoutMs);
  }

  private compact(lane: Lane<T>): void {
    if (lane.head === lane.items.length) {
      lane.items = [];
      lane.head = 0;
    } else if (lane.head > 1024 && lane.head * 2 > lane.items.length) {
      lane.items = lane.items.slice(lane.head);
      lane.head = 0;
    }
  }
}
