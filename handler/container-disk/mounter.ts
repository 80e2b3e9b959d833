// containerDisk volumes on a real node (virt-handler's pkg/virt-handler/container-disk/mount.go):
// each `volume<name>` container of the launcher pod runs the container-disk helper listening on
// `/var/run/kubevirt/container-disks/<vmiUID>/disk_<i>.sock` (or `kernel-boot.sock`). The handler
// finds the helper's process through that socket (hostPID), takes the disk from the process's root
// (`/proc/<pid>/root/disk/` single file, or containerDisk.path) and bind-mounts it read-only onto
// `<container-disks emptyDir>/disk_<i>.img`, where the launcher looks. Every target is recorded in
// `<stateDir>/container-disk-mounts/<vmiUID>.json` BEFORE it is mounted (handler/bind-mounts.ts), so
// a restarted handler can still unmount it. This is the node agent's default ContainerDiskSource;
// the local mode passes its image store's instead (symlinks).
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { basename, join, normalize } from 'node:path';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { Logger } from '../../src/log/logger.ts';
import { BindMounts, type MountRecord } from '../bind-mounts.ts';
import type { ContainerDiskSource } from './source.ts';
import { findContainerDiskSocketInodes, hostPathCandidates, mountCount, parseMountInfo, parseProcNetUnix, socketInodeOfFdLink } from './proc.ts';

export const CONTAINER_DISK_MOUNTS_DIR = 'container-disk-mounts';
/** KubeVirt's fallback: the image's disk lives in `/disk/` as its single file. */
const DISK_DIR = '/disk';
const KERNEL_BOOT = 'kernel-boot';

/** The helper's socket is not there yet (its container is still starting): retry later. */
export class WaitingForContainerDiskError extends Error {
  override name = 'WaitingForContainerDiskError';
}
export class ContainerDiskMountError extends Error {
  override name = 'ContainerDiskMountError';
}

export interface ContainerDiskMounterOptions {
  readonly stateDir: string;
  readonly log: Logger;
  /** Where the host's root filesystem is visible (`/` on the host; a hostPath mount of `/` in a pod). */
  readonly hostFs?: string;
  /** The proc filesystem (tests keep the default). */
  readonly procDir?: string;
}

interface Wanted {
  /** `disk_<i>` or `kernel-boot`. */
  readonly name: string;
  /** The field named in errors. */
  readonly field: string;
  /** Path inside the helper's root: a file, or a dir whose single file is the disk. */
  readonly sourcePath: string;
  readonly target: string;
}

function wantedMounts(vmi: VirtualMachineInstance, containerDisksDir: string): Wanted[] {
  const out: Wanted[] = [];
  (vmi.spec.volumes ?? []).forEach((v, i) => {
    if (!v.containerDisk) return;
    out.push({ name: `disk_${i}`, field: `spec.volumes[${i}].containerDisk`, sourcePath: v.containerDisk.path || DISK_DIR, target: join(containerDisksDir, `disk_${i}.img`) });
  });
  const kb = vmi.spec.domain.firmware?.kernelBoot?.container;
  if (kb) {
    for (const [field, p] of [['kernelPath', kb.kernelPath], ['initrdPath', kb.initrdPath]] as const) {
      if (!p) continue;
      out.push({ name: KERNEL_BOOT, field: `spec.domain.firmware.kernelBoot.container.${field}`, sourcePath: p, target: join(containerDisksDir, KERNEL_BOOT, basename(p)) });
    }
  }
  return out;
}

export class ContainerDiskMounter implements ContainerDiskSource {
  private readonly proc: string;
  private readonly mounts: BindMounts;

  private readonly hostFs: string;

  constructor(o: ContainerDiskMounterOptions) {
    this.hostFs = o.hostFs ?? '/';
    this.mounts = new BindMounts({ stateDir: o.stateDir, recordsDir: CONTAINER_DISK_MOUNTS_DIR, log: o.log, ...(o.procDir ? { procDir: o.procDir } : {}), error: (m) => new ContainerDiskMountError(m) });
    this.proc = this.mounts.proc;
  }

  /** Loads the records a previous handler left; returns them. */
  load(): Promise<MountRecord[]> {
    return this.mounts.load();
  }

  has(uid: string): boolean {
    return this.mounts.has(uid);
  }

  /** Mounts every containerDisk (and kernel-boot artifact) of the VMI; already mounted targets are left alone. */
  async mount(vmi: VirtualMachineInstance, containerDisksDir: string, log: Logger): Promise<string[]> {
    const uid = vmi.metadata?.uid ?? '';
    if (!uid) throw new ContainerDiskMountError('metadata.uid: required to find the container disks');
    const wanted = wantedMounts(vmi, containerDisksDir);
    if (wanted.length === 0) return [];
    const mountinfo = await this.mounts.mountinfo();
    const pids = new Map<string, number>();
    const done: string[] = [];
    for (const w of wanted) {
      if (mountCount(mountinfo, w.target) > 0) { done.push(w.target); continue; }
      let pid = pids.get(w.name);
      if (pid === undefined) {
        pid = await this.findHelperPid(uid, w.name);
        if (pid === undefined) throw new WaitingForContainerDiskError(`${w.field}: waiting for containerdisks: no process serves ${w.name}.sock of VMI ${uid} yet`);
        pids.set(w.name, pid);
      }
      const source = await this.bindSource(pid, await this.sourceFile(pid, w), w);
      await this.mounts.bind(uid, source, w.target, { readOnly: true });
      log.info({ volume: w.field, source, target: w.target, pid }, 'container disk bind-mounted read-only');
      done.push(w.target);
    }
    return done;
  }

  /** Unmounts everything recorded for the VMI and drops the record (no record: nothing to do). */
  async unmount(uid: string, log: Logger): Promise<void> {
    await this.mounts.unmount(uid, log);
  }

  /** The pid of the helper listening on `.../container-disks/<uid>/<name>.sock`, in any network namespace. */
  async findHelperPid(uid: string, name: string): Promise<number | undefined> {
    const pids = (await readdir(this.proc)).filter((p) => /^\d+$/.test(p));
    const byNs = new Map<string, string[]>();
    for (const p of pids) {
      const ns = await readlink(join(this.proc, p, 'ns', 'net')).catch(() => undefined);
      if (!ns) continue;
      const list = byNs.get(ns);
      if (list) list.push(p); else byNs.set(ns, [p]);
    }
    for (const members of byNs.values()) {
      let inodes: number[] = [];
      for (const p of members) {
        const text = await readFile(join(this.proc, p, 'net', 'unix'), 'utf8').catch(() => undefined);
        if (text === undefined) continue;
        inodes = findContainerDiskSocketInodes(parseProcNetUnix(text), uid, name);
        break;
      }
      if (inodes.length === 0) continue;
      const want = new Set(inodes);
      for (const p of members) {
        const fds = await readdir(join(this.proc, p, 'fd')).catch(() => [] as string[]);
        for (const fd of fds) {
          const ino = socketInodeOfFdLink(await readlink(join(this.proc, p, 'fd', fd)).catch(() => ''));
          if (ino !== undefined && want.has(ino)) return Number(p);
        }
      }
    }
    return undefined;
  }

  /**
   * A path to bind-mount `procPath` (the disk as `/proc/<pid>/root/...`) from: that path itself when
   * the helper shares our mount namespace (the local tests' chroot); otherwise the same file where
   * our namespace sees it — the helper's root filesystem, or its overlay layers on the host's
   * filesystem (`hostFs`): the kernel refuses a bind mount from another mount namespace.
   */
  private async bindSource(pid: number, procPath: string, w: Wanted): Promise<string> {
    const hostNs = await this.mounts.entersHostNs();
    const [theirs, ours] = await Promise.all([readlink(join(this.proc, String(pid), 'ns', 'mnt')).catch(() => undefined), readlink(join(this.proc, hostNs ? '1' : 'self', 'ns', 'mnt')).catch(() => undefined)]);
    if (theirs !== undefined && theirs === ours) return procPath;
    const root = join(this.proc, String(pid), 'root');
    const inContainer = procPath.slice(root.length) || '/';
    const containerMounts = parseMountInfo(await readFile(join(this.proc, String(pid), 'mountinfo'), 'utf8').catch(() => ''));
    const candidates = hostPathCandidates(containerMounts, parseMountInfo(await this.mounts.mountinfo()), inContainer, this.hostFs);
    for (const c of candidates) {
      // In the host's namespace (nsenter) a host path is checked through pid 1's root.
      const st = await stat(hostNs ? join(this.proc, '1', 'root', c) : c).catch(() => undefined);
      if (st?.isFile()) return c;
    }
    throw new ContainerDiskMountError(`${w.field}: ${inContainer} of the container-disk container (pid ${pid}) is not visible in virt-handler's mount namespace (looked at ${candidates.join(', ') || 'no candidate: the container\'s root mount was not found'}); run virt-handler in the host's mount namespace or give it the host's root filesystem (--host-fs)`);
  }

  /** KubeVirt's GetImage: the path inside the helper's root, a file or a dir holding exactly one file. */
  private async sourceFile(pid: number, w: Wanted): Promise<string> {
    const root = join(this.proc, String(pid), 'root');
    const p = join(root, normalize(`/${w.sourcePath}`));
    const st = await stat(p).catch(() => undefined);
    if (st?.isFile()) return p;
    if (!st?.isDirectory()) throw new ContainerDiskMountError(`${w.field}: ${w.sourcePath} not found in the container disk image`);
    const files: string[] = [];
    for (const e of await readdir(p, { withFileTypes: true })) {
      if (e.isFile() || (e.isSymbolicLink() && (await stat(join(p, e.name)).catch(() => undefined))?.isFile())) files.push(e.name);
    }
    if (files.length !== 1) throw new ContainerDiskMountError(`${w.field}: ${w.sourcePath} in the container disk image must hold exactly one file, found ${files.length}${files.length ? ` (${files.sort().join(', ')})` : ''}`);
    return join(p, files[0]!);
  }
}
