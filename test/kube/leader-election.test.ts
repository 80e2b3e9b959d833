// src/kube/leader-election.ts against an in-memory Lease store with the API server's optimistic
// concurrency (a write with a stale resourceVersion is a 409 Conflict) and writes that can be held:
// stop() while a renewal is under way lets it land, then releases the lease (it used to read the
// lease before the renewal landed and fail the release with a conflict, leaving it held).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeApiError, type KubeClient } from '../../src/kube/client.ts';
import { LeaderElector, type Lease } from '../../src/kube/leader-election.ts';

/** One Lease in memory; `hold()` makes the next update (and every one sent after it) wait until the returned function is called. */
function leaseStore() {
  let lease: Lease | undefined;
  let rv = 0;
  let held: Promise<void> | undefined;
  let queue: Promise<void> = Promise.resolve();
  const writes: string[] = [];
  const client = {
    get: async () => {
      if (!lease) throw new KubeApiError(404, 'NotFound', 'leases "l" not found', {});
      return structuredClone(lease);
    },
    create: async (_r: unknown, obj: Lease) => {
      if (lease) throw new KubeApiError(409, 'AlreadyExists', 'exists', {});
      lease = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
      writes.push(`create ${lease.spec?.holderIdentity}`);
      return structuredClone(lease);
    },
    // Writes apply in the order they were sent (one connection): a held write holds the ones after it.
    update: (_r: unknown, obj: Lease) => {
      const wait = held;
      held = undefined;
      const result = queue.then(async () => {
        if (wait) await wait;
        if (obj.metadata?.resourceVersion !== lease?.metadata?.resourceVersion) throw new KubeApiError(409, 'Conflict', 'the object has been modified', {});
        lease = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
        writes.push(`update ${lease.spec?.holderIdentity || '(released)'}`);
        return structuredClone(lease);
      });
      queue = result.then(() => undefined, () => undefined);
      return result;
    },
  } as unknown as KubeClient;
  return {
    client,
    holder: () => lease?.spec?.holderIdentity,
    writes,
    hold: (): (() => void) => { let release!: () => void; held = new Promise<void>((r) => { release = r; }); return release; },
  };
}

const elector = (client: KubeClient, identity: string) => new LeaderElector(client, {
  namespace: 'kubevirt', name: 'l', identity, leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 50, onStartedLeading: () => undefined,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a leader acquires, renews, and releases on stop', async () => {
  const s = leaseStore();
  const e = elector(s.client, 'a');
  await e.run();
  assert.ok(e.isLeader);
  await sleep(120);
  await e.stop();
  assert.is(s.holder(), '');
  assert.is(s.writes[0], 'create a');
  assert.ok(s.writes.filter((w) => w === 'update a').length >= 1, `renewed: ${s.writes.join(', ')}`);
  assert.is(s.writes.at(-1), 'update (released)');
});

test('stop() during a renewal: the renewal lands, then the lease is released (no conflict left behind)', async () => {
  const s = leaseStore();
  const e = elector(s.client, 'a');
  await e.run();
  const release = s.hold();
  // The next tick's renewal is now under way and held at its write.
  await sleep(80);
  const stopping = e.stop();
  await sleep(20);
  release();
  await stopping;
  assert.is(s.holder(), '', `writes: ${s.writes.join(', ')}`);
  assert.is(e.isLeader, false);
});

test('stop() while a candidate\'s first acquisition is under way: what it acquired is released', async () => {
  const s = leaseStore();
  // Someone else's expired lease: the candidate takes it with an update, held here.
  await s.client.create({} as never, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'kubevirt' }, spec: { holderIdentity: 'old', leaseDurationSeconds: 1, renewTime: new Date(0).toISOString() } });
  const release = s.hold();
  const e = elector(s.client, 'b');
  const running = e.run();
  await sleep(20);
  const stopping = e.stop();
  release();
  await Promise.all([running, stopping]);
  assert.is(e.isLeader, false);
  assert.is(s.holder(), '', `writes: ${s.writes.join(', ')}`);
});

test('a stopped elector that never led writes nothing', async () => {
  const s = leaseStore();
  await s.client.create({} as never, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'kubevirt' }, spec: { holderIdentity: 'other', leaseDurationSeconds: 60, renewTime: new Date().toISOString() } });
  const e = elector(s.client, 'c');
  void e.run();
  await sleep(80);
  await e.stop();
  assert.is(s.holder(), 'other');
  assert.equal(s.writes, ['create other']);
});

test.run();
