// The bind mounts the node agent makes into launcher pods (container disks, hotplugged volumes) and
// the records that let a restarted agent undo them. The agent's container may have a mount
// namespace of its own: mounts, and the commands that touch host paths, then run in the host's
// (pid 1's) through nsenter, as KubeVirt's virt-chroot does; /proc/1/mountinfo tells what is
// mounted there. Every target is recorded in `<stateDir>/<records dir>/<vmiUID>.json` BEFORE it is
// mounted, so a handler that dies between the two still finds and unmounts it.
import { execFile } from 'node:child_process';
import { mkdir, open, readdir, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../src/log/logger.ts';
import { mountCount } from './container-disk/proc.ts';

const run = promisify(execFile);

export interface MountRecord {
  readonly uid: string;
  readonly targets: string[];
}

export interface BindMountsOptions {
  readonly stateDir: string;
  /** The records' directory under the state dir (one per kind of mount). */
  readonly recordsDir: string;
  readonly log: Logger;
  /** The proc filesystem (tests keep the default). */
  readonly procDir?: string;
  /** Turns a failed command's text into the caller's error class. */
  readonly error: (message: string) => Error;
}

export class BindMounts {
  private readonly o: BindMountsOptions;
  readonly proc: string;
  private readonly dir: string;
  /** uid → its record, as on disk. */
  private readonly records = new Map<string, MountRecord>();
  private hostNs: Promise<boolean> | undefined;

  constructor(o: BindMountsOptions) {
    this.o = o;
    this.proc = o.procDir ?? '/proc';
    this.dir = join(o.stateDir, o.recordsDir);
  }

  /** Loads the records a previous handler left; returns them. */
  async load(): Promise<MountRecord[]> {
    for (const n of await readdir(this.dir).catch(() => [] as string[])) {
      if (!n.endsWith('.json')) continue;
      try {
        const r = JSON.parse(await readFile(join(this.dir, n), 'utf8')) as Partial<MountRecord>;
        if (typeof r.uid === 'string' && Array.isArray(r.targets)) this.records.set(r.uid, { uid: r.uid, targets: r.targets.filter((t): t is string => typeof t === 'string') });
      } catch (err) {
        this.o.log.warn({ file: join(this.dir, n), err: (err as Error).message }, 'unreadable mount record skipped');
      }
    }
    return [...this.records.values()];
  }

  has(uid: string): boolean {
    return this.records.has(uid);
  }

  targetsOf(uid: string): readonly string[] {
    return this.records.get(uid)?.targets ?? [];
  }

  /** How often `target` is mounted on, in the host's mount namespace. */
  async mountCount(target: string): Promise<number> {
    return mountCount(await this.mountinfo(), target);
  }

  /** Records the target, creates it as an empty file, bind-mounts `source` (a host path) onto it; read-only on request. */
  async bind(uid: string, source: string, target: string, opts: { readOnly?: boolean } = {}): Promise<void> {
    await this.record(uid, target);
    await mkdir(dirname(target), { recursive: true });
    await (await open(target, 'a')).close();
    await this.exec('mount', ['--bind', source, target]);
    if (!opts.readOnly) return;
    await this.exec('mount', ['-o', 'remount,bind,ro', target]).catch(async (err: unknown) => {
      await this.exec('umount', [target]).catch(() => undefined);
      throw err;
    });
  }

  /** Unmounts the recorded targets (all of them unless `only` names some), removes them, and updates or drops the record. */
  async unmount(uid: string, log: Logger, only?: ReadonlySet<string>): Promise<string[]> {
    const r = this.records.get(uid);
    if (!r) return [];
    const done: string[] = [];
    const mountinfo = await this.mountinfo();
    for (const t of r.targets) {
      if (only && !only.has(t)) continue;
      for (let n = mountCount(mountinfo, t); n > 0; n--) await this.exec('umount', [t]);
      await rm(t, { force: true }).catch(() => undefined);
      log.info({ target: t }, 'unmounted');
      done.push(t);
    }
    const left = r.targets.filter((t) => !done.includes(t));
    await this.write(uid, left);
    return done;
  }

  private async record(uid: string, target: string): Promise<void> {
    const prev = this.records.get(uid)?.targets ?? [];
    if (prev.includes(target)) return;
    await this.write(uid, [...prev, target]);
  }

  private async write(uid: string, targets: string[]): Promise<void> {
    const file = join(this.dir, `${uid}.json`);
    if (targets.length === 0) {
      await rm(file, { force: true });
      this.records.delete(uid);
      return;
    }
    const r: MountRecord = { uid, targets };
    await mkdir(this.dir, { recursive: true });
    await writeFile(`${file}.tmp`, JSON.stringify(r));
    await rename(`${file}.tmp`, file);
    this.records.set(uid, r);
  }

  /**
   * Whether mounts and host-path commands go into pid 1's mount namespace (nsenter): the handler has a
   * namespace of its own and may enter the host's. False on the host, and where /proc/1/ns/mnt is
   * refused (then host paths are reached under --host-fs).
   */
  entersHostNs(): Promise<boolean> {
    this.hostNs ??= Promise.all([readlink(join(this.proc, '1', 'ns', 'mnt')), readlink(join(this.proc, 'self', 'ns', 'mnt'))])
      .then(([a, b]) => a !== b, () => false);
    return this.hostNs;
  }

  async mountinfo(): Promise<string> {
    return readFile(join(this.proc, (await this.entersHostNs()) ? '1' : 'self', 'mountinfo'), 'utf8');
  }

  /** Runs a command in the host's mount namespace; its stdout. */
  async exec(cmd: string, args: string[]): Promise<string> {
    const [file, argv] = (await this.entersHostNs()) ? ['nsenter', [`--mount=${join(this.proc, '1', 'ns', 'mnt')}`, '--', cmd, ...args]] : [cmd, args];
    try {
      return (await run(file, argv)).stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw this.o.error(`${cmd} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
    }
  }
}
