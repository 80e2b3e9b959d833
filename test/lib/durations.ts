// The order test/run.ts starts files in: longest first by what earlier runs took, so that no long file
// starts last and leaves its lane running alone at the end of the run (longest-processing-time-first
// scheduling on the runner's lanes). Durations are a hint: a missing, stale or malformed record changes
// the order, never which files run.

/** `{ "seconds": { "<file>": <s> } }` → the durations in it; anything else (or a bad entry) is left out. */
export function parseDurations(text: string): ReadonlyMap<string, number> {
  const out = new Map<string, number>();
  let doc: unknown;
  try { doc = JSON.parse(text); } catch { return out; }
  const seconds = (doc as { seconds?: unknown } | null)?.seconds;
  if (!seconds || typeof seconds !== 'object') return out;
  for (const [file, s] of Object.entries(seconds)) if (typeof s === 'number' && Number.isFinite(s) && s >= 0) out.set(file, s);
  return out;
}

/** `files` longest first by `known`; a file without a duration counts as the median of the known ones. Ties keep path order. */
export function longestFirst(files: readonly string[], known: ReadonlyMap<string, number>): string[] {
  const values = files.map((f) => known.get(f)).filter((s): s is number => s !== undefined).sort((a, b) => a - b);
  const median = values.length ? values[Math.floor(values.length / 2)]! : 0;
  const weight = (f: string) => known.get(f) ?? median;
  return [...files].sort((a, b) => weight(b) - weight(a) || (a < b ? -1 : a > b ? 1 : 0));
}
