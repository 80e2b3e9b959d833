// The VM controller's LiveUpdate decisions for CPU sockets and guest memory: what is patched into
// the running VMI (with its Hot*Change condition) and what sets RestartRequired, with KubeVirt's messages.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import { planLiveUpdate, RestartRequiredMessages as M } from '../../controller/vm/live-update.ts';

type Dom = VirtualMachineInstance['spec']['domain'];
const vm = (domain: Partial<Dom>): VirtualMachine => ({ metadata: { name: 'v' }, spec: { template: { spec: { domain: { devices: {}, ...domain } } } } } as VirtualMachine);
const vmi = (domain: Partial<Dom>, status: VirtualMachineInstance['status'] = {}): VirtualMachineInstance => ({ metadata: { name: 'v' }, spec: { domain: { devices: {}, ...domain } }, status: { phase: 'Running', ...status } } as VirtualMachineInstance);

const cases: Array<[string, VirtualMachine, VirtualMachineInstance, { patch?: string[]; restart?: string; error?: RegExp }]> = [
  ['nothing changed', vm({ cpu: { sockets: 2 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }), {}],
  ['more sockets within maxSockets: patched with HotVCPUChange', vm({ cpu: { sockets: 3 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }), { patch: ['/spec/domain/cpu/sockets', 'HotVCPUChange'] }],
  ['more sockets than maxSockets', vm({ cpu: { sockets: 5 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }), { restart: M.socketsAboveMax }],
  ['fewer sockets', vm({ cpu: { sockets: 1 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }), { restart: M.socketsReduced }],
  ['a CPU change already in progress', vm({ cpu: { sockets: 3 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }, { conditions: [{ type: 'HotVCPUChange', status: 'True' }] }), { error: /in progress/ }],
  ['more memory within maxGuest: patched with HotMemoryChange', vm({ memory: { guest: '1536Mi' } }), vmi({ memory: { guest: '1Gi', maxGuest: '2Gi' } }, { memory: { guestAtBoot: '1Gi' } }), { patch: ['/spec/domain/memory/guest', 'HotMemoryChange'] }],
  ['memory without maxGuest', vm({ memory: { guest: '2Gi' } }), vmi({ memory: { guest: '1Gi' } }), { restart: M.memoryNotAvailable }],
  ['memory above maxGuest', vm({ memory: { guest: '3Gi' } }), vmi({ memory: { guest: '1Gi', maxGuest: '2Gi' } }), { restart: M.memoryAboveMax }],
  ['memory below the boot size', vm({ memory: { guest: '512Mi' } }), vmi({ memory: { guest: '1Gi', maxGuest: '2Gi' } }, { memory: { guestAtBoot: '1Gi' } }), { restart: M.memoryBelowBoot }],
  ['memory after a failed memory hotplug', vm({ memory: { guest: '1536Mi' } }), vmi({ memory: { guest: '1Gi', maxGuest: '2Gi' } }, { conditions: [{ type: 'HotMemoryChange', status: 'False' }] }), { restart: M.memoryFailed }],
  ['the same memory spelled differently', vm({ memory: { guest: '1024Mi' } }), vmi({ memory: { guest: '1Gi', maxGuest: '2Gi' } }), {}],
];

for (const [name, v, i, want] of cases) {
  test(`planLiveUpdate: ${name}`, () => {
    const p = planLiveUpdate(v, i, 'now');
    assert.is(p.restartRequired, want.restart);
    if (want.error) assert.match(p.error ?? '', want.error); else assert.is(p.error, undefined);
    if (!want.patch) { assert.is(p.vmiPatch, undefined); return; }
    const text = JSON.stringify(p.vmiPatch);
    for (const w of want.patch) assert.ok(text.includes(w), `${w} in ${text}`);
    assert.is(p.vmiPatch?.[0]?.op, 'test', 'test-guarded');
  });
}

test('planLiveUpdate: no VMI, a stopping VMI or one not Running: nothing', () => {
  assert.equal(planLiveUpdate(vm({ cpu: { sockets: 3 } }), undefined, 'now'), {});
  assert.equal(planLiveUpdate(vm({ cpu: { sockets: 3 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }, { phase: 'Scheduled' }), 'now'), {});
});

test('planLiveUpdate: vmRolloutStrategy Stage applies nothing live', () => {
  assert.equal(planLiveUpdate(vm({ cpu: { sockets: 3 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }), 'now', false), { restartRequired: M.nonLiveUpdatable });
  assert.equal(planLiveUpdate(vm({ cpu: { sockets: 2 } }), vmi({ cpu: { sockets: 2, maxSockets: 4 } }), 'now', false), {});
});

test.run();
