// prepareVolumes: everything the launcher puts on disk for a VMI's volumes before QEMU starts
// (KubeVirt's preStartHook storage steps: cloud-init ISO, containerDisk and ephemeral overlays,
// empty disks, config-volume ISOs, PVC/hostDisk images), and the result the QEMU command line is
// built from. Volumes are prepared one at a time in spec order; the first failure stops it with an
// error that names the volume.
import { chown } from '../fs/async.ts';
import { forObject } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { prepareCloudInit } from './cloud-init.ts';
import { DEFAULT_DISK_MEMORY_LIMIT_BYTES } from './constants.ts';
import { needsConfigIso, prepareConfigVolume } from './config-volumes.ts';
import { prepareContainerDisk } from './container-disk.ts';
import { prepareEmptyDisk } from './empty-disk.ts';
import { prepareEphemeral } from './ephemeral.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { prepareHostDisk } from './host-disk.ts';
import { downwardMetricsDisk, type DiskDirs } from './paths.ts';
import { volumeSourceKind, type PreparedVolume, type PreparedVolumes, type PrepareOptions, type PvcHint } from './prepared.ts';
import { isHotplugVolume, preparePvc, pvcHintFromStatus } from './pvc.ts';

export type { PreparedVolume, PreparedVolumes, PrepareOptions } from './prepared.ts';

function pvcHint(vmi: VirtualMachineInstance, volume: string, opts: PrepareOptions): PvcHint | undefined {
  const fromStatus = (() => {
    try {
      return pvcHintFromStatus(vmi, volume);
    } catch (err) {
      throw new VolumePreparationError(volume, 'persistentVolumeClaim', errorMessage(err));
    }
  })();
  const told = opts.pvcs?.[volume];
  if (!told) return fromStatus;
  return { ...fromStatus, ...told };
}

/** Images the launcher makes and owns even when it reuses them (KubeVirt re-chowns these every start). */
const LAUNCHER_OWNED: ReadonlySet<string> = new Set(['containerDisk', 'ephemeral', 'emptyDisk', 'cloudInitNoCloud', 'cloudInitConfigDrive', 'configMap', 'secret', 'downwardAPI', 'serviceAccount', 'sysprep']);

const isoSizeFromStatus = (vmi: VirtualMachineInstance, volume: string): number => {
  const size = vmi.status?.volumeStatus?.find((s) => s.name === volume)?.size;
  if (size === undefined) throw new VolumePreparationError(volume, 'config', `failed to find the status of volume ${volume}`);
  return size;
};

/** Prepares every disk-backed volume of `vmi` under `dirs`. */
export async function prepareVolumes(vmi: VirtualMachineInstance, dirs: DiskDirs, opts: PrepareOptions = {}): Promise<PreparedVolumes> {
  const log = opts.log ? forObject(opts.log, { namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid, kind: 'VirtualMachineInstance' }) : undefined;
  if (!vmi.metadata?.name || !vmi.metadata.namespace) throw new Error('prepareVolumes: the VMI needs metadata.name and metadata.namespace');
  const volumes = vmi.spec.volumes ?? [];
  const filesystems = new Set((vmi.spec.domain.devices.filesystems ?? []).map((f) => f.name));
  const sparse = {
    ...(opts.lessPVCSpaceToleration !== undefined ? { lessPVCSpaceToleration: opts.lessPVCSpaceToleration } : {}),
    ...(opts.minimumReservePVCBytes !== undefined ? { minimumReservePVCBytes: opts.minimumReservePVCBytes } : {}),
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
  };
  const writer = opts.isoWriter ? { writer: opts.isoWriter } : {};

  // cloud-init first: like KubeVirt, a bad seed fails the start before anything else is made.
  const cloudInit = await prepareCloudInit(vmi, dirs, { ...writer, ...(opts.devices ? { devices: opts.devices } : {}), ...(opts.emptyIsos ? { emptyIsos: true } : {}) });

  const out: PreparedVolume[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (let i = 0; i < volumes.length; i++) {
    const volume = volumes[i]!;
    const kind = volumeSourceKind(volume);
    if (filesystems.has(volume.name)) {
      skipped.push({ name: volume.name, reason: 'shared with the guest as a filesystem (virtiofs), not a disk' });
      continue;
    }
    let prepared: PreparedVolume | undefined;
    switch (kind) {
      case 'containerDisk':
        prepared = await prepareContainerDisk(volume, i, dirs, { diskMemoryLimitBytes: opts.diskMemoryLimitBytes ?? DEFAULT_DISK_MEMORY_LIMIT_BYTES });
        break;
      case 'ephemeral':
        prepared = await prepareEphemeral(volume, dirs, pvcHint(vmi, volume.name, opts));
        break;
      case 'emptyDisk':
        prepared = await prepareEmptyDisk(volume, dirs);
        break;
      case 'persistentVolumeClaim':
      case 'dataVolume':
        if (volume.persistentVolumeClaim?.hotpluggable || volume.dataVolume?.hotpluggable) {
          // The node mounts it after start and SyncVirtualMachine plugs it (launcher/supervise/hotplug.ts).
          skipped.push({ name: volume.name, reason: 'hotpluggable: plugged into the running domain once the node has mounted it' });
          break;
        }
        prepared = await preparePvc(volume, dirs, pvcHint(vmi, volume.name, opts), { ...sparse, hotplug: isHotplugVolume(vmi, volume.name) });
        break;
      case 'hostDisk':
        prepared = await prepareHostDisk(volume, dirs, { ...sparse, ...(opts.hostDiskView ? { view: opts.hostDiskView } : {}) });
        break;
      case 'cloudInitNoCloud':
      case 'cloudInitConfigDrive':
        if (cloudInit?.name === volume.name) prepared = cloudInit;
        else skipped.push({ name: volume.name, reason: 'only the first cloud-init volume is used' });
        break;
      case 'configMap':
      case 'secret':
      case 'downwardAPI':
      case 'serviceAccount':
      case 'sysprep':
        if (needsConfigIso(vmi, volume)) {
          prepared = await prepareConfigVolume(volume, dirs, { ...writer, ...(opts.emptyIsos ? { emptySize: isoSizeFromStatus(vmi, volume.name) } : {}) });
        } else {
          skipped.push({ name: volume.name, reason: 'no disk references it' });
        }
        break;
      case 'downwardMetrics':
        // The metrics file is written by the downward-metrics updater, not here; QEMU opens it read-only.
        prepared = { name: volume.name, source: kind, type: 'file', path: downwardMetricsDisk(dirs), format: 'raw', readOnly: true, discard: false, created: false };
        break;
      case 'memoryDump':
      case 'containerPath':
        skipped.push({ name: volume.name, reason: `${kind} volumes are not disks` });
        break;
      case undefined:
        throw new VolumePreparationError(volume.name, 'unknown', 'the volume has no source');
    }
    if (prepared) {
      if (opts.owner && prepared.type === 'file' && (prepared.created || LAUNCHER_OWNED.has(prepared.source))) {
        try {
          await chown(prepared.path, opts.owner.uid, opts.owner.gid);
        } catch (err) {
          throw new VolumePreparationError(prepared.name, prepared.source, `setting owner ${opts.owner.uid}:${opts.owner.gid} of ${prepared.path}: ${errorMessage(err)}`);
        }
      }
      log?.info({ volume: prepared.name, source: prepared.source, path: prepared.path, format: prepared.format, backing: prepared.backing?.path, created: prepared.created, isoWriter: prepared.isoWriter }, 'volume prepared');
      out.push(prepared);
    }
  }
  return { volumes: out, skipped };
}
