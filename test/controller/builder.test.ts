// The controller builder (controller/builder.ts) against real informers fed by a fake watch source:
// which informer events queue which keys, which observe expectations, and the run loop's rule that
// a TerminalError is reported once and not retried while other errors retry with backoff.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Informer } from '../../src/kube/informer.ts';
import { Resources } from '../../src/kube/resource.ts';
import { Expectations } from '../../src/kube/expectations.ts';
import { runWorkers, TerminalError } from '../../src/kube/workqueue.ts';
import type { KubeClient, KubeObject, WatchEvent } from '../../src/kube/client.ts';
import { controllerFor, type DeletionObservation } from '../../controller/builder.ts';

/** A watch source: list returns nothing; `emit` pushes a watch event to every informer watching. */
function fakeSource() {
  const watchers = new Set<(ev: WatchEvent<KubeObject>) => void>();
  let rv = 1;
  const client = {
    list: async () => ({ metadata: { resourceVersion: String(rv) }, items: [] }),
    watch: async (_r: unknown, _o: unknown, onEvent: (ev: WatchEvent<KubeObject>) => void) => {
      watchers.add(onEvent);
      const abort = new AbortController();
      abort.signal.addEventListener('abort', () => watchers.delete(onEvent));
      return abort;
    },
  } as unknown as KubeClient;
  const emit = (type: WatchEvent<KubeObject>['type'], obj: KubeObject) => {
    const object = structuredClone(obj);
    object.metadata = { ...object.metadata, resourceVersion: String(++rv) };
    for (const w of watchers) w({ type, object });
  };
  return { client, emit };
}

const obj = (name: string, meta: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Thing', metadata: { name, namespace: 'ns', ...meta } });
const ownedBy = (kind: string, name: string) => ({ ownerReferences: [{ apiVersion: 'v1', kind, name, uid: `uid-${name}`, controller: true }] });
const marked = { deletionTimestamp: '2026-01-01T00:00:00Z' };

/** Drains what the queue holds right now, in order. */
function queued(q: { length: number; get(): Promise<string | undefined>; done(k: string): void }): Promise<string[]> {
  const n = q.length;
  return Promise.all(Array.from({ length: n }, async () => { const k = (await q.get())!; q.done(k); return k; }));
}

async function setup() {
  const { client, emit } = fakeSource();
  const primaries = new Informer<KubeObject>(client, Resources.configMaps);
  const children = new Informer<KubeObject>(client, Resources.pods);
  await Promise.all([primaries.start(), children.start()]);
  const stop = () => { primaries.stop(); children.stop(); };
  return { emit, primaries, children, stop };
}

test('watches: every event of the primary queues its own key; a deletion clears its expectations', async () => {
  const { emit, primaries, stop } = await setup();
  const e = new Expectations();
  const b = controllerFor('t', { workers: 1 }).withExpectations(e).watches(primaries);
  e.expectCreations('ns/a', 1);
  emit('ADDED', obj('a'));
  emit('MODIFIED', obj('b'));
  assert.equal(await queued(b.queue), ['ns/a', 'ns/b']);
  assert.not.ok(e.satisfied('ns/a'));
  emit('DELETED', obj('a'));
  assert.equal(await queued(b.queue), ['ns/a']);
  assert.ok(e.satisfied('ns/a'), 'a deleted primary waits for nothing');
  b.queue.shutDown();
  stop();
});

// Child events in order, then the expectations left on the owner's key (1 creation and 2 deletions expected).
const ownsTable: Array<{ deletions: DeletionObservation; deletionsLeft: number }> = [
  { deletions: 'on-delete', deletionsLeft: 1 },
  { deletions: 'on-mark-and-delete', deletionsLeft: 0 },
  { deletions: 'once', deletionsLeft: 1 },
  { deletions: 'none', deletionsLeft: 2 },
];

/** How many deletions the key still waits for (its creations all observed): lowered one by one until satisfied. */
function deletionsLeft(e: Expectations, key: string): number {
  for (let n = 0; ; n++) {
    if (e.satisfied(key)) return n;
    e.lowerExpectations(key, 0, 1);
  }
}
for (const row of ownsTable) {
  test(`owns (deletions ${row.deletions}): children queue their owner; creations and deletions observed`, async () => {
    const { emit, children, stop } = await setup();
    const e = new Expectations();
    const b = controllerFor('t', { workers: 1 }).withExpectations(e).owns(children, 'Owner', { deletions: row.deletions });
    e.expect('ns/o', 1, 2);
    emit('ADDED', obj('c1', ownedBy('Owner', 'o')));
    emit('ADDED', obj('stranger', ownedBy('Other', 'x')));
    assert.equal(await queued(b.queue), ['ns/o'], 'only the owner of the given kind is queued');
    emit('MODIFIED', obj('c1', { ...ownedBy('Owner', 'o'), ...marked }));
    emit('DELETED', obj('c1', { ...ownedBy('Owner', 'o'), ...marked }));
    assert.equal(await queued(b.queue), ['ns/o']);
    // The creation was seen; the gracefully deleted child counted 0, 1 or 2 times by policy.
    assert.is(deletionsLeft(e, 'ns/o'), row.deletionsLeft);
    // A child deleted without a graceful mark counts once, except with 'none'.
    e.expect('ns/o', 0, 1);
    emit('DELETED', obj('c1', ownedBy('Owner', 'o')));
    assert.equal(await queued(b.queue), ['ns/o']);
    assert.is(deletionsLeft(e, 'ns/o'), row.deletions === 'none' ? 1 : 0);
    b.queue.shutDown();
    stop();
  });
}

test('owns: a key map for several owners; includeOld queues an owner the child left', async () => {
  const { emit, children, stop } = await setup();
  const b = controllerFor('t', { workers: 1 }).withExpectations()
    .owns(children, (c) => c.metadata?.labels?.['owners']?.split(','), { includeOld: true });
  emit('ADDED', obj('c', { labels: { owners: 'ns/a,ns/b' } }));
  assert.equal(await queued(b.queue), ['ns/a', 'ns/b']);
  emit('MODIFIED', obj('c', { labels: { owners: 'ns/c' } }));
  assert.equal((await queued(b.queue)).sort(), ['ns/a', 'ns/b', 'ns/c']);
  b.queue.shutDown();
  stop();
});

test('watchesMapped: events filtered by kind and by a condition on updates; no expectations touched', async () => {
  const { emit, children, stop } = await setup();
  const e = new Expectations();
  e.expect('ns/n', 1, 1);
  const b = controllerFor('t', { workers: 1 }).withExpectations(e)
    .watchesMapped(children, (c) => (c.metadata?.labels?.['node'] ? `ns/${c.metadata.labels['node']}` : undefined), {
      events: ['update', 'delete'],
      when: (o, c) => o.metadata?.labels?.['phase'] !== c.metadata?.labels?.['phase'],
    });
  emit('ADDED', obj('c', { labels: { node: 'n', phase: 'a' } }));
  assert.equal(await queued(b.queue), [], 'add is not watched');
  emit('MODIFIED', obj('c', { labels: { node: 'n', phase: 'a' } }));
  assert.equal(await queued(b.queue), [], 'the condition does not hold');
  emit('MODIFIED', obj('c', { labels: { node: 'n', phase: 'b' } }));
  emit('MODIFIED', obj('unlabelled'));
  assert.equal(await queued(b.queue), ['ns/n']);
  emit('DELETED', obj('c', { labels: { node: 'n', phase: 'b' } }));
  assert.equal(await queued(b.queue), ['ns/n']);
  assert.not.ok(e.satisfied('ns/n'));
  b.queue.shutDown();
  stop();
});

test('complete: a Controller with the builder\'s name, queue, workers and expectations, syncing through the reconciler', async () => {
  const e = new Expectations();
  const synced: string[] = [];
  const c = controllerFor('thing', { workers: 3, queue: { qps: 5 } }).withExpectations(e).complete({ sync: async (k) => { synced.push(k); } });
  assert.is(c.name, 'thing');
  assert.is(c.workers, 3);
  assert.is(c.expectations, e);
  await c.sync('ns/x');
  assert.equal(synced, ['ns/x']);
  assert.is(controllerFor('plain', { workers: 1 }).complete({ sync: async () => {} }).expectations, undefined);
  c.queue.shutDown();
});

// The run loop: which errors retry.
const errorTable: Array<{ name: string; err: () => unknown; retried: boolean }> = [
  { name: 'an Error', err: () => new Error('boom'), retried: true },
  { name: 'a thrown string', err: () => 'boom', retried: true },
  { name: 'a TerminalError', err: () => new TerminalError('spec cannot work', { cause: new Error('why') }), retried: false },
];
for (const row of errorTable) {
  test(`runWorkers: ${row.name} ${row.retried ? 'retries with backoff' : 'is reported once and not retried'}`, async () => {
    const c = controllerFor('t', { workers: 1, queue: { baseDelayMs: 1, qps: 1e9, burst: 1e9 } }).complete({
      sync: async () => { runs++; throw row.err(); },
    });
    let runs = 0;
    const reports: Array<{ retries: number; terminal: boolean }> = [];
    const done = runWorkers(c.queue, c.workers, (k) => c.sync(k), (_k, _err, retries, terminal) => { reports.push({ retries, terminal }); });
    c.queue.add('ns/k');
    await new Promise((r) => setTimeout(r, 100));
    c.queue.shutDown();
    await done;
    if (row.retried) {
      assert.ok(runs > 3, `retried (${runs} runs)`);
      assert.ok(reports.every((r) => !r.terminal));
      assert.equal(reports.slice(0, 3).map((r) => r.retries), [0, 1, 2], 'backing off');
    } else {
      assert.is(runs, 1);
      assert.equal(reports, [{ retries: 0, terminal: true }]);
      assert.is(c.queue.numRequeues('ns/k'), 0, 'forgotten');
    }
  });
}

test('runWorkers: a key that failed terminally runs again when it is queued again (the object changed)', async () => {
  let runs = 0;
  const c = controllerFor('t', { workers: 1 }).complete({ sync: async () => { runs++; if (runs === 1) throw new TerminalError('no'); } });
  const done = runWorkers(c.queue, 1, (k) => c.sync(k));
  c.queue.add('ns/k');
  await new Promise((r) => setTimeout(r, 20));
  c.queue.add('ns/k');
  await new Promise((r) => setTimeout(r, 20));
  assert.is(runs, 2);
  c.queue.shutDown();
  await done;
});

test.run();
