// The test runner's CPU figure per file: POSIX `times` prints the shell's own user and system time on
// its first line and its reaped children's on the second, each as `<m>m<s>s` (dash: `0m1.250000s`,
// bash: `0m1.250s`). Pure.

/** The children's user + system CPU in ms from `times` output; undefined when it is not there. */
export function childrenCpuMs(times: string): number | undefined {
  const line = times.split('\n').map((l) => l.trim()).filter(Boolean)[1];
  if (!line) return undefined;
  const parts = line.split(/\s+/).map((p) => /^(\d+)m(\d+(?:\.\d+)?)s$/.exec(p));
  if (parts.length !== 2 || parts.some((m) => !m)) return undefined;
  return Math.round(parts.reduce((ms, m) => ms + (Number(m![1]) * 60 + Number(m![2])) * 1000, 0));
}
