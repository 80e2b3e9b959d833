// Block migration (KubeVirt's BlockMigration migration method): which of a VMI's disks live only in
// its launcher pod and must be copied to the target during a live migration, and whether a
// migration copies any. Both node agents (the second migration proxy) and both launchers (NBD
// export on the target, mirror on the source) read it from the same VMI, so they agree. Pure.
//
// - status.migrationMethod, written by the node agent (virt-handler's checkVolumesForMigration),
//   decides when present; without it the same rule is applied to the spec here.
// - The disks to copy are KubeVirt's classifyVolumesForMigration + getDiskTargetsForMigration,
//   with one deviation: a read-only disk is never copied (KubeVirt copies read-only *generated*
//   disks, e.g. a configMap disk; QEMU cannot export a read-only node writable, and the target
//   launcher regenerates those disks from the same VMI).
import type { Disk, VirtualMachineInstance, Volume } from './types.ts';
import { MigrationMethod } from './constants.ts';

type VmiLike = Pick<VirtualMachineInstance, 'spec' | 'status'>;

/** KubeVirt's isReadOnlyDisk (virt-handler): a CD-ROM that is read-only (the default). */
function isReadOnlyCdrom(disk: Disk): boolean {
  return disk.cdrom !== undefined && (disk.cdrom.readonly ?? true);
}

/** The disk is opened read-only by QEMU (disk.readonly, lun.readonly, a read-only CD-ROM). */
function isReadOnly(disk: Disk): boolean {
  return isReadOnlyCdrom(disk) || disk.disk?.readonly === true || disk.lun?.readonly === true;
}

/**
 * virt-handler's checkVolumesForMigration, its blockMigrate answer: true when a volume is neither a
 * PVC/DataVolume, a hostDisk, a virtiofs filesystem nor the volume of a read-only CD-ROM, or when
 * volumes are being migrated (status.migratedVolumes). PVCs and hostDisks that are not shared make
 * the VMI not live-migratable at all; that is the LiveMigratable condition's business, not this.
 */
export function specNeedsBlockMigration(vmi: VmiLike): boolean {
  if ((vmi.status?.migratedVolumes ?? []).length > 0) return true;
  const filesystems = new Set((vmi.spec.domain.devices.filesystems ?? []).map((f) => f.name));
  const disks = vmi.spec.domain.devices.disks ?? [];
  for (const v of vmi.spec.volumes ?? []) {
    if (v.persistentVolumeClaim || v.dataVolume || v.hostDisk) continue;
    if (filesystems.has(v.name)) continue;
    if (disks.some((d) => d.name === v.name && isReadOnlyCdrom(d))) continue;
    return true;
  }
  return false;
}

/** KubeVirt's vmi.IsBlockMigration(): status.migrationMethod, or the spec's answer while it is unset. */
export function isBlockMigration(vmi: VmiLike): boolean {
  const m = vmi.status?.migrationMethod;
  if (m) return m === MigrationMethod.BlockMigration;
  return specNeedsBlockMigration(vmi);
}

type VolumeClass = 'shared' | 'generated' | 'local';

/** classifyVolumesForMigration: shared (never copied), generated (copied), or local (copied). */
function classify(v: Volume, migrated: ReadonlySet<string>): VolumeClass {
  if (v.persistentVolumeClaim || v.dataVolume) return migrated.has(v.name) ? 'local' : 'shared';
  if (v.hostDisk) return migrated.has(v.name) ? 'local' : v.hostDisk.shared ? 'shared' : 'local';
  if (v.configMap || v.secret || v.downwardAPI || v.serviceAccount || v.cloudInitNoCloud || v.cloudInitConfigDrive || v.containerDisk) return 'generated';
  return 'local';
}

/**
 * The names of the disks a block migration copies (getDiskTargetsForMigration), in spec order:
 * every disk with a volume except CD-ROMs, read-only disks and shared volumes. Empty when the
 * migration is not a block migration.
 */
export function disksToMigrate(vmi: VmiLike): string[] {
  if (!isBlockMigration(vmi)) return [];
  const migrated = new Set((vmi.status?.migratedVolumes ?? []).map((m) => m.volumeName));
  const volumes = new Map((vmi.spec.volumes ?? []).map((v) => [v.name, v]));
  const out: string[] = [];
  for (const d of vmi.spec.domain.devices.disks ?? []) {
    const v = volumes.get(d.name);
    if (!v || d.cdrom || isReadOnly(d)) continue;
    if (classify(v, migrated) === 'shared') continue;
    out.push(d.name);
  }
  return out;
}
