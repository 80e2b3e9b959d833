import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  decodeVirtualMachineInstance,
  parseKubeVirtObject,
  parseVirtualMachine,
  parseVirtualMachineInstance,
  parseVirtualMachineInstanceMigration,
} from '../../src/api/parse.ts';
import { FieldErrors, formatFieldError } from '../../src/api/field-error.ts';
import { loadExample, loadExamples } from './fixtures.ts';

test('every KubeVirt example parses with no errors and nothing pruned', () => {
  const examples = loadExamples();
  assert.ok(examples.length >= 12, `found ${examples.length} examples`);
  for (const { file, doc } of examples) {
    const r = parseKubeVirtObject(doc);
    assert.equal(r.errors.map(formatFieldError), [], file);
    assert.equal(r.pruned, [], file);
    assert.ok(r.value, file);
    assert.is(r.value!.kind, doc.kind, file);
    assert.equal(r.value!.object, doc, `${file}: parsing is lossless`);
  }
});

/** A minimal valid VMI with one mutation applied. */
function vmi(mutate: (o: any) => void = () => {}): unknown {
  const o: any = loadExample('vmi-nocloud.yaml');
  mutate(o);
  return o;
}

const errorCases: [string, (o: any) => void, string[]][] = [
  ['bad disk bus', (o) => (o.spec.domain.devices.disks[1].disk.bus = 'ide'), [
    'spec.domain.devices.disks[1].disk.bus: must be one of virtio, sata, scsi, usb (got "ide")',
  ]],
  ['string for integer', (o) => (o.spec.terminationGracePeriodSeconds = '30'), [
    'spec.terminationGracePeriodSeconds: must be an integer (got string "30")',
  ]],
  ['fractional integer', (o) => (o.spec.domain.cpu = { cores: 1.5 }), [
    'spec.domain.cpu.cores: must be an integer (got number 1.5)',
  ]],
  ['int32 overflow', (o) => (o.spec.domain.cpu = { sockets: 2 ** 31 }), [
    'spec.domain.cpu.sockets: must fit in 32 bits (got 2147483648)',
  ]],
  ['negative unsigned', (o) => (o.spec.domain.cpu = { threads: -1 }), [
    'spec.domain.cpu.threads: must be greater than or equal to 0 (got -1)',
  ]],
  ['bad quantity', (o) => (o.spec.domain.memory.guest = '128MB'), [
    'spec.domain.memory.guest: quantity "128MB" is invalid: unknown suffix "MB" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or e<exp>)',
  ]],
  ['boolean as string', (o) => (o.spec.domain.devices.autoattachGraphicsDevice = 'false'), [
    'spec.domain.devices.autoattachGraphicsDevice: must be a boolean (got string "false")',
  ]],
  ['array expected', (o) => (o.spec.volumes = { name: 'x' }), ['spec.volumes: must be an array (got an object)']],
  ['object expected', (o) => (o.spec.domain = 'big'), ['spec.domain: must be an object (got string "big")']],
  ['missing required disk name', (o) => delete o.spec.domain.devices.disks[2].name, [
    'spec.domain.devices.disks[2].name: Required value',
  ]],
  ['missing spec', (o) => delete o.spec, ['spec: Required value']],
  ['missing devices', (o) => delete o.spec.domain.devices, ['spec.domain.devices: Required value']],
  ['null array item', (o) => (o.spec.volumes[0] = null), ['spec.volumes[0]: must be an object (got null)']],
  ['label value not a string', (o) => (o.metadata.labels.special = 3), [
    'metadata.labels[special]: must be a string (got number 3)',
  ]],
  ['wrong kind', (o) => (o.kind = 'VirtualMachine'), ['kind: must be VirtualMachineInstance (got string "VirtualMachine")']],
  ['wrong apiVersion', (o) => (o.apiVersion = 'kubevirt.io/v2'), ['apiVersion: must be kubevirt.io/v1 (got string "kubevirt.io/v2")']],
  ['several errors at once', (o) => {
    o.spec.domain.devices.disks[0].disk.bus = 'floppy';
    o.spec.volumes[2].emptyDisk.capacity = true;
    o.spec.domain.devices.inputs = [{ name: 't', type: 'mouse', bus: 'ps2' }];
  }, [
    'spec.domain.devices.disks[0].disk.bus: must be one of virtio, sata, scsi, usb (got "floppy")',
    'spec.domain.devices.inputs[0].bus: must be one of usb, virtio (got "ps2")',
    'spec.domain.devices.inputs[0].type: must be one of tablet, keyboard (got "mouse")',
    'spec.volumes[2].emptyDisk.capacity: must be a quantity (string or number) (got boolean true)',
  ]],
];

for (const [name, mutate, expected] of errorCases) {
  test(`parse error: ${name}`, () => {
    const r = parseVirtualMachineInstance(vmi(mutate));
    assert.is(r.value, undefined);
    assert.equal(r.errors.map(formatFieldError).sort(), [...expected].sort());
  });
}

test('unknown fields are pruned and reported; preserve-unknown nodes keep them', () => {
  const r = parseVirtualMachineInstance(
    vmi((o) => {
      o.spec.domain.devices.disks[0].disk.foo = 1;
      o.spec.bogus = { a: 1 };
      o.spec.domain.clock = { utc: {}, somethingNew: 'kept' };
      o.status = { phase: 'Pending', futureField: true };
    }),
  );
  assert.equal(r.errors, []);
  assert.equal([...r.pruned].sort(), ['spec.bogus', 'spec.domain.devices.disks[0].disk.foo', 'status.futureField']);
  const v: any = r.value;
  assert.equal(v.spec.domain.devices.disks[0].disk, { bus: 'virtio' });
  assert.not.ok('bogus' in v.spec);
  assert.equal(v.spec.domain.clock, { utc: {}, somethingNew: 'kept' });
});

test('nulls mean unset; numeric quantities become strings; int-or-string keeps ints', () => {
  const r = parseVirtualMachineInstance(
    vmi((o) => {
      o.metadata.creationTimestamp = null;
      o.spec.domain.resources = { requests: { memory: 1073741824, cpu: 0.5 } };
      o.spec.nodeSelector = null;
      o.spec.readinessProbe = { tcpSocket: { port: 22 }, initialDelaySeconds: 5 };
    }),
  );
  assert.equal(r.errors, []);
  const v: any = r.value;
  assert.not.ok('creationTimestamp' in v.metadata);
  assert.not.ok('nodeSelector' in v.spec);
  assert.equal(v.spec.domain.resources.requests, { memory: '1073741824', cpu: '0.5' });
  assert.is(v.spec.readinessProbe.tcpSocket.port, 22);
});

test('template metadata and opaque pass-through shapes are preserved', () => {
  const vm: any = loadExample('vm-cirros.yaml');
  vm.spec.template.metadata.annotations = { a: 'b' };
  vm.spec.template.metadata.extra = { kept: true };
  vm.spec.template.spec.affinity = { nodeAffinity: { whatever: [1, 2] } };
  const r = parseVirtualMachine(vm);
  assert.equal(r.errors, []);
  assert.equal(r.pruned, []);
  assert.equal((r.value as any).spec.template.metadata.extra, { kept: true });
  assert.equal((r.value as any).spec.template.spec.affinity, { nodeAffinity: { whatever: [1, 2] } });
});

test('the input is not mutated and the result shares no structure with it', () => {
  const input: any = vmi();
  const before = structuredClone(input);
  const r = parseVirtualMachineInstance(input);
  (r.value as any).spec.domain.devices.disks[0].name = 'changed';
  assert.equal(input, before);
});

test('decode throws FieldErrors naming the object and every field', () => {
  try {
    decodeVirtualMachineInstance(vmi((o) => {
      o.spec.domain.devices.disks[1].disk.bus = 'ide';
      o.spec.terminationGracePeriodSeconds = 'x';
    }));
    assert.unreachable();
  } catch (e) {
    assert.instance(e, FieldErrors);
    const err = e as FieldErrors;
    assert.is(err.errors.length, 2);
    assert.match(err.message, /^VirtualMachineInstance "vmi-nocloud" is invalid: /);
    assert.match(err.message, /spec\.domain\.devices\.disks\[1\]\.disk\.bus: must be one of virtio, sata, scsi, usb/);
  }
});

test('parseKubeVirtObject needs a known kind', () => {
  assert.equal(parseKubeVirtObject({ kind: 'Pod' }).errors.map(formatFieldError), [
    'kind: must be one of VirtualMachineInstance, VirtualMachine, VirtualMachineInstanceReplicaSet, VirtualMachineInstanceMigration (got "Pod")',
  ]);
  assert.is(parseKubeVirtObject('nope').errors.length, 1);
});

test('a migration needs a spec; vmiName is a string', () => {
  const r = parseVirtualMachineInstanceMigration({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', spec: { vmiName: 3 } });
  assert.equal(r.errors.map(formatFieldError), ['spec.vmiName: must be a string (got number 3)']);
});

test.run();
