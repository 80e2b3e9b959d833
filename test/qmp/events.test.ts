// EventSubscription in isolation: matching, FIFO order, bounded buffers, overflow reporting, ending.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventSubscription, QmpEventOverflowError, eventMatcher, type QmpEvent } from '../../qmp/index.ts';

let seq = 0;
const ev = (event: string, data: Record<string, unknown> = {}): QmpEvent => ({ event, data, timestamp: { seconds: 0, microseconds: 0 }, seq: ++seq });

const matchCases: { names?: string | string[]; filter?: (e: QmpEvent) => boolean; event: QmpEvent; want: boolean }[] = [
  { event: ev('STOP'), want: true },
  { names: 'STOP', event: ev('STOP'), want: true },
  { names: 'STOP', event: ev('RESUME'), want: false },
  { names: ['STOP', 'RESUME'], event: ev('RESUME'), want: true },
  { names: [], event: ev('RESUME'), want: false },
  { names: 'DEVICE_DELETED', filter: (e) => e.data.device === 'd1', event: ev('DEVICE_DELETED', { path: '/x/virtio-backend' }), want: false },
  { names: 'DEVICE_DELETED', filter: (e) => e.data.device === 'd1', event: ev('DEVICE_DELETED', { device: 'd1' }), want: true },
  { filter: (e) => e.event.startsWith('BLOCK'), event: ev('BLOCK_IO_ERROR'), want: true },
];

matchCases.forEach((c, i) => {
  test(`eventMatcher case ${i}: ${JSON.stringify(c.names)} ${c.event.event} → ${c.want}`, () => {
    assert.is(eventMatcher(c.names, c.filter)(c.event), c.want);
  });
});

function sub(opts: ConstructorParameters<typeof EventSubscription>[0] = {}) {
  const detached: EventSubscription[] = [];
  const overflows: number[] = [];
  const s = new EventSubscription(opts, (x) => detached.push(x), (x) => overflows.push(x.dropped));
  return { s, detached, overflows };
}

test('a waiting consumer gets the event directly; buffered events come in order', async () => {
  const { s } = sub();
  const p = s.next();
  s.deliver(ev('A'));
  assert.is((await p).value?.event, 'A');
  s.deliver(ev('B'));
  s.deliver(ev('C'));
  assert.is(s.pending, 2);
  assert.is((await s.next()).value?.event, 'B');
  assert.is((await s.next()).value?.event, 'C');
});

test("overflow 'error': buffered events first, then QmpEventOverflowError once, then done; detached", async () => {
  const { s, detached, overflows } = sub({ bufferSize: 2 });
  s.deliver(ev('A'));
  s.deliver(ev('B'));
  s.deliver(ev('C'));
  s.deliver(ev('D'));
  assert.is(s.dropped, 1, 'nothing is accepted after the overflow');
  assert.equal(overflows, [1]);
  assert.equal(detached, [s]);
  assert.is((await s.next()).value?.event, 'A');
  assert.is((await s.next()).value?.event, 'B');
  try { await s.next(); assert.unreachable(); } catch (e) { assert.instance(e, QmpEventOverflowError); }
  assert.is((await s.next()).done, true);
});

test("overflow 'drop-oldest': keeps the newest, counts every drop, reports each", async () => {
  const { s, overflows } = sub({ bufferSize: 3, overflow: 'drop-oldest' });
  for (let i = 0; i < 5000; i++) s.deliver(ev('X', { i }));
  assert.is(s.dropped, 4997);
  assert.is(overflows.length, 4997);
  assert.is(s.pending, 3);
  const got: unknown[] = [];
  for (let i = 0; i < 3; i++) got.push((await s.next()).value?.data.i);
  assert.equal(got, [4997, 4998, 4999]);
});

test('finish() lets the consumer drain, then ends; close() discards and ends a pending next()', async () => {
  const { s } = sub();
  s.deliver(ev('A'));
  s.finish();
  s.deliver(ev('B'));
  assert.is((await s.next()).value?.event, 'A');
  assert.is((await s.next()).done, true);
  const { s: t } = sub();
  const p = t.next();
  t.close();
  assert.is((await p).done, true);
  const { s: u } = sub();
  u.deliver(ev('A'));
  u.close();
  assert.is((await u.next()).done, true);
});

test('for-await with break closes the subscription', async () => {
  const { s, detached } = sub();
  s.deliver(ev('A'));
  s.deliver(ev('B'));
  for await (const e of s) { assert.is(e.event, 'A'); break; }
  assert.is(s.closed, true);
  assert.equal(detached, [s]);
});

test('bufferSize must be a positive integer', () => {
  assert.throws(() => sub({ bufferSize: 0 }), /bufferSize/);
  assert.throws(() => sub({ bufferSize: 1.5 }), /bufferSize/);
});

test('a second next() while one is pending is refused', async () => {
  const { s } = sub();
  const p = s.next();
  try { await s.next(); assert.unreachable(); } catch (e) { assert.match(String(e), /before the previous/); }
  s.close();
  await p;
});

test.run();
