// persistentVolumeClaim and dataVolume volumes. A Block PVC is the device `/dev/<vol>`; a Filesystem
// PVC is mounted at `<private>/vmi-disks/<vol>` and holds `disk.img`, which KubeVirt creates (sparse
// raw, sized from the PVC: the smaller of request and capacity, 1 MiB-aligned) when it is absent
// and there is space (ReplacePVCByHostDisk + host-disk.go). An existing disk.img is never touched.
// Hotplugged volumes are attached by the node into the hotplug dir; nothing is created for them.
import { stat } from '../fs/async.ts';
import { alignImageSizeTo1MiB, pvcDiskSize } from '../../src/api/disk-size.ts';
import { quantityToNumber } from '../../src/api/quantity.ts';
import type { PersistentVolumeClaimInfo, VirtualMachineInstance, Volume } from '../../src/api/types.ts';
import { MESSAGES } from './constants.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { createSparseRawWithinSpace, type SparseOptions } from './host-disk.ts';
import { hotplugBlockDevice, hotplugFilesystemImage, pvcBlockDevice, pvcFilesystemImage, vmiDiskDir, type DiskDirs } from './paths.ts';
import type { PreparedVolume, PvcHint } from './prepared.ts';

export type VolumeMode = 'Filesystem' | 'Block';

/** The size rule lives in src/api: the node agent sizes hotplugged claims' images with it too. */
export { alignImageSizeTo1MiB, pvcDiskSize };

function storageBytes(list: Readonly<Record<string, string | number>> | undefined, what: string): number | undefined {
  const q = list?.storage;
  if (q === undefined) return undefined;
  try {
    return quantityToNumber(q);
  } catch (err) {
    throw new Error(`${what}.storage: ${errorMessage(err)}`);
  }
}

/** PVC facts from virt-handler's `status.volumeStatus[].persistentVolumeClaimInfo`. */
export function pvcHintFromStatus(vmi: VirtualMachineInstance, volume: string): PvcHint | undefined {
  const info: PersistentVolumeClaimInfo | undefined = vmi.status?.volumeStatus?.find((s) => s.name === volume)?.persistentVolumeClaimInfo;
  if (!info) return undefined;
  const capacity = storageBytes(info.capacity, `status.volumeStatus[${volume}].persistentVolumeClaimInfo.capacity`);
  const requests = storageBytes(info.requests, `status.volumeStatus[${volume}].persistentVolumeClaimInfo.requests`);
  return {
    ...(info.volumeMode === 'Block' || info.volumeMode === 'Filesystem' ? { volumeMode: info.volumeMode } : {}),
    ...(capacity !== undefined ? { capacity } : {}),
    ...(requests !== undefined ? { requests } : {}),
  };
}

export const isHotplugVolume = (vmi: VirtualMachineInstance, volume: string): boolean =>
  vmi.status?.volumeStatus?.some((s) => s.name === volume && s.hotplugVolume !== undefined) ?? false;

/**
 * Block or Filesystem: as told, else as found (isBlockDeviceVolume): `/dev/<vol>` a block device →
 * Block; `<private>/vmi-disks/<vol>` present → Filesystem; neither → error.
 */
export async function detectVolumeMode(dirs: DiskDirs, volume: string, source: string, told?: VolumeMode): Promise<VolumeMode> {
  if (told) return told;
  const dev = pvcBlockDevice(dirs, volume);
  const st = await stat(dev).catch(() => undefined);
  if (st) {
    if (st.isBlockDevice()) return 'Block';
    throw new VolumePreparationError(volume, source, `found ${dev}, but it's not a block device`);
  }
  if ((await stat(vmiDiskDir(dirs, volume)).catch(() => undefined))?.isDirectory()) return 'Filesystem';
  throw new VolumePreparationError(volume, source, MESSAGES.neitherBlockNorFile(volume));
}

export interface PvcOptions extends SparseOptions {
  readonly hotplug?: boolean;
}

export async function preparePvc(volume: Volume, dirs: DiskDirs, hint: PvcHint | undefined, opts: PvcOptions = {}): Promise<PreparedVolume> {
  const source = volume.persistentVolumeClaim ? 'persistentVolumeClaim' : 'dataVolume';
  if (!volume.persistentVolumeClaim && !volume.dataVolume) throw new VolumePreparationError(volume.name, source, 'volume has neither persistentVolumeClaim nor dataVolume');
  const readOnly = volume.persistentVolumeClaim?.readOnly ?? false;
  const base = { name: volume.name, source, format: 'raw', readOnly, discard: true } as const;

  if (opts.hotplug) {
    let mode = hint?.volumeMode;
    if (!mode) mode = (await stat(hotplugBlockDevice(dirs, volume.name)).catch(() => undefined))?.isBlockDevice() ? 'Block' : 'Filesystem';
    const path = mode === 'Block' ? hotplugBlockDevice(dirs, volume.name) : hotplugFilesystemImage(dirs, volume.name);
    if (!(await stat(path).catch(() => undefined))) throw new VolumePreparationError(volume.name, source, `hotplug volume is not attached at ${path}`);
    return { ...base, type: mode === 'Block' ? 'block' : 'file', path, hotplug: true, created: false };
  }

  const mode = await detectVolumeMode(dirs, volume.name, source, hint?.volumeMode);
  if (mode === 'Block') {
    const dev = pvcBlockDevice(dirs, volume.name);
    const st = await stat(dev).catch(() => undefined);
    if (!st) throw new VolumePreparationError(volume.name, source, `block device ${dev} is not attached`);
    if (!st.isBlockDevice()) throw new VolumePreparationError(volume.name, source, `found ${dev}, but it's not a block device`);
    return { ...base, type: 'block', path: dev, created: false };
  }

  const img = pvcFilesystemImage(dirs, volume.name);
  const st = await stat(img).catch(() => undefined);
  if (st) {
    if (!st.isFile()) throw new VolumePreparationError(volume.name, source, `found ${img}, but it's not a regular file`);
    return { ...base, type: 'file', path: img, created: false };
  }
  if (!(await stat(vmiDiskDir(dirs, volume.name)).catch(() => undefined))?.isDirectory()) {
    throw new VolumePreparationError(volume.name, source, `the claim is not mounted at ${vmiDiskDir(dirs, volume.name)}`);
  }
  const size = pvcDiskSize(volume.name, hint);
  if (typeof size !== 'number') throw new VolumePreparationError(volume.name, source, size.error);
  await createSparseRawWithinSpace(volume.name, source, img, size, opts);
  return { ...base, type: 'file', path: img, created: true };
}
