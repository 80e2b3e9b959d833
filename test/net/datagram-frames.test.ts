// UDP datagrams over a byte stream (src/net/datagram-frames.ts): a 2-byte big-endian length per
// datagram, whatever the chunks the stream delivers them in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DatagramDeframer, DatagramFrameError, frameDatagram, MAX_DATAGRAM } from '../../src/net/datagram-frames.ts';

const frames: Array<[string, Buffer, string]> = [
  ['a short datagram', Buffer.from('hi'), '0002' + '6869'],
  ['an empty datagram', Buffer.alloc(0), '0000'],
  ['256 bytes: the high byte counts', Buffer.alloc(256, 0x61), '0100' + '61'.repeat(256)],
];
for (const [name, payload, hex] of frames) {
  test(`frameDatagram: ${name}`, () => assert.is(frameDatagram(payload).toString('hex'), hex));
}

test('frameDatagram: the largest datagram fits, one byte more does not (the error says how big)', () => {
  assert.is(frameDatagram(Buffer.alloc(MAX_DATAGRAM)).readUInt16BE(0), 65535);
  assert.throws(() => frameDatagram(Buffer.alloc(MAX_DATAGRAM + 1)), (e: unknown) => e instanceof DatagramFrameError && /65536 bytes/.test(e.message));
});

const stream = Buffer.concat([frameDatagram(Buffer.from('one')), frameDatagram(Buffer.alloc(0)), frameDatagram(Buffer.from('three')), frameDatagram(Buffer.alloc(300, 7))]);
const want = ['one', '', 'three', Buffer.alloc(300, 7).toString('latin1')];
// The same stream cut in different places: the datagrams come out the same.
const cuts: Array<[string, number[]]> = [
  ['in one chunk', []],
  ['byte by byte', Array.from({ length: stream.length - 1 }, (_, i) => i + 1)],
  ['inside a length prefix', [1, 6]],
  ['inside a payload', [3, 12]],
  ['right after each prefix', [2, 5, 7, 9]],
];
for (const [name, at] of cuts) {
  test(`DatagramDeframer: ${name}`, () => {
    const d = new DatagramDeframer();
    const out: string[] = [];
    let from = 0;
    for (const to of [...at, stream.length]) {
      out.push(...d.push(stream.subarray(from, to)).map((b) => b.toString('latin1')));
      from = to;
    }
    assert.equal(out, want);
    assert.is(d.pending, 0);
  });
}

test('DatagramDeframer: a stream that stops mid-frame leaves it pending; datagrams do not share memory with the input', () => {
  const d = new DatagramDeframer();
  const chunk = Buffer.concat([frameDatagram(Buffer.from('ab')), Buffer.from([0, 5, 1])]);
  const [first, ...rest] = d.push(chunk);
  assert.equal(rest, []);
  chunk.fill(0);
  assert.is(first!.toString(), 'ab');
  assert.is(d.pending, 3);
});

test.run();
