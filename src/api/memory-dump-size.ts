// How big a claim must be to hold a VMI's memory dump, as KubeVirt computes it in virt-api (which
// refuses a smaller claim) and in virtctl (which creates a claim of exactly this size with
// --create-claim): the memory request plus 100 MiB (pkg/util CalcExpectedMemoryDumpSize), plus the
// filesystem overhead (virtctl reads CDI's CDIConfig; 5.5 % when there is none), rounded up to a whole MiB
// (pkg/storage/types GetSizeIncludingGivenOverhead). Pure.
import { addQuantity, parseQuantity, quantityFromValue, type ParsedQuantity } from './quantity.ts';
import type { VirtualMachineInstance } from './types.ts';

/** The space a dump needs beyond the guest's memory (ELF headers, device state). */
export const MEMORY_DUMP_OVERHEAD_BYTES = 100 * 1024 * 1024;
/** storagetypes.DefaultFSOverhead: what a filesystem takes of a claim, when CDI does not say. */
export const DEFAULT_FS_OVERHEAD = '0.055';

const MiB = 1024 * 1024;

/** `CalcExpectedMemoryDumpSize`: spec.domain.resources.requests.memory + 100 MiB, in the request's format. */
export function expectedMemoryDumpSize(vmi: VirtualMachineInstance): ParsedQuantity {
  const req = vmi.spec.domain.resources?.requests?.memory;
  // resource.Quantity's zero value (no request) is DecimalSI.
  const memory = req !== undefined ? parseQuantity(req) : quantityFromValue(0, 'DecimalSI');
  return addQuantity(quantityFromValue(MEMORY_DUMP_OVERHEAD_BYTES, memory.format), memory);
}

/**
 * `GetSizeIncludingGivenOverhead`: (1 + overhead) × size as a float, rounded up to a whole MiB (at
 * least one), in the size's format.
 */
export function sizeIncludingFSOverhead(size: ParsedQuantity, overhead: string = DEFAULT_FS_OVERHEAD): ParsedQuantity {
  const total = (1 + Number.parseFloat(overhead)) * (Number(size.nanos) / 1e9);
  const aligned = total < MiB ? MiB : Math.ceil(total / MiB) * MiB;
  return quantityFromValue(Math.trunc(aligned), size.format);
}

/** The smallest claim virt-api accepts for the VMI's memory dump (with `overhead`: the claim virtctl creates). */
export function memoryDumpClaimSize(vmi: VirtualMachineInstance, overhead: string = DEFAULT_FS_OVERHEAD): ParsedQuantity {
  return sizeIncludingFSOverhead(expectedMemoryDumpSize(vmi), overhead);
}

/** The part of CDI's CDIConfig `config` this reads: status.filesystemOverhead (global and per storage class). */
export interface CdiConfigOverhead {
  status?: { filesystemOverhead?: { global?: string; storageClass?: Record<string, string> } };
}

/**
 * KubeVirt's storagetypes.GetFilesystemOverhead for a Filesystem claim: the storage class's entry in
 * the CDIConfig's status, else its global figure; an error when CDI has not filled the status yet.
 */
export function filesystemOverheadOf(cdiConfig: CdiConfigOverhead, storageClass: string | undefined): string {
  const o = cdiConfig.status?.filesystemOverhead;
  if (!o) throw new Error('CDI config not initialized');
  return (storageClass ? o.storageClass?.[storageClass] : undefined) ?? o.global ?? '';
}
