// QmpClient against a scripted QMP server, for the failures a real QEMU cannot be made to produce
// on demand: garbage, unknown ids, disconnects mid-command, huge replies, precise event ordering,
// timeouts with late replies, aborts, overflowing subscriptions.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  QmpClient, QmpDisconnectedError, QmpError, QmpEventOverflowError, QmpProtocolError, QmpTimeoutError,
  type QmpClientOptions, type QmpEvent,
} from '../../qmp/index.ts';
import { FakeQmpServer, type FakePeer } from './fake-peer.ts';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (e) => { unhandled.push(e); });
process.on('uncaughtException', (e) => { unhandled.push(e); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Logged = { level: string; msg: string; fields?: Record<string, unknown> };

async function withPeer(fn: (c: QmpClient, peer: FakePeer, logs: Logged[], server: FakeQmpServer) => Promise<void>, opts: QmpClientOptions = {}, caps = ['oob']): Promise<void> {
  const server = await FakeQmpServer.start();
  let c: QmpClient | undefined;
  const logs: Logged[] = [];
  try {
    const peerP = server.accept();
    const clientP = QmpClient.connect(server.path, { log: (level, msg, fields) => logs.push({ level, msg, ...(fields ? { fields } : {}) }), ...opts });
    const peer = await peerP;
    await peer.negotiate(caps);
    c = await clientP;
    await fn(c, peer, logs, server);
  } finally {
    await c?.close();
    await server.close();
  }
}

async function rejects<E>(p: Promise<unknown>, cls: abstract new (...a: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof cls)) throw new Error(`expected ${cls.name}, got ${String(e)}`);
    return e;
  }
  throw new Error(`expected ${cls.name}, but it resolved`);
}

test('negotiation enables oob only when offered; ids are increasing strings', async () => {
  await withPeer(async (c, peer) => {
    assert.equal(c.capabilities, []);
    assert.is(c.oob, false);
    const caps = peer.received[0]!;
    assert.is(caps.arguments, undefined);
    const p1 = c.execute('a');
    const p2 = c.execute('b');
    const a = await peer.next();
    const b = await peer.next();
    assert.type(a.id, 'string');
    assert.type(b.id, 'string');
    assert.ok(Number((b.id as string).slice(1)) > Number((a.id as string).slice(1)));
    peer.reply(b.id, 2);
    peer.reply(a.id, 1);
    assert.is(await p1, 1);
    assert.is(await p2, 2);
    await rejects(c.executeOob('yank'), QmpError);
  }, {}, []);
  await withPeer(async (c, peer) => {
    assert.equal(peer.received[0]!.arguments, { enable: ['oob'] });
    const p = c.executeOob('migrate-pause');
    const cmd = await peer.next();
    assert.is(cmd['exec-oob'], 'migrate-pause');
    assert.is(cmd.execute, undefined);
    peer.reply(cmd.id);
    assert.equal(await p, {});
  });
});

test('disconnect mid-command rejects it with QmpDisconnectedError naming the command', async () => {
  await withPeer(async (c, peer) => {
    const p = c.execute('blockdev-add', { 'node-name': 'x' });
    await peer.next();
    peer.socket.destroy();
    const err = await rejects(p, QmpDisconnectedError);
    assert.is(err.command, 'blockdev-add');
    assert.match(err.message, /blockdev-add/);
    const reason = await c.closed;
    assert.instance(reason, QmpDisconnectedError);
    assert.is(c.state, 'closed');
    await rejects(c.execute('query-status'), QmpDisconnectedError);
    await rejects(c.waitEvent('STOP'), QmpDisconnectedError);
  });
});

test('garbage bytes from the server are a protocol error that closes the connection (no hang)', async () => {
  await withPeer(async (c, peer) => {
    const p = c.execute('query-status');
    await peer.next();
    peer.sendRaw('{"return": {}, "id": \r\ngarbage\r\n');
    const err = await rejects(p, QmpDisconnectedError);
    assert.instance(err.cause, QmpProtocolError);
    assert.instance(await c.closed, QmpProtocolError);
  });
  // Valid JSON of the wrong shape is a protocol error too.
  await withPeer(async (c, peer) => {
    peer.sendRaw('[1,2]\n');
    assert.instance(await c.closed, QmpProtocolError);
  });
  await withPeer(async (c, peer) => {
    peer.send({ hello: 1 });
    assert.match(String(await c.closed), /none of greeting/);
  });
});

test('a reply to an unknown id is dropped (and logged); the real reply still resolves', async () => {
  await withPeer(async (c, peer, logs) => {
    const p = c.execute('query-name');
    const cmd = await peer.next();
    peer.reply('nobody', { name: 'wrong' });
    peer.reply(42, { name: 'wrong' });
    peer.reply(cmd.id, { name: 'right' });
    assert.equal(await p, { name: 'right' });
    assert.is(logs.filter((l) => l.msg.includes('unknown id')).length, 2);
    assert.is(c.state, 'ready');
  });
});

test('an id-less error with nothing id-less pending is a protocol error; pending commands are rejected', async () => {
  await withPeer(async (c, peer) => {
    const p = c.execute('query-status');
    await peer.next();
    peer.error(undefined, 'GenericError', 'JSON parse error, invalid keyword');
    const err = await rejects(p, QmpDisconnectedError);
    assert.instance(err.cause, QmpProtocolError);
    assert.match(String(err.cause), /id-less/);
  });
});

test('huge replies: 9 MiB in small chunks arrives whole; over 10 MiB is refused', async () => {
  await withPeer(async (c, peer) => {
    const big = 'x'.repeat(9 * 1024 * 1024);
    const p = c.execute<{ blob: string }>('query-qmp-schema');
    const cmd = await peer.next();
    const line = Buffer.from(JSON.stringify({ return: { blob: big }, id: cmd.id }) + '\r\n');
    for (let i = 0; i < line.length; i += 65536) peer.sendRaw(line.subarray(i, i + 65536));
    const r = await p;
    assert.is(r.blob.length, big.length);
    const p2 = c.execute('query-qmp-schema');
    const cmd2 = await peer.next();
    peer.sendRaw(JSON.stringify({ return: { blob: 'y'.repeat(11 * 1024 * 1024) }, id: cmd2.id }) + '\r\n');
    const err = await rejects(p2, QmpDisconnectedError);
    assert.match(String(err.cause), /exceeds 10485760/);
  });
});

test('events interleaved between replies reach subscribers in order; replies are unaffected', async () => {
  await withPeer(async (c, peer) => {
    const sub = c.subscribe();
    const stops = c.subscribe({ names: 'STOP' });
    const odd = c.subscribe({ filter: (ev) => (ev.data.n as number) % 2 === 1 });
    const ps = [c.execute('a'), c.execute('b'), c.execute('c')];
    const cmds = [await peer.next(), await peer.next(), await peer.next()];
    peer.event('STOP', { n: 0 });
    peer.reply(cmds[0]!.id, 'A');
    peer.event('RESUME', { n: 1 });
    peer.event('STOP', { n: 2 });
    peer.reply(cmds[1]!.id, 'B');
    peer.event('RESUME', { n: 3 });
    peer.reply(cmds[2]!.id, 'C');
    assert.equal(await Promise.all(ps), ['A', 'B', 'C']);
    const got: QmpEvent[] = [];
    for await (const ev of sub) { got.push(ev); if (got.length === 4) break; }
    assert.equal(got.map((e) => `${e.event}${e.data.n}`), ['STOP0', 'RESUME1', 'STOP2', 'RESUME3']);
    assert.equal(got.map((e) => e.seq), [1, 2, 3, 4]);
    assert.is(stops.pending, 2);
    assert.is(odd.pending, 2);
    assert.is(sub.closed, true, 'break closed the subscription');
    stops.close();
    odd.close();
  });
});

test('an event that arrives before the reply of the command that caused it is not missed', async () => {
  await withPeer(async (c, peer) => {
    // executeThenEvent: armed before sending.
    const p = c.executeThenEvent('device_del', { id: 'd1' }, 'DEVICE_DELETED', { filter: (ev) => ev.data.device === 'd1', timeout: 2000 });
    const cmd = await peer.next();
    peer.event('DEVICE_DELETED', { path: '/machine/peripheral/d1/virtio-backend' });
    peer.event('DEVICE_DELETED', { device: 'd1', path: '/machine/peripheral/d1' });
    peer.reply(cmd.id);
    const { result, event } = await p;
    assert.equal(result, {});
    assert.is(event.data.device, 'd1');

    // since-cursor: take it before the command, wait after the reply.
    const cursor = c.eventCursor();
    const q = c.execute('quit');
    const cmd2 = await peer.next();
    peer.event('SHUTDOWN', { guest: false, reason: 'host-qmp-quit' });
    peer.reply(cmd2.id);
    await q;
    const ev = await c.waitEvent('SHUTDOWN', { since: cursor, timeout: 100 });
    assert.is(ev.data.reason, 'host-qmp-quit');
    // Without the cursor the event is already gone: the wait times out.
    await rejects(c.waitEvent('SHUTDOWN', { timeout: 50 }), QmpTimeoutError);
  });
});

test('executeThenEvent: a failing command rejects with QmpError and cancels the event wait', async () => {
  await withPeer(async (c, peer) => {
    const p = c.executeThenEvent('device_del', { id: 'nope' }, 'DEVICE_DELETED', { timeout: 2000 });
    const cmd = await peer.next();
    peer.error(cmd.id, 'DeviceNotFound', "Device 'nope' not found");
    const err = await rejects(p, QmpError);
    assert.is(err.class, 'DeviceNotFound');
    await sleep(10);
    assert.is(c.state, 'ready');
  });
});

test('timeout: the caller is released, 0xFF + fresh-id probe resync, the late reply is discarded, traffic resumes', async () => {
  await withPeer(async (c, peer, logs) => {
    const slow = c.execute('blockdev-add', {}, { timeout: 60 });
    const cmd = await peer.next();
    const t0 = Date.now();
    const err = await rejects(slow, QmpTimeoutError);
    assert.is(err.command, 'blockdev-add');
    assert.ok(Date.now() - t0 < 1000);
    assert.is(c.state, 'resyncing');
    // Commands issued while resyncing are held, not written.
    const held = c.execute('query-name');
    const probe = await peer.next();
    assert.is(probe.execute, 'query-status');
    assert.is(peer.resets, 1, 'one 0xFF was written before the probe');
    assert.is(peer.received.length, 3, 'held command not written yet');
    // QEMU answers in order: the slow command, the 0xFF parse error, the probe.
    peer.reply(cmd.id, 'late');
    peer.error(undefined, 'GenericError', "JSON parse error, stray '\uFFFD'");
    peer.reply(probe.id, { status: 'running' });
    const next = await peer.next();
    assert.is(next.execute, 'query-name');
    assert.ok(Number((next.id as string).slice(1)) > Number((probe.id as string).slice(1)), 'fresh id');
    peer.reply(next.id, { name: 'vm' });
    assert.equal(await held, { name: 'vm' });
    assert.is(c.state, 'ready');
    assert.is(c.inFlight, 0);
    assert.ok(logs.some((l) => l.msg.includes('late reply discarded')));
  });
});

test('timeout: a probe that is never answered tears the connection down', async () => {
  await withPeer(async (c, peer) => {
    const slow = c.execute('blockdev-add', {}, { timeout: 30 });
    await peer.next();
    await rejects(slow, QmpTimeoutError);
    const other = c.execute('query-name');
    const reason = await c.closed;
    assert.instance(reason, QmpDisconnectedError);
    assert.match(String(reason), /resync/);
    const err = await rejects(other, QmpDisconnectedError);
    assert.is(err.command, 'query-name');
  }, { resyncTimeout: 80 });
});

test('timeout: replies still arriving while resyncing count as progress; a slow but healthy QEMU is not torn down', async () => {
  await withPeer(async (c, peer) => {
    const a = c.execute('blockdev-add', {}, { timeout: 20 });
    const b = c.execute('dump-guest-memory', {}, { timeout: 0 });
    const ca = await peer.next();
    const cb = await peer.next();
    await rejects(a, QmpTimeoutError);
    const probe = await peer.next();
    // Each reply comes 60 ms after the previous one; the probe deadline is 100 ms, the whole sequence 180 ms.
    await sleep(60);
    peer.reply(ca.id);
    await sleep(60);
    peer.reply(cb.id, 'dumped');
    assert.is(await b, 'dumped');
    await sleep(60);
    peer.error(undefined, 'GenericError', 'JSON parse error');
    peer.reply(probe.id);
    await sleep(10);
    assert.is(c.state, 'ready');
  }, { resyncTimeout: 100 });
});

test('timeout: a command QEMU lost (answered after the probe) is freed, not leaked', async () => {
  await withPeer(async (c, peer) => {
    const a = c.execute('a', {}, { timeout: 30 });
    const b = c.execute('b', {}, { timeout: 0 });
    const ca = await peer.next();
    await peer.next();
    await rejects(a, QmpTimeoutError);
    const probe = await peer.next();
    peer.reply(ca.id);
    peer.error(undefined, 'GenericError', 'JSON parse error');
    peer.reply(probe.id); // QEMU never answered b: it was lost
    const err = await rejects(b, QmpProtocolError);
    assert.match(err.message, /'b'/);
    assert.is(c.inFlight, 0);
    assert.is(c.state, 'ready');
  });
});

test('abort: rejects with the signal reason at once; the late reply is consumed; no resync', async () => {
  await withPeer(async (c, peer, logs) => {
    const ac = new AbortController();
    const p = c.execute('migrate', { uri: 'tcp:x' }, { signal: ac.signal });
    const cmd = await peer.next();
    ac.abort(new Error('user cancelled'));
    try { await p; assert.unreachable(); } catch (e) { assert.is((e as Error).message, 'user cancelled'); }
    assert.is(c.inFlight, 1, 'id slot kept until the late reply');
    peer.reply(cmd.id, 'late');
    const p2 = c.execute('query-status');
    const cmd2 = await peer.next();
    peer.reply(cmd2.id, 'ok');
    assert.is(await p2, 'ok');
    assert.is(c.inFlight, 0);
    assert.is(peer.resets, 0);
    assert.ok(logs.some((l) => l.msg.includes('late reply discarded')));
    // An already-aborted signal never sends anything.
    const before = peer.received.length;
    await rejects(c.execute('x', {}, { signal: AbortSignal.abort(new QmpTimeoutError('x', 1)) }), QmpTimeoutError);
    await sleep(10);
    assert.is(peer.received.length, before);
    // Aborting a wait.
    const ac2 = new AbortController();
    const w = c.waitEvent('STOP', { signal: ac2.signal });
    ac2.abort();
    try { await w; assert.unreachable(); } catch (e) { assert.is((e as Error).name, 'AbortError'); }
  });
});

test('subscription overflow is reported: error mode throws after the buffered events, drop-oldest counts', async () => {
  const overflows: unknown[] = [];
  await withPeer(async (c, peer) => {
    const strict = c.subscribe({ names: 'BALLOON_CHANGE', bufferSize: 4 });
    const lossy = c.subscribe({ names: 'BALLOON_CHANGE', bufferSize: 4, overflow: 'drop-oldest' });
    for (let i = 0; i < 10; i++) peer.event('BALLOON_CHANGE', { actual: i });
    // Command replies are not blocked by the unread subscriptions.
    const p = c.execute('query-balloon');
    const cmd = await peer.next();
    peer.reply(cmd.id, { actual: 9 });
    assert.equal(await p, { actual: 9 });
    const got: number[] = [];
    try {
      for await (const ev of strict) got.push(ev.data.actual as number);
      assert.unreachable('no overflow error');
    } catch (e) {
      assert.instance(e, QmpEventOverflowError);
      assert.is((e as QmpEventOverflowError).dropped, 1);
    }
    assert.equal(got, [0, 1, 2, 3]);
    assert.is(strict.closed, true);
    assert.is(lossy.dropped, 6);
    const latest: number[] = [];
    for (let i = 0; i < 4; i++) latest.push((await lossy.next()).value!.data.actual as number);
    assert.equal(latest, [6, 7, 8, 9]);
    lossy.close();
    assert.is((await lossy.next()).done, true);
    assert.ok(overflows.length >= 2);
  }, { hooks: { onEventOverflow: (i) => overflows.push(i) } });
});

test('since-cursor older than the event history is refused, never silently incomplete', async () => {
  await withPeer(async (c, peer) => {
    const cursor = c.eventCursor();
    for (let i = 0; i < 5; i++) peer.event('RTC_CHANGE', { offset: i });
    const p = c.execute('x');
    const cmd = await peer.next();
    peer.reply(cmd.id);
    await p;
    await rejects(c.waitEvent('STOP', { since: cursor }), QmpEventOverflowError);
    const ev = await c.waitEvent('RTC_CHANGE', { since: c.eventCursor() - 3, filter: (e) => e.data.offset === 4 });
    assert.is(ev.seq, 5);
    await rejects(c.waitEvent('STOP', { since: 99 }), RangeError);
  }, { eventHistory: 3 });
});

test('at most maxInFlight in-band commands are written before replies; OOB bypasses the cap', async () => {
  await withPeer(async (c, peer) => {
    const ps = Array.from({ length: 10 }, (_, i) => c.execute('q', { i }));
    await sleep(30);
    assert.is(peer.received.length - 1, 3);
    const oob = c.executeOob('yank');
    await sleep(20);
    assert.is(peer.received.length - 1, 4);
    let outstanding = 0;
    let max = 0;
    peer.handle((cmd) => {
      if (cmd['exec-oob']) { peer.reply(cmd.id); return; }
      outstanding++;
      max = Math.max(max, outstanding);
      setTimeout(() => { outstanding--; peer.reply(cmd.id, cmd.arguments!.i); }, 1);
    });
    assert.equal(await Promise.all(ps), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await oob;
    assert.ok(max <= 3, `max outstanding ${max}`);
  }, { maxInFlight: 3 });
});

test('close() rejects outstanding commands with their names and ends subscriptions; nothing unhandled', async () => {
  await withPeer(async (c, peer) => {
    const sub = c.subscribe();
    const p = c.execute('device_add', { driver: 'x' });
    await peer.next();
    let closeArg: unknown = 'not emitted';
    c.on('close', (e) => { closeArg = e; });
    const rejected = rejects(p, QmpDisconnectedError);
    await c.close();
    const err = await rejected;
    assert.is(err.command, 'device_add');
    assert.is((await sub.next()).done, true);
    assert.is(closeArg, undefined);
    assert.is(await c.closed, undefined);
  });
});

test('EOF after SHUTDOWN is an expected close; EOF without it is reported', async () => {
  await withPeer(async (c, peer) => {
    peer.event('SHUTDOWN', { guest: true, reason: 'guest-shutdown' });
    await c.waitEvent('SHUTDOWN', { since: 0 });
    peer.socket.end();
    assert.is(await c.closed, undefined);
  });
  await withPeer(async (c, peer) => {
    peer.socket.end();
    assert.match(String(await c.closed), /QEMU closed the connection/);
  });
});

test('a throwing event listener or filter does not break the reader', async () => {
  await withPeer(async (c, peer, logs) => {
    c.on('event', () => { throw new Error('listener bug'); });
    const bad = c.subscribe({ filter: () => { throw new Error('filter bug'); } });
    const w = c.waitEvent('STOP', { filter: () => { throw new Error('wait filter bug'); } });
    peer.event('STOP');
    try { await w; assert.unreachable(); } catch (e) { assert.is((e as Error).message, 'wait filter bug'); }
    try { await bad.next(); assert.unreachable(); } catch (e) { assert.is((e as Error).message, 'filter bug'); }
    const p = c.execute('query-status');
    const cmd = await peer.next();
    peer.reply(cmd.id, 'fine');
    assert.is(await p, 'fine');
    assert.ok(logs.some((l) => l.level === 'error' && l.msg.includes('listener threw')));
  });
});

test('handshake failures: no greeting in time, a non-greeting first message, a refused capabilities', async () => {
  const server = await FakeQmpServer.start();
  try {
    const peerP = server.accept();
    const t = await rejects(QmpClient.connect(server.path, { timeout: 80 }), QmpTimeoutError);
    assert.is(t.command, '(greeting)');
    await peerP;
    const peer2P = server.accept();
    const c2 = QmpClient.connect(server.path, { timeout: 2000 });
    const peer2 = await peer2P;
    peer2.send({ QMP: { version: { qemu: { major: 7 } }, capabilities: [] } });
    const e2 = await rejects(c2, QmpProtocolError);
    assert.match(e2.message, /QMP\.version\.qemu\.minor/);
    const peer3P = server.accept();
    const c3 = QmpClient.connect(server.path, { timeout: 2000 });
    const peer3 = await peer3P;
    peer3.send({ QMP: { version: { qemu: { major: 7, minor: 2, micro: 0 }, package: '' }, capabilities: [] } });
    const caps = await peer3.next();
    peer3.error(caps.id, 'CommandNotFound', 'Capabilities negotiation is already complete, command ignored');
    const e3 = await rejects(c3, QmpError);
    assert.is(e3.command, 'qmp_capabilities');
  } finally {
    await server.close();
  }
  await rejects(QmpClient.connect('/tmp/qmp-no-such-dir/x.sock', { timeout: 500 }), QmpDisconnectedError);
  const t0 = Date.now();
  await rejects(QmpClient.connect('/tmp/qmp-no-such-dir/x.sock', { timeout: 150, waitForServer: true }), QmpDisconnectedError);
  assert.ok(Date.now() - t0 >= 100, 'retried until the deadline');
});

test('a second greeting on an established connection is a protocol error', async () => {
  await withPeer(async (c, peer) => {
    peer.send({ QMP: { version: { qemu: { major: 7, minor: 2, micro: 0 }, package: '' }, capabilities: [] } });
    assert.instance(await c.closed, QmpProtocolError);
  });
});

test('no unhandled rejection or exception happened', () => {
  assert.equal(unhandled.map(String), []);
});

test.run();
