import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimVMIs, invalidReplicaSetSpec, partitionVMIs, planScale, replicaSetStatus, vmiBaseName, vmiFromTemplate } from '../../controller/replicaset/scale.ts';
import { NOW, at, cond } from './fixtures.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../src/api/types.ts';

function rs(replicas: number | undefined, extra: Partial<VirtualMachineInstanceReplicaSet['spec']> = {}): VirtualMachineInstanceReplicaSet {
  const r: VirtualMachineInstanceReplicaSet = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceReplicaSet',
    metadata: { name: 'testreplicaset', namespace: 'default', uid: 'rs-uid' },
    spec: {
      selector: { matchLabels: { 'kubevirt.io/vmReplicaSet': 'testreplicaset' } },
      template: {
        metadata: { labels: { 'kubevirt.io/vmReplicaSet': 'testreplicaset' } },
        spec: { domain: { devices: {}, memory: { guest: '64Mi' } } },
      },
      ...extra,
    },
    status: {},
  };
  if (replicas !== undefined) r.spec.replicas = replicas;
  return r;
}

let seq = 0;
/** What the API server does with a created VMI: name from generateName, a UID, phase Pending. */
function materialize(v: VirtualMachineInstance): VirtualMachineInstance {
  seq++;
  const out = structuredClone(v);
  out.metadata!.name = `${out.metadata!.generateName}${String(seq).padStart(5, 'x')}`;
  out.metadata!.uid = `uid-${seq}`;
  out.status = { phase: 'Running', conditions: [cond('Ready', 'True')] };
  return out;
}

test('scale 3 → 5 → 1: creations, then deletions of the first active VMIs, status in step', () => {
  let vmis: VirtualMachineInstance[] = [];
  const round = (r: VirtualMachineInstanceReplicaSet) => {
    const claimed = claimVMIs(r, vmis).claimed;
    const p = partitionVMIs(claimed);
    const plan = planScale(r, p, { expectationsSatisfied: true });
    vmis = [...vmis.filter((v) => !plan.deleteActive.includes(v.metadata!.name!) && !plan.cleanup.includes(v.metadata!.name!)), ...plan.create.map(materialize)];
    return plan;
  };
  const p3 = round(rs(3));
  assert.is(p3.diff, -3);
  assert.is(p3.create.length, 3);
  assert.is(p3.deleteActive.length, 0);
  assert.is(p3.create[0]!.metadata!.generateName, 'testreplicaset', 'no dash appended');
  assert.equal(p3.create[0]!.metadata!.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', name: 'testreplicaset', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }]);
  assert.is(vmis.length, 3);
  assert.is(round(rs(3)).diff, 0, 'steady state');

  const p5 = round(rs(5));
  assert.is(p5.diff, -2);
  assert.is(p5.create.length, 2);
  assert.is(vmis.length, 5);

  const before = vmis.map((v) => v.metadata!.name!);
  const p1 = round(rs(1));
  assert.is(p1.diff, 4);
  assert.equal(p1.deleteActive, before.slice(0, 4), 'the first four in list order');
  assert.equal(vmis.map((v) => v.metadata!.name), [before[4]]);

  const status = replicaSetStatus(rs(1), vmis, undefined, NOW);
  assert.ok(status.changed);
  assert.equal(status.status, { labelSelector: 'kubevirt.io/vmReplicaSet=testreplicaset', replicas: 1, readyReplicas: 1 });
  const again = replicaSetStatus({ ...rs(1), status: status.status }, vmis, undefined, NOW);
  assert.not.ok(again.changed, 'equilibrium: no write');
});

test('burst: at most 250 creations or deletions per round', () => {
  const plan = planScale(rs(400), partitionVMIs([]), { expectationsSatisfied: true });
  assert.is(plan.create.length, 250);
  assert.is(planScale(rs(10), partitionVMIs([]), { expectationsSatisfied: true, burst: 4 }).create.length, 4);
});

test('no scaling while expectations are pending, paused, or the replica set is being deleted', () => {
  const empty = partitionVMIs([]);
  assert.equal(planScale(rs(2), empty, { expectationsSatisfied: false }).create, []);
  assert.equal(planScale(rs(2, { paused: true }), empty, { expectationsSatisfied: true }).create, []);
  const deleting = rs(2);
  deleting.metadata!.deletionTimestamp = at(-1);
  assert.equal(planScale(deleting, empty, { expectationsSatisfied: true }).create, []);
  assert.is(planScale(rs(undefined), empty, { expectationsSatisfied: true }).create.length, 1, 'replicas nil → 1');
});

const mk = (name: string, phase: NonNullable<VirtualMachineInstance['status']>['phase'], extra: { deleting?: boolean; terminating?: boolean; ready?: boolean } = {}): VirtualMachineInstance => {
  const v: VirtualMachineInstance = {
    metadata: { name, namespace: 'default', uid: `u-${name}`, labels: { 'kubevirt.io/vmReplicaSet': 'testreplicaset' }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', name: 'testreplicaset', uid: 'rs-uid', controller: true }] },
    spec: { domain: { devices: {} } },
    status: { phase },
  };
  if (extra.deleting) v.metadata!.deletionTimestamp = at(-1);
  if (extra.terminating) v.status!.conditions = [cond('Ready', 'False', 'PodTerminating')];
  if (extra.ready) v.status!.conditions = [cond('Ready', 'True')];
  return v;
};

test('partition: finished, unknown (pod terminating), active; deleting VMIs count nowhere', () => {
  const p = partitionVMIs([
    mk('a', 'Running', { ready: true }),
    mk('b', 'Succeeded'),
    mk('c', 'Failed'),
    mk('d', 'Running', { terminating: true }),
    mk('e', 'Running', { deleting: true }),
    mk('f', 'Failed', { deleting: true }),
    mk('g', 'Pending'),
  ]);
  assert.equal(p.active.map((v) => v.metadata!.name), ['a', 'g']);
  assert.equal(p.finished.map((v) => v.metadata!.name), ['b', 'c']);
  assert.equal(p.unknown.map((v) => v.metadata!.name), ['d']);
});

test('finished and unknown VMIs are cleaned up while scaling; readyReplicas counts Ready=True', () => {
  const vmis = [mk('a', 'Running', { ready: true }), mk('b', 'Failed'), mk('d', 'Scheduled', { terminating: true }), mk('g', 'Scheduling')];
  const p = partitionVMIs(vmis);
  const plan = planScale(rs(3), p, { expectationsSatisfied: true });
  assert.is(plan.create.length, 1);
  assert.equal(plan.cleanup, ['b', 'd']);
  const s = replicaSetStatus(rs(3), p.active, undefined, NOW);
  assert.is(s.status.replicas, 2);
  assert.is(s.status.readyReplicas, 1);
});

test('status conditions: ReplicaPaused (event SuccessfulPaused/Resumed), ReplicaFailure FailedCreate/FailedDelete', () => {
  const paused = replicaSetStatus(rs(2, { paused: true }), [], undefined, NOW);
  assert.equal(paused.status.conditions, [{ type: 'ReplicaPaused', status: 'True', reason: 'Paused', message: 'Controller got paused', lastTransitionTime: at(0) }]);
  assert.equal(paused.event, { reason: 'SuccessfulPaused', message: 'Paused' });
  const resumed = replicaSetStatus({ ...rs(2), status: paused.status }, [], undefined, NOW);
  assert.is(resumed.status.conditions, undefined);
  assert.equal(resumed.event, { reason: 'SuccessfulResumed', message: 'Resumed' });
  const failedCreate = replicaSetStatus(rs(2), [], new Error('quota exceeded'), NOW);
  assert.equal(failedCreate.status.conditions, [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'quota exceeded', lastTransitionTime: at(0) }]);
  const failedDelete = replicaSetStatus(rs(0), [mk('a', 'Running')], new Error('forbidden'), NOW);
  assert.is(failedDelete.status.conditions?.[0]?.reason, 'FailedDelete');
  const healed = replicaSetStatus({ ...rs(2), status: failedCreate.status }, [], undefined, NOW);
  assert.is(healed.status.conditions, undefined);
});

test('claims: adopt matching orphans, release owned non-matching, ignore others\' VMIs and deleting ones', () => {
  const owned = mk('owned', 'Running');
  const ownedStale = mk('stale', 'Running');
  ownedStale.metadata!.labels = { other: 'x' };
  const orphan = mk('orphan', 'Running');
  delete orphan.metadata!.ownerReferences;
  const orphanDeleting = mk('orphan-del', 'Running', { deleting: true });
  delete orphanDeleting.metadata!.ownerReferences;
  const foreign = mk('foreign', 'Running');
  foreign.metadata!.ownerReferences = [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm', uid: 'vm-uid', controller: true }];
  const r = claimVMIs(rs(3), [owned, ownedStale, orphan, orphanDeleting, foreign]);
  assert.equal(r.claimed.map((v) => v.metadata!.name), ['owned', 'orphan']);
  assert.equal(r.adopt.map((v) => v.metadata!.name), ['orphan']);
  assert.equal(r.release.map((v) => v.metadata!.name), ['stale']);
  const deleting = rs(3);
  deleting.metadata!.deletionTimestamp = at(-1);
  const d = claimVMIs(deleting, [ownedStale, orphan]);
  assert.equal([d.adopt.length, d.release.length], [0, 0]);
});

test('spec checks that stop the controller (no requeue)', () => {
  assert.is(invalidReplicaSetSpec(rs(1)), undefined);
  const noLabels = rs(1);
  noLabels.spec.template.metadata = {};
  assert.match(invalidReplicaSetSpec(noLabels) ?? '', /labels must not be empty/);
  const mismatch = rs(1, { selector: { matchLabels: { app: 'x' } } });
  assert.match(invalidReplicaSetSpec(mismatch) ?? '', /does not match/);
  const bad = rs(1, { selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } });
  assert.match(invalidReplicaSetSpec(bad) ?? '', /matchExpressions\[0\]: values: Invalid value: \[\]: for 'in', 'notin' operators, values set can't be empty/);
});

test('base name: template name, else generateName, else the replica set name; template metadata carried over', () => {
  const r = rs(1);
  assert.is(vmiBaseName(r), 'testreplicaset');
  r.spec.template.metadata!.generateName = 'gen-';
  assert.is(vmiBaseName(r), 'gen-');
  r.spec.template.metadata!.name = 'named';
  r.spec.template.metadata!.annotations = { a: 'b' };
  const v = vmiFromTemplate(r);
  assert.is(v.metadata!.generateName, 'named');
  assert.is(v.metadata!.name, undefined);
  assert.equal(v.metadata!.annotations, { a: 'b' });
});

test.run();
