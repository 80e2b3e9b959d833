// Prometheus' text exposition format 0.0.4 (what client_golang's promhttp writes and every
// Prometheus scrapes): per metric family one `# HELP` and one `# TYPE` line, then its samples,
// `name{label="value",...} value`. Pure.
//   - HELP text escapes `\` and newline; label values escape `\`, `"` and newline.
//   - A label with an empty value is left out: Prometheus treats `l=""` as no label at all, and
//     KubeVirt's collectors (operator-observability) drop them the same way.
//   - Families of one name are merged (collectors each report a share of a family's samples);
//     a second HELP/TYPE line for a name would make Prometheus reject the whole scrape.
//   - Values: integers as integers, NaN / +Inf / -Inf spelled as Prometheus reads them.

export const MetricType = { Counter: 'counter', Gauge: 'gauge', Histogram: 'histogram', Untyped: 'untyped' } as const;
export type MetricType = (typeof MetricType)[keyof typeof MetricType];

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Suffix of the family name (`_bucket`, `_sum`, `_count` for histograms); none for the rest. */
  readonly suffix?: string;
  readonly labels: Labels;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly samples: readonly Sample[];
}

/** The content type a scrape answer carries. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export class InvalidMetricError extends Error {
  override name = 'InvalidMetricError';
}

export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** `{a="1",b="2"}` in the labels' own order, empty values left out; '' when none remain. */
export function formatLabels(labels: Labels): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    if (v === '') continue;
    if (!LABEL_NAME.test(k) || k.startsWith('__')) throw new InvalidMetricError(`label name ${JSON.stringify(k)} is not a Prometheus label name`);
    parts.push(`${k}="${escapeLabelValue(v)}"`);
  }
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Families of the same name joined (first HELP and TYPE win), in first-seen order. */
export function mergeFamilies(families: readonly MetricFamily[]): MetricFamily[] {
  const byName = new Map<string, { help: string; type: MetricType; samples: Sample[] }>();
  for (const f of families) {
    const have = byName.get(f.name);
    if (!have) byName.set(f.name, { help: f.help, type: f.type, samples: [...f.samples] });
    else if (have.type !== f.type) throw new InvalidMetricError(`metric ${f.name} reported as both ${have.type} and ${f.type}`);
    else have.samples.push(...f.samples);
  }
  return [...byName].map(([name, f]) => ({ name, ...f }));
}

/** The exposition text of `families`; a family with no sample is left out. */
export function formatExposition(families: readonly MetricFamily[]): string {
  let out = '';
  for (const f of mergeFamilies(families)) {
    if (!METRIC_NAME.test(f.name)) throw new InvalidMetricError(`metric name ${JSON.stringify(f.name)} is not a Prometheus metric name`);
    if (f.samples.length === 0) continue;
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    const seen = new Set<string>();
    for (const s of f.samples) {
      const line = `${f.name}${s.suffix ?? ''}${formatLabels(s.labels)}`;
      // Two samples with one name and label set: Prometheus refuses the scrape; keep the first.
      if (seen.has(line)) continue;
      seen.add(line);
      out += `${line} ${formatValue(s.value)}\n`;
    }
  }
  return out;
}
