import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WorkQueue, runWorkers } from '../../src/kube/workqueue.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a key is queued once however often it is added', async () => {
  const q = new WorkQueue<string>();
  q.add('a'); q.add('a'); q.add('b'); q.add('a');
  assert.is(q.length, 2);
  assert.is(await q.get(), 'a');
  assert.is(await q.get(), 'b');
  q.shutDown();
});

test('a key in flight is not handed out twice; adding it meanwhile requeues it after done()', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  const k = await q.get();
  q.add('a');
  assert.is(q.length, 0, 'not queued while processing');
  q.done(k!);
  assert.is(q.length, 1, 'queued again once done');
  assert.is(await q.get(), 'a');
  q.done('a');
  q.shutDown();
});

test('waiting get() receives the next add; shutDown releases waiters with undefined', async () => {
  const q = new WorkQueue<string>();
  const p = q.get();
  q.add('x');
  assert.is(await p, 'x');
  const p2 = q.get();
  q.shutDown();
  assert.is(await p2, undefined);
});

test('per-key backoff doubles from 5 ms and forget resets it', () => {
  const q = new WorkQueue<string>({ qps: 1e9, burst: 1e9 });
  assert.equal([q.when('k'), q.when('k'), q.when('k'), q.when('k')], [5, 10, 20, 40]);
  assert.is(q.numRequeues('k'), 4);
  q.forget('k');
  assert.is(q.when('k'), 5);
  q.shutDown();
});

test('per-key backoff is capped', () => {
  const q = new WorkQueue<string>({ qps: 1e9, burst: 1e9, maxDelayMs: 100 });
  const delays = Array.from({ length: 12 }, () => q.when('k'));
  assert.is(Math.max(...delays), 100);
  q.shutDown();
});

test('the overall token bucket delays once the burst is spent', () => {
  const q = new WorkQueue<string>({ qps: 10, burst: 2 });
  q.when('a'); q.when('b');
  const d = q.when('c');
  assert.ok(d >= 90 && d <= 100, `third retry waits for a token (${d} ms)`);
  q.shutDown();
});

test('addAfter delivers later; an earlier deadline wins', async () => {
  const q = new WorkQueue<string>();
  q.addAfter('k', 200);
  q.addAfter('k', 20);
  const t0 = Date.now();
  assert.is(await q.get(), 'k');
  const waited = Date.now() - t0;
  assert.ok(waited >= 15 && waited < 150, `delivered after ${waited} ms`);
  q.done('k');
  q.shutDown();
});

test('runWorkers: failures retry with backoff, successes are forgotten, requeueAfter re-runs', async () => {
  const q = new WorkQueue<string>({ baseDelayMs: 1 });
  const calls: string[] = [];
  let failOnce = true;
  let requeued = false;
  const errors: string[] = [];
  const done = runWorkers(q, 3, async (key) => {
    calls.push(key);
    if (key === 'flaky' && failOnce) { failOnce = false; throw new Error('boom'); }
    if (key === 'timer' && !requeued) { requeued = true; return { requeueAfterMs: 5 }; }
    return undefined;
  }, (key, err) => errors.push(`${key}:${(err as Error).message}`));
  q.add('flaky'); q.add('ok'); q.add('timer');
  for (let i = 0; i < 100 && calls.length < 5; i++) await sleep(5);
  q.shutDown();
  await done;
  assert.equal(calls.filter((c) => c === 'flaky').length, 2);
  assert.equal(calls.filter((c) => c === 'timer').length, 2);
  assert.equal(errors, ['flaky:boom']);
  assert.is(q.numRequeues('flaky'), 0, 'forgotten after the successful retry');
});

test('runWorkers: a reconcile that only hands work off (keepBackoff) keeps the key\'s backoff growing', async () => {
  // The handler's launcher start: reconcile 1 sends it and returns; its failure queues the key and
  // the next reconcile throws it; the retry sends it again. The retries must back off, not restart at 0.
  const q = new WorkQueue<string>({ baseDelayMs: 1 });
  const retries: number[] = [];
  let pending = false;
  const done = runWorkers(q, 1, async (key) => {
    if (pending) { pending = false; throw new Error('start failed'); }
    pending = true;
    setTimeout(() => q.add(key), 1);
    return { keepBackoff: true };
  }, (_key, _err, n) => retries.push(n));
  q.add('vm');
  for (let i = 0; i < 200 && retries.length < 5; i++) await sleep(5);
  q.shutDown();
  await done;
  assert.equal(retries.slice(0, 5), [0, 1, 2, 3, 4]);
});

test('no key is ever processed by two workers at once under load', async () => {
  const q = new WorkQueue<number>();
  const inFlight = new Set<number>();
  let overlaps = 0;
  let processed = 0;
  const done = runWorkers(q, 8, async (key) => {
    if (inFlight.has(key)) overlaps++;
    inFlight.add(key);
    await sleep(Math.random() * 2);
    inFlight.delete(key);
    processed++;
  });
  for (let i = 0; i < 2000; i++) q.add(i % 17);
  for (let i = 0; i < 40; i++) { await sleep(2); for (let j = 0; j < 50; j++) q.add(j % 17); }
  await q.drained();
  q.shutDown();
  await done;
  assert.is(overlaps, 0);
  assert.ok(processed >= 17);
});

test('addUnlessBackingOff: absorbed while a failed key waits for its retry, immediate otherwise', async () => {
  const q = new WorkQueue<string>({ baseDelayMs: 200 });
  q.addUnlessBackingOff('a');
  assert.is(await q.get(), 'a', 'no failure yet: queued at once');
  q.addRateLimited('a'); // the sync failed: retry in 200 ms
  q.done('a');
  q.addUnlessBackingOff('a'); // the failing start's own domain event
  assert.is(q.length, 0, 'absorbed into the pending retry');
  q.add('a'); // an informer update (a user's change) is not absorbed
  assert.is(q.length, 1);
  assert.is(await q.get(), 'a');
  q.forget('a');
  q.done('a');
  q.addUnlessBackingOff('a');
  assert.is(q.length, 1, 'after a success: queued at once again');
  q.shutDown();
});

test.run();
