// The VM controller's memory dump decisions (KubeVirt's pkg/storage/memorydump HandleRequest,
// UpdateRequest, SetupVMIFromVM's removal), as tables over VM and VMI.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimAnnotationPatch, nextMemoryDumpRequest, planMemoryDump, withoutCompletedMemoryDump } from '../../controller/vm/memory-dump.ts';
import { setupVMIFromVM } from '../../controller/vm/vmi-from-vm.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineMemoryDumpRequest, Volume, VolumeStatus } from '../../src/api/types.ts';
import type { JsonPatchOp } from '../../src/api/volume-requests.ts';

const disk: Volume = { name: 'boot', containerDisk: { image: 'x' } };
const dump: Volume = { name: 'c', memoryDump: { claimName: 'c', hotpluggable: true } };
const vm = (req: Partial<VirtualMachineMemoryDumpRequest> | undefined, volumes: Volume[] = [disk]): VirtualMachine =>
  ({ metadata: { name: 'vm1', namespace: 'ns', uid: 'vm-uid' }, spec: { template: { spec: { domain: { devices: { disks: [{ name: 'boot' }] } }, volumes } } }, status: { ...(req ? { memoryDumpRequest: req } : {}) } }) as VirtualMachine;
const vmi = (volumes: Volume[] = [disk], volumeStatus: VolumeStatus[] = [], phase = 'Running', deleting = false): VirtualMachineInstance =>
  ({ metadata: { name: 'vm1', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) }, spec: { domain: { devices: {} }, volumes }, status: { phase, volumeStatus } }) as VirtualMachineInstance;

const P = (path: string, before: unknown, after: unknown): JsonPatchOp[] => [{ op: 'test', path, value: before }, { op: before === null ? 'add' : 'replace', path, value: after }];

test('HandleRequest (planMemoryDump)', () => {
  const cases: Array<[string, ReturnType<typeof planMemoryDump>, ReturnType<typeof planMemoryDump>]> = [
    ['no request: nothing', planMemoryDump(vm(undefined), vmi()), {}],
    ['Associating, VMI running: volume into template and VMI', planMemoryDump(vm({ claimName: 'c', phase: 'Associating' }), vmi()),
      { vmPatch: P('/spec/template/spec/volumes', [disk], [disk, dump]), vmiPatch: P('/spec/volumes', [disk], [disk, dump]) }],
    ['Associating, a VMI without volumes: added', planMemoryDump(vm({ claimName: 'c', phase: 'Associating' }, [dump]), vmi([])),
      { vmPatch: undefined, vmiPatch: [{ op: 'test', path: '/spec/volumes', value: [] }, { op: 'replace', path: '/spec/volumes', value: [dump] }] }],
    ['Associating, both have it: nothing', planMemoryDump(vm({ claimName: 'c', phase: 'Associating' }, [disk, dump]), vmi([disk, dump])), { vmPatch: undefined, vmiPatch: undefined }],
    ['Associating, no VMI: nothing', planMemoryDump(vm({ claimName: 'c', phase: 'Associating' }), undefined), {}],
    ['Associating, VMI not running: nothing', planMemoryDump(vm({ claimName: 'c', phase: 'Associating' }), vmi([disk], [], 'Scheduled')), {}],
    ['Associating, VMI deleting: nothing', planMemoryDump(vm({ claimName: 'c', phase: 'Associating' }), vmi([disk], [], 'Running', true)), {}],
    ['InProgress: nothing to change', planMemoryDump(vm({ claimName: 'c', phase: 'InProgress' }, [disk, dump]), vmi([disk, dump])), {}],
    ['Unmounting: out of the VMI, the claim annotated with the file', planMemoryDump(vm({ claimName: 'c', phase: 'Unmounting', fileName: 'f.memory.dump' }, [disk, dump]), vmi([disk, dump])),
      { vmiPatch: P('/spec/volumes', [disk, dump], [disk]), annotateClaim: { claimName: 'c', value: 'f.memory.dump' } }],
    ['Unmounting without a file name: no annotation', planMemoryDump(vm({ claimName: 'c', phase: 'Unmounting' }, [disk, dump]), vmi([disk])), { vmiPatch: undefined, annotateClaim: undefined }],
    ['Failed: out of the VMI, annotated as failed', planMemoryDump(vm({ claimName: 'c', phase: 'Failed' }, [disk, dump]), vmi([disk, dump])),
      { vmiPatch: P('/spec/volumes', [disk, dump], [disk]), annotateClaim: { claimName: 'c', value: 'Memory dump failed' } }],
    ['Dissociating: out of VMI and template', planMemoryDump(vm({ claimName: 'c', phase: 'Dissociating', remove: true }, [disk, dump]), vmi([disk, dump])),
      { vmiPatch: P('/spec/volumes', [disk, dump], [disk]), vmPatch: P('/spec/template/spec/volumes', [disk, dump], [disk]) }],
    ['Dissociating, VM stopped: out of the template', planMemoryDump(vm({ claimName: 'c', phase: 'Dissociating', remove: true }, [disk, dump]), undefined),
      { vmiPatch: undefined, vmPatch: P('/spec/template/spec/volumes', [disk, dump], [disk]) }],
    ['Completed: nothing', planMemoryDump(vm({ claimName: 'c', phase: 'Completed' }, [disk, dump]), vmi([disk])), {}],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});

const md = (phase: VolumeStatus['phase'], extra: Partial<VolumeStatus> = {}): VolumeStatus =>
  ({ name: 'c', target: '', phase, memoryDumpVolume: { claimName: 'c', targetFileName: 'vm1-c-20260101-000000.memory.dump', startTimestamp: '2026-01-01T00:00:00Z', ...(phase === 'MemoryDumpInProgress' ? {} : { endTimestamp: '2026-01-01T00:00:09Z' }) }, ...extra });

test('UpdateRequest (nextMemoryDumpRequest)', () => {
  const cases: Array<[string, ReturnType<typeof nextMemoryDumpRequest>, ReturnType<typeof nextMemoryDumpRequest>]> = [
    ['none', nextMemoryDumpRequest(vm(undefined), vmi()), undefined],
    ['Associating, not in the template yet', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Associating' }), vmi()), { claimName: 'c', phase: 'Associating' }],
    ['Associating → InProgress once the template has it', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Associating' }, [disk, dump]), vmi()), { claimName: 'c', phase: 'InProgress' }],
    ['InProgress, dump started: start time copied', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'InProgress' }, [disk, dump]), vmi([disk, dump], [md('MemoryDumpInProgress')])),
      { claimName: 'c', phase: 'InProgress', startTimestamp: '2026-01-01T00:00:00Z' }],
    ['InProgress → Unmounting when the dump completed: file name, times', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'InProgress' }, [disk, dump]), vmi([disk, dump], [md('MemoryDumpCompleted')])),
      { claimName: 'c', phase: 'Unmounting', startTimestamp: '2026-01-01T00:00:00Z', endTimestamp: '2026-01-01T00:00:09Z', fileName: 'vm1-c-20260101-000000.memory.dump' }],
    ['InProgress → Failed with the message', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'InProgress' }, [disk, dump]), vmi([disk, dump], [md('MemoryDumpFailed', { message: 'Memory dump to pvc c failed: no space' })])),
      { claimName: 'c', phase: 'Failed', startTimestamp: '2026-01-01T00:00:00Z', message: 'Memory dump to pvc c failed: no space', endTimestamp: '2026-01-01T00:00:09Z' }],
    ['Unmounting while the VMI still has its status', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Unmounting', fileName: 'f' }, [disk, dump]), vmi([disk], [md('MemoryDumpCompleted')])),
      { claimName: 'c', phase: 'Unmounting', fileName: 'f' }],
    ['Unmounting → Completed once unmounted', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Unmounting', fileName: 'f' }, [disk, dump]), vmi([disk])), { claimName: 'c', phase: 'Completed', fileName: 'f' }],
    ['Completed stays', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Completed', fileName: 'f' }, [disk, dump]), undefined), { claimName: 'c', phase: 'Completed', fileName: 'f' }],
    ['Dissociating while in the template', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Dissociating', remove: true }, [disk, dump]), vmi([disk])), { claimName: 'c', phase: 'Dissociating', remove: true }],
    ['Dissociating while the VMI status has it', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Dissociating', remove: true }), vmi([disk], [md('MemoryDumpCompleted')])), { claimName: 'c', phase: 'Dissociating', remove: true }],
    ['Dissociating → gone', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'Dissociating', remove: true }), vmi([disk])), undefined],
    ['remove on an InProgress request: Dissociating', nextMemoryDumpRequest(vm({ claimName: 'c', phase: 'InProgress', remove: true }, [disk, dump]), vmi([disk, dump])), { claimName: 'c', phase: 'Dissociating', remove: true }],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});

test('a VM started again after its dump completed does not mount the claim again', () => {
  const done = vm({ claimName: 'c', phase: 'Completed' }, [disk, dump]);
  assert.equal(withoutCompletedMemoryDump(done, done.spec.template.spec!).volumes, [disk]);
  assert.equal(setupVMIFromVM(done).spec.volumes, [disk]);
  assert.equal(setupVMIFromVM(done).spec.domain.devices.disks, [{ name: 'boot' }], 'no disk for the dump volume');
  const running = vm({ claimName: 'c', phase: 'InProgress' }, [disk, dump]);
  assert.equal(setupVMIFromVM(running).spec.volumes, [disk, dump]);
});

test('the claim annotation', () => {
  assert.equal(claimAnnotationPatch(undefined, 'f'), [{ op: 'add', path: '/metadata/annotations', value: { 'kubevirt.io/memory-dump': 'f' } }]);
  assert.equal(claimAnnotationPatch({ other: 'x' }, 'f'), [{ op: 'add', path: '/metadata/annotations/kubevirt.io~1memory-dump', value: 'f' }]);
  assert.equal(claimAnnotationPatch({ 'kubevirt.io/memory-dump': 'old' }, 'f'), [{ op: 'add', path: '/metadata/annotations/kubevirt.io~1memory-dump', value: 'f' }]);
  assert.is(claimAnnotationPatch({ 'kubevirt.io/memory-dump': 'f' }, 'f'), undefined);
});

test.run();
