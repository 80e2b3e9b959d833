// The node's part of volume hotplug and live updates. KubeVirt attaches a hotplugged claim to the
// node with an attachment pod and virt-handler bind-mounts its disk.img (or block device) into the
// launcher pod's hotplug-disks dir. qvirt's smaller scheme, for claims of its local-path provisioner
// (local mode, no mount namespaces): the handler reads the claim's directory from the
// `local.qvirt.io/path` annotation and links `<dir>/disk.img` as `<hotplug-disks>/<volume>.img` in the
// launcher pod's emptyDir (creating a sparse disk.img of the requested size first when the claim is
// empty, as KubeVirt does for Filesystem claims). The launcher then plugs it (MountedToPod → Ready);
// the link is removed once the volume has left both the spec and the domain.
//
// It also decides when a running domain needs another SyncVirtualMachine (the live-relevant spec or
// the mounts changed) and fills in the hotplug/live-update parts of the VMI status.
import { lstat, mkdir, open, readdir, readlink, rm, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { PersistentVolumeClaimInfo, VirtualMachineInstance, VirtualMachineInstanceStatus } from '../src/api/types.ts';
import { quantityToNumber } from '../src/api/quantity.ts';
import { isNotFound, type KubeClient, type KubeObject } from '../src/kube/client.ts';
import { Resources } from '../src/kube/resource.ts';
import type { Logger } from '../src/log/logger.ts';
import { LOCAL_PATH_ANNOTATION } from '../src/local/pod-runner/constants.ts';
import type { ReportedDomain } from './domain-view.ts';
import { emptyDir } from './launcher-sockets.ts';
import { hotplugVolumes, liveSyncFingerprint, withHotplugInterfaces, withHotplugVolumeStatus, withLiveUpdateStatus, type MountResult } from './hotplug-status.ts';

/** The launcher pod's emptyDir KubeVirt mounts at /var/run/kubevirt/hotplug-disks. */
export const HOTPLUG_DISKS_VOLUME = 'hotplug-disks';
const MiB = 1024 * 1024;

interface Claim extends KubeObject {
  spec?: { volumeMode?: string; accessModes?: string[]; resources?: { requests?: Record<string, string> } };
  status?: { phase?: string; capacity?: Record<string, string>; accessModes?: string[] };
}

export interface LiveUpdatesOptions {
  readonly client: KubeClient;
  readonly podsDir: string;
  readonly log: Logger;
}

export class LiveUpdates {
  private readonly o: LiveUpdatesOptions;
  private readonly mounts = new Map<string, Map<string, MountResult>>();
  private readonly synced = new Map<string, string>();

  constructor(o: LiveUpdatesOptions) {
    this.o = o;
  }

  mountsOf(key: string): ReadonlyMap<string, MountResult> {
    return this.mounts.get(key) ?? new Map();
  }

  /** Links the spec's hotplug claims into the launcher pod; unlinks those gone from spec and domain. */
  async reconcileMounts(key: string, vmi: VirtualMachineInstance, podUid: string, domain: ReportedDomain | undefined, log: Logger): Promise<ReadonlyMap<string, MountResult>> {
    const dir = emptyDir(this.o.podsDir, podUid, HOTPLUG_DISKS_VOLUME);
    const wanted = hotplugVolumes(vmi);
    const result = new Map<string, MountResult>();
    const prev = this.mounts.get(key);
    for (const w of wanted) {
      try {
        result.set(w.name, await this.mount(vmi.metadata?.namespace ?? 'default', w.name, w.claimName, dir));
        if (!prev?.get(w.name)?.mounted) log.info({ volume: w.name, claim: w.claimName }, 'hotplug volume mounted into the launcher pod');
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (prev?.get(w.name)?.message !== message) log.warn({ volume: w.name, claim: w.claimName, reason: message }, 'hotplug volume not mounted');
        result.set(w.name, { mounted: false, message });
      }
    }
    const keep = new Set([...wanted.map((w) => w.name), ...(domain?.live?.disks ?? []).map((d) => d.name)]);
    for (const f of await readdir(dir).catch(() => [] as string[])) {
      const name = f.replace(/\.img$/, '');
      if (keep.has(name)) continue;
      await rm(join(dir, f), { force: true });
      log.info({ volume: name }, 'hotplug volume unmounted from the launcher pod');
    }
    this.mounts.set(key, result);
    return result;
  }

  private async mount(namespace: string, volume: string, claimName: string, dir: string): Promise<MountResult> {
    let claim: Claim;
    try {
      claim = await this.o.client.get<Claim>(Resources.persistentVolumeClaims, namespace, claimName);
    } catch (err) {
      if (isNotFound(err)) throw new Error(`PersistentVolumeClaim ${namespace}/${claimName} of volume ${volume} does not exist`);
      throw err;
    }
    if (claim.status?.phase !== 'Bound') throw new Error(`PersistentVolumeClaim ${namespace}/${claimName} of volume ${volume} is not bound yet (phase ${claim.status?.phase ?? 'Pending'})`);
    const path = claim.metadata?.annotations?.[LOCAL_PATH_ANNOTATION];
    if (!path) {
      throw new Error(`PersistentVolumeClaim ${namespace}/${claimName} of volume ${volume} was not provisioned by qvirt's local-path provisioner (no ${LOCAL_PATH_ANNOTATION} annotation); other claims need KubeVirt's attachment pods, which qvirt does not implement`);
    }
    const st = await stat(path).catch(() => undefined);
    if (!st) throw new Error(`the directory of PersistentVolumeClaim ${namespace}/${claimName} (${path}) does not exist on this node`);
    const requests = claim.spec?.resources?.requests?.storage;
    const capacity = claim.status?.capacity?.storage;
    let source = path;
    if (st.isDirectory()) {
      source = join(path, 'disk.img');
      if (!(await stat(source).catch(() => undefined))) {
        const size = quantityToNumber(requests ?? capacity ?? '1Gi');
        const fh = await open(source, 'wx');
        try { await fh.truncate(size - (size % MiB)); } finally { await fh.close(); }
      }
    }
    await mkdir(dir, { recursive: true });
    const link = join(dir, `${volume}.img`);
    const existing = await lstat(link).catch(() => undefined);
    if (existing && (!existing.isSymbolicLink() || (await readlink(link)) !== source)) await rm(link, { force: true });
    if (!existing || !(await lstat(link).catch(() => undefined))) await symlink(source, link);
    const pvc: PersistentVolumeClaimInfo = {
      claimName,
      volumeMode: 'Filesystem',
      accessModes: (claim.status?.accessModes ?? claim.spec?.accessModes ?? []) as PersistentVolumeClaimInfo['accessModes'],
      ...(capacity ? { capacity: { storage: capacity } } : {}),
      ...(requests ? { requests: { storage: requests } } : {}),
    };
    return { mounted: true, pvc };
  }

  /** The VMI as the launcher must see it: hotplug volume phases as the node now knows them. */
  vmiForLauncher(key: string, vmi: VirtualMachineInstance, domain: ReportedDomain | undefined): VirtualMachineInstance {
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
  applyStatus(key: string, s: VirtualMachineInstanceStatus, vmi: VirtualMachineInstance, domain: ReportedDomain | undefined, now: string): VirtualMachineInstanceStatus {
    if (!domain) return s;
    const volumeStatus = withHotplugVolumeStatus(s.volumeStatus ?? [], vmi, domain, this.mountsOf(key));
    const out = withLiveUpdateStatus({ ...s, volumeStatus }, vmi, domain, now);
    const interfaces = withHotplugInterfaces(out.interfaces, vmi, domain);
    if (interfaces) out.interfaces = interfaces;
    return out;
  }

  forget(key: string): void {
    this.mounts.delete(key);
    this.synced.delete(key);
  }
}
