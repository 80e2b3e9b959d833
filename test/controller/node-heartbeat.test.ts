import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alivePodsOfVMIs, checkNode, failVMIPatch, isNodeUnresponsive, HeartbeatParseError, vmiNodeUnresponsiveMessage } from '../../controller/node/heartbeat.ts';
import { NOW, at, pod, vmi } from './fixtures.ts';
import type { Node } from '../../controller/pod.ts';

const node = (heartbeat: string | undefined, schedulable = 'true'): Node => ({
  metadata: { name: 'node01', labels: { 'kubevirt.io/schedulable': schedulable }, ...(heartbeat !== undefined ? { annotations: { 'kubevirt.io/heartbeat': heartbeat } } : {}) },
});

const rows: [string, Node | undefined, boolean][] = [
  ['node missing → unresponsive', undefined, true],
  ['no heartbeat annotation (agent never ran) → responsive', node(undefined), false],
  ['heartbeat 1 min old → responsive', node(at(-60)), false],
  ['heartbeat exactly 5 min old → responsive', node(at(-300)), false],
  ['heartbeat 5 min 1 s old → unresponsive', node(at(-301)), true],
  ['heartbeat in the future → responsive', node(at(30)), false],
];
for (const [name, n, want] of rows) test(`heartbeat: ${name}`, () => assert.is(isNodeUnresponsive(n, NOW), want));
test('heartbeat: an unreadable timestamp is an error naming the node and annotation', () => {
  assert.throws(() => isNodeUnresponsive(node('yesterday'), NOW), (e: unknown) => e instanceof HeartbeatParseError && /node01/.test((e as Error).message) && /kubevirt\.io\/heartbeat/.test((e as Error).message));
});

test('responsive node: nothing to do, recheck in a minute', () => {
  assert.equal(checkNode({ nodeName: 'node01', node: node(at(-10)), vmisOnNode: [vmi('Running')], podsOnNode: [], now: NOW }), { unresponsive: false, markUnschedulable: false, failVMIs: [], requeueAfterMs: 60_000 });
});

test('unresponsive node: mark unschedulable once, fail active VMIs whose launcher pods are gone', () => {
  const gone = vmi('Running', { uid: 'gone', nodeName: 'node01' });
  const scheduledGone = vmi('Scheduled', { uid: 'sched', nodeName: 'node01' });
  const alive = vmi('Running', { uid: 'alive', nodeName: 'node01' });
  const pending = vmi('Pending', { uid: 'pend' });
  const finished = vmi('Succeeded', { uid: 'done' });
  const pods = [pod({ ownerUID: 'alive' }), pod({ ownerUID: 'gone', phase: 'Failed', compute: 'terminated-error' })];
  const d = checkNode({ nodeName: 'node01', node: node(at(-600)), vmisOnNode: [gone, scheduledGone, alive, pending, finished], podsOnNode: pods, now: NOW });
  assert.ok(d.unresponsive);
  assert.ok(d.markUnschedulable);
  assert.equal(d.nodeEvent, { type: 'Normal', reason: 'NodeUnresponsive', message: 'virt-handler is not responsive, marking node as unresponsive' });
  assert.equal(d.failVMIs.map((v) => v.metadata?.uid), ['gone', 'sched']);
  assert.is(d.requeueAfterMs, 60_000);
  const again = checkNode({ nodeName: 'node01', node: node(at(-600), 'false'), vmisOnNode: [alive], podsOnNode: pods, now: NOW });
  assert.not.ok(again.markUnschedulable, 'already unschedulable');
  assert.equal(again.failVMIs, []);
});

test('deleted node: unresponsive, VMIs failed, no requeue', () => {
  const d = checkNode({ nodeName: 'node01', node: undefined, vmisOnNode: [vmi('Running', { nodeName: 'node01' })], podsOnNode: [], now: NOW });
  assert.equal([d.unresponsive, d.markUnschedulable, d.failVMIs.length, d.requeueAfterMs], [true, false, 1, undefined]);
});

test('alive pods: VMI-controlled, not finished, not all containers terminated', () => {
  const p1 = pod({ name: 'a' });
  const p2 = pod({ name: 'b', compute: 'terminated-ok' });
  const p3 = pod({ name: 'c', phase: 'Succeeded' });
  const p4 = pod({ name: 'd' });
  p4.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: 'x', controller: true }];
  assert.equal(alivePodsOfVMIs([p1, p2, p3, p4]).map((p) => p.metadata?.name), ['a']);
});

test('VMI failure patch and event text', () => {
  assert.equal(failVMIPatch(), [{ op: 'replace', path: '/status/phase', value: 'Failed' }, { op: 'add', path: '/status/reason', value: 'NodeUnresponsive' }]);
  assert.is(vmiNodeUnresponsiveMessage(vmi('Running', { nodeName: 'node01' })), 'virt-handler on node node01 is not responsive, marking VMI as failed');
});

test.run();
