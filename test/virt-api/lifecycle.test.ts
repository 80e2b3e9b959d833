// virt-api's start/stop/restart decisions per run strategy (pkg/virt-api/rest/lifecycle.go), as a table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { changeRequestPatch, planRestart, planStart, planStop, runningPatch, type LifecyclePlan } from '../../src/virt-api/lifecycle.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const vm = (spec: Partial<VirtualMachine['spec']>, status?: VirtualMachine['status']): VirtualMachine =>
  ({ metadata: { name: 'vm1', namespace: 'ns' }, spec: { template: { spec: { domain: { devices: {} } } }, ...spec }, ...(status ? { status } : {}) }) as VirtualMachine;
const vmi = (phase: string, grace?: number): VirtualMachineInstance =>
  ({ metadata: { name: 'vm1', uid: 'uid-1' }, spec: { domain: { devices: {} }, ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}) }, status: { phase } }) as VirtualMachineInstance;

const st = { printableStatus: 'Stopped' } as VirtualMachine['status'];
const queued = { printableStatus: 'Running', stateChangeRequests: [{ action: 'Start' }] } as VirtualMachine['status'];
const testEmpty = { op: 'test', path: '/status/stateChangeRequests', value: null };
const startReq = { action: 'Start' };
const stopReq = { action: 'Stop', uid: 'uid-1' };

type Case = [string, () => LifecyclePlan, LifecyclePlan];
const refused = (code: number, message: string) => ({ kind: 'refused', code, message }) as LifecyclePlan;
const patch = (...steps: Array<[string, unknown[]]>) => ({ kind: 'patch', steps: steps.map(([target, ops]) => ({ target, ops })) }) as LifecyclePlan;

const cases: Case[] = [
  // start
  ['start Halted (runStrategy) → runStrategy Always', () => planStart(vm({ runStrategy: 'Halted' }, st), undefined),
    patch(['vm', [{ op: 'test', path: '/spec/runStrategy', value: 'Halted' }, { op: 'replace', path: '/spec/runStrategy', value: 'Always' }]])],
  ['start running:false → running true', () => planStart(vm({ running: false }, st), undefined),
    patch(['vm', [{ op: 'test', path: '/spec/running', value: false }, { op: 'replace', path: '/spec/running', value: true }]])],
  ['start --paused Halted → Start request with paused data', () => planStart(vm({ runStrategy: 'Halted' }, st), undefined, { paused: true }),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [{ action: 'Start', data: { paused: 'true' } }] }]])],
  ['start with no status at all → add /status', () => planStart(vm({ runStrategy: 'Manual' }), undefined),
    patch(['vm-status', [{ op: 'add', path: '/status', value: { stateChangeRequests: [startReq] } }]])],
  ['start Manual, no VMI → [Start]', () => planStart(vm({ runStrategy: 'Manual' }, st), undefined),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [startReq] }]])],
  ['start Manual, VMI Succeeded → [Stop{uid}, Start]', () => planStart(vm({ runStrategy: 'Manual' }, st), vmi('Succeeded')),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [stopReq, startReq] }]])],
  ['start Manual, VMI Failed → [Stop{uid}, Start]', () => planStart(vm({ runStrategy: 'Manual' }, st), vmi('Failed')),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [stopReq, startReq] }]])],
  ['start RerunOnFailure, VMI Succeeded → [Stop{uid}, Start]', () => planStart(vm({ runStrategy: 'RerunOnFailure' }, st), vmi('Succeeded')),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [stopReq, startReq] }]])],
  ['start RerunOnFailure, VMI Failed → 409', () => planStart(vm({ runStrategy: 'RerunOnFailure' }, st), vmi('Failed')),
    refused(409, 'RerunOnFailure does not support starting VM from failed state')],
  ['start of a running VM → 409 already running', () => planStart(vm({ runStrategy: 'Manual' }, st), vmi('Running')), refused(409, 'VM is already running')],
  ['start with a Scheduling VMI → 409 already running', () => planStart(vm({ runStrategy: 'Halted' }, st), vmi('Scheduling')), refused(409, 'VM is already running')],
  ['start with an Unknown VMI is allowed', () => planStart(vm({ runStrategy: 'Manual' }, st), vmi('Unknown')),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [startReq] }]])],
  ['start Always → 409', () => planStart(vm({ runStrategy: 'Always' }, st), undefined), refused(409, 'Always does not support manual start requests')],
  ['start Once → 409', () => planStart(vm({ runStrategy: 'Once' }, st), vmi('Succeeded')), refused(409, 'Once does not support manual start requests')],
  ['start Manual with a request queued → refused', () => planStart(vm({ runStrategy: 'Manual' }, queued), undefined),
    refused(500, 'unable to complete request: stop/start already underway')],
  ['start clears a start failure', () => planStart(vm({ runStrategy: 'Manual' }, { ...st, startFailure: { consecutiveFailCount: 2 } } as VirtualMachine['status']), undefined),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [startReq] }, { op: 'remove', path: '/status/startFailure' }]])],
  ['start with both running and runStrategy → refused', () => planStart(vm({ running: true, runStrategy: 'Always' }, st), undefined),
    refused(500, 'VirtualMachine vm1: spec.running and spec.runStrategy are mutually exclusive; set only spec.runStrategy')],
  // stop
  ['stop Always → runStrategy Halted', () => planStop(vm({ runStrategy: 'Always' }, st), vmi('Running')),
    patch(['vm', [{ op: 'test', path: '/spec/runStrategy', value: 'Always' }, { op: 'replace', path: '/spec/runStrategy', value: 'Halted' }]])],
  ['stop running:true → running false', () => planStop(vm({ running: true }, st), vmi('Running')),
    patch(['vm', [{ op: 'test', path: '/spec/running', value: true }, { op: 'replace', path: '/spec/running', value: false }]])],
  ['stop Always --force --grace-period 0 → VMI grace 0, then Halted', () => planStop(vm({ runStrategy: 'Always' }, st), vmi('Running', 180), { gracePeriod: 0 }),
    patch(['vmi', [{ op: 'test', path: '/spec/terminationGracePeriodSeconds', value: 180 }, { op: 'replace', path: '/spec/terminationGracePeriodSeconds', value: 0 }]],
      ['vm', [{ op: 'test', path: '/spec/runStrategy', value: 'Always' }, { op: 'replace', path: '/spec/runStrategy', value: 'Halted' }]])],
  ['stop Manual, VMI Running → [Stop{uid}]', () => planStop(vm({ runStrategy: 'Manual' }, st), vmi('Running')),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [stopReq] }]])],
  ['stop RerunOnFailure replaces a queued Start', () => planStop(vm({ runStrategy: 'RerunOnFailure' }, queued), vmi('Running')),
    patch(['vm-status', [{ op: 'test', path: '/status/stateChangeRequests', value: [startReq] }, { op: 'replace', path: '/status/stateChangeRequests', value: [stopReq] }]])],
  ['stop Manual, no VMI → 409 not running', () => planStop(vm({ runStrategy: 'Manual' }, st), undefined), refused(409, 'VM is not running')],
  ['stop Manual, VMI Succeeded → 409 not running', () => planStop(vm({ runStrategy: 'Manual' }, st), vmi('Succeeded')), refused(409, 'VM is not running')],
  ['stop Halted, no VMI → 409 not running', () => planStop(vm({ runStrategy: 'Halted' }, st), undefined), refused(409, 'VM is not running')],
  ['stop Halted, stopping VMI, no grace → 409', () => planStop(vm({ runStrategy: 'Halted' }, st), vmi('Running', 30)),
    refused(409, 'Halted only supports manual stop requests with a shorter graceperiod')],
  ['stop Halted, stopping VMI, same grace → 409', () => planStop(vm({ runStrategy: 'Halted' }, st), vmi('Running', 30), { gracePeriod: 30 }),
    refused(409, 'Halted only supports manual stop requests with a shorter graceperiod')],
  ['stop Halted, stopping VMI, shorter grace → grace patch + [Stop{uid}]', () => planStop(vm({ runStrategy: 'Halted' }, st), vmi('Running', 30), { gracePeriod: 0 }),
    patch(['vmi', [{ op: 'test', path: '/spec/terminationGracePeriodSeconds', value: 30 }, { op: 'replace', path: '/spec/terminationGracePeriodSeconds', value: 0 }]],
      ['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [stopReq] }]])],
  // restart
  ['restart Always → [Stop{uid}, Start]', () => planRestart(vm({ runStrategy: 'Always' }, st), vmi('Running')),
    patch(['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [stopReq, startReq] }]])],
  ['restart Manual --force --grace-period 0 → VMI grace 1 first', () => planRestart(vm({ runStrategy: 'Manual' }, st), vmi('Running', 30), { gracePeriodSeconds: 0 }),
    patch(['vmi', [{ op: 'test', path: '/spec/terminationGracePeriodSeconds', value: 30 }, { op: 'replace', path: '/spec/terminationGracePeriodSeconds', value: 1 }]],
      ['vm-status', [testEmpty, { op: 'add', path: '/status/stateChangeRequests', value: [stopReq, startReq] }]])],
  ['restart with grace 5 → 400', () => planRestart(vm({ runStrategy: 'Always' }, st), vmi('Running'), { gracePeriodSeconds: 5 }), refused(400, 'For force restart, only gracePeriod=0 is supported for now')],
  ['restart with grace -1 → 400', () => planRestart(vm({ runStrategy: 'Always' }, st), vmi('Running'), { gracePeriodSeconds: -1 }), refused(400, 'gracePeriod has to be greater or equal to 0')],
  ['restart Halted → 409', () => planRestart(vm({ runStrategy: 'Halted' }, st), undefined), refused(409, 'RunStrategy Halted does not support manual restart requests')],
  ['restart Once → 409', () => planRestart(vm({ runStrategy: 'Once' }, st), vmi('Running')), refused(409, 'RunStrategy Once does not support manual restart requests')],
  ['restart RerunOnFailure, no VMI → 409 not running', () => planRestart(vm({ runStrategy: 'RerunOnFailure' }, st), undefined), refused(409, 'VM is not running')],
  ['restart with a queued request → refused', () => planRestart(vm({ runStrategy: 'Always' }, queued), vmi('Running')), refused(500, 'unable to complete request: stop/start already underway')],
];

for (const [title, run, want] of cases) test(title, () => assert.equal(run(), want));

test('changeRequestPatch: a second Start on a non-empty queue is refused, a lone Stop replaces it', () => {
  assert.equal(changeRequestPatch(vm({}, queued), [{ action: 'Start' }]), { error: 'unable to complete request: stop/start already underway' });
  assert.equal(changeRequestPatch(vm({}, queued), [{ action: 'Stop', uid: 'u' }]), { target: 'vm-status', ops: [{ op: 'test', path: '/status/stateChangeRequests', value: [{ action: 'Start' }] }, { op: 'replace', path: '/status/stateChangeRequests', value: [{ action: 'Stop', uid: 'u' }] }] });
});

test('runningPatch: neither field set (defaults to Halted) adds spec.running', () => {
  assert.equal(runningPatch(vm({}, st), true), { target: 'vm', ops: [{ op: 'test', path: '/spec/running', value: null }, { op: 'add', path: '/spec/running', value: true }] });
});

test.run();
