// JsonLineFramer: byte stream → JSON messages, for every way a transport can cut the stream.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonLineFramer, QmpProtocolError } from '../../qmp/index.ts';

function feed(chunks: (string | Buffer)[], max?: number): unknown[] {
  const f = new JsonLineFramer(max);
  const out: unknown[] = [];
  for (const c of chunks) f.push(typeof c === 'string' ? Buffer.from(c) : c, (m) => { out.push(m); });
  return out;
}

const A = '{"return": {}, "id": "a"}';
const B = '{"event": "STOP", "timestamp": {"seconds": 1, "microseconds": 2}}';

const cases: { name: string; chunks: (string | Buffer)[]; want: unknown[] }[] = [
  { name: 'one line with \\r\\n', chunks: [`${A}\r\n`], want: [{ return: {}, id: 'a' }] },
  { name: 'one line with \\n', chunks: [`${A}\n`], want: [{ return: {}, id: 'a' }] },
  { name: 'two lines in one chunk', chunks: [`${A}\r\n${B}\r\n`], want: [{ return: {}, id: 'a' }, { event: 'STOP', timestamp: { seconds: 1, microseconds: 2 } }] },
  { name: 'line split in the middle', chunks: [A.slice(0, 7), `${A.slice(7)}\r\n`], want: [{ return: {}, id: 'a' }] },
  { name: 'split between \\r and \\n', chunks: [`${A}\r`, '\n'], want: [{ return: {}, id: 'a' }] },
  { name: 'split across many chunks', chunks: [...`${A}\r\n`].map((c) => c), want: [{ return: {}, id: 'a' }] },
  { name: 'tail of one line plus a whole next line', chunks: [A.slice(0, 3), `${A.slice(3)}\r\n${B}\r\n`], want: [{ return: {}, id: 'a' }, { event: 'STOP', timestamp: { seconds: 1, microseconds: 2 } }] },
  { name: 'incomplete last line is held', chunks: [`${A}\r\n{"ret`], want: [{ return: {}, id: 'a' }] },
  { name: 'blank lines are skipped', chunks: ['\r\n\n', `${A}\r\n`, '  \r\n'], want: [{ return: {}, id: 'a' }] },
  { name: 'multi-byte UTF-8 split across chunks', chunks: [Buffer.from('{"return": "é€'), Buffer.from('😀"}\n').subarray(0, 1), Buffer.from('😀"}\n').subarray(1)], want: [{ return: 'é€😀' }] },
  { name: 'QEMU\'s escaped U+FFFD', chunks: ['{"error": {"class": "GenericError", "desc": "stray \'\\uFFFD\'"}}\r\n'], want: [{ error: { class: 'GenericError', desc: "stray '\uFFFD'" } }] },
];

for (const c of cases) {
  test(`framing: ${c.name}`, () => {
    assert.equal(feed(c.chunks), c.want);
  });
}

test('framing: every split point of a two-message stream gives the same messages', () => {
  const stream = Buffer.from(`${A}\r\n${B}\r\n`);
  const want = feed([stream]);
  for (let i = 0; i <= stream.length; i++) {
    for (let j = i; j <= stream.length; j += 7) {
      assert.equal(feed([stream.subarray(0, i), stream.subarray(i, j), stream.subarray(j)]), want, `split at ${i},${j}`);
    }
  }
});

test('framing: unparsable input is a QmpProtocolError with an excerpt, and the framer stays failed', () => {
  const f = new JsonLineFramer();
  assert.throws(() => f.push(Buffer.from('garbage\r\n'), () => {}), (e: unknown) => e instanceof QmpProtocolError && e.excerpt === 'garbage\r');
  const out: unknown[] = [];
  f.push(Buffer.from(`${A}\n`), (m) => { out.push(m); });
  assert.equal(out, []);
});

test('framing: the size cap applies to complete and incomplete lines', () => {
  assert.equal(feed([`"${'x'.repeat(90)}"\n`], 100), ['x'.repeat(90)]);
  assert.throws(() => feed([`"${'x'.repeat(200)}"\n`], 100), /exceeds 100/);
  assert.throws(() => feed(['"', 'x'.repeat(60), 'x'.repeat(60)], 100), /without a line end/);
  assert.throws(() => feed(['"', 'x'.repeat(60), `${'x'.repeat(60)}"\n`], 100), /exceeds 100/);
});

test('framing: onMessage returning false stops processing the chunk', () => {
  const f = new JsonLineFramer();
  const out: unknown[] = [];
  f.push(Buffer.from('1\n2\n3\n'), (m) => { out.push(m); return out.length < 2; });
  assert.equal(out, [1, 2]);
});

test('framing: a 9 MiB line in 64 KiB chunks is concatenated once, linear time', () => {
  const body = JSON.stringify({ return: 'z'.repeat(9 * 1024 * 1024) }) + '\r\n';
  const buf = Buffer.from(body);
  const f = new JsonLineFramer();
  let got: unknown;
  const t0 = performance.now();
  for (let i = 0; i < buf.length; i += 65536) f.push(buf.subarray(i, i + 65536), (m) => { got = m; });
  const ms = performance.now() - t0;
  assert.is((got as { return: string }).return.length, 9 * 1024 * 1024);
  assert.ok(ms < 1000, `took ${ms} ms`);
  assert.is(f.buffered, 0);
});

test.run();
