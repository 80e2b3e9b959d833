// virt-api's memorydump and removememorydump subresources of a VM (pkg/virt-api/rest/memorydump.go),
// as pure decisions: the VM, its VMI, the claim and the request go in; either the Status virt-api
// answers (its messages, its codes) or the test-guarded JSON patch of the VM's
// status.memoryDumpRequest comes out. The VM controller takes the request from there
// (controller/vm/memory-dump.ts): the claim becomes a memoryDump volume, the node agent mounts it and
// has the launcher dump the guest's memory into it.
import { MemoryDumpPhase, VMIPhase } from '../api/constants.ts';
import type { PersistentVolumeClaimSpec } from '../api/kube.ts';
import { memoryDumpClaimSize } from '../api/memory-dump-size.ts';
import { compareQuantity, formatQuantity, parseQuantity, quantityFromValue } from '../api/quantity.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineMemoryDumpRequest } from '../api/types.ts';
import type { JsonPatchOp } from './lifecycle.ts';
import * as E from './status-error.ts';
import { KubeVirtResource, type StatusError } from './status-error.ts';

/** virt-api's messages (memorydump.go, subresource.go). */
export const MemoryDumpMessages = {
  noBody: 'Request with no body',
  noClaimName: 'Memory dump requires claim name to be set',
  vmiNotRunning: 'VMI is not running',
  blockClaim: 'pvc should be filesystem pvc',
  readOnlyClaim: "pvc access mode can't be read only",
  claimTooSmall: (size: string, want: string) => `pvc size [${size}] should be bigger then [${want}]`,
  claimConflict: (asked: string, current: string) => `can't request memory dump for pvc [${asked}] while pvc [${current}] is still associated as the memory dump pvc`,
  removeInProgress: (claim: string) => `can't dump memory for pvc [${claim}] a remove memory dump request is in progress`,
  alreadyInProgress: (claim: string) => `memory dump request for pvc [${claim}] already in progress`,
  noAssociation: (vm: string) => `can't remove memory dump association for vm ${vm}, no association found`,
  removeExists: (claim: string) => `memory dump remove request for pvc [${claim}] already exists`,
} as const;

/** The parts of a PersistentVolumeClaim virt-api looks at. */
export interface MemoryDumpClaim {
  readonly spec?: Pick<PersistentVolumeClaimSpec, 'volumeMode' | 'accessModes' | 'resources'> | undefined;
}

export type MemoryDumpPlan = { readonly ok: true; readonly ops: JsonPatchOp[] } | { readonly ok: false; readonly error: StatusError };

const refuse = (error: StatusError): MemoryDumpPlan => ({ ok: false, error });

/** The claim a `memorydump` request is about: the request's, or (none given) the one the VM already has. */
export function memoryDumpClaimName(vm: VirtualMachine, requested: string | undefined): string {
  return requested || vm.status?.memoryDumpRequest?.claimName || '';
}

/** `validateMemoryDumpClaim`: a filesystem claim, writable, big enough for the VMI's memory (scaled to kB as virt-api does). */
function claimRefusal(vmi: VirtualMachineInstance, claimName: string, claim: MemoryDumpClaim | undefined): StatusError | undefined {
  const pvc = KubeVirtResource.PersistentVolumeClaim;
  if (!claim) return E.notFound(pvc, claimName);
  if (claim.spec?.volumeMode === 'Block') return E.conflict(pvc, claimName, MemoryDumpMessages.blockClaim);
  if ((claim.spec?.accessModes ?? []).includes('ReadOnlyMany')) return E.conflict(pvc, claimName, MemoryDumpMessages.readOnlyClaim);
  const storage = claim.spec?.resources?.requests?.storage;
  let bytes = 0n;
  try {
    if (storage !== undefined) bytes = parseQuantity(storage).nanos;
  } catch {
    return E.internalError(`unable to read the size of pvc [${claimName}]: spec.resources.requests.storage ${JSON.stringify(storage)} is not a quantity`);
  }
  // resource.NewScaledQuantity(pvcSize.ScaledValue(Kilo), Kilo): whole kB, rounded up.
  const kB = (bytes + 1000n * 1_000_000_000n - 1n) / (1000n * 1_000_000_000n);
  const scaled = quantityFromValue(kB * 1000n, 'DecimalSI');
  const want = memoryDumpClaimSize(vmi);
  if (compareQuantity(scaled, want) < 0) return E.conflict(pvc, claimName, MemoryDumpMessages.claimTooSmall(formatQuantity(scaled), formatQuantity(want)));
  return undefined;
}

/** `generateVMMemoryDumpRequestPatch`: test the request as read, then add or replace it. */
function requestPatch(vm: VirtualMachine, next: VirtualMachineMemoryDumpRequest): JsonPatchOp[] {
  const current = vm.status?.memoryDumpRequest;
  const path = '/status/memoryDumpRequest';
  if (!vm.status) return [{ op: 'add', path: '/status', value: { memoryDumpRequest: next } }];
  return [{ op: 'test', path, value: current ?? null }, { op: current ? 'replace' : 'add', path, value: next }];
}

export interface MemoryDumpInputs {
  readonly vm: VirtualMachine;
  /** The VM's VMI; undefined when there is none. */
  readonly vmi: VirtualMachineInstance | undefined;
  /** The claim `memoryDumpClaimName` names; undefined when it does not exist. */
  readonly claim: MemoryDumpClaim | undefined;
  /** The request body's claimName (virtctl's --claim-name; empty to dump again into the associated claim). */
  readonly claimName: string | undefined;
}

/** `MemoryDumpVMRequestHandler` after the VM was read: the refusal, or the patch of a new Associating request. */
export function planMemoryDump(i: MemoryDumpInputs): MemoryDumpPlan {
  const { vm } = i;
  const name = vm.metadata?.name ?? '';
  const current = vm.status?.memoryDumpRequest;
  const asked = i.claimName ?? '';
  // validateMemoryDumpRequest
  if (!asked && !current) return refuse(E.badRequest(MemoryDumpMessages.noClaimName));
  if (current && asked && current.claimName !== asked) return refuse(E.conflict(KubeVirtResource.VirtualMachine, name, MemoryDumpMessages.claimConflict(asked, current.claimName)));
  const claimName = memoryDumpClaimName(vm, asked);
  if (!i.vmi) return refuse(E.notFound(KubeVirtResource.VirtualMachineInstance, name));
  if (i.vmi.status?.phase !== VMIPhase.Running) return refuse(E.conflict(KubeVirtResource.VirtualMachineInstance, name, MemoryDumpMessages.vmiNotRunning));
  const bad = claimRefusal(i.vmi, claimName, i.claim);
  if (bad) return refuse(bad);
  // addMemoryDumpRequest: only after the previous dump finished one way or the other.
  if (current?.phase === MemoryDumpPhase.Dissociating) return refuse(E.conflict(KubeVirtResource.VirtualMachine, name, MemoryDumpMessages.removeInProgress(claimName)));
  if (current && current.phase !== MemoryDumpPhase.Completed && current.phase !== MemoryDumpPhase.Failed) {
    return refuse(E.conflict(KubeVirtResource.VirtualMachine, name, MemoryDumpMessages.alreadyInProgress(claimName)));
  }
  return { ok: true, ops: requestPatch(vm, { claimName, phase: MemoryDumpPhase.Associating }) };
}

/** `RemoveMemoryDumpVMRequestHandler` after the VM was read: mark the association for removal (Dissociating). */
export function planRemoveMemoryDump(vm: VirtualMachine): MemoryDumpPlan {
  const name = vm.metadata?.name ?? '';
  const current = vm.status?.memoryDumpRequest;
  if (!current) return refuse(E.conflict(KubeVirtResource.VirtualMachine, name, MemoryDumpMessages.noAssociation(name)));
  if (current.remove) return refuse(E.conflict(KubeVirtResource.VirtualMachine, name, MemoryDumpMessages.removeExists(current.claimName)));
  return { ok: true, ops: requestPatch(vm, { claimName: current.claimName, phase: MemoryDumpPhase.Dissociating, remove: true }) };
}
