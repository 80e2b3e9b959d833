// Crash-loop backoff of VM starts (pkg/virt-controller/watch/vm/vm.go calculateStartBackoffTime,
// syncStartFailureStatus): a VMI that ends (Succeeded/Failed) without ever having been Running
// counts as a failed start; the next start waits interval×count² seconds plus up to half of that
// again at random, at most 300 s. A VMI that reached Running clears the record.
import { MAX_CRASH_LOOP_BACKOFF_DELAY_SECONDS, RunStrategy, VMIPhase } from '../../src/api/constants.ts';
import type { VirtualMachineInstance, VirtualMachineStartFailure } from '../../src/api/types.ts';

/** A source of uniform integers in [0, n) — Go's `rand.Intn`. Inject a seeded one in tests. */
export type RandomInt = (n: number) => number;

export const mathRandomInt: RandomInt = (n) => Math.floor(Math.random() * n);

const MIN_INTERVAL_SECONDS = 10;

/** Seconds to wait before the next start after `failCount` consecutive failed starts. */
export function calculateStartBackoff(failCount: number, maxDelaySeconds: number = MAX_CRASH_LOOP_BACKOFF_DELAY_SECONDS, randomInt: RandomInt = mathRandomInt): number {
  const count = failCount <= 0 ? 1 : Math.trunc(failCount);
  const interval = Math.max(MIN_INTERVAL_SECONDS, Math.trunc(maxDelaySeconds / 30));
  let delay = interval * count * count;
  // Spread VMs that fail together: + rand[0, delay/2].
  delay += randomInt(Math.trunc(delay / 2) + 1);
  return Math.min(delay, maxDelaySeconds);
}

/** The VMI passed through `Running` at some point (a phase transition timestamp says so). */
export function wasVMIInRunningPhase(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi?.status?.phaseTransitionTimestamps?.some((t) => t.phase === VMIPhase.Running) ?? false;
}

const isFinal = (vmi: VirtualMachineInstance) => vmi.status?.phase === VMIPhase.Succeeded || vmi.status?.phase === VMIPhase.Failed;

/** The VMI ended without ever running: a failed start. */
export function vmiFailedEarly(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi !== undefined && isFinal(vmi) && !wasVMIInRunningPhase(vmi);
}

const RESTARTING_STRATEGIES: ReadonlySet<string> = new Set([RunStrategy.Always, RunStrategy.RerunOnFailure, RunStrategy.Once]);

/**
 * The start-failure record is dropped when the VMI reached Running, or when the run strategy
 * does not restart failed VMIs. `runStrategy` undefined means it could not be determined
 * (running and runStrategy both set): KubeVirt then keeps the record.
 */
export function shouldClearStartFailure(runStrategy: string | undefined, vmi: VirtualMachineInstance | undefined): boolean {
  if (wasVMIInRunningPhase(vmi)) return true;
  if (runStrategy === undefined) return false;
  return !RESTARTING_STRATEGIES.has(runStrategy);
}

/**
 * The VM's next `status.startFailure`: cleared, unchanged, or a new record counting this VMI's
 * failure once (by UID) with `retryAfterTimestamp = now + backoff`.
 */
export function nextStartFailure(
  current: VirtualMachineStartFailure | undefined,
  vmi: VirtualMachineInstance | undefined,
  runStrategy: string | undefined,
  now: Date,
  randomInt: RandomInt = mathRandomInt,
  maxDelaySeconds: number = MAX_CRASH_LOOP_BACKOFF_DELAY_SECONDS,
): VirtualMachineStartFailure | undefined {
  if (shouldClearStartFailure(runStrategy, vmi)) return undefined;
  if (!vmi || !vmiFailedEarly(vmi)) return current;
  const uid = vmi.metadata?.uid;
  if (current && current.lastFailedVMIUID === uid) return current; // already counted
  const count = current ? (current.consecutiveFailCount ?? 0) + 1 : 1;
  const delaySeconds = calculateStartBackoff(count, maxDelaySeconds, randomInt);
  const failure: VirtualMachineStartFailure = {
    consecutiveFailCount: count,
    retryAfterTimestamp: toRFC3339Seconds(new Date(now.getTime() + delaySeconds * 1000)),
  };
  if (uid !== undefined) failure.lastFailedVMIUID = uid;
  return failure;
}

/** Whole seconds until `retryAfterTimestamp` (0 when passed or absent), as KubeVirt truncates. */
export function startBackoffSecondsLeft(startFailure: VirtualMachineStartFailure | undefined, now: Date): number {
  const retryAfter = startFailure?.retryAfterTimestamp;
  if (!retryAfter) return 0;
  const diff = Math.floor(Date.parse(retryAfter) / 1000) - Math.floor(now.getTime() / 1000);
  return diff > 0 ? diff : 0;
}

/** `metav1.Time` serialization: RFC 3339, UTC, whole seconds. */
export function toRFC3339Seconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
