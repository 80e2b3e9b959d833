// Table tests for vCPU topology, CPU model/feature mapping (KVM and TCG), and guest memory:
// sizes, virtio-mem hotplug ranges and their validation, hugepage backends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { cpuTopology } from '../../launcher/convert/cpu.ts';
import { guestMemoryBytes, memoryLayout } from '../../launcher/convert/memory.ts';
import { parseQuantity } from '../../launcher/convert/quantity.ts';
import { ConversionError } from '../../launcher/convert/plan.ts';
import { convert, cpuFlags, ctx, device, machineOpts, optValue, optValues, vmi } from './helpers.ts';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const fieldIs = (field: string) => (e: unknown) => e instanceof ConversionError && e.field === field;

const quantities: Array<[string, number]> = [
  ['128Mi', 128 * MiB], ['1Gi', GiB], ['1G', 1e9], ['1024M', 1.024e9], ['512k', 512e3], ['1.5Gi', 1.5 * GiB], ['100m', 0.1], ['2', 2], ['1e3', 1000],
];
for (const [q, want] of quantities) test(`parseQuantity(${q})`, () => assert.is(parseQuantity(q, 'f'), want));
test('parseQuantity: garbage names the field', () => assert.throws(() => parseQuantity('12 apples', 'spec.x'), fieldIs('spec.x')));

const topoCases: Array<[string, VirtualMachineInstance['spec']['domain']['cpu'], Record<string, string> | undefined, string]> = [
  ['defaults 1/1/1', { sockets: 1, cores: 1, threads: 1 }, undefined, '1,sockets=1,dies=1,clusters=1,cores=1,threads=1'],
  ['2 sockets x 2 cores x 2 threads', { sockets: 2, cores: 2, threads: 2 }, undefined, '8,sockets=2,dies=1,clusters=1,cores=2,threads=2'],
  ['maxSockets → maxcpus', { sockets: 2, cores: 2, threads: 1, maxSockets: 4 }, undefined, '4,maxcpus=8,sockets=4,dies=1,clusters=1,cores=2,threads=1'],
  ['no topology: sockets from cpu limit', {}, { cpu: '3' }, '3,sockets=3,dies=1,clusters=1,cores=1,threads=1'],
  ['no topology: fractional request rounds up', {}, { reqcpu: '1500m' }, '2,sockets=2,dies=1,clusters=1,cores=1,threads=1'],
];
for (const [name, cpu, res, want] of topoCases) {
  test(`-smp: ${name}`, () => {
    const v = vmi((x) => {
      x.spec.domain.cpu = { ...cpu, model: 'host-model' };
      if (res?.['cpu']) x.spec.domain.resources = { limits: { cpu: res['cpu'] } };
      if (res?.['reqcpu']) x.spec.domain.resources = { requests: { cpu: res['reqcpu'] } };
    });
    assert.is(optValue(convert(v), '-smp'), want);
  });
}
test('maxSockets below sockets is an error', () => {
  assert.throws(() => cpuTopology(vmi((x) => { x.spec.domain.cpu = { sockets: 4, maxSockets: 2 }; })), fieldIs('spec.domain.cpu.maxSockets'));
});

const modelCases: Array<[string | undefined, 'kvm' | 'tcg', string]> = [
  [undefined, 'kvm', 'host,migratable=on'], ['host-model', 'kvm', 'host,migratable=on'], ['host-passthrough', 'kvm', 'host,migratable=on'],
  ['host-model', 'tcg', 'max'], ['host-passthrough', 'tcg', 'max'],
  ['Skylake-Client-v4', 'kvm', 'Skylake-Client-v4,mpx=off'], ['EPYC-v3', 'tcg', 'EPYC-v3,mpx=off'],
];
for (const [model, accel, want] of modelCases) {
  test(`-cpu: ${model ?? '(unset)'} under ${accel} → ${want}`, () => {
    const v = vmi((x) => { x.spec.domain.cpu = model === undefined ? { sockets: 1 } : { sockets: 1, model }; });
    assert.is(optValue(convert(v, ctx({}, { accelerator: accel })), '-cpu'), want);
  });
}
test('-cpu: host-passthrough under TCG warns', () => {
  const p = convert(vmi((x) => { x.spec.domain.cpu = { model: 'host-passthrough' }; }));
  assert.ok(p.warnings.some((w) => w.includes('host-passthrough')));
});
test('-cpu: feature policies; an explicit mpx policy wins over the default mpx=off', () => {
  const v = vmi((x) => {
    x.spec.domain.cpu = { model: 'Haswell-noTSX', features: [
      { name: 'pcid', policy: 'require' }, { name: 'vmx', policy: 'force' }, { name: 'svm', policy: 'disable' },
      { name: 'x2apic', policy: 'forbid' }, { name: 'avx' }, { name: 'mpx', policy: 'require' }, { name: 'ssse3', policy: 'optional' },
    ] };
  });
  const p = convert(v);
  assert.equal(cpuFlags(p), ['Haswell-noTSX', 'pcid=on', 'vmx=on', 'svm=off', 'x2apic=off', 'avx=on', 'mpx=on']);
  assert.ok(p.warnings.some((w) => w.includes('optional')));
});
test('-cpu: unknown policy and bad names are errors on the feature', () => {
  assert.throws(() => convert(vmi((x) => { x.spec.domain.cpu = { features: [{ name: 'pcid', policy: 'maybe' }] }; })), fieldIs('spec.domain.cpu.features[0].policy'));
  assert.throws(() => convert(vmi((x) => { x.spec.domain.cpu = { features: [{ name: 'a,b' }] }; })), fieldIs('spec.domain.cpu.features[0].name'));
  assert.throws(() => convert(vmi((x) => { x.spec.domain.cpu = { model: 'x,y' }; })), fieldIs('spec.domain.cpu.model'));
});
test('dedicated CPUs and emulator thread isolation warn; NUMA passthrough and realtime are errors', () => {
  const p = convert(vmi((x) => { x.spec.domain.cpu = { dedicatedCpuPlacement: true, isolateEmulatorThread: true }; }));
  assert.is(p.warnings.filter((w) => w.includes('pinning')).length, 2);
  assert.throws(() => convert(vmi((x) => { x.spec.domain.cpu = { numa: { guestMappingPassthrough: {} } }; })), fieldIs('spec.domain.cpu.numa.guestMappingPassthrough'));
  assert.throws(() => convert(vmi((x) => { x.spec.domain.cpu = { realtime: {} }; })), fieldIs('spec.domain.cpu.realtime'));
});

test('memory: guest, else requests, else limits', () => {
  assert.is(guestMemoryBytes(vmi((x) => { x.spec.domain.memory = { guest: '256Mi' }; })), 256 * MiB);
  assert.is(guestMemoryBytes(vmi((x) => { x.spec.domain.memory = {}; x.spec.domain.resources = { requests: { memory: '64Mi' }, limits: { memory: '1Gi' } }; })), 64 * MiB);
  assert.is(guestMemoryBytes(vmi((x) => { x.spec.domain.memory = {}; x.spec.domain.resources = { limits: { memory: '1Gi' } }; })), GiB);
  assert.throws(() => guestMemoryBytes(vmi((x) => { x.spec.domain.memory = {}; x.spec.domain.resources = {}; })), fieldIs('spec.domain.memory.guest'));
});

test('memory: -m in KiB, pc.ram backend, machine memory-backend', () => {
  const p = convert(vmi());
  assert.is(optValue(p, '-m'), 'size=131072k');
  assert.equal(JSON.parse(optValues(p, '-object')[0] ?? '{}'), { 'qom-type': 'memory-backend-ram', id: 'pc.ram', size: 128 * MiB });
  assert.is(machineOpts(p)['memory-backend'], 'pc.ram');
});

test('memory hotplug: maxmem, virtio-mem sized maxGuest - guestAtBoot, requested guest - guestAtBoot', () => {
  const v = vmi((x) => {
    x.spec.domain.memory = { guest: '2Gi', maxGuest: '8Gi' };
    x.status = { memory: { guestAtBoot: '1Gi' } };
  });
  const p = convert(v);
  assert.is(optValue(p, '-m'), `size=${GiB / 1024}k,maxmem=${(8 * GiB) / 1024}k`);
  const vm = device(p, 'virtiomem0');
  assert.equal({ ...vm, bus: undefined, addr: undefined }, { driver: 'virtio-mem-pci', id: 'virtiomem0', memdev: 'memvirtiomem0', 'block-size': 2 * MiB, 'requested-size': GiB, node: 0, bus: undefined, addr: undefined });
  const backends = optValues(p, '-object').map((o) => JSON.parse(o) as Record<string, unknown>);
  assert.equal(backends.find((o) => o['id'] === 'memvirtiomem0'), { 'qom-type': 'memory-backend-ram', id: 'memvirtiomem0', size: 7 * GiB });
  assert.is(p.pciPorts.find((x) => x.occupiedBy === 'virtiomem0')?.hotplug, false);
});

test('memory hotplug: guest == maxGuest means no hotplug range', () => {
  const p = convert(vmi((x) => { x.spec.domain.memory = { guest: '1Gi', maxGuest: '1Gi' }; x.status = {}; }));
  assert.is(optValue(p, '-m'), `size=${GiB / 1024}k`);
  assert.not.ok(device(p, 'virtiomem0'));
});

const hotplugErrors: Array<[string, { guest: string; maxGuest: string; pageSize?: string }, string]> = [
  ['guest above maxGuest', { guest: '4Gi', maxGuest: '2Gi' }, 'spec.domain.memory.guest'],
  ['guest not 2Mi aligned', { guest: '1025Mi', maxGuest: '4Gi' }, 'spec.domain.memory.guest'],
  ['maxGuest not 2Mi aligned', { guest: '1Gi', maxGuest: '4097Mi' }, 'spec.domain.memory.maxGuest'],
  ['less than 1Gi', { guest: '512Mi', maxGuest: '4Gi' }, 'spec.domain.memory.guest'],
  ['1Gi hugepages need 1Gi alignment', { guest: '1Gi', maxGuest: '3584Mi', pageSize: '1Gi' }, 'spec.domain.memory.maxGuest'],
];
for (const [name, m, field] of hotplugErrors) {
  test(`memory hotplug error: ${name}`, () => {
    const v = vmi((x) => {
      x.spec.domain.memory = { guest: m.guest, maxGuest: m.maxGuest, ...(m.pageSize ? { hugepages: { pageSize: m.pageSize } } : {}) };
      x.status = {};
    });
    assert.throws(() => memoryLayout(v), fieldIs(field));
  });
}

test('hugepages: memfd with hugetlb by default, hugetlbfs file with kubevirt.io/memfd=false', () => {
  const v = vmi((x) => { x.spec.domain.memory = { guest: '1Gi', hugepages: { pageSize: '2Mi' } }; });
  const memfd = JSON.parse(optValues(convert(v), '-object')[0] ?? '{}') as Record<string, unknown>;
  assert.equal(memfd, { 'qom-type': 'memory-backend-memfd', id: 'pc.ram', hugetlb: true, hugetlbsize: 2 * MiB, prealloc: true, size: GiB });
  v.metadata = { ...v.metadata, annotations: { 'kubevirt.io/memfd': 'false' } };
  const file = JSON.parse(optValues(convert(v), '-object')[0] ?? '{}') as Record<string, unknown>;
  assert.equal(file, { 'qom-type': 'memory-backend-file', id: 'pc.ram', 'mem-path': '/dev/hugepages/libvirt/qemu', prealloc: true, size: GiB });
  // hugepages turn free page reporting off
  assert.is(device(convert(v), 'balloon0')?.['free-page-reporting'], undefined);
});

test('hugepages: memory must be a multiple of the page size', () => {
  assert.throws(() => convert(vmi((x) => { x.spec.domain.memory = { guest: '1025Mi', hugepages: { pageSize: '1Gi' } }; })), fieldIs('spec.domain.memory.hugepages.pageSize'));
});

test('more than 2 GiB of memory asks for 16 total / 6 free hotplug ports', () => {
  const small = convert(vmi((x) => { x.spec.domain.devices.interfaces = []; x.spec.networks = []; }));
  const big = convert(vmi((x) => { x.spec.domain.devices.interfaces = []; x.spec.networks = []; x.spec.domain.memory = { guest: '3Gi' }; }));
  assert.is(small.pciPorts.filter((p) => !p.occupiedBy).length, 4);
  assert.is(big.pciPorts.filter((p) => !p.occupiedBy).length, 12);
});

test('memory is aligned up to 8 KiB the same way for -m and pc.ram (QEMU requires them equal)', () => {
  const p = convert(vmi((x) => { x.spec.domain.memory = { guest: '134217729' }; }));
  assert.is(optValue(p, '-m'), 'size=131080k');
  assert.is((JSON.parse(optValues(p, '-object')[0] ?? '{}') as { size: number }).size, 131080 * 1024);
});

test('reservedOverhead.memLock locks memory', () => {
  const p = convert(vmi((x) => { x.spec.domain.memory = { guest: '128Mi', reservedOverhead: { memLock: 'true' } }; }));
  assert.is(optValue(p, '-overcommit'), 'mem-lock=on');
});

test.run();
