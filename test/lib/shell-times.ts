// The test runner's CPU figures: per file, POSIX `times` prints the shell's own user and system time on
// its first line and its reaped children's on the second, each as `<m>m<s>s` (dash: `0m1.250000s`,
// bash: `0m1.250s`); for the run, how busy the whole machine was (/proc/stat). Pure.

/** The children's user + system CPU in ms from `times` output; undefined when it is not there. */
export function childrenCpuMs(times: string): number | undefined {
  const line = times.split('\n').map((l) => l.trim()).filter(Boolean)[1];
  if (!line) return undefined;
  const parts = line.split(/\s+/).map((p) => /^(\d+)m(\d+(?:\.\d+)?)s$/.exec(p));
  if (parts.length !== 2 || parts.some((m) => !m)) return undefined;
  return Math.round(parts.reduce((ms, m) => ms + (Number(m![1]) * 60 + Number(m![2])) * 1000, 0));
}

/** The whole machine's CPU time so far (/proc/stat), in clock ticks. */
export interface MachineCpu { readonly busy: number; readonly total: number; readonly cores: number }

/** /proc/stat: the `cpu` line's busy (all but idle and iowait) and total ticks, and the `cpuN` lines' count. */
export function parseProcStat(text: string): MachineCpu | undefined {
  const lines = text.split('\n');
  const all = lines.find((l) => /^cpu\s/.test(l));
  if (!all) return undefined;
  const v = all.trim().split(/\s+/).slice(1).map(Number);
  if (v.length < 4 || v.some((x) => !Number.isFinite(x))) return undefined;
  // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user and nice).
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = v[3]! + (v[4] ?? 0);
  return { busy: total - idle, total, cores: lines.filter((l) => /^cpu\d+\s/.test(l)).length };
}

/** How busy the machine was between two readings: the fraction of all cores, and CPU-seconds (100 ticks a second). */
export function machineBusy(a: MachineCpu | undefined, b: MachineCpu | undefined): { fraction: number; busySeconds: number; cores: number } | undefined {
  if (!a || !b || b.total <= a.total) return undefined;
  return { fraction: (b.busy - a.busy) / (b.total - a.total), busySeconds: (b.busy - a.busy) / 100, cores: b.cores };
}
