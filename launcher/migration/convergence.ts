// What the source launcher does about a running migration on each progress sample — KubeVirt's
// migrationMonitor (legacy convergence path, live-migration-source.go) with QMP's numbers: progress
// is "remaining bytes went below their previous low"; no progress for progressTimeout seconds →
// abort; past the acceptable completion time (completionTimeoutPerGiB × data size) → post-copy when
// allowed and workload disruption is allowed, pause the guest when only disruption is allowed,
// else abort. Nothing is aborted in post-copy (neither side holds the whole VM then). Pure.
import type { MigrationModeValue } from '../../src/api/migration.ts';
import { MigrationMode } from '../../src/api/constants.ts';
import type { MigrationOptions } from './options.ts';

export interface ConvergenceState {
  /** When the migration started (ms). */
  readonly startMs: number;
  /** When remaining data last reached a new low (ms). */
  readonly lastProgressMs: number;
  /** The lowest remaining byte count seen; undefined before the first sample. */
  readonly watermark: number | undefined;
  /** Seconds after start when the migration is judged too slow (0 = never); doubled by a pause. */
  readonly acceptableCompletionSeconds: number;
}

export interface ProgressSample {
  readonly nowMs: number;
  /** ram.remaining from query-migrate, when the migration reports it. */
  readonly remaining: number | undefined;
}

export type ConvergenceAction =
  | { readonly kind: 'none' }
  | { readonly kind: 'postcopy'; readonly reason: string }
  | { readonly kind: 'pause'; readonly reason: string }
  | { readonly kind: 'abort'; readonly reason: string };

export function initialConvergence(startMs: number, opts: MigrationOptions, dataSizeGiB: number): ConvergenceState {
  return { startMs, lastProgressMs: startMs, watermark: undefined, acceptableCompletionSeconds: opts.completionTimeoutPerGiB * dataSizeGiB };
}

/** The next state and the action to take for one sample. `aborting`: a cancel is already under way. */
export function decideConvergence(
  state: ConvergenceState,
  sample: ProgressSample,
  ctx: { readonly options: MigrationOptions; readonly mode: MigrationModeValue; readonly aborting: boolean },
): { state: ConvergenceState; action: ConvergenceAction } {
  let next = state;
  if (sample.remaining !== undefined && (state.watermark === undefined || sample.remaining < state.watermark)) {
    next = { ...state, lastProgressMs: sample.nowMs, watermark: sample.remaining };
  }
  const none = { state: next, action: { kind: 'none' } as const };
  if (ctx.mode === MigrationMode.PostCopy || ctx.aborting) return none;
  const elapsedS = Math.floor((sample.nowMs - next.startMs) / 1000);
  const overdue = next.acceptableCompletionSeconds > 0 && elapsedS > next.acceptableCompletionSeconds;
  const o = ctx.options;
  if (overdue && o.allowWorkloadDisruption && o.allowPostCopy) {
    // Also from Paused (a guest stopped for the copy under TCG): it runs again on the target sooner.
    return { state: next, action: { kind: 'postcopy', reason: `not completed after ${next.acceptableCompletionSeconds} s: switching to post-copy` } };
  }
  if (overdue && o.allowWorkloadDisruption && ctx.mode !== MigrationMode.Paused) {
    return {
      state: { ...next, acceptableCompletionSeconds: next.acceptableCompletionSeconds * 2 },
      action: { kind: 'pause', reason: `not completed after ${next.acceptableCompletionSeconds} s: pausing the guest so the migration can complete` },
    };
  }
  const stuckS = Math.floor((sample.nowMs - next.lastProgressMs) / 1000);
  if (o.progressTimeoutSeconds > 0 && stuckS > o.progressTimeoutSeconds) {
    return { state: next, action: { kind: 'abort', reason: `Live migration stuck for ${stuckS} sec and has been aborted` } };
  }
  if (overdue) {
    return { state: next, action: { kind: 'abort', reason: `Live migration is not completed after ${next.acceptableCompletionSeconds} sec and has been aborted` } };
  }
  return none;
}
