// addvolume/removevolume as virt-api and the VM controller treat them: the spec change, the checks
// with KubeVirt's messages, the request list, the patches; and virtctl's option building.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec, VirtualMachineVolumeRequest } from '../../src/api/types.ts';
import { applyVolumeRequest, checkVolumeRequest, nextVolumeRequests, pendingVolumeRequests, specVolumePatch, verifyVolumeRequest, vmVolumeRequestPatch } from '../../src/api/volume-requests.ts';
import { addVolumeOptions } from '../../src/cli/hotplug.ts';
import { volumeRequestPatch } from '../../src/virt-api/volumes.ts';
import { planVolumeRequests } from '../../controller/vm/volume-requests.ts';
import { jsonPatch, type Json } from '../../src/apiserver/patch.ts';

const applyPatch = (doc: unknown, ops: unknown, _t: 'json'): unknown => jsonPatch(doc as Json, ops);

const spec = (vols: Array<[string, boolean]> = [['root', false]]): VirtualMachineInstanceSpec => ({
  domain: { devices: { disks: vols.map(([name]) => ({ name, disk: { bus: 'virtio' as const } })) } },
  volumes: vols.map(([name, hot]) => (hot ? { name, persistentVolumeClaim: { claimName: name, hotpluggable: true } } : { name, containerDisk: { image: 'x' } })),
});
const add = (name: string, claim = name): VirtualMachineVolumeRequest => ({ addVolumeOptions: { name, disk: { name, serial: name, disk: { bus: 'scsi' } }, volumeSource: { persistentVolumeClaim: { claimName: claim } } } });
const remove = (name: string): VirtualMachineVolumeRequest => ({ removeVolumeOptions: { name } });

test('applyVolumeRequest: add puts a hotpluggable volume and its disk; remove takes both; add is idempotent', () => {
  const s = applyVolumeRequest(spec(), add('data'));
  assert.equal(s.volumes?.at(-1), { name: 'data', persistentVolumeClaim: { claimName: 'data', hotpluggable: true } });
  assert.equal(s.domain.devices.disks?.at(-1), { name: 'data', serial: 'data', disk: { bus: 'scsi' } });
  assert.equal(applyVolumeRequest(s, add('data')), s);
  const r = applyVolumeRequest(s, remove('data'));
  assert.equal(r.volumes, spec().volumes);
  assert.equal(r.domain.devices.disks, spec().domain.devices.disks);
});

const verifyCases: Array<[string, VirtualMachineVolumeRequest, RegExp | undefined]> = [
  ['a new volume', add('data'), undefined],
  ['a name in use', add('root', 'other'), /Unable to add volume \[root\] because volume with that name already exists/],
  ['a claim in use', add('x', 'hp'), /Unable to add volume source \[hp\] because it already exists/],
  ['removing a hotpluggable volume', remove('hp'), undefined],
  ['removing a cold volume', remove('root'), /Unable to remove volume \[root\] because it is not hotpluggable/],
  ['removing nothing', remove('gone'), /Unable to remove volume \[gone\] because it does not exist/],
];
for (const [name, r, err] of verifyCases) {
  test(`verifyVolumeRequest: ${name}`, () => {
    const vols = spec([['root', false], ['hp', true]]).volumes!;
    if (err) assert.throws(() => verifyVolumeRequest(vols, r), err);
    else verifyVolumeRequest(vols, r);
  });
}

test('checkVolumeRequest: virt-api\'s required fields', () => {
  assert.throws(() => checkVolumeRequest({ addVolumeOptions: { name: '', disk: { name: '' }, volumeSource: {} } }), /requires name/);
  assert.throws(() => checkVolumeRequest({ addVolumeOptions: { name: 'a', disk: { name: 'a' }, volumeSource: {} } }), /requires VolumeSource/);
  assert.throws(() => checkVolumeRequest({ removeVolumeOptions: { name: '' } }), /RemoveVolumeOptions requires name/);
});

test('nextVolumeRequests: duplicates refused; a remove drops a pending add', () => {
  assert.throws(() => nextVolumeRequests([add('a')], add('a')), /add volume request for volume \[a\] already exists/);
  assert.throws(() => nextVolumeRequests([remove('a')], add('a')), /remove volume request for volume \[a\] already exists and is still being processed/);
  assert.throws(() => nextVolumeRequests([remove('a')], remove('a')), /remove volume request for volume \[a\] already exists/);
  assert.equal(nextVolumeRequests([add('a'), add('b')], remove('a')), [add('b'), remove('a')]);
});

test('patches apply on the API server: VMI spec (test-guarded) and VM status request list', () => {
  const vmi = { metadata: { name: 'v' }, spec: spec(), status: { phase: 'Running' } } as VirtualMachineInstance;
  const patched = applyPatch(structuredClone(vmi), specVolumePatch('', vmi.spec, add('data')), 'json') as VirtualMachineInstance;
  assert.is(patched.spec.volumes?.length, 2);
  const stale = { ...vmi, spec: spec([['root', false], ['other', true]]) };
  assert.throws(() => applyPatch(structuredClone(stale), specVolumePatch('', vmi.spec, add('data')), 'json'), /test failed/);
  const vm = { metadata: { name: 'v' }, spec: { template: { spec: spec() } }, status: {} } as VirtualMachine;
  const withReq = applyPatch(structuredClone(vm), vmVolumeRequestPatch(vm, add('data')), 'json') as VirtualMachine;
  assert.equal(withReq.status?.volumeRequests, [add('data')]);
});

test('volumeRequestPatch: a VMI owned by a VM or not running is refused; a VM gets a status patch', () => {
  const owned = { metadata: { name: 'v', namespace: 'ns', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'v', uid: 'u', controller: true }] }, spec: spec(), status: { phase: 'Running' } } as VirtualMachineInstance;
  assert.throws(() => volumeRequestPatch({ kind: 'vmi', vmi: owned }, add('d')), /VMI ns\/v is owned by a VM/);
  assert.throws(() => volumeRequestPatch({ kind: 'vmi', vmi: { ...owned, metadata: { name: 'v' }, status: { phase: 'Scheduled' } } }, add('d')), /VMI is not running/);
  const p = volumeRequestPatch({ kind: 'vm', vm: { metadata: { name: 'v' }, spec: { template: { spec: spec() } } } as VirtualMachine }, add('d'));
  assert.is(p.subresource, 'status');
  assert.is(p.resource.kind, 'VirtualMachine');
});

test('addVolumeOptions: virtctl defaults (scsi disk, serial = name) and flag checks', () => {
  assert.equal(addVolumeOptions({ volumeName: 'pvc1', diskType: 'disk', bus: 'scsi', dataVolume: false }), { name: 'pvc1', disk: { name: 'pvc1', disk: { bus: 'scsi' }, serial: 'pvc1' }, volumeSource: { persistentVolumeClaim: { claimName: 'pvc1', hotpluggable: true } } });
  assert.equal(addVolumeOptions({ volumeName: 'pvc1', diskName: 'd', serial: 'S', cache: 'none', diskType: 'lun', bus: 'scsi', dataVolume: true }).disk, { name: 'd', lun: { bus: 'scsi' }, serial: 'S', cache: 'none' });
  assert.throws(() => addVolumeOptions({ volumeName: 'p', diskType: 'lun', bus: 'virtio', dataVolume: false }), /Only 'scsi' bus is supported/);
  assert.throws(() => addVolumeOptions({ volumeName: 'p', diskType: 'cdrom', bus: 'scsi', dataVolume: false }), /invalid disk type 'cdrom'/);
  assert.throws(() => addVolumeOptions({ volumeName: 'p', cache: 'unsafe', diskType: 'disk', bus: 'scsi', dataVolume: false }), /invalid cache value unsafe/);
  assert.throws(() => addVolumeOptions({ volumeName: 'x'.repeat(64), diskType: 'disk', bus: 'scsi', dataVolume: false }), /--disk-name to specify a shorter name/);
});

test('VM controller: a request goes into the template first, then the running VMI, then is trimmed', () => {
  const vm = { metadata: { name: 'v' }, spec: { template: { spec: spec() } }, status: { volumeRequests: [add('data')] } } as VirtualMachine;
  const vmi = { metadata: { name: 'v' }, spec: spec(), status: { phase: 'Running' } } as VirtualMachineInstance;
  const p1 = planVolumeRequests(vm, vmi);
  assert.ok(p1.vmPatch && p1.vmiPatch);
  assert.equal(p1.remaining, [], 'trimmed once the template shows it');
  const vm2 = applyPatch(structuredClone(vm), p1.vmPatch!, 'json') as VirtualMachine;
  const vmi2 = applyPatch(structuredClone(vmi), p1.vmiPatch!, 'json') as VirtualMachineInstance;
  const p2 = planVolumeRequests(vm2, vmi2);
  assert.equal([p2.vmPatch, p2.vmiPatch], [undefined, undefined]);
  // A stopped VM: only the template.
  assert.is(planVolumeRequests(vm, undefined).vmiPatch, undefined);
  assert.equal(pendingVolumeRequests(vm2.spec.template!.spec!, [add('data'), remove('data')]), [remove('data')]);
});

test.run();
