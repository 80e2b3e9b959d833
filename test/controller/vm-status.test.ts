import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { calculateStartBackoff, nextStartFailure, shouldClearStartFailure, startBackoffSecondsLeft, vmiFailedEarly } from '../../controller/vm/backoff.ts';
import { printableStatus, PRINTABLE_STATUS_RULES, isMigrating, type PrintableStatusContext } from '../../controller/vm/printable-status.ts';
import { shouldTrimHeadRequest, trimStateChangeRequests, hasStartPausedRequest } from '../../controller/vm/state-change-requests.ts';
import { readyConditionFromVMI, syncVMConditions } from '../../controller/vm/conditions.ts';
import { computeVMStatus } from '../../controller/vm/status.ts';
import { NOW, at, cond, seededRandomInt, vm, vmi, type VMOpts } from './fixtures.ts';
import type { VirtualMachineInstance, VirtualMachineCondition } from '../../src/api/types.ts';

// --- crash-loop backoff -------------------------------------------------------------------------
const zero = () => 0;
const max = (n: number) => n - 1;
const backoffRows: [number, number, number][] = [
  // failCount, with random 0, with maximal random
  [0, 10, 15],
  [1, 10, 15],
  [2, 40, 60],
  [3, 90, 135],
  [4, 160, 240],
  [5, 250, 300], // 250 + 125 capped at 300
  [6, 300, 300], // 360 capped
  [20, 300, 300],
];
for (const [count, lo, hi] of backoffRows) {
  test(`backoff: ${count} failures → [${lo}, ${hi}] s`, () => {
    assert.is(calculateStartBackoff(count, 300, zero), lo);
    assert.is(calculateStartBackoff(count, 300, max), hi);
  });
}
test('backoff: a seeded random gives a reproducible sequence within the bounds and cap', () => {
  const a = [1, 2, 3, 4, 5, 6].map((n, _i, _arr) => calculateStartBackoff(n, 300, seededRandomInt(42)));
  const b = [1, 2, 3, 4, 5, 6].map((n) => calculateStartBackoff(n, 300, seededRandomInt(42)));
  assert.equal(a, b);
  const rnd = seededRandomInt(7);
  const seq = [1, 2, 3, 4, 5, 6, 7].map((n) => calculateStartBackoff(n, 300, rnd));
  seq.forEach((d, i) => {
    const [, lo, hi] = backoffRows.find((r) => r[0] === Math.min(i + 1, 6)) ?? [0, 300, 300];
    assert.ok(d >= lo && d <= hi, `failure ${i + 1}: ${d} not in [${lo}, ${hi}]`);
  });
  assert.is(seq[6], 300);
});
test('backoff: the random range passed to the source is delay/2 + 1 (Go rand.Intn)', () => {
  const seen: number[] = [];
  calculateStartBackoff(3, 300, (n) => (seen.push(n), 0));
  assert.equal(seen, [46]); // delay 90 → Intn(46)
});
test('backoff: a larger max delay widens the interval (max/30)', () => {
  assert.is(calculateStartBackoff(1, 600, zero), 20);
});

test('start failure: a VMI that failed without running is recorded once, with retryAfter = now + delay', () => {
  const failed = vmi('Failed', { uid: 'u1' });
  assert.ok(vmiFailedEarly(failed));
  const first = nextStartFailure(undefined, failed, 'Always', NOW, zero);
  assert.equal(first, { consecutiveFailCount: 1, retryAfterTimestamp: at(10), lastFailedVMIUID: 'u1' });
  assert.is(nextStartFailure(first, failed, 'Always', NOW, zero), first, 'same UID is not counted twice');
  const second = nextStartFailure(first, vmi('Failed', { uid: 'u2' }), 'Always', NOW, zero);
  assert.equal(second, { consecutiveFailCount: 2, retryAfterTimestamp: at(40), lastFailedVMIUID: 'u2' });
  assert.equal(nextStartFailure(second, vmi('Succeeded', { uid: 'u3' }), 'RerunOnFailure', NOW, zero), { consecutiveFailCount: 3, retryAfterTimestamp: at(90), lastFailedVMIUID: 'u3' });
});
test('start failure: cleared once a VMI reached Running, or for strategies that do not restart', () => {
  const record = { consecutiveFailCount: 3, lastFailedVMIUID: 'u', retryAfterTimestamp: at(50) };
  assert.is(nextStartFailure(record, vmi('Running', { ranBefore: true }), 'Always', NOW, zero), undefined);
  assert.is(nextStartFailure(record, vmi('Failed', { ranBefore: true }), 'Always', NOW, zero), undefined);
  assert.is(nextStartFailure(record, undefined, 'Manual', NOW, zero), undefined);
  assert.is(nextStartFailure(record, undefined, 'Halted', NOW, zero), undefined);
  assert.is(nextStartFailure(record, undefined, 'Always', NOW, zero), record);
  assert.is(nextStartFailure(record, vmi('Scheduling'), 'Once', NOW, zero), record);
  assert.ok(!shouldClearStartFailure(undefined, undefined), 'unknown strategy keeps the record');
});
test('start failure: seconds left are whole seconds, never negative', () => {
  assert.is(startBackoffSecondsLeft({ retryAfterTimestamp: at(12) }, NOW), 12);
  assert.is(startBackoffSecondsLeft({ retryAfterTimestamp: at(-12) }, NOW), 0);
  assert.is(startBackoffSecondsLeft(undefined, NOW), 0);
});

// --- state change request trimming --------------------------------------------------------------
const trimRows: [string, VMOpts['requests'], VirtualMachineInstance | undefined, boolean][] = [
  ['no requests', [], undefined, false],
  ['Stop, VMI gone → trim', [{ action: 'Stop', uid: 'vmi-uid' }], undefined, true],
  ['Stop without UID → trim', [{ action: 'Stop' }], vmi('Running'), true],
  ['Stop for another VMI → trim', [{ action: 'Stop', uid: 'old' }], vmi('Running'), true],
  ['Stop for this VMI → keep', [{ action: 'Stop', uid: 'vmi-uid' }], vmi('Running'), false],
  ['Start, VMI running → trim', [{ action: 'Start' }], vmi('Running'), true],
  ['Start, VMI Pending → trim', [{ action: 'Start' }], vmi('Pending'), true],
  ['Start, VMI deleting → keep', [{ action: 'Start' }], vmi('Running', { deleting: true }), false],
  ['Start, VMI final → keep', [{ action: 'Start' }], vmi('Failed'), false],
  ['Start, no VMI → keep', [{ action: 'Start' }], undefined, false],
];
for (const [name, requests, theVMI, want] of trimRows) {
  test(`trim head request: ${name}`, () => assert.is(shouldTrimHeadRequest(requests, theVMI), want));
}
test('trim: only the head is dropped (restart = [Stop, Start] proceeds one step at a time)', () => {
  const restart = [{ action: 'Stop' as const, uid: 'vmi-uid' }, { action: 'Start' as const }];
  assert.equal(trimStateChangeRequests(restart, vmi('Running')), restart);
  assert.equal(trimStateChangeRequests(restart, undefined), [{ action: 'Start' }]);
  assert.equal(trimStateChangeRequests([{ action: 'Start' }], vmi('Scheduling', { uid: 'new' })), []);
});
test('paused start is read from the head request only', () => {
  assert.ok(hasStartPausedRequest([{ action: 'Start', data: { paused: 'true' } }]));
  assert.not.ok(hasStartPausedRequest([{ action: 'Start', data: { paused: 'false' } }]));
  assert.not.ok(hasStartPausedRequest([{ action: 'Stop', uid: 'x' }, { action: 'Start', data: { paused: 'true' } }]));
});

// --- printable status: every rule, and precedence -----------------------------------------------
const ctx = (o: Partial<PrintableStatusContext> = {}): PrintableStatusContext => ({ now: NOW, vmiStartExpected: false, vmiStopExpected: false, ...o });
const migrating = { startTimestamp: at(-30) };
type PRow = [string, VMOpts, VirtualMachineInstance | undefined, Partial<PrintableStatusContext>, string];
const pRows: PRow[] = [
  ['1 Terminating: VM deleting (beats a running VMI)', { runStrategy: 'Always', deleting: true }, vmi('Running'), {}, 'Terminating'],
  ['2 Stopping: VMI deleting', { runStrategy: 'Halted' }, vmi('Running', { deleting: true }), {}, 'Stopping'],
  ['2 Stopping: deletion expected', { runStrategy: 'Halted' }, vmi('Running'), { vmiStopExpected: true }, 'Stopping'],
  ['2 not Stopping: final VMI being deleted is Stopped', { runStrategy: 'Halted' }, vmi('Succeeded', { deleting: true }), {}, 'Stopped'],
  ['3 Migrating beats Running', { runStrategy: 'Always' }, vmi('Running', { migration: migrating }), {}, 'Migrating'],
  ['3 migration ended → Running', { runStrategy: 'Always' }, vmi('Running', { migration: { startTimestamp: at(-30), endTimestamp: at(-1) } }), {}, 'Running'],
  ['3 migration start in the future → Running', { runStrategy: 'Always' }, vmi('Running', { migration: { startTimestamp: at(30) } }), {}, 'Running'],
  ['4 Paused', { runStrategy: 'Always' }, vmi('Running', { conditions: [cond('Paused', 'True', 'PausedByUser')] }), {}, 'Paused'],
  ['5 Running', { runStrategy: 'Always' }, vmi('Running', { conditions: [cond('Paused', 'False')] }), {}, 'Running'],
  ['6 ErrorPvcNotFound', { runStrategy: 'Always' }, vmi('Pending', { conditions: [cond('Synchronized', 'False', 'FailedPvcNotFound')] }), {}, 'ErrorPvcNotFound'],
  ['7 DataVolumeError', { runStrategy: 'Always' }, vmi('Pending'), { dataVolumeError: true }, 'DataVolumeError'],
  ['8 ErrorUnschedulable', { runStrategy: 'Always' }, vmi('Scheduling', { conditions: [cond('PodScheduled', 'False', 'Unschedulable')] }), {}, 'ErrorUnschedulable'],
  ['6 beats 8', { runStrategy: 'Always' }, vmi('Pending', { conditions: [cond('PodScheduled', 'False', 'Unschedulable'), cond('Synchronized', 'False', 'FailedPvcNotFound')] }), {}, 'ErrorPvcNotFound'],
  ['9 Provisioning', { runStrategy: 'Always' }, vmi('Pending'), { dataVolumeProvisioning: true }, 'Provisioning'],
  ['10 WaitingForVolumeBinding (set to start)', { runStrategy: 'Always' }, undefined, { unboundPVC: true }, 'WaitingForVolumeBinding'],
  ['10 not for a Halted VM', { runStrategy: 'Halted' }, undefined, { unboundPVC: true }, 'Stopped'],
  ['11 ErrImagePull', { runStrategy: 'Always' }, vmi('Scheduling', { conditions: [cond('Synchronized', 'False', 'ErrImagePull')] }), {}, 'ErrImagePull'],
  ['12 ImagePullBackOff', { runStrategy: 'Always' }, vmi('Scheduling', { conditions: [cond('Synchronized', 'False', 'ImagePullBackOff')] }), {}, 'ImagePullBackOff'],
  ['13 Starting: VMI absent, creation expected', { runStrategy: 'Always' }, undefined, { vmiStartExpected: true }, 'Starting'],
  ['13 Starting: Pending', { runStrategy: 'Always' }, vmi('Pending'), {}, 'Starting'],
  ['13 Starting: unset phase', { runStrategy: 'Always' }, vmi(''), {}, 'Starting'],
  ['13 Starting: Scheduling', { runStrategy: 'Always' }, vmi('Scheduling'), {}, 'Starting'],
  ['13 Starting: Scheduled', { runStrategy: 'Always' }, vmi('Scheduled'), {}, 'Starting'],
  ['14 CrashLoopBackOff: no VMI, failures recorded, Always', { runStrategy: 'Always', startFailure: { consecutiveFailCount: 2 } }, undefined, {}, 'CrashLoopBackOff'],
  ['14 CrashLoopBackOff: final VMI, RerunOnFailure', { runStrategy: 'RerunOnFailure', startFailure: { consecutiveFailCount: 1 } }, vmi('Failed'), {}, 'CrashLoopBackOff'],
  ['14 CrashLoopBackOff: Once', { runStrategy: 'Once', startFailure: { consecutiveFailCount: 1 } }, vmi('Failed'), {}, 'CrashLoopBackOff'],
  ['14 not for Manual → Stopped', { runStrategy: 'Manual', startFailure: { consecutiveFailCount: 1 } }, vmi('Failed'), {}, 'Stopped'],
  ['14 not while a creation is expected → Starting', { runStrategy: 'Always', startFailure: { consecutiveFailCount: 1 } }, undefined, { vmiStartExpected: true }, 'Starting'],
  ['15 Stopped: VMI final', { runStrategy: 'Halted' }, vmi('Succeeded'), {}, 'Stopped'],
  ['15 Stopped: no VMI, nothing expected', { runStrategy: 'Halted' }, undefined, {}, 'Stopped'],
  ['16 WaitingForReceiver: VMI WaitingForSync', { runStrategy: 'WaitAsReceiver' }, vmi('WaitingForSync'), {}, 'WaitingForReceiver'],
  ['17 Unknown: WaitingForSync VMI of an Always VM', { runStrategy: 'Always' }, vmi('WaitingForSync'), {}, 'Unknown'],
  ['17 Unknown: phase Unknown', { runStrategy: 'Always' }, vmi('Unknown'), {}, 'Unknown'],
];
for (const [name, opts, theVMI, c, want] of pRows) {
  test(`printableStatus: ${name}`, () => assert.is(printableStatus(vm(opts), theVMI, ctx(c)), want));
}
test('printableStatus: the rule list is KubeVirt\'s 16 statuses in order (Unknown is the fallback)', () => {
  assert.equal(PRINTABLE_STATUS_RULES.map(([s]) => s), [
    'Terminating', 'Stopping', 'Migrating', 'Paused', 'Running', 'ErrorPvcNotFound', 'DataVolumeError', 'ErrorUnschedulable',
    'Provisioning', 'WaitingForVolumeBinding', 'ErrImagePull', 'ImagePullBackOff', 'Starting', 'CrashLoopBackOff', 'Stopped', 'WaitingForReceiver',
  ]);
});
test('isMigrating: start == now counts as started, end == now as ended', () => {
  assert.ok(isMigrating(vmi('Running', { migration: { startTimestamp: at(0) } }), NOW));
  assert.not.ok(isMigrating(vmi('Running', { migration: { startTimestamp: at(-5), endTimestamp: at(0) } }), NOW));
});

// --- conditions ---------------------------------------------------------------------------------
test('VM Ready: VMI absent → VMINotExists; no Ready on VMI → VMIConditionMissing; else copied', () => {
  assert.equal(readyConditionFromVMI(undefined, NOW), { type: 'Ready', status: 'False', reason: 'VMINotExists', message: 'VMI does not exist', lastProbeTime: at(0), lastTransitionTime: at(0) });
  assert.equal(readyConditionFromVMI(vmi('Pending'), NOW).reason, 'VMIConditionMissing');
  const ready = { type: 'Ready' as const, status: 'True' as const, lastTransitionTime: at(-9) };
  assert.equal(readyConditionFromVMI(vmi('Running', { conditions: [ready] }), NOW), ready);
});
test('VM conditions: mirror VMI conditions except Ready/Failure/RestartRequired; drop vanished ones; Failure from sync error', () => {
  const current: VirtualMachineCondition[] = [
    { type: 'RestartRequired', status: 'True' },
    { type: 'AgentConnected', status: 'True' },
    { type: 'Failure', status: 'True', reason: 'FailedCreate' },
  ];
  const theVMI = vmi('Running', { conditions: [cond('Ready', 'True'), cond('LiveMigratable', 'False', 'DisksNotLiveMigratable'), cond('Paused', 'False')] });
  const out = syncVMConditions(current, theVMI, undefined, NOW);
  assert.equal(out.map((c) => c.type).sort(), ['LiveMigratable', 'Paused', 'Ready', 'RestartRequired']);
  assert.is(out.find((c) => c.type === 'LiveMigratable')?.reason, 'DisksNotLiveMigratable');
  const withErr = syncVMConditions(out, theVMI, { reason: 'FailedDelete', message: 'boom' }, NOW);
  assert.equal(withErr.find((c) => c.type === 'Failure'), { type: 'Failure', status: 'True', reason: 'FailedDelete', message: 'boom', lastTransitionTime: at(0) });
  const noVMI = syncVMConditions(out, undefined, undefined, NOW);
  assert.ok(noVMI.some((c) => c.type === 'LiveMigratable'), 'without a VMI the mirrored conditions stay');
  assert.is(noVMI.find((c) => c.type === 'Ready')?.reason, 'VMINotExists');
});
test('VM conditions: an unchanged condition keeps its original timestamps', () => {
  const old: VirtualMachineCondition = { type: 'Ready', status: 'False', reason: 'VMINotExists', message: 'VMI does not exist', lastTransitionTime: at(-100), lastProbeTime: at(-100) };
  assert.equal(syncVMConditions([old], undefined, undefined, NOW), [old]);
});

// --- whole status -------------------------------------------------------------------------------
test('VM status: created/ready/runStrategy/trimming/startFailure/printableStatus come together', () => {
  const theVM = vm({ runStrategy: 'Always', requests: [{ action: 'Start' }] });
  const running = vmi('Running', { ranBefore: true, conditions: [cond('Ready', 'True')], finalizers: ['kubevirt.io/virtualMachineControllerFinalize'] });
  const r = computeVMStatus(theVM, running, { now: NOW, vmiStartExpected: false, vmiStopExpected: false });
  assert.is(r.status.created, true);
  assert.is(r.status.ready, true);
  assert.is(r.status.runStrategy, 'Always');
  assert.is(r.status.stateChangeRequests, undefined);
  assert.is(r.status.printableStatus, 'Running');
  assert.is(r.removeVMIFinalizer, false);
});
test('VM status: never-started VM has no status.runStrategy; failed early VMI → CrashLoopBackOff and finalizer release', () => {
  const fresh = computeVMStatus(vm({ runStrategy: 'RerunOnFailure' }), undefined, { now: NOW, vmiStartExpected: false, vmiStopExpected: false });
  assert.is(fresh.status.runStrategy, undefined);
  assert.is(fresh.status.printableStatus, 'Stopped');
  const failed = vmi('Failed', { uid: 'u9', finalizers: ['kubevirt.io/virtualMachineControllerFinalize'] });
  const r = computeVMStatus(vm({ runStrategy: 'Always' }), failed, { now: NOW, vmiStartExpected: false, vmiStopExpected: false, randomInt: () => 0 });
  assert.equal(r.status.startFailure, { consecutiveFailCount: 1, retryAfterTimestamp: at(10), lastFailedVMIUID: 'u9' });
  assert.is(r.status.printableStatus, 'CrashLoopBackOff');
  assert.is(r.removeVMIFinalizer, true);
});

test.run();
