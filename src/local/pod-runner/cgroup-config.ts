// kubelet's CPU cgroup decisions for the local pod runner, pure: where a pod's cgroup goes (the
// kubepods hierarchy by QoS class: Guaranteed pods directly under kubepods, the others under
// burstable/ or besteffort/), what its CPU values are (ResourceConfigForPod: cpu.shares from the
// pod's requests, a CFS quota from its limits when every container declares one), the QoS level's
// own shares (the burstable cgroup weighs the sum of its pods' requests, besteffort the minimum),
// the split of the node's CPU between kubepods and system-reserved (node allocatable), and the
// cgroup files each version writes (v1 cpu.shares / cpu.cfs_quota_us, v2 cpu.weight / cpu.max).
import { cpuShares, MIN_SHARES } from './cpu-weight.ts';
import type { Container, PodSpec } from './pod.ts';
import { isSidecar, parseQuantity, qosClass } from './status.ts';

export type QosClass = ReturnType<typeof qosClass>;

/** The CFS period kubelet uses (100 ms) and the least quota it writes (1 ms). */
export const CFS_PERIOD_US = 100_000;
export const MIN_QUOTA_US = 1_000;
/** cgroup v2's cpu.weight range. */
export const MAX_WEIGHT = 10_000;
const MAX_SHARES = 262_144;

export const QOS_DIRS: Readonly<Record<Exclude<QosClass, 'Guaranteed'>, string>> = { Burstable: 'burstable', BestEffort: 'besteffort' };

/** CPU values of one cgroup: a weight in cpu.shares units, a CFS quota per period (none: unlimited). */
export interface CpuConfig {
  readonly shares: number;
  readonly quotaUs?: number;
  readonly periodUs?: number;
}

/** A container's CPU in millicores (Quantity.MilliValue rounds up); undefined when absent or malformed. */
export function milliCpu(q: string | number | undefined): number | undefined {
  const cpu = parseQuantity(q);
  return cpu === undefined || cpu < 0 ? undefined : Math.ceil(Math.round(cpu * 1e6) / 1e3);
}

/** kubelet's MilliCPUToQuota: the CFS quota for a CPU limit (0 for none, never below MIN_QUOTA_US). */
export function milliCpuToQuota(milli: number, periodUs = CFS_PERIOD_US): number {
  if (milli <= 0) return 0;
  return Math.max(MIN_QUOTA_US, Math.floor((milli * periodUs) / 1000));
}

/** runc's/kubelet's CpuSharesToCpuWeight: cpu.shares [2, 262144] onto cgroup v2's cpu.weight [1, 10000]. */
export function cpuSharesToWeight(shares: number): number {
  const s = Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
  return 1 + Math.floor(((s - MIN_SHARES) * (MAX_WEIGHT - 1)) / (MAX_SHARES - MIN_SHARES));
}

/**
 * The pod's effective CPU (k8s PodRequests / PodLimits, millicores): the sum of its containers and
 * native sidecars, or the largest init container (plus the sidecars started before it) when larger,
 * plus spec.overhead. A request missing where a limit is set defaults to the limit. `limit` is
 * undefined unless every container declares a CPU limit (kubelet's cpuLimitsDeclared).
 */
export function podCpu(spec: PodSpec & { overhead?: Record<string, string | number> }): { requestMilli: number; limitMilli?: number } {
  const req = (c: Container) => milliCpu(c.resources?.requests?.['cpu']) ?? milliCpu(c.resources?.limits?.['cpu']) ?? 0;
  const lim = (c: Container) => milliCpu(c.resources?.limits?.['cpu']);
  const all = [...(spec.initContainers ?? []), ...spec.containers];
  const limitsDeclared = all.length > 0 && all.every((c) => lim(c) !== undefined);
  const effective = (of: (c: Container) => number) => {
    let sum = spec.containers.reduce((a, c) => a + of(c), 0);
    let sidecars = 0;
    let init = 0;
    for (const c of spec.initContainers ?? []) {
      if (isSidecar(c)) { sum += of(c); sidecars += of(c); init = Math.max(init, sidecars); } else init = Math.max(init, of(c) + sidecars);
    }
    return Math.max(sum, init) + (milliCpu(spec.overhead?.['cpu']) ?? 0);
  };
  const requestMilli = effective(req);
  return limitsDeclared ? { requestMilli, limitMilli: effective((c) => lim(c) ?? 0) } : { requestMilli };
}

/**
 * kubelet's ResourceConfigForPod (CPU): Guaranteed → shares and quota; Burstable → shares, and a
 * quota when every container declares a limit; BestEffort → the least shares, no quota.
 */
export function podCpuConfig(spec: PodSpec & { overhead?: Record<string, string | number> }, qos: QosClass = qosClass(spec)): CpuConfig {
  if (qos === 'BestEffort') return { shares: MIN_SHARES };
  const { requestMilli, limitMilli } = podCpu(spec);
  const shares = cpuShares(`${requestMilli}m`);
  if (limitMilli === undefined) return { shares };
  return { shares, quotaUs: milliCpuToQuota(limitMilli), periodUs: CFS_PERIOD_US };
}

/**
 * kubelet's container-level CPU (generateLinuxContainerResources): cpu.shares from the container's request
 * (its limit when only that is set; none → the least), a CFS quota from its limit. A launcher pod's
 * guest-console-log (5m, limit 15m) then takes a sliver of its pod while the compute container starts.
 */
export function containerCpuConfig(c: Container): CpuConfig {
  const limit = milliCpu(c.resources?.limits?.['cpu']);
  const request = milliCpu(c.resources?.requests?.['cpu']) ?? limit ?? 0;
  const shares = cpuShares(`${request}m`);
  return limit !== undefined && limit > 0 ? { shares, quotaUs: milliCpuToQuota(limit), periodUs: CFS_PERIOD_US } : { shares };
}

/** The pod's cgroup below the node's kubepods cgroup, as kubelet's cgroupfs driver names it. */
export function podCgroupPath(qos: QosClass, uid: string): string[] {
  return qos === 'Guaranteed' ? [`pod${uid}`] : [QOS_DIRS[qos], `pod${uid}`];
}

/** The pod uid a `pod<uid>` cgroup name holds; undefined for any other name. */
export function podUidOfCgroup(name: string): string | undefined {
  return /^pod([0-9a-f-]{8,})$/.exec(name)?.[1];
}

/**
 * The local node's vCPU tier (qvirt's, not kubelet's): `vcpus/pod<uid>` below kubepods, beside the QoS
 * levels, holds a pod's guest vCPU threads (the launcher moves them there before `cont`). The tier as a
 * whole weighs the least a cgroup can, so any runnable thread of any pod — a launcher starting, QEMU
 * loading a kernel, a node agent's call being answered — runs before the guests, which still get every
 * CPU cycle nothing else wants; within the tier each pod's vCPUs weigh the pod's request and keep its
 * CFS quota (a limited pod's control threads and vCPUs can then each use its limit). Only cgroup v1 can
 * place a thread outside its process's cgroup; on v2 the vCPUs stay in the pod, below its threads by nice.
 */
export const VCPU_TIER = 'vcpus';
export const VCPU_TIER_CPU: CpuConfig = { shares: MIN_SHARES };

/** A pod's vCPU cgroup below the node's kubepods cgroup. */
export function vcpuCgroupPath(uid: string): string[] {
  return [VCPU_TIER, `pod${uid}`];
}

/** kubelet's QoS cgroup weights: burstable weighs the sum of its pods' CPU requests, besteffort the minimum. */
export function qosCpuConfigs(burstableRequestsMilli: readonly number[]): Record<Exclude<QosClass, 'Guaranteed'>, CpuConfig> {
  return { Burstable: { shares: cpuShares(`${burstableRequestsMilli.reduce((a, b) => a + b, 0)}m`) }, BestEffort: { shares: MIN_SHARES } };
}

/**
 * Node allocatable for the CPU: kubepods weighs the capacity less system-reserved, the
 * system-reserved cgroup (the local control plane: API server, controllers, node agent, pod runner)
 * the reserved CPU. Default reserve: one CPU, at most half the machine.
 */
export function nodeCpuSplit(capacityMilli: number, reservedMilli = Math.min(1000, Math.floor(capacityMilli / 2))): { kubepods: CpuConfig; systemReserved: CpuConfig } {
  const reserved = Math.min(Math.max(0, reservedMilli), capacityMilli);
  return { kubepods: { shares: cpuShares(`${Math.max(0, capacityMilli - reserved)}m`) }, systemReserved: { shares: cpuShares(`${reserved}m`) } };
}

/** The files (in write order) that give a cgroup `cfg` on cgroup v1's cpu controller or cgroup v2. */
export function cpuFiles(version: 1 | 2, cfg: CpuConfig): Array<[file: string, value: string]> {
  const period = cfg.periodUs ?? CFS_PERIOD_US;
  if (version === 1) {
    return [['cpu.shares', String(cfg.shares)], ['cpu.cfs_period_us', String(period)], ['cpu.cfs_quota_us', String(cfg.quotaUs ?? -1)]];
  }
  return [['cpu.weight', String(cpuSharesToWeight(cfg.shares))], ['cpu.max', `${cfg.quotaUs ?? 'max'} ${period}`]];
}

