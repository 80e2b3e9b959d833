// QmpClient against a real QEMU 7.2 (`-machine none`, TCG), over a unix socket path and over a
// spawn-time socketpair.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QmpClient, QmpError, QmpDisconnectedError, QmpTimeoutError, type QmpClientOptions, type QmpEvent } from '../../qmp/index.ts';
import { spawnQemu, type TestQemu } from './qemu.ts';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (e) => { unhandled.push(e); });
process.on('uncaughtException', (e) => { unhandled.push(e); });

/**
 * The client's reply deadline here: generous, as these tests assert the protocol, not QEMU's speed —
 * in a loaded CI run (load average 30+ on 2 cores) one QEMU once took over 10 s to answer
 * qmp_capabilities.
 */
const REPLY_MS = 30_000;

async function withQemu(mode: 'socket' | 'socketpair', fn: (c: QmpClient, q: TestQemu) => Promise<void>, opts: QmpClientOptions = {}): Promise<void> {
  const q = spawnQemu({ mode });
  let c: QmpClient | undefined;
  try {
    if (mode === 'socket') {
      c = await QmpClient.connect(q.socketPath, { timeout: REPLY_MS, waitForServer: true, ...opts });
    } else {
      c = await QmpClient.adopt(q.stream, { timeout: REPLY_MS, ...opts });
    }
    await fn(c, q);
  } finally {
    await c?.close();
    await q.stop();
  }
}

for (const mode of ['socket', 'socketpair'] as const) {
  test(`${mode}: greeting carries QEMU's version and oob is negotiated`, async () => {
    await withQemu(mode, async (c) => {
      assert.is(c.greeting.version.qemu.major, 7);
      assert.is(c.greeting.version.qemu.minor, 2);
      assert.type(c.greeting.version.qemu.micro, 'number');
      assert.type(c.greeting.version.package, 'string');
      assert.equal(c.greeting.capabilities, ['oob']);
      assert.equal(c.capabilities, ['oob']);
      assert.ok(c.oob);
      assert.is(c.state, 'ready');
    });
  });

  test(`${mode}: query-status, then stop/cont produce STOP and RESUME`, async () => {
    await withQemu(mode, async (c) => {
      const st = await c.execute<{ status: string; running: boolean }>('query-status');
      assert.is(st.status, 'running');
      assert.is(st.running, true);
      const seen: string[] = [];
      c.on('event', (ev: QmpEvent) => seen.push(ev.event));
      const sub = c.subscribe({ names: ['STOP', 'RESUME'] });
      const { result, event } = await c.executeThenEvent('stop', undefined, 'STOP', { timeout: REPLY_MS });
      assert.equal(result, {});
      assert.is(event.event, 'STOP');
      assert.type(event.timestamp.seconds, 'number');
      assert.is((await c.execute<{ status: string }>('query-status')).status, 'paused');
      const cursor = c.eventCursor();
      await c.execute('cont');
      const resume = await c.waitEvent('RESUME', { since: cursor, timeout: REPLY_MS });
      assert.ok(resume.seq > cursor);
      const it = sub[Symbol.asyncIterator]();
      assert.is((await it.next()).value?.event, 'STOP');
      assert.is((await it.next()).value?.event, 'RESUME');
      sub.close();
      assert.equal(seen, ['STOP', 'RESUME']);
    });
  });

  test(`${mode}: an error reply is a QmpError with QEMU's class, desc and the command`, async () => {
    await withQemu(mode, async (c) => {
      try {
        await c.execute('device_del', { id: 'nope' });
        assert.unreachable('device_del of a missing device succeeded');
      } catch (e) {
        assert.instance(e, QmpError);
        const err = e as QmpError;
        assert.is(err.class, 'DeviceNotFound');
        assert.is(err.desc, "Device 'nope' not found");
        assert.is(err.command, 'device_del');
        assert.match(err.message, /device_del.*DeviceNotFound/);
      }
      try {
        await c.execute('query-status', { bogus: 1 });
        assert.unreachable();
      } catch (e) {
        assert.is((e as QmpError).class, 'GenericError');
        assert.match((e as QmpError).desc, /bogus/);
      }
      try {
        await c.execute('no-such-command');
        assert.unreachable();
      } catch (e) {
        assert.is((e as QmpError).class, 'CommandNotFound');
      }
      // The connection is still fine.
      assert.is((await c.execute<{ status: string }>('query-status')).status, 'running');
    });
  });

  test(`${mode}: quit closes cleanly, SHUTDOWN host-qmp-quit is seen, QEMU exits 0, nothing unhandled`, async () => {
    await withQemu(mode, async (c, q) => {
      const cursor = c.eventCursor();
      let closeArg: unknown = 'not emitted';
      c.on('close', (err) => { closeArg = err; });
      await c.quit();
      assert.is(await c.closed, undefined);
      assert.is(closeArg, undefined);
      const shutdown = await c.waitEvent('SHUTDOWN', { since: cursor });
      assert.equal(shutdown.data, { guest: false, reason: 'host-qmp-quit' });
      assert.equal(await q.exited, { code: 0, signal: null });
      try {
        await c.execute('query-status');
        assert.unreachable();
      } catch (e) {
        assert.instance(e, QmpDisconnectedError);
        assert.match((e as Error).message, /query-status/);
      }
    });
  });
}

test('many commands in flight come back to their callers', async () => {
  await withQemu('socketpair', async (c) => {
    const names = ['query-status', 'query-name', 'query-version', 'query-uuid', 'query-kvm', 'query-commands'];
    const all = await Promise.all(Array.from({ length: 60 }, (_, i) => c.execute<Record<string, unknown> | unknown[]>(names[i % names.length]!)));
    all.forEach((r, i) => {
      const n = names[i % names.length];
      if (n === 'query-status') assert.ok('status' in (r as object));
      if (n === 'query-version') assert.ok('qemu' in (r as object));
      if (n === 'query-uuid') assert.ok('UUID' in (r as object));
      if (n === 'query-commands') assert.ok(Array.isArray(r));
    });
  });
});

test('exec-oob reaches QEMU (query-yank allows OOB in 7.2); non-OOB commands are refused by QEMU', async () => {
  await withQemu('socket', async (c) => {
    const yank = await c.executeOob<unknown[]>('query-yank');
    assert.ok(Array.isArray(yank));
    try {
      await c.executeOob('query-status');
      assert.unreachable();
    } catch (e) {
      assert.instance(e, QmpError);
      assert.match((e as QmpError).desc, /does not support OOB/);
    }
  });
});

test('a QEMU killed under a pending command rejects it with the command named', async () => {
  await withQemu('socketpair', async (c, q) => {
    const stopped = c.executeThenEvent('stop', undefined, 'NEVER', { timeout: 10_000 });
    q.child.kill('SIGKILL');
    try {
      await stopped;
      assert.unreachable();
    } catch (e) {
      assert.instance(e, QmpDisconnectedError);
    }
    const reason = await c.closed;
    assert.instance(reason, QmpDisconnectedError);
  });
});

test('reverse connection: QEMU dials a socket we listen on, the accepted stream is adopted', async () => {
  const { createServer } = await import('node:net');
  const { tempDir } = await import('../lib/tmp.ts');
  const dir = tempDir('qmpr');
  const path = `${dir.path}/qmp.sock`;
  const server = createServer();
  await new Promise<void>((r) => server.listen(path, () => r()));
  const accepted = new Promise<import('node:net').Socket>((r) => server.once('connection', r));
  const q = spawnQemu({ mode: 'socket', args: ['-machine', 'none', '-accel', 'tcg', '-nodefaults', '-display', 'none', '-chardev', `socket,id=rev,path=${path}`, '-mon', 'chardev=rev,mode=control'] });
  let c: QmpClient | undefined;
  try {
    c = await QmpClient.adopt(await accepted);
    assert.is((await c.execute<{ status: string }>('query-status')).status, 'running');
    await c.quit();
    assert.equal(await q.exited, { code: 0, signal: null });
  } finally {
    await c?.close();
    await q.stop();
    await new Promise<void>((r) => server.close(() => r()));
    dir.cleanup();
  }
});

test('real QEMU: a timed-out command → 0xFF + probe resync; the late reply and the parse error are consumed; traffic resumes', async () => {
  const logs: string[] = [];
  await withQemu('socketpair', async (c) => {
    // query-qmp-schema (~180 KiB) takes QEMU a few ms: a 1 ms timeout expires before its reply.
    let timedOut = 0;
    for (let i = 0; i < 20 && timedOut === 0; i++) {
      try {
        await c.execute('query-qmp-schema', undefined, { timeout: 1 });
      } catch (e) {
        assert.instance(e, QmpTimeoutError);
        timedOut++;
      }
    }
    assert.is(timedOut, 1, 'a command timed out');
    // Issued while resyncing: held, then sent once the probe's reply proves the stream is in sync.
    const results = await Promise.all(Array.from({ length: 20 }, () => c.execute<{ status: string }>('query-status')));
    assert.ok(results.every((r) => r.status === 'running'));
    assert.is(c.state, 'ready');
    assert.is(c.inFlight, 0, 'the late reply freed its slot');
    for (const msg of ['resynchronising', 'late reply discarded', 'parser reset acknowledged', 'resynchronised']) {
      assert.ok(logs.some((l) => l.includes(msg)), `logged '${msg}': ${logs.join(' | ')}`);
    }
  }, { log: (_level, msg) => logs.push(msg) });
});

test('no unhandled rejection or exception happened', () => {
  assert.equal(unhandled.map(String), []);
});

test.run();
