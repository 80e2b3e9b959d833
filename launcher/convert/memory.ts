// Guest memory: `-m` + the `pc.ram` backend (RAM, or hugepages via memfd/hugetlbfs as KubeVirt's
// memoryBacking does), and `maxGuest` as a cold-plugged virtio-mem device (qemu-qmp.md §3.6,
// KubeVirt liveupdate/memory BuildMemoryDevice) that hotplug resizes with `requested-size`.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { PciOrder, json, type PlanBuilder } from './builder.ts';
import { ConversionError } from './plan.ts';
import { ConvertAnnotation, HUGEPAGES_QEMU_DIR, MemoryHotplug, QemuId } from './constants.ts';
import { quantityBytes } from './quantity.ts';

const MEM = 'spec.domain.memory';
/** QEMU's parse_memory_options: ram_size = QEMU_ALIGN_UP(size, 8192). */
const QEMU_RAM_ALIGN = 8192;

/** vcpu.GetVirtualMemory: memory.guest, else requests.memory, else limits.memory. */
export function guestMemoryBytes(vmi: VirtualMachineInstance): number {
  const d = vmi.spec.domain;
  if (d.memory?.guest !== undefined) return quantityBytes(d.memory.guest, `${MEM}.guest`);
  const req = d.resources?.requests?.['memory'];
  if (req !== undefined) return quantityBytes(req, 'spec.domain.resources.requests.memory');
  const lim = d.resources?.limits?.['memory'];
  if (lim !== undefined) return quantityBytes(lim, 'spec.domain.resources.limits.memory');
  const page = d.memory?.hugepages?.pageSize;
  if (page !== undefined) return quantityBytes(page, `${MEM}.hugepages.pageSize`);
  throw new ConversionError(`${MEM}.guest`, 'no guest memory: set memory.guest or resources.requests.memory');
}

export interface MemoryLayout {
  /** Memory present at boot (pc.ram). */
  bootBytes: number;
  /** The domain's current memory (what KubeVirt compares to the 2 GiB hotplug-port threshold). */
  guestBytes: number;
  /** maxGuest when memory hotplug is configured. */
  maxBytes?: number;
  hugepageBytes?: number;
}

export function memoryLayout(vmi: VirtualMachineInstance): MemoryLayout {
  const m = vmi.spec.domain.memory;
  const guestBytes = guestMemoryBytes(vmi);
  const hugepageBytes = m?.hugepages?.pageSize ? quantityBytes(m.hugepages.pageSize, `${MEM}.hugepages.pageSize`) : undefined;
  const base: MemoryLayout = hugepageBytes ? { bootBytes: guestBytes, guestBytes, hugepageBytes } : { bootBytes: guestBytes, guestBytes };
  if (m?.maxGuest === undefined) return base;
  const maxBytes = quantityBytes(m.maxGuest, `${MEM}.maxGuest`);
  const atBootQ = vmi.status?.memory?.guestAtBoot;
  const bootBytes = atBootQ !== undefined ? quantityBytes(atBootQ, 'status.memory.guestAtBoot') : guestBytes;
  // KubeVirt's MemoryConfigurator: no hotplug range when nothing can be plugged.
  if (maxBytes === bootBytes && maxBytes === guestBytes) return base;
  if (m.guest === undefined) throw new ConversionError(`${MEM}.guest`, 'guest memory must be set when maxGuest is (memory hotplug)');
  const align = m.hugepages?.pageSize === '1Gi' ? MemoryHotplug.HugePages1GiBlockAlignmentBytes : MemoryHotplug.BlockAlignmentBytes;
  const alignName = align === MemoryHotplug.BlockAlignmentBytes ? '2Mi' : '1Gi';
  if (guestBytes > maxBytes) throw new ConversionError(`${MEM}.guest`, 'guest memory is greater than maxGuest');
  if (guestBytes % align !== 0) throw new ConversionError(`${MEM}.guest`, `guest memory must be ${alignName} aligned for memory hotplug`);
  if (maxBytes % align !== 0) throw new ConversionError(`${MEM}.maxGuest`, `maxGuest must be ${alignName} aligned`);
  if (guestBytes < MemoryHotplug.MinGuestBytes) {
    throw new ConversionError(`${MEM}.guest`, 'memory hotplug needs at least 1Gi of guest memory');
  }
  if (bootBytes > guestBytes) {
    throw new ConversionError('status.memory.guestAtBoot', 'memory at boot is greater than the requested guest memory');
  }
  return { ...base, bootBytes, guestBytes, maxBytes };
}

export function configureMemory(vmi: VirtualMachineInstance, b: PlanBuilder): MemoryLayout {
  const layout = memoryLayout(vmi);
  // QEMU aligns -m up to 8 KiB and then requires the backend to match it to the byte.
  const align = (n: number): number => Math.ceil(n / QEMU_RAM_ALIGN) * QEMU_RAM_ALIGN;
  const kib = (n: number): string => `${align(n) / 1024}k`;
  const bootBytes = align(layout.bootBytes);
  const m = [`size=${kib(layout.bootBytes)}`];
  if (layout.maxBytes !== undefined) m.push(`maxmem=${kib(layout.maxBytes)}`);
  b.arg('-m', m.join(','));
  b.backend('-object', json(ramBackend(vmi, QemuId.RamBackend, bootBytes, layout.hugepageBytes)));
  b.machine('memory-backend', QemuId.RamBackend);

  if (layout.maxBytes !== undefined) {
    const pluggable = layout.maxBytes - layout.bootBytes;
    const requested = layout.guestBytes - layout.bootBytes;
    const block = vmi.spec.domain.memory?.hugepages?.pageSize === '1Gi'
      ? MemoryHotplug.HugePages1GiBlockAlignmentBytes : MemoryHotplug.BlockAlignmentBytes;
    b.backend('-object', json(ramBackend(vmi, QemuId.VirtioMemBackend, pluggable, layout.hugepageBytes)));
    b.device({
      driver: 'virtio-mem-pci',
      id: QemuId.VirtioMem,
      memdev: QemuId.VirtioMemBackend,
      'block-size': block,
      'requested-size': requested,
      node: 0,
    }, { order: PciOrder.Memory, nic: false });
    b.record({ alias: QemuId.VirtioMem, kind: 'memory', qemuId: QemuId.VirtioMem, driver: 'virtio-mem-pci', bus: 'pci' });
  }
  return layout;
}

function ramBackend(vmi: VirtualMachineInstance, id: string, size: number, hugepageBytes: number | undefined): Record<string, unknown> {
  if (hugepageBytes === undefined) return { 'qom-type': 'memory-backend-ram', id, size };
  if (size % hugepageBytes !== 0) {
    throw new ConversionError(`${MEM}.hugepages.pageSize`, `guest memory (${size} bytes) is not a multiple of the hugepage size`);
  }
  if (vmi.metadata?.annotations?.[ConvertAnnotation.MemfdMemoryBackend] === 'false') {
    return { 'qom-type': 'memory-backend-file', id, 'mem-path': HUGEPAGES_QEMU_DIR, prealloc: true, size };
  }
  return { 'qom-type': 'memory-backend-memfd', id, hugetlb: true, hugetlbsize: hugepageBytes, prealloc: true, size };
}
