// KubeVirt's work-queue metrics (pkg/monitoring/metrics/common/workqueue: client-go's
// workqueue.MetricsProvider under the kubevirt_ prefix), for every named WorkQueue of the process:
// depth, adds, retries, how long a key waited and how long its reconcile took, and the stuck-worker
// signals (longest running processor, unfinished work). A queue's name is KubeVirt's
// (`virt-handler-vm`, `virt-controller-vmi`...). Queues of one name (the local mode's several node
// agents) add up under it, as one process's client-go queues of one name would.
import { MetricType, type MetricFamily } from './exposition.ts';
import { CounterVec, HistogramVec, defaultRegistry, exponentialBuckets, type Registry } from './registry.ts';

const BUCKETS = exponentialBuckets(10e-9, 10, 10);

export class WorkQueueMetricFamilies {
  readonly adds = new CounterVec('kubevirt_workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']);
  readonly retries = new CounterVec('kubevirt_workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']);
  readonly latency = new HistogramVec('kubevirt_workqueue_queue_duration_seconds', 'How long an item stays in workqueue before being requested.', ['name'], BUCKETS);
  readonly workDuration = new HistogramVec('kubevirt_workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes.', ['name'], BUCKETS);
  private readonly trackers = new Set<QueueTracker>();
  private readonly now: () => number;

  constructor(registry: Registry = defaultRegistry, now: () => number = () => performance.now()) {
    this.now = now;
    for (const m of [this.adds, this.retries, this.latency, this.workDuration]) registry.register(m);
    registry.addCollector(() => this.collect());
  }

  /** A queue's tracker; its depth and running work count until close(). */
  track(name: string): QueueTracker {
    const t = new QueueTracker(name, this, this.now);
    this.trackers.add(t);
    return t;
  }

  untrack(t: QueueTracker): void {
    this.trackers.delete(t);
  }

  /** Depth, longest running processor and unfinished work, as they are now. */
  collect(): MetricFamily[] {
    const depth = new Map<string, number>();
    const longest = new Map<string, number>();
    const unfinished = new Map<string, number>();
    const now = this.now();
    for (const t of this.trackers) {
      depth.set(t.name, (depth.get(t.name) ?? 0) + t.depth);
      let total = 0, max = 0;
      for (const started of t.running()) { const s = (now - started) / 1000; total += s; max = Math.max(max, s); }
      unfinished.set(t.name, (unfinished.get(t.name) ?? 0) + total);
      longest.set(t.name, Math.max(longest.get(t.name) ?? 0, max));
    }
    const family = (name: string, help: string, m: Map<string, number>): MetricFamily =>
      ({ name, help, type: MetricType.Gauge, samples: [...m].map(([q, value]) => ({ labels: { name: q }, value })) });
    return [
      family('kubevirt_workqueue_depth', 'Current depth of workqueue', depth),
      family('kubevirt_workqueue_longest_running_processor_seconds', 'How many seconds has the longest running processor for workqueue been running.', longest),
      family('kubevirt_workqueue_unfinished_work_seconds', 'How many seconds of work have been in progress without being observed by work_duration. Large values indicate stuck threads. The number of stuck threads can be deduced by observing the rate at which this value increases.', unfinished),
    ];
  }
}

/** One queue's share: client-go's queueMetrics (add/get/done/retry), keyed by the queue's keys. */
export class QueueTracker {
  readonly name: string;
  depth = 0;
  private readonly families: WorkQueueMetricFamilies;
  private readonly now: () => number;
  private readonly addTimes = new Map<unknown, number>();
  private readonly processingStart = new Map<unknown, number>();

  constructor(name: string, families: WorkQueueMetricFamilies, now: () => number) {
    this.name = name;
    this.families = families;
    this.now = now;
  }

  /** A key was queued (not one already waiting). */
  added(key: unknown): void {
    this.depth++;
    this.families.adds.inc({ name: this.name });
    if (!this.addTimes.has(key)) this.addTimes.set(key, this.now());
  }

  /** A worker took the key. */
  got(key: unknown): void {
    this.depth = Math.max(0, this.depth - 1);
    const now = this.now();
    const at = this.addTimes.get(key);
    if (at !== undefined) {
      this.families.latency.observe({ name: this.name }, (now - at) / 1000);
      this.addTimes.delete(key);
    }
    this.processingStart.set(key, now);
  }

  /** The worker is done with the key. */
  done(key: unknown): void {
    const started = this.processingStart.get(key);
    if (started === undefined) return;
    this.families.workDuration.observe({ name: this.name }, (this.now() - started) / 1000);
    this.processingStart.delete(key);
  }

  retried(): void {
    this.families.retries.inc({ name: this.name });
  }

  running(): Iterable<number> {
    return this.processingStart.values();
  }

  close(): void {
    this.families.untrack(this);
  }
}

let families: WorkQueueMetricFamilies | undefined;

/** The process's work-queue metrics, registered in the default registry on first use. */
export function workQueueMetrics(): WorkQueueMetricFamilies {
  families ??= new WorkQueueMetricFamilies();
  return families;
}
