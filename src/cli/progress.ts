// The progress of a copy, as `qvirt image import` shows it: on a terminal one line redrawn in place
// (`\r[#####     ]  50% 5.0 MiB / 10.0 MiB`, a newline at the end), elsewhere a plain line at every
// quarter so logs stay short. Pure: the caller writes what `render` returns.

export const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;

export const PROGRESS_BAR_WIDTH = 30;

export interface ProgressState {
  /** The last percentage drawn (-1: nothing yet). */
  readonly lastPct: number;
}

export const initialProgress: ProgressState = { lastPct: -1 };

/** What to write for `done` of `total` bytes (undefined: nothing new), and the state after it. */
export function renderProgress(state: ProgressState, done: number, total: number, tty: boolean): { text: string | undefined; state: ProgressState } {
  const pct = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 100;
  if (pct === state.lastPct) return { text: undefined, state };
  const next = { lastPct: pct };
  if (tty) {
    const fill = Math.round((pct / 100) * PROGRESS_BAR_WIDTH);
    const bar = `\r[${'#'.repeat(fill)}${' '.repeat(PROGRESS_BAR_WIDTH - fill)}] ${String(pct).padStart(3)}% ${mib(done)} / ${mib(total)}`;
    return { text: pct === 100 ? `${bar}\n` : bar, state: next };
  }
  // A line each time a quarter is reached, even when a chunk jumps over its exact percentage.
  return { text: Math.floor(pct / 25) !== Math.floor(state.lastPct / 25) ? `${pct}% ${mib(done)} / ${mib(total)}\n` : undefined, state: next };
}
