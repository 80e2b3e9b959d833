// Whether a VMI's DataVolumes let its launcher pod be created (KubeVirt's VMI controller
// areDataVolumesReady / storagetypes VolumeReadyToAttachToNode): every `dataVolume` volume whose
// DataVolume exists must be Succeeded (or WaitForFirstConsumer / PendingPopulation, which need the
// pod); one that Failed fails the unprocessed VMI. A volume with no DataVolume object (a plain
// claim of that name, or no CDI) does not hold the pod back. Pure.
import { DataVolumePhase, type DataVolume } from '../../src/api/cdi/types.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

export function dataVolumeNames(vmi: VirtualMachineInstance): string[] {
  return [...new Set((vmi.spec.volumes ?? []).flatMap((v) => (v.dataVolume?.name ? [v.dataVolume.name] : [])))];
}

export function dataVolumesReadyForPod(vmi: VirtualMachineInstance, lookup: (name: string) => DataVolume | undefined): { ready: boolean; failed: boolean; waitingFor?: string } {
  for (const name of dataVolumeNames(vmi)) {
    const phase = lookup(name)?.status?.phase;
    if (phase === undefined && !lookup(name)) continue;
    if (phase === DataVolumePhase.Failed) return { ready: false, failed: true, waitingFor: name };
    if (phase !== DataVolumePhase.Succeeded && phase !== DataVolumePhase.WaitForFirstConsumer && phase !== DataVolumePhase.PendingPopulation) return { ready: false, failed: false, waitingFor: name };
  }
  return { ready: true, failed: false };
}
