// containerDisk volumes on a real node (virt-handler's pkg/virt-handler/container-disk/mount.go):
// each `volume<name>` container of the launcher pod runs the container-disk helper listening on
// `/var/run/kubevirt/container-disks/<vmiUID>/disk_<i>.sock` (or `kernel-boot.sock`). The handler
// finds the helper's process through that socket (hostPID), takes the disk from the process's root
// (`/proc/<pid>/root/disk/` single file, or containerDisk.path) and bind-mounts it read-only onto
// `<container-disks emptyDir>/disk_<i>.img`, where the launcher looks. Every target is recorded in
// `<stateDir>/container-disk-mounts/<vmiUID>.json` BEFORE it is mounted, so a restarted handler
// can still unmount it. Local mode (an image store) does not use this: it symlinks instead.
import { execFile } from 'node:child_process';
import { mkdir, open, readdir, readFile, readlink, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import type { Logger } from '../src/log/logger.ts';
import { findContainerDiskSocketInodes, mountCount, parseProcNetUnix, socketInodeOfFdLink } from './container-disk-proc.ts';

const run = promisify(execFile);

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

export interface ContainerDiskMountRecord {
  readonly uid: string;
  readonly containerDisksDir: string;
  readonly targets: string[];
}

export interface ContainerDiskMounterOptions {
  readonly stateDir: string;
  readonly log: Logger;
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

export class ContainerDiskMounter {
  private readonly o: ContainerDiskMounterOptions;
  private readonly proc: string;
  private readonly dir: string;
  /** uid → its record, as on disk. */
  private readonly records = new Map<string, ContainerDiskMountRecord>();
  private hostNs: Promise<boolean> | undefined;

  constructor(o: ContainerDiskMounterOptions) {
    this.o = o;
    this.proc = o.procDir ?? '/proc';
    this.dir = join(o.stateDir, CONTAINER_DISK_MOUNTS_DIR);
  }

  /** Loads the records a previous handler left; returns them. */
  async load(): Promise<ContainerDiskMountRecord[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const n of names) {
      if (!n.endsWith('.json')) continue;
      try {
        const r = JSON.parse(await readFile(join(this.dir, n), 'utf8')) as ContainerDiskMountRecord;
        if (typeof r.uid === 'string' && Array.isArray(r.targets)) this.records.set(r.uid, r);
      } catch (err) {
        this.o.log.warn({ file: n, err: (err as Error).message }, 'unreadable container-disk mount record skipped');
      }
    }
    return [...this.records.values()];
  }

  has(uid: string): boolean {
    return this.records.has(uid);
  }

  /** Mounts every containerDisk (and kernel-boot artifact) of the VMI; already mounted targets are left alone. */
  async mount(vmi: VirtualMachineInstance, containerDisksDir: string, log: Logger): Promise<string[]> {
    const uid = vmi.metadata?.uid ?? '';
    if (!uid) throw new ContainerDiskMountError('metadata.uid: required to find the container disks');
    const wanted = wantedMounts(vmi, containerDisksDir);
    if (wanted.length === 0) return [];
    const mountinfo = await this.mountinfo();
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
      const source = await this.sourceFile(pid, w);
      await this.record(uid, containerDisksDir, w.target);
      await mkdir(join(w.target, '..'), { recursive: true });
      await (await open(w.target, 'a')).close();
      await this.exec('mount', ['--bind', source, w.target]);
      await this.exec('mount', ['-o', 'remount,bind,ro', w.target]).catch(async (err: unknown) => {
        await this.exec('umount', [w.target]).catch(() => undefined);
        throw err;
      });
      log.info({ volume: w.field, source, target: w.target, pid }, 'container disk bind-mounted read-only');
      done.push(w.target);
    }
    return done;
  }

  /** Unmounts everything recorded for the VMI and drops the record (no record: nothing to do). */
  async unmount(uid: string, log: Logger): Promise<void> {
    const r = this.records.get(uid);
    if (!r) return;
    const mountinfo = await this.mountinfo();
    for (const t of r.targets) {
      for (let n = mountCount(mountinfo, t); n > 0; n--) await this.exec('umount', [t]);
      await rm(t, { force: true }).catch(() => undefined);
      log.info({ target: t }, 'container disk unmounted');
    }
    await rm(join(this.dir, `${uid}.json`), { force: true });
    this.records.delete(uid);
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

  private async record(uid: string, containerDisksDir: string, target: string): Promise<void> {
    const prev = this.records.get(uid);
    if (prev?.targets.includes(target)) return;
    const r: ContainerDiskMountRecord = { uid, containerDisksDir, targets: [...(prev?.targets ?? []), target] };
    await mkdir(this.dir, { recursive: true });
    const file = join(this.dir, `${uid}.json`);
    await writeFile(`${file}.tmp`, JSON.stringify(r));
    await rename(`${file}.tmp`, file);
    this.records.set(uid, r);
  }

  /** The handler container may have its own mount namespace: mounts go into the host's (pid 1's), as virt-chroot does. */
  private inHostNs(): Promise<boolean> {
    this.hostNs ??= Promise.all([readlink(join(this.proc, '1', 'ns', 'mnt')), readlink(join(this.proc, 'self', 'ns', 'mnt'))])
      .then(([a, b]) => a !== b, () => false);
    return this.hostNs;
  }

  private async mountinfo(): Promise<string> {
    return readFile(join(this.proc, (await this.inHostNs()) ? '1' : 'self', 'mountinfo'), 'utf8');
  }

  private async exec(cmd: string, args: string[]): Promise<void> {
    const [file, argv] = (await this.inHostNs()) ? ['nsenter', [`--mount=${join(this.proc, '1', 'ns', 'mnt')}`, '--', cmd, ...args]] : [cmd, args];
    try {
      await run(file, argv);
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new ContainerDiskMountError(`${cmd} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
    }
  }
}
