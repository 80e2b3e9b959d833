// The pure parts of src/proto/h2: frames and HPACK, against RFC 7541's own examples and against header
// blocks as nghttp2 (node:http2) emits them — Huffman-coded strings and dynamic table entries — captured
// here from a real node:http2 client.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect as h2connect } from 'node:http2';
import { connect as netConnect, createServer } from 'node:net';
import { join } from 'node:path';
import {
  CLIENT_PREFACE, ErrorCode, Flags, FrameType, H2ConnectionError, decodeFrames, decodeGoaway, decodeSettings, decodeWindowUpdate,
  encodeFrame, encodeGoaway, encodeSettings, encodeUInt32, unpaddedPayload,
} from '../../src/proto/h2/frame.ts';
import { HpackDecoder, decodeInteger, encodeHeaderBlock, encodeInteger, huffmanDecode, huffmanEncode } from '../../src/proto/h2/hpack.ts';
import { encodeGrpcTimeout, parseGrpcTimeout, percentDecode, percentEncode, frameMessage, unframeUnaryMessage } from '../../src/proto/h2/grpc-wire.ts';
import { tempDir } from '../lib/tmp.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

test('frames: encode, decode across partial reads, padding, settings, goaway, window update', () => {
  const a = encodeFrame(FrameType.HEADERS, Flags.END_HEADERS, 3, Buffer.from('abc'));
  assert.equal([...a.subarray(0, 9)], [0, 0, 3, 1, 4, 0, 0, 0, 3]);
  const b = encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8, 7));
  const both = Buffer.concat([a, b]);
  for (let cut = 0; cut <= both.length; cut++) {
    const first = decodeFrames(both.subarray(0, cut), 16_384);
    const second = decodeFrames(Buffer.concat([first.rest, both.subarray(cut)]), 16_384);
    const all = [...first.frames, ...second.frames];
    assert.equal(all.map((f) => [f.type, f.flags, f.streamId, f.payload.toString('hex')]), [[1, 4, 3, '616263'], [6, 0, 0, '0707070707070707']]);
    assert.is(second.rest.length, 0);
  }
  assert.throws(() => decodeFrames(encodeFrame(FrameType.DATA, 0, 1, Buffer.alloc(16_385)), 16_384), (e: unknown) => e instanceof H2ConnectionError && e.code === ErrorCode.FRAME_SIZE_ERROR);
  // PADDED DATA: pad length 2, "hi", two pad bytes; PADDED|PRIORITY HEADERS.
  assert.is(unpaddedPayload({ type: FrameType.DATA, flags: Flags.PADDED, streamId: 1, payload: Buffer.from([2, 0x68, 0x69, 0, 0]) }).toString(), 'hi');
  assert.is(unpaddedPayload({ type: FrameType.HEADERS, flags: Flags.PADDED | Flags.PRIORITY, streamId: 1, payload: Buffer.from([1, 0, 0, 0, 0, 16, 0x82, 0]) }).toString('hex'), '82');
  assert.throws(() => unpaddedPayload({ type: FrameType.DATA, flags: Flags.PADDED, streamId: 1, payload: Buffer.from([5, 1]) }), (e: unknown) => e instanceof H2ConnectionError && e.code === ErrorCode.PROTOCOL_ERROR);
  assert.equal(decodeSettings(encodeSettings([[4, 1 << 20], [5, 16_384]])), [[4, 1 << 20], [5, 16_384]]);
  assert.throws(() => decodeSettings(Buffer.alloc(5)));
  assert.equal(decodeGoaway(encodeGoaway(7, ErrorCode.PROTOCOL_ERROR, 'why')), { lastStreamId: 7, code: 1, debug: 'why' });
  assert.is(decodeWindowUpdate(encodeUInt32(0x8000_0010)), 0x10); // the reserved bit is ignored
  assert.is(CLIENT_PREFACE.toString(), 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
});

test('HPACK integers: RFC 7541 C.1', () => {
  const enc = (v: number, prefix: number) => { const out: number[] = []; encodeInteger(out, v, prefix); return out; };
  assert.equal(enc(10, 5), [0x0a]);
  assert.equal(enc(1337, 5), [0x1f, 0x9a, 0x0a]);
  assert.equal(enc(42, 8), [0x2a]);
  assert.equal(decodeInteger(Buffer.from([0x1f, 0x9a, 0x0a]), 0, 5), [1337, 3]);
  assert.equal(decodeInteger(Buffer.from([0xea]), 0, 5), [10, 1]); // bits above the prefix ignored
  for (const v of [0, 30, 31, 127, 128, 16_383, 2 ** 31 - 1]) assert.is(decodeInteger(Buffer.from(enc(v, 6)), 0, 6)[0], v);
  assert.throws(() => decodeInteger(Buffer.from([0x1f, 0x9a]), 0, 5));
});

test('Huffman: RFC 7541 C.4 strings, every byte value, invalid padding and EOS refused', () => {
  const cases: [string, string][] = [
    ['www.example.com', 'f1e3 c2e5 f23a 6ba0 ab90 f4ff'],
    ['no-cache', 'a8eb 1064 9cbf'],
    ['custom-key', '25a8 49e9 5ba9 7d7f'],
    ['custom-value', '25a8 49e9 5bb8 e8b4 bf'],
    ['302', '6402'],
    ['Mon, 21 Oct 2013 20:13:21 GMT', 'd07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff'],
  ];
  for (const [text, code] of cases) {
    assert.is(huffmanEncode(Buffer.from(text)).toString('hex'), hex(code).toString('hex'), text);
    assert.is(huffmanDecode(hex(code)), text);
  }
  const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  assert.is(Buffer.from(huffmanDecode(huffmanEncode(every)), 'latin1').toString('hex'), every.toString('hex'));
  assert.throws(() => huffmanDecode(Buffer.from([0xf1, 0xe3, 0x00])), /Huffman/); // padding of zeros
  assert.throws(() => huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xff])), /EOS|Huffman/); // EOS (30 ones)
});

test('HPACK decoder: RFC 7541 C.3 and C.4 request sequences, dynamic table as specified', () => {
  for (const [blocks, name] of [
    [['828684410f7777772e6578616d706c652e636f6d', '828684be58086e6f2d6361636865', '828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565'], 'C.3'],
    [['828684418cf1e3c2e5f23a6ba0ab90f4ff', '828684be5886a8eb10649cbf', '828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf'], 'C.4 (Huffman)'],
  ] as const) {
    const d = new HpackDecoder();
    assert.equal(d.decode(hex(blocks[0])), [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']], name);
    assert.equal(d.decode(hex(blocks[1])), [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com'], ['cache-control', 'no-cache']], name);
    assert.equal(d.decode(hex(blocks[2])), [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']], name);
    assert.equal(d.dynamicTable, [['custom-key', 'custom-value'], ['cache-control', 'no-cache'], [':authority', 'www.example.com']], name);
  }
  // C.5-style eviction with a 256-byte table (responses): the oldest entries go.
  const d = new HpackDecoder(256);
  d.decode(hex('4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d'));
  d.decode(hex('4803333037c1c0bf'));
  assert.equal(d.dynamicTable.map(([n, v]) => `${n}: ${v}`), [':status: 307', 'location: https://www.example.com', 'date: Mon, 21 Oct 2013 20:13:21 GMT', 'cache-control: private']);
  // Size updates: above the announced size refused, after a field refused, to 0 empties the table.
  assert.throws(() => new HpackDecoder(4096).decode(hex('3fe21f')), /above/); // 4097
  assert.throws(() => new HpackDecoder().decode(hex('8220')), /after a header field/);
  const z = new HpackDecoder();
  z.decode(hex('4001610162'));
  assert.equal(z.dynamicTable, [['a', 'b']]);
  z.decode(hex('20'));
  assert.equal(z.dynamicTable, []);
});

test('HPACK encoder: what it writes decodes to the same fields (static indexes, Huffman where shorter)', () => {
  const fields: [string, string][] = [[':status', '200'], ['content-type', 'application/grpc'], ['grpc-status', '0'], ['grpc-message', 'a%20b'], [':path', '/kubevirt.cmd.v1.Cmd/SyncVirtualMachine'], ['x-bin', '\u00ff\u0000']];
  const block = encodeHeaderBlock(fields);
  assert.is(block[0], 0x88); // :status 200 is static entry 8
  assert.equal(new HpackDecoder().decode(block), fields);
});

/** Header blocks a node:http2 (nghttp2) client sends for three requests with repeating headers. */
async function nghttp2Blocks(): Promise<{ blocks: Buffer[]; sent: Record<string, string>[] }> {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 'n.sock');
  const blocks: Buffer[] = [];
  const sent = [
    { ':path': '/kubevirt.cmd.v1.Cmd/SyncVirtualMachine', 'content-type': 'application/grpc', 'grpc-timeout': '4999m', 'x-custom': 'Value with Spaces and UPPER' },
    { ':path': '/kubevirt.cmd.v1.Cmd/SyncVirtualMachine', 'content-type': 'application/grpc', 'grpc-timeout': '4998m', 'x-custom': 'Value with Spaces and UPPER' },
    { ':path': '/kubevirt.cmd.v1.Cmd/Ping', 'content-type': 'application/grpc', 'grpc-timeout': '10S', 'x-custom': 'other' },
  ];
  const server = createServer((s) => {
    let buf = Buffer.alloc(0);
    let preface = false;
    s.write(encodeFrame(FrameType.SETTINGS, 0, 0));
    s.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (!preface) {
        if (buf.length < CLIENT_PREFACE.length) return;
        buf = buf.subarray(CLIENT_PREFACE.length);
        preface = true;
      }
      const { frames, rest } = decodeFrames(buf, 1 << 24);
      buf = Buffer.from(rest);
      for (const f of frames) if (f.type === FrameType.HEADERS) blocks.push(Buffer.from(unpaddedPayload(f)));
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(sock, r));
  const session = h2connect('http://localhost', { createConnection: () => netConnect(sock) });
  try {
    for (const h of sent) {
      const req = session.request({ ':method': 'POST', ...h }, { endStream: true });
      req.on('error', () => {});
    }
    const deadline = Date.now() + 5000;
    while (blocks.length < sent.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  } finally {
    session.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    dir.cleanup();
  }
  return { blocks, sent };
}

test('HPACK decoder: header blocks as nghttp2 emits them (Huffman, dynamic table references)', async () => {
  const { blocks, sent } = await nghttp2Blocks();
  assert.is(blocks.length, 3);
  const d = new HpackDecoder();
  blocks.forEach((block, i) => {
    const got = Object.fromEntries(d.decode(block));
    for (const [k, v] of Object.entries(sent[i]!)) assert.is(got[k], v, `${k} of request ${i}`);
    assert.is(got[':method'], 'POST');
  });
  // nghttp2 indexed the repeating fields: the second block is much shorter than the first, and the
  // decoder's dynamic table holds them.
  assert.ok(blocks[1]!.length < blocks[0]!.length / 2, `${blocks[1]!.length} vs ${blocks[0]!.length}`);
  assert.ok(d.dynamicTable.some(([n, v]) => n === 'x-custom' && v === 'Value with Spaces and UPPER'));
  // Huffman: some string literal in the first block has its H bit set.
  assert.ok(blocks[0]!.some((b, i) => i > 0 && (b & 0x80) !== 0));
});

test('gRPC wire: message prefix, grpc-timeout, percent-encoding', () => {
  const framed = frameMessage(Buffer.from('hey'));
  assert.equal([...framed], [0, 0, 0, 0, 3, 0x68, 0x65, 0x79]);
  assert.is(unframeUnaryMessage(framed).toString(), 'hey');
  assert.throws(() => unframeUnaryMessage(Buffer.from([1, 0, 0, 0, 0])), /compressed/);
  assert.throws(() => unframeUnaryMessage(Buffer.from([0, 0, 0, 0, 4, 1])), /truncated/);
  assert.throws(() => unframeUnaryMessage(Buffer.from([0, 0, 0x50, 0, 0]), 1024), /larger than max/);
  assert.is(encodeGrpcTimeout(5000), '5000m');
  assert.is(encodeGrpcTimeout(1e9), '1000000S');
  assert.is(parseGrpcTimeout('5000m'), 5000);
  assert.is(parseGrpcTimeout('2S'), 2000);
  assert.is(parseGrpcTimeout('1H'), 3_600_000);
  assert.is(parseGrpcTimeout('100u'), 0.1);
  assert.is(parseGrpcTimeout('123456789m'), undefined);
  assert.is(parseGrpcTimeout('5x'), undefined);
  assert.is(percentEncode('a b%\nü'), 'a b%25%0A%C3%BC');
  assert.is(percentDecode('a b%25%0A%C3%BC'), 'a b%\nü');
  assert.is(percentDecode('100%'), '100%');
});

test.run();
