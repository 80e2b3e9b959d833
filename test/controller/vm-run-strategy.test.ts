import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isSetToStart, syncRunStrategy, type RunStrategyAction } from '../../controller/vm/run-strategy.ts';
import { effectiveRunStrategy, RunStrategyConflictError, RunStrategyNotSupportedError } from '../../src/api/run-strategy.ts';
import { NOW, at, vm, vmi, type VMOpts } from './fixtures.ts';
import { vmFinalizerDecision } from '../../controller/vm/finalizer.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

// --- effective run strategy -------------------------------------------------------------------
const effRows: [string, VMOpts, string][] = [
  ['running: true → Always', { running: true }, 'Always'],
  ['running: false → Halted', { running: false }, 'Halted'],
  ['neither → Halted', {}, 'Halted'],
  ['runStrategy Always', { runStrategy: 'Always' }, 'Always'],
  ['runStrategy Manual', { runStrategy: 'Manual' }, 'Manual'],
  ['runStrategy RerunOnFailure', { runStrategy: 'RerunOnFailure' }, 'RerunOnFailure'],
  ['runStrategy Once', { runStrategy: 'Once' }, 'Once'],
  ['runStrategy Halted', { runStrategy: 'Halted' }, 'Halted'],
  ['runStrategy WaitAsReceiver', { runStrategy: 'WaitAsReceiver' }, 'WaitAsReceiver'],
];
for (const [name, opts, want] of effRows) {
  test(`effective run strategy: ${name}`, () => assert.is(effectiveRunStrategy(vm(opts)), want));
}
test('effective run strategy: running and runStrategy both set is an error naming both fields', () => {
  assert.throws(() => effectiveRunStrategy(vm({ running: true, runStrategy: 'Always' })), (e: unknown) => e instanceof RunStrategyConflictError && /spec\.running and spec\.runStrategy/.test((e as Error).message));
  assert.throws(() => effectiveRunStrategy(vm({ running: false, runStrategy: 'Halted' })), (e: unknown) => e instanceof RunStrategyConflictError);
});
test('effective run strategy: an unknown value is rejected with its name', () => {
  assert.throws(() => effectiveRunStrategy(vm({ runStrategy: 'Sometimes' as never })), (e: unknown) => e instanceof RunStrategyNotSupportedError && /"Sometimes"/.test((e as Error).message));
});

// --- the syncRunStrategy table ----------------------------------------------------------------
const startReq = { action: 'Start' as const };
const pausedStartReq = { action: 'Start' as const, data: { paused: 'true' } };
const stopReq = (uid = 'vmi-uid') => ({ action: 'Stop' as const, uid });
const backoffPending = { consecutiveFailCount: 2, lastFailedVMIUID: 'old', retryAfterTimestamp: at(37) };
const backoffOver = { consecutiveFailCount: 2, lastFailedVMIUID: 'old', retryAfterTimestamp: at(-1) };

const start = (paused = false): RunStrategyAction => ({ type: 'start', paused });
const del = (phase: string, uid = 'vmi-uid'): RunStrategyAction => ({ type: 'delete-vmi', uid, vmiPhase: phase });
const requeue = (ms: number): RunStrategyAction => ({ type: 'requeue', afterMs: ms });
const appendStart: RunStrategyAction = { type: 'append-state-change', request: { action: 'Start' } };

type Row = [string, VMOpts, VirtualMachineInstance | undefined, RunStrategyAction[]];
const rows: Row[] = [
  // Always
  ['Always, no VMI → start', { runStrategy: 'Always' }, undefined, [start()]],
  ['Always (running: true), no VMI → start', { running: true }, undefined, [start()]],
  ['Always, no VMI, paused start request → start paused', { runStrategy: 'Always', requests: [pausedStartReq] }, undefined, [start(true)]],
  ['Always, no VMI, backoff 37s left → requeue 37s', { runStrategy: 'Always', startFailure: backoffPending }, undefined, [requeue(37_000)]],
  ['Always, no VMI, backoff over → start', { runStrategy: 'Always', startFailure: backoffOver }, undefined, [start()]],
  ['Always, VMI Running → nothing', { runStrategy: 'Always' }, vmi('Running'), []],
  ['Always, VMI Pending → nothing', { runStrategy: 'Always' }, vmi('Pending'), []],
  ['Always, VMI Succeeded → delete (restart)', { runStrategy: 'Always' }, vmi('Succeeded'), [del('Succeeded')]],
  ['Always, VMI Failed → delete (restart)', { runStrategy: 'Always' }, vmi('Failed'), [del('Failed')]],
  ['Always, stop request for this VMI (restart) → delete', { runStrategy: 'Always', requests: [stopReq(), startReq] }, vmi('Running'), [del('Running')]],
  ['Always, stop request for another VMI → nothing', { runStrategy: 'Always', requests: [stopReq('other')] }, vmi('Running'), []],
  ['Always, final VMI already being deleted → nothing', { runStrategy: 'Always' }, vmi('Failed', { deleting: true }), []],
  // RerunOnFailure
  ['RerunOnFailure, VMI Running → nothing', { runStrategy: 'RerunOnFailure', statusRunStrategy: 'RerunOnFailure' }, vmi('Running'), []],
  ['RerunOnFailure, VMI Failed → delete + append Start', { runStrategy: 'RerunOnFailure', statusRunStrategy: 'RerunOnFailure' }, vmi('Failed'), [del('Failed'), appendStart]],
  ['RerunOnFailure, VMI Succeeded → delete, no restart', { runStrategy: 'RerunOnFailure', statusRunStrategy: 'RerunOnFailure' }, vmi('Succeeded'), [del('Succeeded')]],
  ['RerunOnFailure, stop request for this VMI → delete', { runStrategy: 'RerunOnFailure', requests: [stopReq()] }, vmi('Running'), [del('Running')]],
  ['RerunOnFailure, Failed VMI already deleting → nothing', { runStrategy: 'RerunOnFailure' }, vmi('Failed', { deleting: true }), []],
  ['RerunOnFailure, no VMI, head Start → start', { runStrategy: 'RerunOnFailure', statusRunStrategy: 'RerunOnFailure', requests: [startReq] }, undefined, [start()]],
  ['RerunOnFailure, no VMI, no request, strategy unchanged → nothing', { runStrategy: 'RerunOnFailure', statusRunStrategy: 'RerunOnFailure' }, undefined, []],
  ['RerunOnFailure, no VMI, just switched from Halted → start', { runStrategy: 'RerunOnFailure', statusRunStrategy: 'Halted' }, undefined, [start()]],
  ['RerunOnFailure, no VMI, never created (status.runStrategy empty) → start', { runStrategy: 'RerunOnFailure' }, undefined, [start()]],
  ['RerunOnFailure, no VMI, head Start but backoff left → requeue', { runStrategy: 'RerunOnFailure', statusRunStrategy: 'RerunOnFailure', requests: [startReq], startFailure: backoffPending }, undefined, [requeue(37_000)]],
  // Manual
  ['Manual, no VMI, no request → nothing', { runStrategy: 'Manual' }, undefined, []],
  ['Manual, no VMI, head Start → start', { runStrategy: 'Manual', requests: [startReq] }, undefined, [start()]],
  ['Manual, no VMI, head paused Start → start paused', { runStrategy: 'Manual', requests: [pausedStartReq] }, undefined, [start(true)]],
  ['Manual, no VMI, head Start ignores backoff', { runStrategy: 'Manual', requests: [startReq], startFailure: backoffPending }, undefined, [start()]],
  ['Manual, VMI Running, stop request for it → delete', { runStrategy: 'Manual', requests: [stopReq()] }, vmi('Running'), [del('Running')]],
  ['Manual, VMI Failed, no request → nothing (stays failed)', { runStrategy: 'Manual' }, vmi('Failed'), []],
  ['Manual, VMI Running, stop for another UID → nothing', { runStrategy: 'Manual', requests: [stopReq('x')] }, vmi('Running'), []],
  // Halted
  ['Halted, no VMI → nothing', { runStrategy: 'Halted' }, undefined, []],
  ['Halted, VMI Running → delete', { runStrategy: 'Halted' }, vmi('Running'), [del('Running')]],
  ['Halted, VMI Succeeded → delete', { runStrategy: 'Halted' }, vmi('Succeeded'), [del('Succeeded')]],
  ['Halted, VMI already deleting → nothing', { runStrategy: 'Halted' }, vmi('Running', { deleting: true }), []],
  ['Halted (runStrategy), paused start request → runStrategy Always', { runStrategy: 'Halted', requests: [pausedStartReq] }, undefined, [{ type: 'update-vm', patch: { spec: { runStrategy: 'Always' } } }]],
  ['Halted (running: false), start request → running: true', { running: false, requests: [pausedStartReq] }, undefined, [{ type: 'update-vm', patch: { spec: { running: true } } }]],
  // Once
  ['Once, no VMI → start', { runStrategy: 'Once' }, undefined, [start()]],
  ['Once, no VMI ignores backoff', { runStrategy: 'Once', startFailure: backoffPending }, undefined, [start()]],
  ['Once, VMI Succeeded → nothing', { runStrategy: 'Once' }, vmi('Succeeded'), []],
  ['Once, VMI Failed → nothing', { runStrategy: 'Once' }, vmi('Failed'), []],
  ['Once, VMI Running → nothing', { runStrategy: 'Once' }, vmi('Running'), []],
];
for (const [name, opts, theVMI, want] of rows) {
  test(`syncRunStrategy: ${name}`, () => {
    assert.equal(syncRunStrategy(vm(opts), theVMI, NOW).actions, want);
  });
}

test('syncRunStrategy: a VM with ManualRecoveryRequired=True is not started', () => {
  const d = syncRunStrategy(vm({ runStrategy: 'Always', conditions: [{ type: 'ManualRecoveryRequired', status: 'True' }] }), undefined, NOW);
  assert.equal(d.actions, []);
  assert.match(d.note ?? '', /ManualRecoveryRequired/);
});
test('syncRunStrategy: WaitAsReceiver is refused with a clear "not supported" error', () => {
  assert.throws(() => syncRunStrategy(vm({ runStrategy: 'WaitAsReceiver' }), undefined, NOW), (e: unknown) => e instanceof RunStrategyNotSupportedError && /not supported/.test((e as Error).message) && /WaitAsReceiver/.test((e as Error).message));
});
test('syncRunStrategy: conflicting running/runStrategy propagates the conflict error', () => {
  assert.throws(() => syncRunStrategy(vm({ running: true, runStrategy: 'Manual' }), undefined, NOW), (e: unknown) => e instanceof RunStrategyConflictError);
});
test('syncRunStrategy: backoff is measured in whole seconds like KubeVirt (retry at +0.9s → start now)', () => {
  const sf = { consecutiveFailCount: 1, retryAfterTimestamp: '2026-11-21T12:00:00Z' };
  const d = syncRunStrategy(vm({ runStrategy: 'Always', startFailure: sf }), undefined, new Date('2026-11-21T12:00:00.900Z'));
  assert.equal(d.actions, [start()]);
});

// --- isSetToStart ------------------------------------------------------------------------------
const setRows: [string, VMOpts, VirtualMachineInstance | undefined, boolean][] = [
  ['Always', { runStrategy: 'Always' }, undefined, true],
  ['Halted', { runStrategy: 'Halted' }, vmi('Running'), false],
  ['Manual with VMI, no stop', { runStrategy: 'Manual' }, vmi('Running'), true],
  ['Manual with VMI and stop request', { runStrategy: 'Manual', requests: [stopReq()] }, vmi('Running'), false],
  ['Manual, no VMI, Start', { runStrategy: 'Manual', requests: [startReq] }, undefined, true],
  ['Manual, no VMI, nothing', { runStrategy: 'Manual' }, undefined, false],
  ['RerunOnFailure, VMI Succeeded', { runStrategy: 'RerunOnFailure' }, vmi('Succeeded'), false],
  ['RerunOnFailure, VMI Failed', { runStrategy: 'RerunOnFailure' }, vmi('Failed'), true],
  ['Once, no VMI', { runStrategy: 'Once' }, undefined, true],
  ['Once, VMI', { runStrategy: 'Once' }, vmi('Running'), false],
  ['conflict', { running: true, runStrategy: 'Always' }, undefined, false],
];
for (const [name, opts, theVMI, want] of setRows) {
  test(`isSetToStart: ${name}`, () => assert.is(isSetToStart(vm(opts), theVMI), want));
}

// --- the VM's own finalizer ------------------------------------------------------------------------
test('VM finalizer: added while the VM lives; on deletion the VMI goes first, then the finalizer', () => {
  const live = vm({ runStrategy: 'Always' });
  assert.equal(vmFinalizerDecision(live, undefined), { type: 'ensure-finalizer', add: true, proceed: true });
  live.metadata!.finalizers = ['kubevirt.io/virtualMachineControllerFinalize'];
  assert.equal(vmFinalizerDecision(live, vmi('Running')), { type: 'ensure-finalizer', add: false, proceed: true });
  const gone = vm({ runStrategy: 'Always', deleting: true });
  gone.metadata!.finalizers = ['kubevirt.io/virtualMachineControllerFinalize'];
  assert.equal(vmFinalizerDecision(gone, vmi('Running')), { type: 'delete-vmi', uid: 'vmi-uid', alreadyDeleting: false, proceed: false });
  assert.equal(vmFinalizerDecision(gone, vmi('Running', { deleting: true })), { type: 'delete-vmi', uid: 'vmi-uid', alreadyDeleting: true, proceed: false });
  assert.equal(vmFinalizerDecision(gone, undefined), { type: 'remove-finalizer', remove: true, proceed: false });
  gone.metadata!.finalizers = ['kubevirt.io/virtualMachineControllerFinalize', 'orphan'];
  assert.equal(vmFinalizerDecision(gone, vmi('Running')), { type: 'remove-finalizer', remove: true, proceed: false }, 'orphaned dependents keep their VMI');
});

test.run();
