// The local node's CPU cgroups, as kubelet's cgroup manager, QoS container manager and node
// allocatable lay them out, on cgroup v1's cpu controller or on cgroup v2, below the runner's own
// cgroup in a hierarchy qvirt owns:
//
//   <own cgroup>/qvirt/                         the machine's CPU (cpu.shares of its capacity)
//     system-reserved/                          the local control plane's process (kubelet's system-reserved)
//     kubepods-<hash of podsDir>/               this runner's pods (node allocatable)
//       pod<uid>/<container>/                   Guaranteed pods, a cgroup per container
//       burstable/pod<uid>/<container>/, besteffort/pod<uid>/<container>/
//       vcpus/pod<uid>/                         cgroup v1: a pod's guest vCPU threads, below every pod (cgroup-config.ts)
//
// The values come from cgroup-config.ts (pure). Never below another kubelet's `kubepods`: only
// `qvirt/` is created or removed. A pod's cgroup is removed once its processes are gone; a
// runner's tree when it stops with no pods; trees of runners gone (no process left in them) by the
// next runner that starts. Where neither version can be written, `open` says so and returns
// undefined (the runner then weighs containers by nice values, cpu-weight.ts).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Logger } from '../../log/logger.ts';
import { cpuFiles, nodeCpuSplit, podCgroupPath, podUidOfCgroup, QOS_DIRS, qosCpuConfigs, VCPU_TIER, VCPU_TIER_CPU, vcpuCgroupPath, type CpuConfig, type QosClass } from './cgroup-config.ts';
import { cpuShares } from './cpu-weight.ts';

export const QVIRT_CGROUP = 'qvirt';
export const SYSTEM_RESERVED_CGROUP = 'system-reserved';
const KUBEPODS_PREFIX = 'kubepods-';

/**
 * Where this process's cpu controller is, per cgroup version (v2 first), from /proc/self/mountinfo and
 * /proc/self/cgroup. A process born in a local mode's system-reserved cgroup (a local mode started by
 * another one's process: a test's child, the density bench's) builds beside that one's qvirt/, not inside. Pure.
 */
export function cpuCgroupCandidates(mountinfo: string, procCgroup: string): Array<{ version: 1 | 2; dir: string }> {
  const mounts = mountinfo.split('\n').filter(Boolean).map((line) => {
    const f = line.split(' ');
    const dash = f.indexOf('-');
    return { root: f[3] ?? '/', point: (f[4] ?? '').replace(/\\040/g, ' '), fstype: f[dash + 1] ?? '', superOpts: (f[dash + 3] ?? '').split(',') };
  });
  const reservedTail = `/${QVIRT_CGROUP}/${SYSTEM_RESERVED_CGROUP}`;
  const within = (root: string, cgroupPath: string) => {
    const path = cgroupPath.endsWith(reservedTail) ? cgroupPath.slice(0, -reservedTail.length) || '/' : cgroupPath;
    return root === '/' ? path : path.startsWith(root) ? path.slice(root.length) || '/' : undefined;
  };
  const out: Array<{ version: 1 | 2; dir: string }> = [];
  for (const line of procCgroup.split('\n').filter(Boolean)) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    const [, id, controllers, path] = m as unknown as [string, string, string, string];
    if (id === '0' && controllers === '') {
      const mnt = mounts.find((x) => x.fstype === 'cgroup2');
      const rel = mnt && within(mnt.root, path);
      if (mnt && rel !== undefined) out.unshift({ version: 2, dir: rel === '/' ? mnt.point : join(mnt.point, rel) });
    } else if (controllers.split(',').includes('cpu')) {
      const mnt = mounts.find((x) => x.fstype === 'cgroup' && x.superOpts.includes('cpu'));
      const rel = mnt && within(mnt.root, path);
      if (mnt && rel !== undefined) out.push({ version: 1, dir: rel === '/' ? mnt.point : join(mnt.point, rel) });
    }
  }
  return out;
}

/**
 * `argv` run by a shell that makes the container's cgroup `dir` when missing, writes `files` into it in
 * order (containerCgroup), writes its own pid into it and then execs `argv` (same pid): the process is
 * in its cgroup before its first instruction, with every thread it makes. The shell makes the cgroup as
 * runc does for a kubelet, so the runner's event loop never waits on the kernel's cgroup lock, which
 * another process's move holds for an RCU grace period on cgroup v1 (7–22 ms of the runner's event loop
 * per pod start in --cpu-prof profiles, when the runner made them). If a step fails the container still
 * starts (a line in its stderr says so). Pure.
 */
export function joiningCgroup(dir: string, argv: readonly string[], files: ReadonlyArray<readonly [file: string, value: string]>): string[] {
  const script = 'd=$0; n=$1; shift; [ -d "$d" ] || mkdir "$d" || echo "qvirt: could not make the container cgroup $d" >&2; '
    + 'while [ "$n" -gt 0 ]; do echo "$2" > "$d/$1" || echo "qvirt: could not write $1 of the container cgroup $d" >&2; shift 2; n=$((n - 1)); done; '
    + 'echo $$ > "$d/cgroup.procs" || echo "qvirt: could not join the container cgroup $d" >&2; exec "$@"';
  return ['/bin/sh', '-c', script, dir, String(files.length), ...files.flatMap(([f, v]) => [f, v]), ...argv];
}

/** The kubepods cgroup's name for a runner's pods directory (runners on one machine never share one). */
export function kubepodsName(podsDir: string): string {
  return `${KUBEPODS_PREFIX}${createHash('sha256').update(podsDir).digest('hex').slice(0, 10)}`;
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** This process in the system-reserved cgroup: once per process, whatever number of runners it holds (the two-node local mode). */
const reserved = { joined: 0, version: undefined as 1 | 2 | undefined, base: '' };

export interface CgroupManagerOptions {
  readonly podsDir: string;
  readonly log: Logger;
  /** The machine's CPU in millicores. */
  readonly capacityMilli: number;
  /** kubelet's --system-reserved cpu in millicores (default: nodeCpuSplit's). */
  readonly systemReservedMilli?: number;
  /** Where to build the hierarchy (default: this process's cpu cgroup, cpuCgroupCandidates). */
  readonly candidates?: ReadonlyArray<{ readonly version: 1 | 2; readonly dir: string }>;
}

export class CgroupManager {
  readonly qvirt: string;
  readonly kubepods: string;
  readonly systemReserved: string;
  readonly version: 1 | 2;
  /** The cgroup this process was in: qvirt/ goes below it. */
  readonly base: string;
  private readonly o: CgroupManagerOptions;
  private readonly split: ReturnType<typeof nodeCpuSplit>;

  private constructor(version: 1 | 2, base: string, o: CgroupManagerOptions) {
    this.version = version;
    this.base = base;
    this.o = o;
    this.qvirt = join(base, QVIRT_CGROUP);
    this.kubepods = join(this.qvirt, kubepodsName(o.podsDir));
    this.systemReserved = join(this.qvirt, SYSTEM_RESERVED_CGROUP);
    this.split = nodeCpuSplit(o.capacityMilli, o.systemReservedMilli);
  }

  /** The manager on the first cgroup version this process can build the hierarchy in; undefined (one warning) when none. */
  static open(o: CgroupManagerOptions): CgroupManager | undefined {
    let candidates: ReadonlyArray<{ version: 1 | 2; dir: string }> = [];
    if (reserved.joined > 0 && reserved.version) candidates = [{ version: reserved.version, dir: reserved.base }];
    else if (o.candidates) candidates = o.candidates;
    else {
      try { candidates = cpuCgroupCandidates(readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync('/proc/self/cgroup', 'utf8')); } catch { /* no /proc */ }
    }
    const why: string[] = [];
    for (const c of candidates) {
      const m = new CgroupManager(c.version, c.dir, o);
      try {
        m.setUp();
        return m;
      } catch (err) {
        why.push(`cgroup v${c.version} at ${c.dir}: ${(err as Error).message}`);
      }
    }
    o.log.warn({ tried: why.length ? why : 'no cpu controller in /proc/self/cgroup' }, 'no writable CPU cgroups: pods run without cgroups, weighed by nice values, and the control plane without a reserved share');
    return undefined;
  }

  /**
   * qvirt/ and system-reserved with this process in it, then the weights and this runner's
   * kubepods. On cgroup v2 the process leaves its cgroup before the cpu controller is enabled
   * there (no process may sit in a cgroup whose children get controllers); on a failure it goes back.
   */
  private setUp(): void {
    if (this.version === 2 && !readFileSync(join(this.base, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu')) throw new Error('the cpu controller is not available here');
    const first = reserved.joined === 0;
    for (const d of [this.qvirt, this.systemReserved]) { try { mkdirSync(d); } catch (err) { if (errno(err) !== 'EEXIST') throw err; } }
    if (first) writeFileSync(join(this.systemReserved, 'cgroup.procs'), String(process.pid));
    try {
      this.ensure(this.qvirt, { shares: cpuShares(`${this.o.capacityMilli}m`) });
      this.ensure(this.systemReserved, this.split.systemReserved);
      this.ensure(this.kubepods, this.split.kubepods);
    } catch (err) {
      if (first) { try { writeFileSync(join(this.base, 'cgroup.procs'), String(process.pid)); } catch { /* stays */ } }
      for (const d of [this.kubepods, this.systemReserved, this.qvirt]) { try { rmdirSync(d); } catch { /* used by another runner */ } }
      throw err;
    }
    if (first) Object.assign(reserved, { version: this.version, base: this.base });
    reserved.joined++;
    this.o.log.info({ version: this.version, systemReserved: this.systemReserved, shares: this.split.systemReserved.shares, kubepods: this.kubepods, kubepodsShares: this.split.kubepods.shares }, 'CPU cgroups: the control plane in system-reserved, pods in kubepods');
  }

  /** cgroup v2: the cpu controller enabled for `dir`'s children. */
  private enableCpu(dir: string): void {
    let enabled: string[] = [];
    try { enabled = readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/); } catch (err) { if (errno(err) !== 'ENOENT') throw err; }
    if (!enabled.includes('cpu')) writeFileSync(join(dir, 'cgroup.subtree_control'), '+cpu');
  }

  /** mkdir -p of `dir` (below the base) with the cpu controller enabled down to it on cgroup v2, then `cfg` written. */
  private ensure(dir: string, cfg?: CpuConfig): string {
    let cur = this.base;
    for (const part of relative(this.base, dir).split('/')) {
      if (this.version === 2) this.enableCpu(cur);
      cur = join(cur, part);
      try { mkdirSync(cur); } catch (err) { if (errno(err) !== 'EEXIST') throw err; }
    }
    if (cfg) for (const [file, value] of cpuFiles(this.version, cfg)) writeFileSync(join(dir, file), value);
    return dir;
  }

  /** The pod's cgroup with its CPU values (created when missing), the QoS level's weights refreshed. */
  ensurePod(uid: string, qos: QosClass, cfg: CpuConfig, burstableRequestsMilli: readonly number[]): string {
    this.ensure(this.kubepods, this.split.kubepods);
    const q = qosCpuConfigs(burstableRequestsMilli);
    for (const k of Object.keys(QOS_DIRS) as Array<keyof typeof QOS_DIRS>) this.ensure(join(this.kubepods, QOS_DIRS[k]), q[k]);
    const dir = this.ensure(join(this.kubepods, ...podCgroupPath(qos, uid)), cfg);
    // Its containers' cgroups (containerCgroup) get the cpu controller from it.
    if (this.version === 2) this.enableCpu(dir);
    return dir;
  }

  /**
   * A container's cgroup below its pod's (`podDir`, from ensurePod) and the files that give it kubelet's
   * container values (cgroup-config.ts's containerCpuConfig): made by the container's own shell
   * (joiningCgroup), not here.
   */
  containerCgroup(podDir: string, container: string, cfg: CpuConfig): { dir: string; files: Array<[file: string, value: string]> } {
    return { dir: join(podDir, container), files: cpuFiles(this.version, cfg) };
  }

  /**
   * The pod's vCPU cgroup (created when missing) with the pod's CPU values, below the vCPU tier; undefined
   * on cgroup v2, where a thread cannot leave its process's cgroup for another pod's subtree.
   */
  ensureVcpuCgroup(uid: string, cfg: CpuConfig): string | undefined {
    if (this.version !== 1) return undefined;
    this.ensure(join(this.kubepods, VCPU_TIER), VCPU_TIER_CPU);
    return this.ensure(join(this.kubepods, ...vcpuCgroupPath(uid)), cfg);
  }

  /** The pod's cgroup, wherever its QoS put it (undefined when there is none). */
  podDir(uid: string): string | undefined {
    return [podCgroupPath('Guaranteed', uid), podCgroupPath('Burstable', uid), podCgroupPath('BestEffort', uid)].map((p) => join(this.kubepods, ...p)).find((d) => existsSync(d));
  }

  /** Removes the pod's cgroups (its own and its vCPUs') once their last thread has left (retries while killed processes exit). */
  async removePod(uid: string, timeoutMs = 5000): Promise<boolean> {
    const vcpus = join(this.kubepods, ...vcpuCgroupPath(uid));
    const own = this.podDir(uid);
    let ok = true;
    for (const dir of own ? [vcpus, own] : [vcpus]) ok = (await this.removeCgroup(dir, timeoutMs)) && ok;
    return ok;
  }

  /** rmdir of `dir` and its container cgroups, bottom-up, retrying while killed processes exit. */
  private async removeCgroup(dir: string, timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      try {
        for (const child of subdirs(dir)) { try { rmdirSync(join(dir, child)); } catch (err) { if (errno(err) !== 'ENOENT') throw err; } }
        rmdirSync(dir);
        return true;
      } catch (err) {
        if (errno(err) === 'ENOENT') return true;
        if (errno(err) !== 'EBUSY' || Date.now() > end) {
          this.o.log.warn({ cgroup: dir, err: (err as Error).message }, 'could not remove a pod\'s cgroup');
          return false;
        }
      }
      await sleep(50);
    }
  }

  /** Pod uids with a cgroup in this runner's kubepods. */
  podUids(): string[] {
    const out: string[] = [];
    for (const d of [this.kubepods, ...Object.values(QOS_DIRS).map((q) => join(this.kubepods, q)), join(this.kubepods, VCPU_TIER)]) {
      for (const name of subdirs(d)) { const uid = podUidOfCgroup(name); if (uid && !out.includes(uid)) out.push(uid); }
    }
    return out;
  }

  /** Trees of other runners' kubepods that hold no process any more (their runner and pods are gone). */
  sweepAbandoned(): string[] {
    const removed: string[] = [];
    for (const name of subdirs(this.qvirt)) {
      const dir = join(this.qvirt, name);
      if (!name.startsWith(KUBEPODS_PREFIX) || dir === this.kubepods || holdsProcesses(dir)) continue;
      if (removeTree(dir)) removed.push(dir);
    }
    return removed;
  }

  /**
   * The runner stops: with no pod left its kubepods tree goes; the last runner of this process takes
   * the process back to where it was and removes system-reserved and qvirt/ when nothing else uses them.
   */
  stop(podsLeft: boolean): void {
    if (!podsLeft) removeTree(this.kubepods);
    if (--reserved.joined > 0) return;
    reserved.version = undefined;
    try { writeFileSync(join(this.base, 'cgroup.procs'), String(process.pid)); } catch (err) {
      this.o.log.warn({ err: (err as Error).message, cgroup: this.base }, 'could not leave the system-reserved cgroup');
      return;
    }
    for (const d of [this.systemReserved, this.qvirt]) { try { rmdirSync(d); } catch { /* still used by another local mode */ } }
  }
}

function subdirs(dir: string): string[] {
  try { return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name); } catch { return []; }
}

function holdsProcesses(dir: string): boolean {
  let procs = '';
  try { procs = readFileSync(join(dir, 'cgroup.procs'), 'utf8'); } catch { return false; }
  return procs.trim() !== '' || subdirs(dir).some((d) => holdsProcesses(join(dir, d)));
}

/** rmdir bottom-up; false when some cgroup in it still holds a process. */
function removeTree(dir: string): boolean {
  let ok = true;
  for (const d of subdirs(dir)) ok = removeTree(join(dir, d)) && ok;
  try { rmdirSync(dir); } catch (err) { if (errno(err) !== 'ENOENT') ok = false; }
  return ok;
}
