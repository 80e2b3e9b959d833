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

/** A disk or LUN QEMU opens read-only (disk.readonly, lun.readonly). */
function isReadOnlyDiskOrLun(disk: Disk): boolean {
  return disk.disk?.readonly === true || disk.lun?.readonly === true;
}

/**
 * virt-handler's checkVolumesForMigration: `block` when some volume's data lives in the pod and must
 * be copied (a volume that is neither a PVC/DataVolume, a hostDisk, a virtiofs filesystem nor the
 * volume of a read-only CD-ROM, or volumes being migrated), `error` (the first) when a claim or host
 * disk that is not shared makes the VMI not live-migratable at all (DisksNotLiveMigratable).
 * virt-handler returns blockMigrate=true with such an error; its status.migrationMethod is then
 * BlockMigration (handler/live-migratable.ts), while the launchers' spec fallback asks `block` only.
 */
export function checkVolumesForMigration(vmi: VmiLike): { block: boolean; error?: string } {
  const statusByName = new Map((vmi.status?.volumeStatus ?? []).map((s) => [s.name, s]));
  const migrated = new Set((vmi.status?.migratedVolumes ?? []).map((v) => v.volumeName));
  const filesystems = new Set((vmi.spec.domain.devices.filesystems ?? []).map((f) => f.name));
  const disks = new Map((vmi.spec.domain.devices.disks ?? []).map((d) => [d.name, d]));
  const shared = (modes: readonly string[] | undefined) => (modes ?? []).includes('ReadWriteMany');
  const notShared = (claim: string) => `cannot migrate VMI: PVC ${claim} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`;
  let block = migrated.size > 0;
  let error: string | undefined;
  const fail = (message: string) => { error ??= message; };
  for (const v of vmi.spec.volumes ?? []) {
    const info = statusByName.get(v.name)?.persistentVolumeClaimInfo;
    if (v.persistentVolumeClaim || v.dataVolume) {
      const claim = v.persistentVolumeClaim?.claimName ?? v.dataVolume?.name ?? v.name;
      if (!info) fail(`cannot migrate VMI: Unable to determine if PVC ${claim} is shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`);
      else if (!shared(info.accessModes) && !migrated.has(v.name)) fail(notShared(claim));
    } else if (v.hostDisk) {
      if (info) {
        if (!shared(info.accessModes) && !migrated.has(v.name)) fail(notShared(info.claimName ?? v.name));
      } else if (v.hostDisk.shared !== true) {
        fail('cannot migrate VMI with non-shared HostDisk');
      }
    } else {
      if (filesystems.has(v.name)) continue;
      const disk = disks.get(v.name);
      if (disk && isReadOnlyCdrom(disk)) continue;
      block = true;
    }
  }
  return error === undefined ? { block } : { block, error };
}

/** The spec's answer to "block migration?" (status.migrationMethod unset). */
export function specNeedsBlockMigration(vmi: VmiLike): boolean {
  return checkVolumesForMigration(vmi).block;
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
    // CD-ROMs are never copied (read-only or not), nor read-only disks and LUNs.
    if (!v || d.cdrom || isReadOnlyDiskOrLun(d)) continue;
    if (classify(v, migrated) === 'shared') continue;
    out.push(d.name);
  }
  return out;
}
