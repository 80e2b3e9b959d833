import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { firmwareUUIDForVM, setupVMIFromVM, vmiForStart, vmRevisionName, InvalidVMTemplateError } from '../../controller/vm/vmi-from-vm.ts';
import { uuidV5 } from '../../src/api/defaults.ts';
import { vm } from './fixtures.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';

test('firmware UUID: UUIDv5 of the VM name in KubeVirt\'s namespace (cross-checked with Python uuid.uuid5)', () => {
  assert.is(firmwareUUIDForVM('testvm'), '5a9fc181-957e-5c32-9e5a-2de5e9673531');
  assert.is(firmwareUUIDForVM('vm-cirros'), '0d2a2043-41c0-59c3-9b17-025022203668');
  // RFC 4122 appendix-style check: DNS namespace, "python.org"
  assert.is(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org'), '886313e1-3b8a-5372-9b90-0c9aee199e5d');
});

test('SetupVMIFromVM: name, namespace, labels, owner reference, spec copy, firmware uuid, default disks', () => {
  const theVM = vm({ runStrategy: 'Always' });
  theVM.spec.template.metadata = { name: 'ignored', generateName: 'ignored-', labels: { app: 'x' }, annotations: { note: 'kept' } };
  const out = setupVMIFromVM(theVM);
  assert.is(out.metadata?.name, 'testvm');
  assert.is(out.metadata?.generateName, undefined);
  assert.is(out.metadata?.namespace, 'default');
  assert.equal(out.metadata?.labels, { app: 'x' });
  assert.equal(out.metadata?.annotations, { note: 'kept' });
  assert.equal(out.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'testvm', uid: 'vm-uid', controller: true, blockOwnerDeletion: true }]);
  assert.is(out.spec.domain.firmware?.uuid, '5a9fc181-957e-5c32-9e5a-2de5e9673531');
  assert.equal(out.spec.domain.devices.disks?.map((d) => d.name), ['containerdisk', 'cloudinit'], 'cloudinit volume got a disk');
  assert.is(out.spec.startStrategy, undefined);
  assert.is(theVM.spec.template.spec?.domain.firmware, undefined, 'the VM is not modified');
  assert.equal(theVM.spec.template.spec?.domain.devices.disks?.length, 1);
});

test('SetupVMIFromVM: an explicit firmware uuid is kept; a paused start request sets startStrategy Paused', () => {
  const theVM = vm({ runStrategy: 'Manual', requests: [{ action: 'Start', data: { paused: 'true' } }] });
  theVM.spec.template.spec!.domain.firmware = { uuid: '11111111-2222-3333-4444-555555555555' };
  const out = setupVMIFromVM(theVM);
  assert.is(out.spec.domain.firmware?.uuid, '11111111-2222-3333-4444-555555555555');
  assert.is(out.spec.startStrategy, 'Paused');
});

test('SetupVMIFromVM: filesystems count as consumers of a volume', () => {
  const theVM = vm();
  theVM.spec.template.spec!.domain.devices.filesystems = [{ name: 'cloudinit', virtiofs: {} }];
  assert.equal(setupVMIFromVM(theVM).spec.domain.devices.disks?.map((d) => d.name), ['containerdisk']);
});

test('startVMI extras: revision name, generation annotation, VM controller finalizer, auto-attached input', () => {
  const theVM = vm({ runStrategy: 'Always' });
  theVM.spec.template.spec!.domain.devices.autoattachInputDevice = true;
  const out = vmiForStart(theVM);
  assert.is(out.status?.virtualMachineRevisionName, vmRevisionName('vm-uid', 3));
  assert.is(out.status?.virtualMachineRevisionName, 'revision-start-vm-vm-uid-3');
  assert.is(out.metadata?.annotations?.['kubevirt.io/vm-generation'], '3');
  assert.equal(out.metadata?.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
  assert.equal(out.spec.domain.devices.inputs, [{ name: 'default-0' }]);
});

test('startVMI with an instance type and preference, in KubeVirt\'s order: autoattach preferences before the input device, the default interface, then the specs', () => {
  const theVM = vm({ runStrategy: 'Always' });
  theVM.spec.instancetype = { name: 'u1.small' };
  theVM.spec.preference = { name: 'p', kind: 'VirtualMachinePreference' };
  delete theVM.spec.template.spec!.domain.memory;
  const config = defaultClusterConfig();
  const out = vmiForStart(theVM, { instancetype: { cpu: { guest: 2 }, memory: { guest: '2Gi' } }, preference: { devices: { preferredAutoattachInputDevice: true, preferredInputBus: 'virtio', preferredInterfaceModel: 'e1000' }, cpu: { preferredCPUTopology: 'cores' } }, config });
  assert.equal(out.spec.domain.devices.inputs, [{ name: 'default-0', bus: 'virtio' }], 'the preference switched the input on, then set its bus');
  assert.equal(out.spec.domain.devices.interfaces, [{ name: 'default', bridge: {}, model: 'e1000' }]);
  assert.equal(out.spec.networks, [{ name: 'default', pod: {} }]);
  assert.equal([out.spec.domain.cpu?.sockets, out.spec.domain.cpu?.cores, out.spec.domain.memory?.guest], [1, 2, '2Gi']);
  assert.equal(out.metadata?.annotations, { 'kubevirt.io/vm-generation': '3', 'kubevirt.io/cluster-instancetype-name': 'u1.small', 'kubevirt.io/preference-name': 'p' });
  assert.is(theVM.spec.template.spec?.domain.cpu, undefined, 'the VM is not modified');
  theVM.spec.template.spec!.domain.memory = { guest: '1Gi' };
  assert.throws(() => vmiForStart(theVM, { instancetype: { cpu: { guest: 2 }, memory: { guest: '2Gi' } }, preference: undefined, config }), /VMI conflicts with instancetype spec in fields: \[spec\.domain\.memory\.guest\]/);
  assert.equal(vmiForStart(vm({ runStrategy: 'Always' }), { instancetype: undefined, preference: undefined, config }), vmiForStart(vm({ runStrategy: 'Always' })), 'neither: as without');
});

test('SetupVMIFromVM: a template without spec is an error naming the VM and field', () => {
  const theVM = vm();
  delete theVM.spec.template.spec;
  assert.throws(() => setupVMIFromVM(theVM), (e: unknown) => e instanceof InvalidVMTemplateError && /default\/testvm: spec\.template: spec is required/.test((e as Error).message));
});

test.run();
