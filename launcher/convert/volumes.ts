// Glue from launcher/disks' PreparedVolume (what was prepared on disk) to the converter's
// ResolvedVolume, plus the launcher's probes (O_DIRECT support, preallocation, block sizes).
import type { PreparedVolume } from '../disks/prepared.ts';
import type { ResolvedVolume } from './plan.ts';

/** Results of the launcher's I/O probes for one volume (KubeVirt's DirectIOChecker, IsPreAllocated, getOptimalBlockIO). */
export interface VolumeProbe {
  directIO?: boolean;
  backingDirectIO?: boolean;
  preallocated?: boolean;
  blockIO?: ResolvedVolume['blockIO'];
}

export function resolvedVolume(p: PreparedVolume, probe: VolumeProbe = {}): ResolvedVolume {
  const v: ResolvedVolume = { path: p.path, format: p.format, kind: p.type };
  if (p.readOnly) v.readOnly = true;
  if (!p.discard) v.discardIgnore = true;
  if (probe.directIO !== undefined) v.directIO = probe.directIO;
  if (probe.preallocated !== undefined) v.preallocated = probe.preallocated;
  if (probe.blockIO) v.blockIO = probe.blockIO;
  if (p.backing) {
    v.backing = { path: p.backing.path, format: p.backing.format, kind: p.backing.type };
    if (probe.backingDirectIO !== undefined) v.backing.directIO = probe.backingDirectIO;
  }
  return v;
}

/** ConvertContext.volumes from prepareVolumes' result. */
export function resolvedVolumes(prepared: readonly PreparedVolume[], probes: Record<string, VolumeProbe> = {}): Record<string, ResolvedVolume> {
  return Object.fromEntries(prepared.map((p) => [p.name, resolvedVolume(p, probes[p.name])]));
}
