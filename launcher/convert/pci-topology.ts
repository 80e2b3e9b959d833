// PCIe topology the way libvirt lays it out for a KubeVirt domain on q35: one pcie-root-port per
// cold-plugged PCI device (pcie.0 slot 2 function 0..7, then slot 3, ...), assigned in libvirt's
// device order; KubeVirt's hotplug spares (manager.go allocateHotplugPorts: v1 NIC placeholders
// right after the NICs, then the v2 extra ports); and `hotplug=off` on ports holding non-NIC
// devices (pci/hotplug.go DisableHotplugOnOccupiedRootPorts).
import type { DeviceProps, DeviceSpec } from './builder.ts';
import { ConversionError, type PciPort } from './plan.ts';
import { ConvertAnnotation, HotplugPorts, RootBusSlot } from './constants.ts';

export interface HotplugPortInput {
  /** Interfaces in the domain (not absent, not SR-IOV). */
  interfaceCount: number;
  /** KubeVirt's CountPCIDevices over the converted domain. */
  portsInUse: number;
  /** The domain's memory (decides 8/3 vs 16/6). */
  guestMemoryBytes: number;
  /** Value of the kubevirt.io/pci-interface-slot-count annotation, if any. */
  slotCountAnnotation?: string | undefined;
  placeOnRootComplex: boolean;
  /** qvirt: `devices.disableHotplug` leaves no spare ports. */
  disableHotplug: boolean;
}

export interface HotplugPortCounts {
  /** v1 placeholder ports, laid out right after the NIC ports. */
  placeholders: number;
  /** v2 extra ports, appended after every occupied port. */
  extra: number;
}

/** manager.go calculatePlaceholderCount + calculateExtraControllerCount. */
export function hotplugPortCounts(i: HotplugPortInput): HotplugPortCounts {
  if (i.placeOnRootComplex || i.disableHotplug) return { placeholders: 0, extra: 0 };
  let placeholders: number;
  if (i.slotCountAnnotation !== undefined) {
    const total = /^\d+$/.test(i.slotCountAnnotation) ? Number(i.slotCountAnnotation) : NaN;
    if (!Number.isSafeInteger(total)) {
      throw new ConversionError(`metadata.annotations["${ConvertAnnotation.PciInterfaceSlotCount}"]`, `invalid value "${i.slotCountAnnotation}": not a number`);
    }
    placeholders = Math.max(0, total - i.interfaceCount);
  } else {
    placeholders = i.interfaceCount === 0 ? 0 : Math.max(0, HotplugPorts.V1PlaceholderTotal - i.interfaceCount);
  }
  const large = i.guestMemoryBytes > HotplugPorts.LargeMemoryThresholdBytes;
  const total = large ? HotplugPorts.LargeMemoryDefaultTotalPorts : HotplugPorts.DefaultTotalPorts;
  const minFree = large ? HotplugPorts.LargeMemoryMinRequiredFreePorts : HotplugPorts.MinRequiredFreePorts;
  const desiredFree = Math.max(total - i.portsInUse, minFree);
  return { placeholders, extra: Math.max(0, desiredFree - placeholders) };
}

/** pcie.0 address of root port `pci.<index>` (index from 1). */
export function rootPortAddress(index: number): { slot: number; fn: number; addr: string; port: number } {
  const slot = RootBusSlot.FirstRootPortSlot + Math.floor((index - 1) / 8);
  const fn = (index - 1) % 8;
  const addr = fn === 0 ? `0x${slot.toString(16)}` : `0x${slot.toString(16)}.0x${fn.toString(16)}`;
  return { slot, fn, addr, port: slot * 8 + fn };
}

export interface PciLayout {
  ports: PciPort[];
  /** -device props of the root ports, in order. */
  rootPorts: DeviceProps[];
}

type Slot = { kind: 'device'; spec: DeviceSpec } | { kind: 'spare' };

/**
 * Give every PCI device in `devices` a bus and address (mutates their props) and return the root
 * ports to create. Devices are taken in libvirt's order (stable within a phase).
 */
export function layoutPci(devices: DeviceSpec[], counts: HotplugPortCounts, placeOnRootComplex: boolean): PciLayout {
  const pci = devices.filter((d) => d.pci).sort((a, b) => (a.pci?.order ?? 0) - (b.pci?.order ?? 0));
  if (placeOnRootComplex) return placeOnRootBus(pci);

  const slots: Slot[] = [];
  const nics = pci.filter((d) => d.pci?.nic);
  const others = pci.filter((d) => !d.pci?.nic);
  for (const spec of nics) slots.push({ kind: 'device', spec });
  for (let i = 0; i < counts.placeholders; i++) slots.push({ kind: 'spare' });
  for (const spec of others) slots.push({ kind: 'device', spec });
  const occupied = nics.length + others.length;
  if (occupied + counts.placeholders > HotplugPorts.MaxBusIndex) {
    throw new ConversionError('spec.domain.devices', `${occupied} PCI devices and ${counts.placeholders} NIC hotplug ports need more than ${HotplugPorts.MaxBusIndex} PCIe root ports`);
  }
  const extra = Math.min(counts.extra, HotplugPorts.MaxBusIndex - slots.length);
  for (let i = 0; i < extra; i++) slots.push({ kind: 'spare' });

  const perSlot = new Map<number, number>();
  slots.forEach((_, i) => {
    const { slot } = rootPortAddress(i + 1);
    perSlot.set(slot, (perSlot.get(slot) ?? 0) + 1);
  });

  const ports: PciPort[] = [];
  const rootPorts: DeviceProps[] = [];
  slots.forEach((s, i) => {
    const index = i + 1;
    const id = `pci.${index}`;
    const a = rootPortAddress(index);
    const props: DeviceProps = { driver: 'pcie-root-port', port: a.port, chassis: index, id, bus: 'pcie.0' };
    if (a.fn === 0 && (perSlot.get(a.slot) ?? 0) > 1) props['multifunction'] = true;
    props['addr'] = a.addr;
    if (s.kind === 'device') {
      const hotplug = s.spec.pci?.nic === true;
      if (!hotplug) props['hotplug'] = false;
      s.spec.props['bus'] = id;
      s.spec.props['addr'] = '0x0';
      ports.push({ id, addr: a.addr, hotplug, occupiedBy: s.spec.props.id });
    } else {
      ports.push({ id, addr: a.addr, hotplug: true });
    }
    rootPorts.push(props);
  });
  return { ports, rootPorts };
}

/** pci-placement.go PlacePCIDevicesOnRootComplex: every device on its own pcie.0 slot. */
function placeOnRootBus(pci: DeviceSpec[]): PciLayout {
  const ports: PciPort[] = [];
  let slot = RootBusSlot.FirstRootPortSlot - 1;
  for (const spec of pci) {
    slot++;
    while (RootBusSlot.Reserved.includes(slot)) slot++;
    if (slot >= RootBusSlot.Count) throw new ConversionError('spec.domain.devices', 'no space left on the root PCI bus');
    const addr = `0x${slot.toString(16)}`;
    spec.props['bus'] = 'pcie.0';
    spec.props['addr'] = addr;
    ports.push({ id: 'pcie.0', addr, hotplug: false, occupiedBy: spec.props.id });
  }
  return { ports, rootPorts: [] };
}
