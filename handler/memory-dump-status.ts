// The node agent's part of a memory dump (virt-handler's updateMemoryDumpInfo and getMemoryDump,
// plus the VMI controller's DomainMemoryDumpInfo{claimName} of a memoryDump volume), as pure
// functions of the VMI, what the launcher reports and the clock. A memoryDump volume is a claim
// mounted as a directory in the launcher pod (`<hotplug-disks>/<volume>/`); once it is mounted
// (MountedToPod) the dump gets its file name and the volume goes MemoryDumpInProgress; while it is
// in progress the handler asks the launcher to dump into that file (the launcher ignores a repeat);
// the launcher's report of the dump (domain metadata MemoryDump, the file name matching) makes it
// MemoryDumpCompleted or MemoryDumpFailed. The VM controller takes it from there.
import { PodPath, VolumePhase } from '../src/api/constants.ts';
import type { VirtualMachineInstance, VolumeStatus } from '../src/api/types.ts';
import type { MemoryDumpMetadata } from '../src/api/domain/domain.ts';
import { HotplugVolumeReason } from './hotplug/status.ts';

/** The memoryDump volumes of the VMI's spec. */
export function memoryDumpVolumeNames(vmi: VirtualMachineInstance): Set<string> {
  return new Set((vmi.spec.volumes ?? []).filter((v) => v.memoryDump).map((v) => v.name));
}

const two = (n: number) => String(n).padStart(2, '0');

/** `dumpTargetFile`: `<vmi>-<volume>-<YYYYMMDD-HHMMSS>.memory.dump` (UTC). */
export function memoryDumpFileName(vmiName: string, volume: string, now: Date): string {
  const stamp = `${now.getUTCFullYear()}${two(now.getUTCMonth() + 1)}${two(now.getUTCDate())}-${two(now.getUTCHours())}${two(now.getUTCMinutes())}${two(now.getUTCSeconds())}`;
  return `${vmiName}-${volume}-${stamp}.memory.dump`;
}

/** `memoryDumpPath`: where, in the launcher pod, the dump goes. */
export function memoryDumpPath(volume: string, fileName: string): string {
  return `${PodPath.HotplugDisks}/${volume}/${fileName}`;
}

/**
 * volumeStatus with the memory dump's progress: each memoryDump volume gets `memoryDumpVolume`
 * (its claim); a mounted one starts its dump (file name chosen, InProgress); one in progress
 * completes or fails once the launcher reports that file done.
 */
export function withMemoryDumpStatus(statuses: readonly VolumeStatus[], vmi: VirtualMachineInstance, reported: MemoryDumpMetadata | null | undefined, now: Date): VolumeStatus[] {
  const dumps = memoryDumpVolumeNames(vmi);
  if (dumps.size === 0) return [...statuses];
  return statuses.map((s) => {
    if (!dumps.has(s.name)) return s;
    const info = { ...(s.memoryDumpVolume ?? { claimName: s.name }) };
    const next: VolumeStatus = { ...s, memoryDumpVolume: info };
    if (s.phase === VolumePhase.MountedToPod) {
      return {
        ...next,
        phase: VolumePhase.MemoryDumpInProgress,
        reason: HotplugVolumeReason.MountedToPod,
        message: `Memory dump Volume ${s.name} is attached, getting memory dump`,
        memoryDumpVolume: { ...info, targetFileName: memoryDumpFileName(vmi.metadata?.name ?? '', s.name, now) },
      };
    }
    if (s.phase !== VolumePhase.MemoryDumpInProgress || !reported || reported.FileName !== info.targetFileName) return next;
    if (reported.StartTimestamp) info.startTimestamp = reported.StartTimestamp;
    if (reported.EndTimestamp && reported.Failed) {
      return { ...next, phase: VolumePhase.MemoryDumpFailed, message: `Memory dump to pvc ${s.name} failed: ${reported.FailureReason}`, memoryDumpVolume: { ...info, endTimestamp: reported.EndTimestamp } };
    }
    if (reported.Completed) {
      return {
        ...next,
        phase: VolumePhase.MemoryDumpCompleted,
        reason: HotplugVolumeReason.Ready,
        message: `Memory dump to Volume ${s.name} has completed successfully`,
        memoryDumpVolume: { ...info, ...(reported.EndTimestamp ? { endTimestamp: reported.EndTimestamp } : {}) },
      };
    }
    return next;
  });
}

/** `getMemoryDump`: the dumps the launcher is to make now (volumes InProgress with a file name), as launcher paths. */
export function pendingMemoryDumps(vmi: VirtualMachineInstance): Array<{ volume: string; path: string }> {
  const dumps = memoryDumpVolumeNames(vmi);
  return (vmi.status?.volumeStatus ?? [])
    .filter((s) => dumps.has(s.name) && s.phase === VolumePhase.MemoryDumpInProgress && s.memoryDumpVolume?.targetFileName)
    .map((s) => ({ volume: s.name, path: memoryDumpPath(s.name, s.memoryDumpVolume!.targetFileName!) }));
}
