// Table tests for the PCIe layout: KubeVirt's hotplug port counts (v1 placeholders, v2 extras,
// the slot-count annotation), root port addressing, placement order and hotplug flags.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hotplugPortCounts, layoutPci, rootPortAddress, type HotplugPortInput } from '../../launcher/convert/pci-topology.ts';
import { PciOrder, type DeviceSpec } from '../../launcher/convert/builder.ts';
import { ConversionError } from '../../launcher/convert/plan.ts';
import { convert, ctx, vmi } from './helpers.ts';

const GiB = 1024 ** 3;
const base: HotplugPortInput = { interfaceCount: 1, portsInUse: 5, guestMemoryBytes: GiB, placeOnRootComplex: false, disableHotplug: false };

const countCases: Array<[string, Partial<HotplugPortInput>, { placeholders: number; extra: number }]> = [
  ['1 NIC, 5 in use: 3 placeholders, 8-5=3 free wanted', {}, { placeholders: 3, extra: 0 }],
  ['1 NIC, 2 in use: 6 wanted, 3 from placeholders', { portsInUse: 2 }, { placeholders: 3, extra: 3 }],
  ['no NIC: no placeholders, v2 only', { interfaceCount: 0, portsInUse: 4 }, { placeholders: 0, extra: 4 }],
  ['no NIC, many devices: minimum 3 free', { interfaceCount: 0, portsInUse: 12 }, { placeholders: 0, extra: 3 }],
  ['4 NICs: no placeholders', { interfaceCount: 4, portsInUse: 9 }, { placeholders: 0, extra: 3 }],
  ['6 NICs: never negative', { interfaceCount: 6, portsInUse: 11 }, { placeholders: 0, extra: 3 }],
  ['exactly 2 GiB is not large', { guestMemoryBytes: 2 * GiB, portsInUse: 5 }, { placeholders: 3, extra: 0 }],
  ['> 2 GiB: 16 total / 6 minimum', { guestMemoryBytes: 2 * GiB + 1, portsInUse: 5 }, { placeholders: 3, extra: 8 }],
  ['> 2 GiB, many devices: 6 minimum', { guestMemoryBytes: 4 * GiB, portsInUse: 14 }, { placeholders: 3, extra: 3 }],
  ['slot-count annotation replaces the v1 total', { slotCountAnnotation: '6', interfaceCount: 2 }, { placeholders: 4, extra: 0 }],
  ['slot-count annotation below the NIC count', { slotCountAnnotation: '1', interfaceCount: 2 }, { placeholders: 0, extra: 3 }],
  ['slot-count annotation with no NICs still reserves', { slotCountAnnotation: '2', interfaceCount: 0, portsInUse: 4 }, { placeholders: 2, extra: 2 }],
  ['placePCIDevicesOnRootComplex: nothing', { placeOnRootComplex: true }, { placeholders: 0, extra: 0 }],
  ['disableHotplug: nothing', { disableHotplug: true }, { placeholders: 0, extra: 0 }],
];
for (const [name, input, want] of countCases) {
  test(`hotplugPortCounts: ${name}`, () => {
    assert.equal(hotplugPortCounts({ ...base, ...input }), want);
  });
}

test('hotplugPortCounts: a malformed slot-count annotation names the annotation', () => {
  assert.throws(() => hotplugPortCounts({ ...base, slotCountAnnotation: 'four' }), (e: unknown) =>
    e instanceof ConversionError && e.field === 'metadata.annotations["kubevirt.io/pci-interface-slot-count"]');
});

const addrCases: Array<[number, string, number]> = [
  [1, '0x2', 16], [2, '0x2.0x1', 17], [8, '0x2.0x7', 23], [9, '0x3', 24], [17, '0x4', 32], [31, '0x5.0x6', 46],
];
for (const [index, addr, port] of addrCases) {
  test(`rootPortAddress(pci.${index}) = ${addr}, port ${port}`, () => {
    const a = rootPortAddress(index);
    assert.is(a.addr, addr);
    assert.is(a.port, port);
  });
}

const dev = (id: string, order: DeviceSpec['pci'] extends infer P ? P extends { order: infer O } ? O : never : never, nic = false): DeviceSpec =>
  ({ props: { driver: 'x', id }, pci: { order, nic } });

test('layoutPci: NICs first, placeholders right after them, then libvirt order, then extras', () => {
  const devs = [dev('ua-disk', PciOrder.Disk), dev('balloon0', PciOrder.Balloon), dev('scsi0', PciOrder.Controller), dev('ua-nic', PciOrder.Interface, true)];
  const l = layoutPci(devs, { placeholders: 2, extra: 1 }, false);
  assert.equal(l.ports.map((p) => [p.id, p.occupiedBy ?? '-', p.hotplug]), [
    ['pci.1', 'ua-nic', true], ['pci.2', '-', true], ['pci.3', '-', true], ['pci.4', 'scsi0', false],
    ['pci.5', 'ua-disk', false], ['pci.6', 'balloon0', false], ['pci.7', '-', true],
  ]);
  assert.is(devs[0]?.props['bus'], 'pci.5');
  assert.is(devs[0]?.props['addr'], '0x0');
  assert.is(l.rootPorts[0]?.['multifunction'], true);
  assert.is(l.rootPorts[1]?.['multifunction'], undefined);
  assert.is(l.rootPorts[3]?.['hotplug'], false);
  assert.is(l.rootPorts[0]?.['hotplug'], undefined);
});

test('layoutPci: a lone port in a slot is not multifunction', () => {
  const l = layoutPci([dev('a', PciOrder.Disk)], { placeholders: 0, extra: 0 }, false);
  assert.is(l.rootPorts[0]?.['multifunction'], undefined);
  const nine = layoutPci(Array.from({ length: 9 }, (_, i) => dev(`d${i}`, PciOrder.Disk)), { placeholders: 0, extra: 0 }, false);
  assert.is(nine.rootPorts[8]?.['addr'], '0x3');
  assert.is(nine.rootPorts[8]?.['multifunction'], undefined);
});

test('layoutPci: extras are capped at bus index 31', () => {
  const l = layoutPci(Array.from({ length: 29 }, (_, i) => dev(`d${i}`, PciOrder.Disk)), { placeholders: 0, extra: 6 }, false);
  assert.is(l.ports.length, 31);
  assert.is(l.ports[30]?.id, 'pci.31');
});

test('layoutPci: more than 31 devices is an error naming the devices', () => {
  assert.throws(() => layoutPci(Array.from({ length: 32 }, (_, i) => dev(`d${i}`, PciOrder.Disk)), { placeholders: 0, extra: 0 }, false),
    (e: unknown) => e instanceof ConversionError && e.field === 'spec.domain.devices');
});

test('layoutPci: root complex placement skips slot 0, 1, 0x1b and 0x1f', () => {
  const devs = Array.from({ length: 27 }, (_, i) => dev(`d${i}`, PciOrder.Disk));
  const l = layoutPci(devs, { placeholders: 0, extra: 0 }, true);
  assert.is(l.rootPorts.length, 0);
  const addrs = l.ports.map((p) => p.addr);
  assert.is(addrs[0], '0x2');
  assert.not.ok(addrs.includes('0x1b'));
  assert.is(addrs[25], '0x1c');
  assert.is(addrs[26], '0x1d');
  assert.throws(() => layoutPci(Array.from({ length: 29 }, (_, i) => dev(`d${i}`, PciOrder.Disk)), { placeholders: 0, extra: 0 }, true), /no space left/);
});

test('convertVMI: ports in use counted as KubeVirt does (usb and balloon always count)', () => {
  // default VMI: 1 NIC + usb(none) + scsi + virtio-serial + balloon = 5 → 3 placeholders, 0 extra
  const p = convert(vmi());
  assert.is(p.pciPorts.filter((x) => !x.occupiedBy).length, 3);
  // no balloon device, still counted: same spares
  const q = convert(vmi((v) => { v.spec.domain.devices.autoattachMemBalloon = false; }));
  assert.is(q.pciPorts.filter((x) => !x.occupiedBy).length, 3);
  // no interfaces: v2 only: 8 - 4 = 4 spare ports
  const r = convert(vmi((v) => { v.spec.domain.devices.interfaces = []; v.spec.networks = []; }));
  assert.is(r.pciPorts.filter((x) => !x.occupiedBy).length, 4);
});

test('convertVMI: disableHotplug drops spare ports and the SCSI controller', () => {
  const p = convert(vmi((v) => { v.spec.domain.devices.disableHotplug = true; }), ctx());
  assert.ok(p.pciPorts.every((x) => x.occupiedBy));
  assert.not.ok(p.devices.some((d) => d.qemuId === 'scsi0'));
});

test.run();
