// The VM controller's part of a memory dump (KubeVirt's pkg/storage/memorydump, called from
// watch/vm): virt-api wrote status.memoryDumpRequest (Associating, or Dissociating with remove);
// from there, pure functions of the VM and its VMI:
//   planMemoryDump (HandleRequest): Associating, VMI running → the claim as a hotpluggable
//     `memoryDump` volume named after it, in the VM template and in the VMI (the node agent mounts
//     it and has the launcher dump the guest's memory there); Unmounting/Failed → the volume leaves
//     the VMI (unmounted) and the claim is annotated with the dump's file name or the failure;
//     Dissociating → the volume leaves the VMI and the template.
//   nextMemoryDumpRequest (UpdateRequest): the request's phase from what VM and VMI show —
//     Associating → InProgress (template has the volume) → Unmounting (the VMI's volume status
//     says the dump completed; its file name and times copied) or Failed (with the message) →
//     Completed (the volume left the VMI's status); Dissociating → gone (no volume anywhere).
//   withoutCompletedMemoryDump (SetupVMIFromVM): a VM started again after its dump does not dump again.
import { Annotation, MemoryDumpPhase, VMIPhase, VolumePhase } from '../../src/api/constants.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec, VirtualMachineMemoryDumpRequest, Volume } from '../../src/api/types.ts';
import type { JsonPatchOp } from '../../src/api/volume-requests.ts';
import { escapeJsonPointer } from '../../src/kube/json-pointer.ts';

/** KubeVirt's sync error reason (memorydump.ErrorReason) and the claim annotation of a failed dump. */
export const MemoryDumpErrorReason = 'MemoryDumpError';
export const MEMORY_DUMP_FAILED_ANNOTATION = 'Memory dump failed';

/** `HasCompleted`: a request past Associating/InProgress (the volume need not be mounted again). */
export function hasCompleted(vm: VirtualMachine): boolean {
  const phase = vm.status?.memoryDumpRequest?.phase;
  return phase !== undefined && phase !== MemoryDumpPhase.Associating && phase !== MemoryDumpPhase.InProgress;
}

/** The memoryDump volume of a claim (applyMemoryDumpVolumeRequestOnVMISpec). */
export function memoryDumpVolume(claimName: string): Volume {
  return { name: claimName, memoryDump: { claimName, hotpluggable: true } };
}

const withVolume = (volumes: readonly Volume[] | undefined, claimName: string): Volume[] =>
  (volumes ?? []).some((v) => v.name === claimName) ? [...(volumes ?? [])] : [...(volumes ?? []), memoryDumpVolume(claimName)];
const withoutVolume = (volumes: readonly Volume[] | undefined, name: string): Volume[] => (volumes ?? []).filter((v) => v.name !== name);
const hasVolume = (volumes: readonly Volume[] | undefined, name: string) => (volumes ?? []).some((v) => v.name === name);

/** `RemoveMemoryDumpVolumeFromVMISpec` for a VMI about to be created: a completed dump's volume is left out. */
export function withoutCompletedMemoryDump(vm: VirtualMachine, spec: VirtualMachineInstanceSpec): VirtualMachineInstanceSpec {
  const req = vm.status?.memoryDumpRequest;
  if (!req || !hasCompleted(vm) || !hasVolume(spec.volumes, req.claimName)) return spec;
  return { ...spec, volumes: withoutVolume(spec.volumes, req.claimName) };
}

/** A test-guarded replacement of a volumes list (generateVMIMemoryDumpVolumePatch). */
function volumesPatch(path: string, before: readonly Volume[] | undefined, after: readonly Volume[]): JsonPatchOp[] {
  return [
    { op: 'test', path, value: before ?? null },
    { op: before ? 'replace' : 'add', path, value: after },
  ];
}

export interface MemoryDumpVolumePlan {
  /** Patch of the VM's template volumes. */
  readonly vmPatch?: JsonPatchOp[] | undefined;
  /** Patch of the VMI's volumes (the node agent mounts or unmounts). */
  readonly vmiPatch?: JsonPatchOp[] | undefined;
  /** The claim's `kubevirt.io/memory-dump` annotation should say this. */
  readonly annotateClaim?: { readonly claimName: string; readonly value: string } | undefined;
}

/** `HandleRequest`: what the VM controller changes for the VM's memory dump request. */
export function planMemoryDump(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): MemoryDumpVolumePlan {
  const req = vm.status?.memoryDumpRequest;
  if (!req) return {};
  const claim = req.claimName;
  const template = vm.spec.template?.spec;
  const vmiHas = vmi !== undefined && hasVolume(vmi.spec.volumes, claim);
  const removeFromVmi = vmi && vmiHas ? volumesPatch('/spec/volumes', vmi.spec.volumes, withoutVolume(vmi.spec.volumes, claim)) : undefined;
  switch (req.phase) {
    case MemoryDumpPhase.Associating: {
      if (!vmi || vmi.metadata?.deletionTimestamp != null || vmi.status?.phase !== VMIPhase.Running) return {};
      const vmPatch = template && !hasVolume(template.volumes, claim) ? volumesPatch('/spec/template/spec/volumes', template.volumes, withVolume(template.volumes, claim)) : undefined;
      const vmiPatch = vmiHas ? undefined : volumesPatch('/spec/volumes', vmi.spec.volumes, withVolume(vmi.spec.volumes, claim));
      return { vmPatch, vmiPatch };
    }
    case MemoryDumpPhase.Unmounting:
    case MemoryDumpPhase.Failed: {
      // patchMemoryDumpPVCAnnotation: the file name once known, or the failure.
      const value = req.phase === MemoryDumpPhase.Failed ? MEMORY_DUMP_FAILED_ANNOTATION : req.fileName;
      return { vmiPatch: removeFromVmi, annotateClaim: value ? { claimName: claim, value } : undefined };
    }
    case MemoryDumpPhase.Dissociating: {
      const vmPatch = template && hasVolume(template.volumes, claim) ? volumesPatch('/spec/template/spec/volumes', template.volumes, withoutVolume(template.volumes, claim)) : undefined;
      return { vmiPatch: removeFromVmi, vmPatch };
    }
  }
  return {};
}

/** The claim's annotation patch, or undefined when it already says `value`. */
export function claimAnnotationPatch(annotations: Readonly<Record<string, string>> | undefined, value: string): JsonPatchOp[] | undefined {
  if (annotations?.[Annotation.PVCMemoryDump] === value) return undefined;
  if (!annotations) return [{ op: 'add', path: '/metadata/annotations', value: { [Annotation.PVCMemoryDump]: value } }];
  return [{ op: 'add', path: `/metadata/annotations/${escapeJsonPointer(Annotation.PVCMemoryDump)}`, value }];
}

/**
 * `UpdateRequest`: status.memoryDumpRequest after this sync (undefined: the request is done with).
 * `vm` already carries the template the controller has persisted.
 */
export function nextMemoryDumpRequest(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): VirtualMachineMemoryDumpRequest | undefined {
  const req = vm.status?.memoryDumpRequest;
  if (!req) return undefined;
  const next: VirtualMachineMemoryDumpRequest = { ...req };
  if (req.remove) next.phase = MemoryDumpPhase.Dissociating;
  const inTemplate = hasVolume(vm.spec.template?.spec?.volumes, req.claimName);
  const inVmiStatus = (vmi?.status?.volumeStatus ?? []).some((s) => s.name === req.claimName);
  switch (req.phase) {
    case MemoryDumpPhase.Completed:
      // Nothing more until virt-api writes a new request.
      return req;
    case MemoryDumpPhase.Associating:
      if (inTemplate) next.phase = MemoryDumpPhase.InProgress;
      break;
    case MemoryDumpPhase.InProgress:
      for (const s of vmi?.status?.volumeStatus ?? []) {
        if (s.name !== req.claimName || !s.memoryDumpVolume) continue;
        if (s.memoryDumpVolume.startTimestamp) next.startTimestamp = s.memoryDumpVolume.startTimestamp;
        if (s.phase === VolumePhase.MemoryDumpCompleted) {
          next.phase = MemoryDumpPhase.Unmounting;
          if (s.memoryDumpVolume.endTimestamp) next.endTimestamp = s.memoryDumpVolume.endTimestamp;
          next.fileName = s.memoryDumpVolume.targetFileName ?? '';
        } else if (s.phase === VolumePhase.MemoryDumpFailed) {
          next.phase = MemoryDumpPhase.Failed;
          if (s.message !== undefined) next.message = s.message;
          if (s.memoryDumpVolume.endTimestamp) next.endTimestamp = s.memoryDumpVolume.endTimestamp;
        }
      }
      break;
    case MemoryDumpPhase.Unmounting:
      // Completed once the volume is unmounted: gone from the VMI's volume status.
      if (inVmiStatus) return req;
      next.phase = MemoryDumpPhase.Completed;
      break;
    case MemoryDumpPhase.Dissociating:
      if (inVmiStatus || inTemplate) return req;
      return undefined;
  }
  return next;
}
