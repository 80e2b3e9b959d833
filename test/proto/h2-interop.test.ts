// The launcher's unary gRPC (src/proto/h2: HTTP/2 on node:net) against grpc-js over real unix sockets,
// both ways — our server ↔ grpc-js client, grpc-js server ↔ our client —: unary calls, 1 MiB messages
// each way (flow control past the 64 KiB windows), deadlines, handler errors, unknown methods, client
// cancellation, a server that goes away and comes back, many calls at once, and malformed bytes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { join } from 'node:path';
import { grpc, addUnaryService, listenUnix, shutdownServer, UnaryClient } from '../../src/proto/grpc.ts';
import { GrpcServer } from '../../src/proto/h2/grpc-server.ts';
import { GrpcClient } from '../../src/proto/h2/grpc-client.ts';
import { CLIENT_PREFACE, FrameType, ErrorCode, Flags, SettingId, decodeFrames, decodeGoaway, encodeFrame, encodeSettings, encodeUInt32, type Frame } from '../../src/proto/h2/frame.ts';
import { HpackDecoder, encodeHeaderBlock } from '../../src/proto/h2/hpack.ts';
import { frameMessage } from '../../src/proto/h2/grpc-wire.ts';
import { GrpcStatus, type UnaryHandlers } from '../../src/proto/service.ts';
import { qmpPassthroughService, type QmpPassthroughMethods, type QmpExecuteRequest } from '../../src/proto/qmp.ts';
import { tempDir } from '../lib/tmp.ts';

const service = qmpPassthroughService();
type M = QmpPassthroughMethods;

/** Execute echoes; `command` picks a behaviour: sleep:<ms>, throw:<msg>, big:<bytes>, hang. */
function handlers(seen: { cancelled?: () => boolean }[] = []): UnaryHandlers<M> {
  return {
    Execute: async (req, ctx) => {
      seen.push(ctx);
      const [verb, arg = ''] = req.command.split(':');
      if (verb === 'sleep') await new Promise((r) => setTimeout(r, Number(arg)));
      if (verb === 'throw') throw new Error(arg);
      if (verb === 'hang') await new Promise((r) => setTimeout(r, 3000));
      const returnJson = verb === 'big' ? 'r'.repeat(Number(arg)) : req.argumentsJson;
      return { success: true, message: `${req.caller}|${req.argumentsJson.length}`, returnJson, errorClass: '', refused: false };
    },
  };
}

const req = (command: string, argumentsJson = '', caller = 'c'): QmpExecuteRequest => ({ command, argumentsJson, unsafe: false, caller, timeoutSeconds: 0 });
const MiB = 1024 * 1024;

async function rejects(p: Promise<unknown>): Promise<{ code: number; details: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; details: string };
  }
  throw new Error('expected a rejection');
}

async function ours(sock: string, seen?: { cancelled?: () => boolean }[]): Promise<GrpcServer> {
  const s = new GrpcServer();
  s.addUnaryService<M>(service, handlers(seen));
  await s.listen(sock);
  return s;
}

async function theirs(sock: string): Promise<grpc.Server> {
  const s = new grpc.Server();
  addUnaryService<M>(s, service, handlers());
  await listenUnix(s, sock);
  return s;
}

test('our server ↔ grpc-js client: calls, 1 MiB both ways, errors, unknown method, deadline, cancel, concurrency', async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  const seen: { cancelled?: () => boolean }[] = [];
  const server = await ours(sock, seen);
  const client = new UnaryClient<M>(service, sock, { timeoutMs: 5000 });
  try {
    const r = await client.call('Execute', req('echo', '{"a":1}', 'me'));
    assert.equal(r, { success: true, message: 'me|7', returnJson: '{"a":1}', errorClass: '', refused: false });

    const big = await client.call('Execute', req('big:1048576', 'x'.repeat(MiB)));
    assert.is(big.message, `c|${MiB}`);
    assert.is(big.returnJson.length, MiB);

    const failed = await rejects(client.call('Execute', req('throw:boom 100% ü\nline')));
    assert.is(failed.code, grpc.status.INTERNAL);
    assert.is(failed.details, 'boom 100% ü\nline');

    const raw = client.raw;
    const unknown = await rejects(new Promise((resolve, reject) => {
      raw.makeUnaryRequest('/qvirt.qmp.v1.QmpPassthrough/Nope', (x: Buffer) => x, (x: Buffer) => x, Buffer.alloc(0), (err, res) => (err ? reject(err) : resolve(res)));
    }));
    assert.is(unknown.code, grpc.status.UNIMPLEMENTED);

    const late = await rejects(client.call('Execute', req('sleep:1500'), { timeoutMs: 200 }));
    assert.is(late.code, grpc.status.DEADLINE_EXCEEDED);

    const abort = new AbortController();
    const before = seen.length;
    const cancelled = client.call('Execute', req('sleep:400'), { signal: abort.signal });
    await new Promise((r) => setTimeout(r, 100));
    abort.abort();
    assert.is((await rejects(cancelled)).code, grpc.status.CANCELLED);
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(seen[before]!.cancelled!(), 'the handler sees the cancellation');

    const many = await Promise.all(Array.from({ length: 200 }, (_, i) => client.call('Execute', req('echo', String(i)))));
    assert.equal(many.map((m) => m.returnJson), Array.from({ length: 200 }, (_, i) => String(i)));
  } finally {
    client.close();
    await server.shutdown(200);
    dir.cleanup();
  }
});

test('header blocks over CONTINUATION both ways: 30 KB of metadata to our server, a 30 KB status message from it', async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  const seen: { metadata?: ReadonlyMap<string, readonly string[]> }[] = [];
  const server = await ours(sock, seen as { cancelled?: () => boolean }[]);
  const client = new UnaryClient<M>(service, sock);
  try {
    // Not Huffman-friendly, so the block stays above the 16 KiB frame size.
    const big = Array.from({ length: 30_000 }, (_, i) => String.fromCharCode(0x21 + ((i * 7919) % 90))).join('');
    const md = new grpc.Metadata();
    md.set('x-big', big);
    const r = await new Promise<{ returnJson: string }>((resolve, reject) => {
      (client.raw as unknown as Record<string, (req: unknown, md: grpc.Metadata, cb: (e: unknown, r: unknown) => void) => void>).Execute!.call(client.raw, req('echo', 'md'), md, (e, res) => (e ? reject(e) : resolve(res as { returnJson: string })));
    });
    assert.is(r.returnJson, 'md');
    assert.equal((seen[0] as { metadata: ReadonlyMap<string, readonly string[]> }).metadata.get('x-big'), [big]);
    const failed = await rejects(client.call('Execute', req(`throw:${big.replace(/:/g, '')}`)));
    assert.is(failed.code, grpc.status.INTERNAL);
    assert.is(failed.details, big.replace(/:/g, ''));
  } finally {
    client.close();
    await server.shutdown(200);
    dir.cleanup();
  }
});

test('a request above 4 MiB: RESOURCE_EXHAUSTED before it is all sent, both ways, and the connection goes on', async () => {
  const dir = tempDir('qvh2');
  const ourSock = join(dir.path, 'ours.sock');
  const theirSock = join(dir.path, 'theirs.sock');
  const a = await ours(ourSock);
  const b = await theirs(theirSock);
  const jsClient = new UnaryClient<M>(service, ourSock);
  const ourClient = new GrpcClient<M>(service, theirSock);
  try {
    const huge = 'x'.repeat(5 * MiB);
    assert.is((await rejects(jsClient.call('Execute', req('echo', huge)))).code, grpc.status.RESOURCE_EXHAUSTED);
    assert.is((await jsClient.call('Execute', req('echo', 'next'))).returnJson, 'next');
    assert.is((await rejects(ourClient.call('Execute', req('echo', huge)))).code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.is((await ourClient.call('Execute', req('echo', 'next'))).returnJson, 'next');
  } finally {
    jsClient.close();
    ourClient.close();
    await a.shutdown(200);
    await shutdownServer(b, 200);
    dir.cleanup();
  }
});

test('our server: a short grpc-timeout ends the call with DEADLINE_EXCEEDED from the server', async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  const server = await ours(sock);
  const client = new GrpcClient<M>(service, sock);
  try {
    // Our client sends grpc-timeout and also keeps its own timer; the server's answer arrives first
    // when the client's timer is long: make the client's 300 ms and check the server's status text.
    const err = await rejects(client.call('Execute', req('sleep:2000'), { timeoutMs: 300 }));
    assert.is(err.code, GrpcStatus.DEADLINE_EXCEEDED);
  } finally {
    client.close();
    await server.shutdown(200);
    dir.cleanup();
  }
});

test('grpc-js server ↔ our client: calls, 1 MiB both ways, errors, unknown method, deadline, cancel, concurrency', async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  const server = await theirs(sock);
  const client = new GrpcClient<M>(service, sock, { timeoutMs: 5000 });
  try {
    await client.waitForReady(2000);
    const r = await client.call('Execute', req('echo', '{"a":1}', 'me'));
    assert.equal(r, { success: true, message: 'me|7', returnJson: '{"a":1}', errorClass: '', refused: false });

    const big = await client.call('Execute', req('big:1048576', 'x'.repeat(MiB)));
    assert.is(big.message, `c|${MiB}`);
    assert.is(big.returnJson.length, MiB);

    const failed = await rejects(client.call('Execute', req('throw:boom 100% ü\nline')));
    assert.is(failed.code, GrpcStatus.INTERNAL);
    assert.is(failed.details, 'boom 100% ü\nline');
    // A 30 KB status message: nghttp2 sends it as HEADERS + CONTINUATION.
    const long = Array.from({ length: 30_000 }, (_, i) => String.fromCharCode(0x3b + ((i * 7919) % 60))).join('');
    assert.is((await rejects(client.call('Execute', req(`throw:${long}`)))).details, long);

    const other = new GrpcClient<{ Nope: [Record<string, never>, Record<string, never>] }>(
      { fullName: 'qvirt.qmp.v1.QmpPassthrough', methods: { Nope: { ...service.methods.Execute!, path: '/qvirt.qmp.v1.QmpPassthrough/Nope' } } }, sock);
    try {
      assert.is((await rejects(other.call('Nope', {}))).code, GrpcStatus.UNIMPLEMENTED);
    } finally {
      other.close();
    }

    const late = await rejects(client.call('Execute', req('sleep:1500'), { timeoutMs: 200 }));
    assert.is(late.code, GrpcStatus.DEADLINE_EXCEEDED);

    const abort = new AbortController();
    const cancelled = client.call('Execute', req('sleep:400'), { signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    assert.is((await rejects(cancelled)).code, GrpcStatus.CANCELLED);

    const many = await Promise.all(Array.from({ length: 200 }, (_, i) => client.call('Execute', req('echo', String(i)))));
    assert.equal(many.map((m) => m.returnJson), Array.from({ length: 200 }, (_, i) => String(i)));
    // The connection is still good after all of that.
    assert.is((await client.call('Execute', req('echo', 'after'))).returnJson, 'after');
  } finally {
    client.close();
    await shutdownServer(server, 200);
    dir.cleanup();
  }
});

test("our client keeps to the server's MAX_CONCURRENT_STREAMS: 30 calls at once through 2 streams", async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  const server = new grpc.Server({ 'grpc.max_concurrent_streams': 2 });
  let inFlight = 0;
  let most = 0;
  addUnaryService<M>(server, service, {
    Execute: async (r) => {
      most = Math.max(most, ++inFlight);
      await new Promise((res) => setTimeout(res, 20));
      inFlight--;
      return { success: true, message: '', returnJson: r.argumentsJson, errorClass: '', refused: false };
    },
  });
  await listenUnix(server, sock);
  const client = new GrpcClient<M>(service, sock);
  try {
    const calls = Array.from({ length: 30 }, (_, i) => client.call('Execute', req('echo', String(i))));
    // One of them gives up while it waits for a stream; the others still go through.
    const abort = new AbortController();
    const given = client.call('Execute', req('echo', 'x'), { signal: abort.signal });
    abort.abort();
    assert.is((await rejects(given)).code, GrpcStatus.CANCELLED);
    assert.equal((await Promise.all(calls)).map((r) => r.returnJson), Array.from({ length: 30 }, (_, i) => String(i)));
    assert.is(most, 2);
  } finally {
    client.close();
    await shutdownServer(server, 200);
    dir.cleanup();
  }
});

test('our client: server gone → UNAVAILABLE, then it reconnects to the new server; waitForReady waits for it', async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  let server = await theirs(sock);
  const client = new GrpcClient<M>(service, sock, { timeoutMs: 3000 });
  try {
    assert.is((await client.call('Execute', req('echo', '1'))).returnJson, '1');
    server.forceShutdown();
    await new Promise((r) => setTimeout(r, 100));
    const gone = await rejects(client.call('Execute', req('echo', '2')));
    assert.is(gone.code, GrpcStatus.UNAVAILABLE);
    const ready = client.waitForReady(3000);
    await new Promise((r) => setTimeout(r, 200));
    server = await theirs(sock);
    await ready;
    assert.is((await client.call('Execute', req('echo', '3'))).returnJson, '3');
    // Our own server going away gracefully (GOAWAY) and coming back, too.
    await shutdownServer(server, 200);
    const ourServer = await ours(sock);
    try {
      assert.is((await client.call('Execute', req('echo', '4'))).returnJson, '4');
      await ourServer.shutdown(200);
      assert.is((await rejects(client.call('Execute', req('echo', '5')))).code, GrpcStatus.UNAVAILABLE);
    } finally {
      await ourServer.shutdown(0);
    }
    const missing = await rejects(new GrpcClient<M>(service, join(dir.path, 'none.sock')).waitForReady(150));
    assert.is(missing.code, GrpcStatus.DEADLINE_EXCEEDED);
  } finally {
    client.close();
    server.forceShutdown();
    dir.cleanup();
  }
});

/** Sends `bytes` to the server and collects what it answers until it closes the connection. */
function exchange(sock: string, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(sock, () => s.write(bytes));
    s.on('data', (c) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks)));
    setTimeout(() => { s.destroy(); reject(new Error('the server did not close the connection')); }, 3000).unref();
  });
}

/** A raw HTTP/2 peer on a socket: sends bytes, reads frames as they come. */
function rawPeer(sock: string) {
  const s = connect(sock);
  let buf = Buffer.alloc(0);
  const frames: Frame[] = [];
  let wake: (() => void) | null = null;
  s.on('data', (c: Buffer) => {
    const r = decodeFrames(Buffer.concat([buf, c]), 1 << 24);
    buf = Buffer.from(r.rest);
    frames.push(...r.frames);
    wake?.();
  });
  s.on('error', () => {});
  return {
    send: (b: Buffer) => s.write(b),
    /** The next frame matching `pred` (frames before it are dropped), within 3 s. */
    async next(pred: (f: Frame) => boolean): Promise<Frame> {
      const deadline = Date.now() + 3000;
      for (;;) {
        const i = frames.findIndex(pred);
        if (i >= 0) return frames.splice(0, i + 1)[i]!;
        if (Date.now() > deadline) throw new Error('no such frame');
        await new Promise<void>((r) => { wake = r; setTimeout(r, 50); });
      }
    },
    /** Every frame received so far matching `pred`, taken. */
    take(pred: (f: Frame) => boolean): Frame[] {
      const out = frames.filter(pred);
      for (const f of out) frames.splice(frames.indexOf(f), 1);
      return out;
    },
    close: () => s.destroy(),
  };
}

test('our server, frame by frame: SETTINGS and its ACK, PING ACK, DATA within a 100-byte window until WINDOW_UPDATE, trailers', async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  const server = await ours(sock);
  const peer = rawPeer(sock);
  try {
    peer.send(Buffer.concat([CLIENT_PREFACE, encodeFrame(FrameType.SETTINGS, 0, 0, encodeSettings([[SettingId.INITIAL_WINDOW_SIZE, 100]]))]));
    const first = await peer.next(() => true);
    assert.is(first.type, FrameType.SETTINGS, 'the server preface is a SETTINGS frame');
    await peer.next((f) => f.type === FrameType.SETTINGS && (f.flags & Flags.ACK) !== 0);
    peer.send(encodeFrame(FrameType.SETTINGS, Flags.ACK, 0));
    peer.send(encodeFrame(FrameType.PING, 0, 0, Buffer.from('12345678')));
    const pong = await peer.next((f) => f.type === FrameType.PING);
    assert.is(pong.flags & Flags.ACK, Flags.ACK);
    assert.is(pong.payload.toString(), '12345678');

    const headers = encodeHeaderBlock([[':method', 'POST'], [':scheme', 'http'], [':path', '/qvirt.qmp.v1.QmpPassthrough/Execute'], [':authority', 'x'], ['content-type', 'application/grpc'], ['te', 'trailers']]);
    peer.send(encodeFrame(FrameType.HEADERS, Flags.END_HEADERS, 1, headers));
    peer.send(encodeFrame(FrameType.DATA, Flags.END_STREAM, 1, frameMessage(service.methods.Execute!.request.encode(req('big:1000') as unknown as Record<string, unknown>))));
    const decoder = new HpackDecoder();
    const responseHeaders = await peer.next((f) => f.type === FrameType.HEADERS && f.streamId === 1);
    assert.equal(new Map(decoder.decode(responseHeaders.payload)).get(':status'), '200');
    await new Promise((r) => setTimeout(r, 200));
    const early = peer.take((f) => f.type === FrameType.DATA && f.streamId === 1);
    assert.is(early.reduce((n, f) => n + f.payload.length, 0), 100, 'exactly the stream window, no more');
    assert.is(peer.take((f) => f.type === FrameType.HEADERS).length, 0, 'no trailers before the data');
    peer.send(encodeFrame(FrameType.WINDOW_UPDATE, 0, 1, encodeUInt32(5000)));
    const trailers = await peer.next((f) => f.type === FrameType.HEADERS && f.streamId === 1);
    assert.is(trailers.flags & Flags.END_STREAM, Flags.END_STREAM);
    assert.equal(new Map(decoder.decode(trailers.payload)).get('grpc-status'), '0');
    // A RST_STREAM for a finished stream and a GOAWAY from the peer are taken quietly; the server ends the connection.
    peer.send(encodeFrame(FrameType.RST_STREAM, 0, 1, encodeUInt32(ErrorCode.CANCEL)));
    peer.send(encodeFrame(FrameType.GOAWAY, 0, 0, Buffer.from([0, 0, 0, 0, 0, 0, 0, 0])));
    await new Promise((r) => setTimeout(r, 100));
    assert.is(peer.take((f) => f.type === FrameType.GOAWAY).length, 0);
  } finally {
    peer.close();
    await server.shutdown(200);
    dir.cleanup();
  }
});

test('our server: malformed bytes end that connection with GOAWAY; the server goes on serving', async () => {
  const dir = tempDir('qvh2');
  const sock = join(dir.path, 's.sock');
  const server = await ours(sock);
  const client = new UnaryClient<M>(service, sock);
  try {
    const goaway = (answer: Buffer) => {
      const frames = decodeFrames(answer, 1 << 24).frames;
      const g = frames.find((f) => f.type === FrameType.GOAWAY);
      assert.ok(g, `a GOAWAY among ${frames.map((f) => f.type).join(',')}`);
      return decodeGoaway(g!.payload).code;
    };
    assert.is(goaway(await exchange(sock, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))), ErrorCode.PROTOCOL_ERROR);
    const settings = encodeFrame(FrameType.SETTINGS, 0, 0, encodeSettings([]));
    // A frame larger than the maximum frame size.
    const huge = Buffer.alloc(9); huge.writeUIntBE(1 << 20, 0, 3); huge[3] = FrameType.DATA; huge.writeUInt32BE(1, 5);
    assert.is(goaway(await exchange(sock, Buffer.concat([CLIENT_PREFACE, settings, huge]))), ErrorCode.FRAME_SIZE_ERROR);
    // Garbage HPACK (index 0x7f+: beyond every table).
    const headers = encodeFrame(FrameType.HEADERS, 0x4 | 0x1, 1, Buffer.from([0xff, 0xff, 0xff, 0x7f]));
    assert.is(goaway(await exchange(sock, Buffer.concat([CLIENT_PREFACE, settings, headers]))), ErrorCode.COMPRESSION_ERROR);
    // A frame on stream 0 that must not be there, and random bytes after the preface.
    assert.is(goaway(await exchange(sock, Buffer.concat([CLIENT_PREFACE, settings, encodeFrame(FrameType.DATA, 0, 0, Buffer.from('x'))]))), ErrorCode.PROTOCOL_ERROR);
    // A header block that never ends: CONTINUATIONs past 1 MiB.
    const open = encodeFrame(FrameType.HEADERS, 0, 1, Buffer.from([0x83]));
    const cont = encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(16_384, 0x83));
    assert.is(goaway(await exchange(sock, Buffer.concat([CLIENT_PREFACE, settings, open, ...Array(70).fill(cont)]))), ErrorCode.ENHANCE_YOUR_CALM);
    const noise = Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 97 + 13) & 0xff));
    assert.ok(goaway(await exchange(sock, Buffer.concat([CLIENT_PREFACE, noise]))) > 0);
    assert.is((await client.call('Execute', req('echo', 'still'))).returnJson, 'still');
  } finally {
    client.close();
    await server.shutdown(200);
    dir.cleanup();
  }
});

test.run();
