// A rate-limited work queue with client-go's semantics, the heart of every reconcile loop:
// - a key is queued at most once (adding it again while it waits is a no-op);
// - a key being processed is never handed to a second worker; adding it meanwhile marks it dirty,
//   and it is queued again when the first worker calls done();
// - failures back off per key exponentially (5 ms · 2^n, capped), on top of an overall token bucket,
//   and forget() resets a key's failures after a success.
// Unlike Kata govmm's single blocking queue, many workers pull from it at once.
// A named queue reports KubeVirt's kubevirt_workqueue_* metrics (src/metrics/workqueue.ts).
import { workQueueMetrics, type QueueTracker } from '../metrics/workqueue.ts';

export interface RateLimiterOptions {
  /** First per-key retry delay. client-go: 5 ms. */
  readonly baseDelayMs?: number;
  /** Cap of the per-key delay. client-go: 1000 s. */
  readonly maxDelayMs?: number;
  /** Overall token bucket: sustained rate (per second) and burst. client-go: 10 qps, burst 100. */
  readonly qps?: number;
  readonly burst?: number;
  /** KubeVirt's queue name (`virt-handler-vm`...): the queue's metrics carry it; unnamed queues report none. */
  readonly name?: string;
}

export class WorkQueue<K = string> {
  private readonly queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly failures = new Map<K, number>();
  private readonly timers = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  private readonly waiters: Array<(k: K | undefined) => void> = [];
  private shuttingDown = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private lastRefill = Date.now();
  private drainWaiters: Array<() => void> = [];
  private readonly metrics: QueueTracker | undefined;

  constructor(opts: RateLimiterOptions = {}) {
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 1_000_000;
    this.qps = opts.qps ?? 10;
    this.burst = opts.burst ?? 100;
    this.tokens = this.burst;
    this.metrics = opts.name ? workQueueMetrics().track(opts.name) : undefined;
  }

  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.metrics?.added(key);
    if (this.processing.has(key)) return;
    const w = this.waiters.shift();
    if (w) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.metrics?.got(key);
      w(key);
    } else {
      this.queue.push(key);
    }
  }

  /**
   * Adds the key unless it is backing off after failures (a retry timer is pending): the retry
   * reconciles the state as it is then. For notifications that a failing reconcile itself causes
   * (a launcher's domain events while its QEMU keeps failing to start), which would otherwise
   * bypass the backoff and retry in a tight loop.
   */
  addUnlessBackingOff(key: K): void {
    if ((this.failures.get(key) ?? 0) > 0 && this.timers.has(key)) return;
    this.add(key);
  }

  /** Adds the key after a delay; an earlier pending delay for the same key wins. */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) { this.add(key); return; }
    const at = Date.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => { this.timers.delete(key); this.add(key); }, delayMs);
    this.timers.set(key, { at, timer });
  }

  /** The delay the rate limiter assigns this key's next retry (and counts the failure). */
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const perItem = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** n);
    // token bucket
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastRefill) / 1000) * this.qps);
    this.lastRefill = now;
    let bucket = 0;
    if (this.tokens >= 1) this.tokens -= 1;
    else { bucket = ((1 - this.tokens) / this.qps) * 1000; this.tokens -= 1; }
    return Math.max(perItem, bucket);
  }

  addRateLimited(key: K): void {
    this.metrics?.retried();
    this.addAfter(key, this.when(key));
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, or undefined once the queue shuts down. */
  get(): Promise<K | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.metrics?.got(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: K): void {
    this.processing.delete(key);
    this.metrics?.done(key);
    if (this.dirty.has(key)) {
      // Back in line without a second add (client-go: the add was counted when the key came in).
      const w = this.shuttingDown ? undefined : this.waiters.shift();
      if (this.shuttingDown) this.dirty.delete(key);
      else if (w) { this.dirty.delete(key); this.processing.add(key); this.metrics?.got(key); w(key); }
      else this.queue.push(key);
    }
    if (this.processing.size === 0 && this.queue.length === 0) {
      const ws = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of ws) w();
    }
  }

  /** Resolves when nothing is queued or in flight (timers aside). For tests and orderly shutdown. */
  drained(): Promise<void> {
    if (this.processing.size === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.drainWaiters.push(r));
  }

  shutDown(): void {
    this.shuttingDown = true;
    this.metrics?.close();
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}

/** What one reconcile of a key asks for next. */
export interface ReconcileResult {
  /** Reconcile this key again after this long even though nothing changed (a timer-driven check). */
  readonly requeueAfterMs?: number;
  /**
   * The reconcile handed work off (a start sent to a launcher without holding the worker) whose end
   * queues the key again. Not a success that ends the key's failures: without it, a start that keeps
   * failing would reset its own backoff each time it is sent again, and retry in a tight loop.
   */
  readonly keepBackoff?: boolean;
}

/**
 * A reconcile error that retrying cannot fix (controller-runtime's reconcile.TerminalError): the
 * key is reported once and forgotten, not retried with backoff. A change to the object queues it
 * again as usual.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/**
 * Runs `workers` loops that take keys off the queue and reconcile them: controller-runtime's model,
 * one key in, one idempotent sync out. An exception retries the key with backoff, a TerminalError
 * does not; a success forgets its failures (unless it only handed work off: keepBackoff). Resolves
 * when the queue shuts down and the workers have finished.
 */
export async function runWorkers<K>(
  queue: WorkQueue<K>,
  workers: number,
  reconcile: (key: K) => Promise<ReconcileResult | void>,
  onError?: (key: K, err: unknown, retries: number, terminal: boolean) => void,
): Promise<void> {
  const loop = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        const r = await reconcile(key);
        if (!r?.keepBackoff) queue.forget(key);
        if (r?.requeueAfterMs !== undefined) queue.addAfter(key, r.requeueAfterMs);
      } catch (err) {
        const terminal = err instanceof TerminalError;
        onError?.(key, err, queue.numRequeues(key), terminal);
        if (terminal) queue.forget(key);
        else queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}
