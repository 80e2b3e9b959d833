// A container's CPU request as its scheduling weight, the way kubelet turns requests into cgroup
// cpu.shares (MilliCPUToShares: 1024 per CPU, at least 2) — used by the pod cgroups
// (cgroup-config.ts) and, where no cgroup can be written, as the nice value whose CFS weight is
// closest (nice 0 = 1024, each step ×1.25 less; 100m → 102 shares → nice 10), so the local control
// plane (nice 0) keeps its share of the CPU when guests are busy. Never below 0: an unprivileged
// runner cannot raise priority.
import { parseQuantity } from './status.ts';

export const MIN_SHARES = 2;
export const SHARES_PER_CPU = 1024;
export const MAX_NICE = 19;

/** kubelet's MilliCPUToShares for a container's `resources.requests.cpu` (absent → the minimum). */
export function cpuShares(request: string | number | undefined): number {
  const cpu = parseQuantity(request);
  if (cpu === undefined || cpu <= 0) return MIN_SHARES;
  return Math.max(MIN_SHARES, Math.floor((Math.round(cpu * 1000) * SHARES_PER_CPU) / 1000));
}

/** The nice value whose CFS weight is nearest to `shares` (0 … 19). */
export function niceForShares(shares: number): number {
  if (shares >= SHARES_PER_CPU) return 0;
  const n = Math.round(Math.log(SHARES_PER_CPU / shares) / Math.log(1.25));
  return Math.min(MAX_NICE, Math.max(0, n));
}
