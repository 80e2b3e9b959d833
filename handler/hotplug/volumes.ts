// The node's part of volume hotplug and live updates. KubeVirt attaches a hotplugged claim to the
// node with an attachment pod and virt-handler bind-mounts its disk.img into the launcher pod's
// hotplug-disks dir; qvirt does the same (handler/hotplug/disk-mounter.ts) for every claim but one
// kind: the local mode's local-path claims (the `local.qvirt.io/path` annotation; no mount
// namespaces, no attachment pods there), whose directory the handler reads from the annotation and
// links `<dir>/disk.img` as `<hotplug-disks>/<volume>.img` in the launcher pod's emptyDir (creating
// a sparse disk.img of the claim's size first when the claim is empty, as KubeVirt does for
// Filesystem claims). Either way the launcher then plugs it (MountedToPod → Ready); the link or
// mount goes once the volume has left both the spec and the domain. A memoryDump volume is not a
// disk: its claim's directory itself is linked as `<hotplug-disks>/<volume>/`, the launcher dumps the
// guest's memory into it (handler/memory-dump-status.ts) — local-path claims only so far.
//
// It also decides when a running domain needs another SyncVirtualMachine (the live-relevant spec or
// the mounts changed) and fills in the hotplug/live-update parts of the VMI status.
import { lstat, mkdir, open, readdir, readlink, rm, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { VirtualMachineInstance, VirtualMachineInstanceStatus } from '../../src/api/types.ts';
import { isNotFound, type KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { Logger } from '../../src/log/logger.ts';
import { LOCAL_PATH_ANNOTATION } from '../../src/kube/local-path.ts';
import type { Domain } from '../../src/api/domain/domain.ts';
import { emptyDir } from '../launcher/sockets.ts';
import { hotplugVolumes, liveDevices, liveSyncFingerprint, withHotplugInterfaces, withHotplugVolumeStatus, withLiveUpdateStatus, type MountResult } from './status.ts';
import { DISK_IMAGE, claimInfo, diskImageSize, type Claim } from './disk-source.ts';
import { HotplugDiskMounter, hotplugTarget } from './disk-mounter.ts';
import { pendingMemoryDumps, withMemoryDumpStatus } from '../memory-dump-status.ts';

/** The launcher pod's emptyDir KubeVirt mounts at /var/run/kubevirt/hotplug-disks. */
export const HOTPLUG_DISKS_VOLUME = 'hotplug-disks';
/** Requeue of a running VMI while a hotplug volume waits for its attachment pod, or failed to mount. */
const WAITING_REQUEUE_MS = 1000;
const FAILED_REQUEUE_MS = 5000;

export interface LiveUpdatesOptions {
  readonly client: KubeClient;
  readonly podsDir: string;
  readonly stateDir: string;
  readonly log: Logger;
  /** Where the host's root filesystem is visible (hostPath and local volumes are found there). */
  readonly hostFs?: string;
}

export class LiveUpdates {
  private readonly o: LiveUpdatesOptions;
  private readonly mounts = new Map<string, Map<string, MountResult>>();
  private readonly synced = new Map<string, string>();
  /** Claims attached through attachment pods: bind mounts, recorded. */
  readonly attached: HotplugDiskMounter;

  constructor(o: LiveUpdatesOptions) {
    this.o = o;
    this.attached = new HotplugDiskMounter({ client: o.client, podsDir: o.podsDir, stateDir: o.stateDir, log: o.log, ...(o.hostFs ? { hostFs: o.hostFs } : {}) });
  }

  mountsOf(key: string): ReadonlyMap<string, MountResult> {
    return this.mounts.get(key) ?? new Map();
  }

  /**
   * Makes the spec's hotplug claims available in the launcher pod; takes away those gone from spec
   * and domain. Returns when to look again (a volume waiting or failed), if at all.
   */
  async reconcileMounts(key: string, vmi: VirtualMachineInstance, podUid: string, domain: Domain | undefined, log: Logger): Promise<number | undefined> {
    const dir = emptyDir(this.o.podsDir, podUid, HOTPLUG_DISKS_VOLUME);
    const wanted = hotplugVolumes(vmi);
    const result = new Map<string, MountResult>();
    const prev = this.mounts.get(key);
    for (const w of wanted) {
      let r: MountResult;
      try {
        r = await this.mount(vmi, w.name, w.claimName, dir, log, w.memoryDump === true);
      } catch (err) {
        r = { mounted: false, message: err instanceof Error ? err.message : String(err) };
      }
      const before = prev?.get(w.name);
      if (r.mounted && !before?.mounted) log.info({ volume: w.name, claim: w.claimName }, 'hotplug volume mounted into the launcher pod');
      if (!r.mounted && before?.message !== r.message) log[r.waiting ? 'debug' : 'warn']({ volume: w.name, claim: w.claimName, reason: r.message }, 'hotplug volume not mounted');
      result.set(w.name, r);
    }
    const keep = new Set([...wanted.map((w) => w.name), ...(liveDevices(domain)?.disks ?? []).map((d) => d.name)]);
    const uid = vmi.metadata?.uid ?? '';
    for (const name of await this.attached.unmount(uid, log, keep)) log.info({ volume: name }, 'hotplug volume unmounted from the launcher pod');
    for (const f of await readdir(dir).catch(() => [] as string[])) {
      const name = f.replace(/\.img$/, '');
      if (keep.has(name) || !(await lstat(join(dir, f)).catch(() => undefined))?.isSymbolicLink()) continue;
      await rm(join(dir, f), { force: true });
      log.info({ volume: name }, 'hotplug volume unlinked from the launcher pod');
    }
    this.mounts.set(key, result);
    const pending = [...result.values()].filter((r) => !r.mounted);
    if (pending.length === 0) return undefined;
    return pending.every((r) => r.waiting) ? WAITING_REQUEUE_MS : FAILED_REQUEUE_MS;
  }

  private async mount(vmi: VirtualMachineInstance, volume: string, claimName: string, dir: string, log: Logger, memoryDump = false): Promise<MountResult> {
    const namespace = vmi.metadata?.namespace ?? 'default';
    let claim: Claim;
    try {
      claim = await this.o.client.get<Claim>(Resources.persistentVolumeClaims, namespace, claimName);
    } catch (err) {
      if (isNotFound(err)) throw new Error(`PersistentVolumeClaim ${namespace}/${claimName} of volume ${volume} does not exist`);
      throw err;
    }
    if (claim.status?.phase !== 'Bound') throw new Error(`PersistentVolumeClaim ${namespace}/${claimName} of volume ${volume} is not bound yet (phase ${claim.status?.phase ?? 'Pending'})`);
    const path = claim.metadata?.annotations?.[LOCAL_PATH_ANNOTATION];
    if (memoryDump) {
      if (!path) throw new Error(`PersistentVolumeClaim ${namespace}/${claimName} of memory dump volume ${volume}: qvirt's node agent mounts memory dump claims of the local mode's local-path provisioner only (no attachment pod directory mounts yet)`);
      return this.linkLocalDirectory(volume, `${namespace}/${claimName}`, claim, claimName, path, dir);
    }
    if (!path) return this.attached.mount(vmi, volume, claimName, claim, dir, log);
    return this.linkLocalPath(volume, namespace, claimName, claim, path, dir);
  }

  /** A local-path claim's directory linked as `<hotplug-disks>/<volume>` (a memory dump's target directory). */
  private async linkLocalDirectory(volume: string, claimRef: string, claim: Claim, claimName: string, path: string, dir: string): Promise<MountResult> {
    if (!(await stat(path).catch(() => undefined))?.isDirectory()) throw new Error(`the directory of PersistentVolumeClaim ${claimRef} (${path}) does not exist on this node`);
    await mkdir(dir, { recursive: true });
    const link = join(dir, volume);
    const existing = await lstat(link).catch(() => undefined);
    if (existing && (!existing.isSymbolicLink() || (await readlink(link)) !== path)) await rm(link, { force: true });
    if (!existing || !(await lstat(link).catch(() => undefined))) await symlink(path, link);
    return { mounted: true, pvc: claimInfo(claimName, claim) };
  }

  /** A local-path claim: `<its dir>/disk.img` (or the claim's file itself) linked as `<volume>.img`. */
  private async linkLocalPath(volume: string, namespace: string, claimName: string, claim: Claim, path: string, dir: string): Promise<MountResult> {
    const claimRef = `${namespace}/${claimName}`;
    const st = await stat(path).catch(() => undefined);
    if (!st) throw new Error(`the directory of PersistentVolumeClaim ${claimRef} (${path}) does not exist on this node`);
    let source = path;
    if (st.isDirectory()) {
      source = join(path, DISK_IMAGE);
      if (!(await stat(source).catch(() => undefined))) {
        const fh = await open(source, 'wx');
        try { await fh.truncate(diskImageSize(volume, claimRef, claim)); } finally { await fh.close(); }
      }
    }
    await mkdir(dir, { recursive: true });
    const link = hotplugTarget(dir, volume);
    const existing = await lstat(link).catch(() => undefined);
    if (existing && (!existing.isSymbolicLink() || (await readlink(link)) !== source)) await rm(link, { force: true });
    if (!existing || !(await lstat(link).catch(() => undefined))) await symlink(source, link);
    return { mounted: true, pvc: claimInfo(claimName, claim) };
  }

  /** The VMI as the launcher must see it: hotplug volume phases as the node now knows them. */
  vmiForLauncher(key: string, vmi: VirtualMachineInstance, domain: Domain | undefined): VirtualMachineInstance {
    const hot = hotplugVolumes(vmi);
    const names = new Set(hot.map((h) => h.name));
    const base = (vmi.status?.volumeStatus ?? []).filter((s) => !names.has(s.name) && !s.hotplugVolume);
    const volumeStatus = withHotplugVolumeStatus([...base, ...hot.map((h) => ({ name: h.name, target: '' }))], vmi, domain, this.mountsOf(key));
    return { ...vmi, status: { ...vmi.status, volumeStatus } };
  }

  /** True when the live-relevant part of the VMI or the mounts changed since the last sync. */
  needsSync(key: string, vmi: VirtualMachineInstance): boolean {
    return this.synced.get(key) !== liveSyncFingerprint(vmi, this.mountsOf(key));
  }

  markSynced(key: string, vmi: VirtualMachineInstance): void {
    this.synced.set(key, liveSyncFingerprint(vmi, this.mountsOf(key)));
  }

  /** The hotplug and live-update parts of the status the handler writes. */
  applyStatus(key: string, s: VirtualMachineInstanceStatus, vmi: VirtualMachineInstance, domain: Domain | undefined, now: string): VirtualMachineInstanceStatus {
    if (!domain) return s;
    const volumeStatus = withMemoryDumpStatus(withHotplugVolumeStatus(s.volumeStatus ?? [], vmi, domain, this.mountsOf(key)), vmi, domain.Spec.Metadata.KubeVirt.MemoryDump, new Date(now));
    const out = withLiveUpdateStatus({ ...s, volumeStatus }, vmi, domain, now);
    const interfaces = withHotplugInterfaces(out.interfaces, vmi, domain);
    if (interfaces) out.interfaces = interfaces;
    return out;
  }

  /**
   * getMemoryDump: asks the launcher for each dump the VMI's status has in progress (it ignores a
   * dump it already makes or made). Returns when to look again while one is under way.
   */
  async requestMemoryDumps(vmi: VirtualMachineInstance, dump: (path: string) => Promise<{ success: boolean; message: string }>, log: Logger): Promise<number | undefined> {
    const pending = pendingMemoryDumps(vmi);
    for (const d of pending) {
      const r = await dump(d.path);
      if (!r.success) throw new Error(`failed to getting memory dump: ${r.message}`);
      log.debug({ volume: d.volume, path: d.path }, 'memory dump requested from the launcher');
    }
    return pending.length > 0 ? WAITING_REQUEUE_MS : undefined;
  }

  forget(key: string): void {
    this.mounts.delete(key);
    this.synced.delete(key);
  }
}
