// A process's metrics: counters, gauges and histograms with labels (client_golang's *Vec), and
// collectors that compute families at scrape time (KubeVirt's operatormetrics.Collector: the VMI
// stats are asked for when Prometheus scrapes, never kept). One Registry per process
// (`defaultRegistry`); a component's /metrics answers `formatExposition(await registry.gather())`.
import { MetricType, type Labels, type MetricFamily, type Sample } from './exposition.ts';

const key = (labelNames: readonly string[], labels: Labels) => JSON.stringify(labelNames.map((n) => labels[n] ?? ''));

function labelsOf(labelNames: readonly string[], k: string): Record<string, string> {
  const values = JSON.parse(k) as string[];
  return Object.fromEntries(labelNames.map((n, i) => [n, values[i] ?? '']));
}

abstract class Vec<T> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  protected readonly children = new Map<string, T>();
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }
  abstract collect(): MetricFamily;
  /** Forgets every label set (client_golang's Reset). */
  reset(): void { this.children.clear(); }
}

export class CounterVec extends Vec<number> {
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new RangeError(`counter ${this.name} cannot decrease (inc by ${by})`);
    const k = key(this.labelNames, labels);
    this.children.set(k, (this.children.get(k) ?? 0) + by);
  }
  get(labels: Labels = {}): number { return this.children.get(key(this.labelNames, labels)) ?? 0; }
  collect(): MetricFamily {
    return { name: this.name, help: this.help, type: MetricType.Counter, samples: [...this.children].map(([k, value]) => ({ labels: labelsOf(this.labelNames, k), value })) };
  }
}

export class GaugeVec extends Vec<number> {
  set(labels: Labels, value: number): void { this.children.set(key(this.labelNames, labels), value); }
  inc(labels: Labels = {}, by = 1): void {
    const k = key(this.labelNames, labels);
    this.children.set(k, (this.children.get(k) ?? 0) + by);
  }
  get(labels: Labels = {}): number | undefined { return this.children.get(key(this.labelNames, labels)); }
  collect(): MetricFamily {
    return { name: this.name, help: this.help, type: MetricType.Gauge, samples: [...this.children].map(([k, value]) => ({ labels: labelsOf(this.labelNames, k), value })) };
  }
}

interface HistogramChild { counts: number[]; sum: number; count: number }

/** Cumulative `_bucket{le}` counts, `_sum` and `_count`, as client_golang writes a histogram. */
export class HistogramVec extends Vec<HistogramChild> {
  readonly buckets: readonly number[];
  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }
  observe(labels: Labels, value: number): void {
    const k = key(this.labelNames, labels);
    let c = this.children.get(k);
    if (!c) { c = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }; this.children.set(k, c); }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) c.counts[i]!++;
    c.sum += value;
    c.count++;
  }
  collect(): MetricFamily {
    const samples: Sample[] = [];
    for (const [k, c] of this.children) {
      const labels = labelsOf(this.labelNames, k);
      this.buckets.forEach((le, i) => samples.push({ suffix: '_bucket', labels: { ...labels, le: formatLe(le) }, value: c.counts[i]! }));
      samples.push({ suffix: '_bucket', labels: { ...labels, le: '+Inf' }, value: c.count });
      samples.push({ suffix: '_sum', labels, value: c.sum });
      samples.push({ suffix: '_count', labels, value: c.count });
    }
    return { name: this.name, help: this.help, type: MetricType.Histogram, samples };
  }
}

/** A bucket bound as client_golang prints it (Go's %g-like shortest form). */
function formatLe(le: number): string {
  return String(le);
}

/** client_golang's ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => Number((start * factor ** i).toPrecision(12)));
}

/** Families computed when scraped. */
export type Collector = () => readonly MetricFamily[] | Promise<readonly MetricFamily[]>;

export class Registry {
  private readonly metrics = new Map<string, Vec<unknown>>();
  private readonly collectors: Collector[] = [];

  /** Registers a metric once per name; registering the same name again returns the first. */
  register<T extends Vec<unknown>>(metric: T): T {
    const have = this.metrics.get(metric.name);
    if (have) return have as T;
    this.metrics.set(metric.name, metric);
    return metric;
  }

  /** Adds a collector; the returned function removes it again. */
  addCollector(c: Collector): () => void {
    this.collectors.push(c);
    return () => { const i = this.collectors.indexOf(c); if (i >= 0) this.collectors.splice(i, 1); };
  }

  async gather(): Promise<MetricFamily[]> {
    const out: MetricFamily[] = [...this.metrics.values()].map((m) => m.collect());
    for (const families of await Promise.all(this.collectors.map((c) => c()))) out.push(...families);
    return out;
  }
}

/** The process's registry (client_golang's DefaultRegisterer). */
export const defaultRegistry = new Registry();
