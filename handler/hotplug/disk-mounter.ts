// Hotplugged claims on a real node (virt-handler's pkg/virt-handler/hotplug-disk/mount.go,
// mountFileSystemHotplugVolume): the VMI controller runs an attachment pod that makes the kubelet
// attach and mount the claims on this node, and records the pod's UID in the volume's status
// (`hotplugVolume.attachPodUID`) once it runs. The handler then finds the claim's directory
// (handler/hotplug/disk-source.ts: the attachment pod's volume under the kubelet's pods dir, or a
// hostPath PV's directory), creates a sparse disk.img when the claim is empty, and bind-mounts it onto
// `<launcher pod's hotplug-disks emptyDir>/<volume>.img`, where the launcher plugs it. Targets are
// recorded in `<stateDir>/hotplug-disk-mounts/<vmiUID>.json` before they are mounted
// (handler/bind-mounts.ts); a volume gone from the VMI and its domain is unmounted, and a restarted
// handler unmounts what a VMI that is gone left. Commands that touch host paths run in the host's
// mount namespace, as the mounts do.
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { isNotFound, type KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { Logger } from '../../src/log/logger.ts';
import { BindMounts, type MountRecord } from '../bind-mounts.ts';
import { DISK_IMAGE, HotplugDiskError, claimInfo, diskImageSize, diskSourceOf, podVolumeMountDir, type Claim, type PersistentVolume } from './disk-source.ts';
import type { MountResult } from './status.ts';

export const HOTPLUG_DISK_MOUNTS_DIR = 'hotplug-disk-mounts';

export interface HotplugDiskMounterOptions {
  readonly client: KubeClient;
  readonly podsDir: string;
  readonly stateDir: string;
  readonly log: Logger;
  /** Where the host's root filesystem is visible (`/` on the host; a hostPath mount of `/` in a pod). */
  readonly hostFs?: string;
  /** The proc filesystem (tests keep the default). */
  readonly procDir?: string;
}

/** The target of a volume in the launcher pod's hotplug-disks dir (KubeVirt's GetFileSystemDiskTargetPathFromHostView). */
export const hotplugTarget = (hotplugDir: string, volume: string): string => join(hotplugDir, `${volume}.img`);
const volumeOfTarget = (target: string): string => basename(target).replace(/\.img$/, '');

export class HotplugDiskMounter {
  private readonly o: HotplugDiskMounterOptions;
  private readonly mounts: BindMounts;

  constructor(o: HotplugDiskMounterOptions) {
    this.o = o;
    this.mounts = new BindMounts({ stateDir: o.stateDir, recordsDir: HOTPLUG_DISK_MOUNTS_DIR, log: o.log, ...(o.procDir ? { procDir: o.procDir } : {}), error: (m) => new HotplugDiskError(m) });
  }

  load(): Promise<MountRecord[]> {
    return this.mounts.load();
  }

  has(uid: string): boolean {
    return this.mounts.has(uid);
  }

  /** The volumes recorded as mounted for the VMI. */
  volumesOf(uid: string): string[] {
    return this.mounts.targetsOf(uid).map(volumeOfTarget);
  }

  /**
   * Makes the claim's disk.img the volume's image in the launcher pod. Already mounted: done. No
   * attachment pod ready yet, or the kubelet has not mounted the volume for it yet: waiting.
   */
  async mount(vmi: VirtualMachineInstance, volume: string, claimName: string, claim: Claim, hotplugDir: string, log: Logger): Promise<MountResult> {
    const uid = vmi.metadata?.uid ?? '';
    if (!uid) throw new HotplugDiskError('metadata.uid: required to record hotplug mounts');
    const namespace = vmi.metadata?.namespace ?? '';
    const claimRef = `${namespace}/${claimName}`;
    const pvc = claimInfo(claimName, claim);
    const target = hotplugTarget(hotplugDir, volume);
    if ((await this.mounts.mountCount(target)) > 0) return { mounted: true, pvc };
    const podUid = vmi.status?.volumeStatus?.find((s) => s.name === volume)?.hotplugVolume?.attachPodUID;
    if (!podUid) return { mounted: false, waiting: true, message: `Volume ${volume} is waiting for its attachment pod` };
    const pvName = claim.spec?.volumeName;
    if (!pvName) throw new HotplugDiskError(`PersistentVolumeClaim ${claimRef} of volume ${volume} names no volume (spec.volumeName)`);
    let pv: PersistentVolume;
    try {
      pv = await this.o.client.get<PersistentVolume>(Resources.persistentVolumes, undefined, pvName);
    } catch (err) {
      if (isNotFound(err)) throw new HotplugDiskError(`PersistentVolume ${pvName} of claim ${claimRef} (volume ${volume}) does not exist`);
      throw err;
    }
    const source = diskSourceOf(claimRef, claim, pv);
    const host = source.kind === 'host' ? source : undefined;
    let dir = source.kind === 'podVolume' ? await this.podVolumeDir(podUid, source.pvName) : undefined;
    if (!dir) {
      const at = host ?? (source.kind === 'podVolume' ? source.fallback : undefined);
      if (!at) return { mounted: false, waiting: true, message: `Volume ${volume} is waiting for the kubelet to mount ${pvName} for attachment pod ${podUid}` };
      if ((await this.kind(await this.hostPath(at.dir))) !== 'directory') throw new HotplugDiskError(`${at.field} ${at.dir} is not a directory on this node`);
      dir = await this.hostPath(at.dir);
    }
    const image = join(dir, DISK_IMAGE);
    const kind = await this.kind(image);
    if (kind === undefined) {
      const size = diskImageSize(volume, claimRef, claim);
      await this.mounts.exec('truncate', ['-s', String(size), image]);
      log.info({ volume, image, bytes: size }, 'created the sparse disk.img of an empty hotplugged claim');
    } else if (kind !== 'regular file' && kind !== 'regular empty file') {
      throw new HotplugDiskError(`${image} of claim ${claimRef} is a ${kind}, not a disk image file`);
    }
    // The launcher runs as the VMI's runtime user: the image must be its (KubeVirt's SetFileOwnership).
    const user = vmi.status?.runtimeUser ?? 0;
    if (user !== 0) await this.mounts.exec('chown', [`${user}:${user}`, image]);
    await this.mounts.bind(uid, image, target);
    log.info({ volume, claim: claimName, source: image, target }, 'hotplug volume bind-mounted into the launcher pod');
    return { mounted: true, pvc };
  }

  /**
   * A host path (a hostPath or local PV's directory) as the commands here reach it: itself in the
   * host's mount namespace, else under the host's root filesystem mounted into the handler's pod.
   */
  private async hostPath(path: string): Promise<string> {
    return (await this.mounts.entersHostNs()) || !this.o.hostFs ? path : join(this.o.hostFs, path);
  }

  /** Unmounts the VMI's recorded volumes not in `keep` (all without it). */
  async unmount(uid: string, log: Logger, keep?: ReadonlySet<string>): Promise<string[]> {
    const only = keep ? new Set(this.mounts.targetsOf(uid).filter((t) => !keep.has(volumeOfTarget(t)))) : undefined;
    if (only?.size === 0) return [];
    return (await this.mounts.unmount(uid, log, only)).map(volumeOfTarget);
  }

  /** `stat -L -c %F` in the host's mount namespace: directory, regular file, ...; undefined when there is nothing. */
  private async kind(path: string): Promise<string | undefined> {
    try {
      return (await this.mounts.exec('stat', ['-L', '-c', '%F', path])).trim();
    } catch {
      return undefined;
    }
  }

  /** The kubelet's mount of PV `pvName` for pod `podUid`, under any volume plugin's directory. */
  private async podVolumeDir(podUid: string, pvName: string): Promise<string | undefined> {
    const volumesDir = join(this.o.podsDir, podUid, 'volumes');
    for (const plugin of (await readdir(volumesDir).catch(() => [] as string[])).sort()) {
      const dir = podVolumeMountDir(volumesDir, plugin, pvName);
      if ((await stat(dir).catch(() => undefined))?.isDirectory()) return dir;
    }
    return undefined;
  }
}
