// virt-api's memorydump/removememorydump decisions (pkg/virt-api/rest/memorydump.go), as a table:
// the VM, its VMI, the claim and the request in; virt-api's Status (code, message) or the patch of
// status.memoryDumpRequest out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planMemoryDump, planRemoveMemoryDump, memoryDumpClaimName, type MemoryDumpClaim, type MemoryDumpPlan } from '../../src/virt-api/memory-dump.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineMemoryDumpRequest } from '../../src/api/types.ts';

const vm = (req?: Partial<VirtualMachineMemoryDumpRequest>, status = true): VirtualMachine =>
  ({ metadata: { name: 'vm1', namespace: 'ns' }, spec: { template: { spec: { domain: { devices: {} } } } }, ...(status ? { status: { printableStatus: 'Running', ...(req ? { memoryDumpRequest: req } : {}) } } : {}) }) as VirtualMachine;
const vmi = (phase = 'Running'): VirtualMachineInstance =>
  ({ metadata: { name: 'vm1' }, spec: { domain: { devices: {}, resources: { requests: { memory: '192Mi' } } } }, status: { phase } }) as VirtualMachineInstance;
const claim = (storage = '309Mi', extra: Partial<NonNullable<MemoryDumpClaim['spec']>> = {}): MemoryDumpClaim => ({ spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...extra } });

type Outcome = [number, string] | unknown[];
const outcome = (p: MemoryDumpPlan): Outcome => (p.ok ? p.ops : [p.error.code, p.error.message]);
const onVm = (why: string) => `Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": ${why}`;
const onPvc = (why: string) => `Operation cannot be fulfilled on persistentvolumeclaim.kubevirt.io "c": ${why}`;
const added = (value: unknown) => [{ op: 'test', path: '/status/memoryDumpRequest', value: null }, { op: 'add', path: '/status/memoryDumpRequest', value }];
const replaced = (old: unknown, value: unknown) => [{ op: 'test', path: '/status/memoryDumpRequest', value: old }, { op: 'replace', path: '/status/memoryDumpRequest', value }];

const completed = { claimName: 'c', phase: 'Completed', fileName: 'vm1-c-20260101-000000.memory.dump' } as const;
const cases: Array<[string, () => MemoryDumpPlan, Outcome]> = [
  ['no claim name, none associated → 400', () => planMemoryDump({ vm: vm(), vmi: vmi(), claim: claim(), claimName: '' }), [400, 'Memory dump requires claim name to be set']],
  ['another claim still associated → 409', () => planMemoryDump({ vm: vm(completed), vmi: vmi(), claim: claim(), claimName: 'd' }),
    [409, onVm("can't request memory dump for pvc [d] while pvc [c] is still associated as the memory dump pvc")]],
  ['no VMI → 404', () => planMemoryDump({ vm: vm(), vmi: undefined, claim: claim(), claimName: 'c' }), [404, 'virtualmachineinstance.kubevirt.io "vm1" not found']],
  ['VMI not running → 409', () => planMemoryDump({ vm: vm(), vmi: vmi('Scheduled'), claim: claim(), claimName: 'c' }),
    [409, 'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "vm1": VMI is not running']],
  ['no such claim → 404', () => planMemoryDump({ vm: vm(), vmi: vmi(), claim: undefined, claimName: 'c' }), [404, 'persistentvolumeclaim.kubevirt.io "c" not found']],
  ['block claim → 409', () => planMemoryDump({ vm: vm(), vmi: vmi(), claim: claim('1Gi', { volumeMode: 'Block' }), claimName: 'c' }), [409, onPvc('pvc should be filesystem pvc')]],
  ['read-only claim → 409', () => planMemoryDump({ vm: vm(), vmi: vmi(), claim: claim('1Gi', { accessModes: ['ReadOnlyMany'] }), claimName: 'c' }), [409, onPvc("pvc access mode can't be read only")]],
  ['claim too small (size scaled to kB) → 409', () => planMemoryDump({ vm: vm(), vmi: vmi(), claim: claim('64Mi'), claimName: 'c' }), [409, onPvc('pvc size [67109k] should be bigger then [309Mi]')]],
  ['one byte short → 409', () => planMemoryDump({ vm: vm(), vmi: vmi(), claim: claim('323999000'), claimName: 'c' }), [409, onPvc('pvc size [323999k] should be bigger then [309Mi]')]],
  ['claim of exactly the size → Associating added', () => planMemoryDump({ vm: vm(), vmi: vmi(), claim: claim(), claimName: 'c' }), added({ claimName: 'c', phase: 'Associating' })],
  ['VM without status → /status added', () => planMemoryDump({ vm: vm(undefined, false), vmi: vmi(), claim: claim(), claimName: 'c' }),
    [{ op: 'add', path: '/status', value: { memoryDumpRequest: { claimName: 'c', phase: 'Associating' } } }]],
  ['dump again, no claim named: the associated one, request replaced', () => planMemoryDump({ vm: vm(completed), vmi: vmi(), claim: claim(), claimName: '' }),
    replaced(completed, { claimName: 'c', phase: 'Associating' })],
  ['dump again after a failure, same claim named', () => planMemoryDump({ vm: vm({ claimName: 'c', phase: 'Failed', message: 'x' }), vmi: vmi(), claim: claim(), claimName: 'c' }),
    replaced({ claimName: 'c', phase: 'Failed', message: 'x' }, { claimName: 'c', phase: 'Associating' })],
  ['a dump in progress → 409', () => planMemoryDump({ vm: vm({ claimName: 'c', phase: 'InProgress' }), vmi: vmi(), claim: claim(), claimName: 'c' }), [409, onVm('memory dump request for pvc [c] already in progress')]],
  ['a removal in progress → 409', () => planMemoryDump({ vm: vm({ claimName: 'c', phase: 'Dissociating', remove: true }), vmi: vmi(), claim: claim(), claimName: '' }),
    [409, onVm("can't dump memory for pvc [c] a remove memory dump request is in progress")]],
  // remove
  ['remove with nothing associated → 409', () => planRemoveMemoryDump(vm()), [409, onVm("can't remove memory dump association for vm vm1, no association found")]],
  ['remove twice → 409', () => planRemoveMemoryDump(vm({ claimName: 'c', phase: 'Dissociating', remove: true })), [409, onVm('memory dump remove request for pvc [c] already exists')]],
  ['remove a completed dump → Dissociating, remove', () => planRemoveMemoryDump(vm(completed)), replaced(completed, { claimName: 'c', phase: 'Dissociating', remove: true })],
  ['remove while in progress is allowed', () => planRemoveMemoryDump(vm({ claimName: 'c', phase: 'InProgress' })),
    replaced({ claimName: 'c', phase: 'InProgress' }, { claimName: 'c', phase: 'Dissociating', remove: true })],
];
for (const [name, run, want] of cases) test(name, () => assert.equal(outcome(run()), want));

test('the claim a request is about', () => {
  assert.is(memoryDumpClaimName(vm(), 'x'), 'x');
  assert.is(memoryDumpClaimName(vm(completed), undefined), 'c');
  assert.is(memoryDumpClaimName(vm(), ''), '');
});

test.run();
