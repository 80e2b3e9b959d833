// How big a claim must be to hold a VMI's memory dump, as KubeVirt computes it in virt-api (which
// refuses a smaller claim) and in virtctl (which creates a claim of exactly this size with
// --create-claim): the memory request plus 100 MiB (pkg/util CalcExpectedMemoryDumpSize), plus the
// filesystem overhead, 5.5 % when there is no CDIConfig to say otherwise, rounded up to a whole MiB
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

/** The smallest claim virt-api accepts for the VMI's memory dump (and the one virtctl creates). */
export function memoryDumpClaimSize(vmi: VirtualMachineInstance): ParsedQuantity {
  return sizeIncludingFSOverhead(expectedMemoryDumpSize(vmi));
}
