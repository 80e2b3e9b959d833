// Benchmark helpers: robust statistics and a report line that always shows a figure beside a
// baseline measured in the same run, as a ratio, against an explicit target. Results are also
// written as JSON to bench/results/<bench>.json (git-ignored).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { join } from 'node:path';

/** Sorted copy. */
const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) throw new RangeError('percentile of an empty sample');
  const s = sorted(xs);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError('median of an empty sample');
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const p99 = (xs: readonly number[]): number => percentile(xs, 99);

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** What "good" means for a figure (lower is better): a bound on the ratio to the baseline and/or on the value. */
export interface Target {
  maxRatio?: number;
  maxValue?: number;
}

export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline: number;
  baselineName: string;
  target?: Target;
  /** Extra numbers worth keeping (sample size, min, max…). */
  details?: Record<string, number | string>;
}

export interface ReportedFigure extends Figure {
  ratio: number;
  met: boolean | undefined;
}

const figures: ReportedFigure[] = [];

const fmt = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3));

/** Print one figure beside its baseline and record it for `saveResults`. */
export function report(f: Figure): ReportedFigure {
  const ratio = f.value / f.baseline;
  const checks: boolean[] = [];
  const targets: string[] = [];
  if (f.target?.maxRatio !== undefined) { checks.push(ratio <= f.target.maxRatio); targets.push(`≤ ${f.target.maxRatio}×`); }
  if (f.target?.maxValue !== undefined) { checks.push(f.value <= f.target.maxValue); targets.push(`≤ ${f.target.maxValue} ${f.unit}`); }
  const met = checks.length ? checks.every(Boolean) : undefined;
  const verdict = met === undefined ? '' : `  target ${targets.join(' and ')}: ${met ? 'met' : 'MISSED'}`;
  console.log(`${f.name.padEnd(44)} ${fmt(f.value).padStart(9)} ${f.unit.padEnd(3)} vs ${f.baselineName} ${fmt(f.baseline)} ${f.unit} = ${ratio.toFixed(2)}×${verdict}`);
  const r: ReportedFigure = { ...f, ratio, met };
  figures.push(r);
  return r;
}

/** Write every figure reported so far to bench/results/<bench>.json; returns false if any target was missed. */
export function saveResults(bench: string): boolean {
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${bench}.json`);
  writeFileSync(file, JSON.stringify({
    bench,
    date: new Date().toISOString(),
    host: hostname(),
    cpus: cpus().length,
    node: process.version,
    figures,
  }, null, 2) + '\n');
  console.log(`results: ${file}`);
  return figures.every((f) => f.met !== false);
}

/** Time an async function in ms. */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}
