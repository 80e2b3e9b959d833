// DeadlineQueue: one timer per distinct timeout, expiry in order, settled items never expire.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DeadlineQueue, type Deadlined } from '../../qmp/deadlines.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
interface Item extends Deadlined { name: string }
const item = (name: string): Item => ({ name, deadline: 0, settled: false });

test('items expire after their timeout, in order, each once; settled ones never', async () => {
  const expired: string[] = [];
  const q = new DeadlineQueue<Item>((it, ms) => { it.settled = true; expired.push(`${it.name}@${ms}`); });
  const a = item('a'); const b = item('b'); const c = item('c');
  const t0 = performance.now();
  q.add(a, 30);
  q.add(b, 30);
  q.add(c, 30);
  b.settled = true;
  q.trim(30);
  await sleep(15);
  assert.equal(expired, []);
  await sleep(40);
  assert.equal(expired, ['a@30', 'c@30']);
  assert.ok(performance.now() - t0 >= 29);
  assert.is(q.size, 0);
});

test('distinct timeouts get their own lanes; a shorter one added later still expires first', async () => {
  const expired: string[] = [];
  const q = new DeadlineQueue<Item>((it) => { it.settled = true; expired.push(it.name); });
  q.add(item('long'), 60);
  q.add(item('short'), 10);
  await sleep(90);
  assert.equal(expired, ['short', 'long']);
});

test('an item added after the head re-arms at its own deadline, not later', async () => {
  const expired: [string, number][] = [];
  const t0 = performance.now();
  const q = new DeadlineQueue<Item>((it) => { it.settled = true; expired.push([it.name, performance.now() - t0]); });
  const first = item('first');
  q.add(first, 40);
  await sleep(20);
  q.add(item('second'), 40);
  first.settled = true;
  q.trim(40);
  await sleep(60);
  assert.is(expired.length, 1);
  assert.is(expired[0]![0], 'second');
  assert.ok(expired[0]![1] >= 59, `expired at ${expired[0]![1]}`);
});

test('settling in order keeps the lane empty (no build-up at high command rates)', () => {
  const q = new DeadlineQueue<Item>(() => assert.unreachable());
  for (let i = 0; i < 100_000; i++) {
    const it = item(String(i));
    q.add(it, 10_000);
    it.settled = true;
    q.trim(10_000);
  }
  assert.is(q.size, 0);
  q.clear();
});

test('clear() cancels everything', async () => {
  const q = new DeadlineQueue<Item>(() => assert.unreachable());
  q.add(item('x'), 5);
  q.clear();
  await sleep(20);
});

test.run();
