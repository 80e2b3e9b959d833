// The guest's vCPU threads run below the launcher's own control threads. The launcher, QEMU's main
// loop and its I/O threads answer the node agent (Sync, status, migration, hotplug), and a node keeps
// its agents responsive with cgroup weights (kubelet's system-reserved and pod cgroups; the local pod
// runner lays out the same: src/local/pod-runner/cgroup-manager.ts); but inside the pod's cgroup a
// launcher's gRPC threads compete on equal terms with its guest's vCPUs — and where the local runner
// has no cgroups, with every guest's: 20 guests booting under emulation kept ready launchers waiting
// seconds for a CPU (issue 23's density figures). KubeVirt leaves a pod's CPU to kubelet's cgroups
// (virt-handler only adds a cpuset "housekeeping" child for dedicated CPUs with an isolated emulator
// thread); this nice step is qvirt's addition, the same on a cluster and in the local mode. A vCPU thread gets a nice value VCPU_NICE_OFFSET above the
// launcher's (CFS weight ÷ 1.25 per step: +5 ≈ a third of the weight). Among guests nothing
// changes (every vCPU is lowered alike), and an idle launcher takes nothing from its guest.
// QEMU's vCPU threads exist while it waits paused (-S), so this runs before `cont`.
//
// A nice value only weighs threads within one cgroup, and a pod's cgroup weighs the same whether its
// guest boots or its launcher starts: in a burst a starting launcher got 1/N of the CPU against N
// booting guests. Where the node offers a vCPU cgroup (the local pod runner on cgroup v1:
// `--vcpu-cgroup`, env QVIRT_VCPU_CGROUP; cgroup-config.ts's vCPU tier) the threads move there too,
// below every pod's control threads. Never on a real node (kubelet owns the pod's cgroups there).
// A cgroup v1 move takes the kernel's cgroup lock and waits for an RCU grace period (7–21 ms of a
// launcher's start on an idle machine, measured with --cpu-prof; longer under load): the write goes
// to the thread pool, so the launcher's event loop (its gRPC, QMP) runs on meanwhile.
import { writeFile } from '../fs/async.ts';
import { getPriority, setPriority } from 'node:os';
import { join } from 'node:path';
import type { QmpConnection } from './qmp-connection.ts';

export const VCPU_NICE_OFFSET = 5;
const MAX_NICE = 19;

/** The nice value for a vCPU thread of a launcher running at `launcherNice`. */
export function vcpuNice(launcherNice: number, offset = VCPU_NICE_OFFSET): number {
  return Math.min(MAX_NICE, Math.max(launcherNice, launcherNice + offset));
}

/** The host thread ids in a `query-cpus-fast` answer (x86 and others: `thread-id`). */
export function vcpuThreadIds(cpus: unknown): number[] {
  if (!Array.isArray(cpus)) return [];
  return cpus
    .map((c: unknown) => (typeof c === 'object' && c !== null ? (c as Record<string, unknown>)['thread-id'] : undefined))
    .filter((t): t is number => typeof t === 'number' && Number.isInteger(t) && t > 0);
}

export interface VcpuPriorityResult {
  readonly nice: number;
  readonly threads: number[];
  /** The vCPU cgroup the threads were moved to, when one was given. */
  readonly cgroup?: string;
  readonly failed: Array<{ tid: number; reason: string }>;
}

export interface VcpuPriorityOptions {
  readonly offset?: number;
  /** A cgroup v1 directory (its `tasks` file takes a thread id) for the vCPU threads. */
  readonly cgroup?: string | undefined;
}

/**
 * Lowers every vCPU thread QEMU reports to vcpuNice(the launcher's nice) and moves it into `cgroup`
 * when one is given. Best effort: a thread that cannot be reniced or moved is reported, never fatal
 * (the guest runs at the launcher's priority).
 */
export async function lowerVcpuPriority(qmp: QmpConnection, o: VcpuPriorityOptions = {}): Promise<VcpuPriorityResult> {
  const nice = vcpuNice(getPriority(0), o.offset ?? VCPU_NICE_OFFSET);
  const threads = vcpuThreadIds(await qmp.execute('query-cpus-fast'));
  const failed: Array<{ tid: number; reason: string }> = [];
  const why = (err: unknown) => (err instanceof Error ? err.message : String(err));
  for (const tid of threads) {
    try { setPriority(tid, nice); } catch (err) { failed.push({ tid, reason: why(err) }); }
  }
  const cgroup = o.cgroup;
  // One thread id per write: cgroup v1 moves that thread alone, not its thread group.
  if (cgroup) {
    await Promise.all(threads.map((tid) => writeFile(join(cgroup, 'tasks'), String(tid)).catch((err: unknown) => { failed.push({ tid, reason: `not moved to ${cgroup}: ${why(err)}` }); })));
  }
  return { nice, threads, ...(o.cgroup ? { cgroup: o.cgroup } : {}), failed };
}
