// Stress: 10 000 commands through QmpClient against a fake QEMU that follows QMP's ordering rules
// (in-band replies in order with random delays, exec-oob replies overtaking them, 0xFF answered by
// an in-order id-less parse error, events interleaved at random), with short timeouts on some
// commands and connections killed mid-command. Every command must end with its own answer:
// no reply lost, none delivered to the wrong caller, events never reordered or duplicated.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { QmpClient, QmpDisconnectedError, QmpError, QmpTimeoutError, QmpProtocolError, type QmpEvent } from '../../qmp/index.ts';
import { tempDir } from '../lib/tmp.ts';
import { GREETING } from './fake-peer.ts';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (e) => { unhandled.push(e); });

// Deterministic randomness so a failure can be replayed.
let seed = Number(process.env.QMP_STRESS_SEED ?? 20261121);
const rand = (): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

type Item = { kind: 'cmd'; id: unknown; execute: string; n: number } | { kind: 'ff' };

interface ConnStats { eventsSent: number; repliesSent: number }

/** A fake QEMU monitor. `dieAfter` replies into each connection, it drops the connection mid-command. */
function serveConnection(sock: Socket, stats: ConnStats, dieAfter: number): void {
  sock.on('error', () => {});
  const send = (m: unknown): void => { if (!sock.destroyed) sock.write(JSON.stringify(m) + '\r\n'); };
  let negotiated = false;
  const fifo: Item[] = [];
  let busy = false;
  let eventK = 0;
  let pendingLine = '';
  const maybeEvent = (): void => {
    if (rand() < 0.1) {
      send({ timestamp: { seconds: 1, microseconds: 2 }, event: 'TEST_EVENT', data: { k: eventK++ } });
      stats.eventsSent++;
    }
  };
  const pump = (): void => {
    if (busy || fifo.length === 0 || sock.destroyed) return;
    busy = true;
    const item = fifo.shift()!;
    const r = rand();
    const finish = (): void => {
      busy = false;
      if (sock.destroyed) return;
      if (item.kind === 'ff') send({ error: { class: 'GenericError', desc: "JSON parse error, stray '\uFFFD'" } });
      else if (item.execute === 'query-status') send({ return: { status: 'running', running: true }, id: item.id });
      else if (item.n % 7 === 0) send({ id: item.id, error: { class: 'GenericError', desc: `fail ${item.n}` } });
      else send({ return: { n: item.n }, id: item.id });
      stats.repliesSent++;
      maybeEvent();
      pump();
    };
    if (r < 0.6) setImmediate(finish);
    else if (r < 0.97) setTimeout(finish, Math.floor(rand() * 2));
    else setTimeout(finish, 3 + Math.floor(rand() * 4)); // occasionally slow: exceeds the short timeouts
  };
  const onLine = (line: string): void => {
    const msg = JSON.parse(line) as { execute?: string; 'exec-oob'?: string; id?: unknown; arguments?: { n?: number } };
    if (!negotiated) {
      negotiated = true;
      send({ return: {}, id: msg.id });
      return;
    }
    if (stats.repliesSent >= dieAfter) { sock.destroy(); return; }
    if (msg['exec-oob'] !== undefined) {
      // Out of band: answered at once, ahead of queued in-band commands.
      send({ return: { n: msg.arguments?.n, oob: true }, id: msg.id });
      stats.repliesSent++;
      maybeEvent();
      return;
    }
    fifo.push({ kind: 'cmd', id: msg.id, execute: msg.execute!, n: msg.arguments?.n ?? -1 });
    pump();
  };
  sock.on('data', (d: Buffer) => {
    let start = 0;
    for (let i = 0; i < d.length; i++) {
      const b = d[i]!;
      if (b === 0xff) {
        pendingLine += d.toString('utf8', start, i);
        start = i + 1;
        fifo.push({ kind: 'ff' });
        pump();
      } else if (b === 0x0a) {
        const line = pendingLine + d.toString('utf8', start, i);
        pendingLine = '';
        start = i + 1;
        if (line.trim()) onLine(line);
      }
    }
    pendingLine += d.toString('utf8', start);
  });
  send(GREETING);
}

test('10 000 commands, random delays, OOB overtaking, timeouts and injected disconnects: nothing lost or misrouted', async () => {
  const dir = tempDir('qmps');
  const path = join(dir.path, 'qmp.sock');
  const conns: ConnStats[] = [];
  const server = createServer((sock) => {
    const stats = { eventsSent: 0, repliesSent: 0 };
    conns.push(stats);
    serveConnection(sock, stats, 600 + Math.floor(rand() * 1200));
  });
  await new Promise<void>((r) => server.listen(path, () => r()));
  const clients: QmpClient[] = [];
  try {
    const N = 10_000;
    let current: Promise<QmpClient> | undefined;
    const eventsSeen: number[] = [];
    let eventOrderErrors = 0;
    const badCloses: string[] = [];
    const getClient = (): Promise<QmpClient> => {
      if (current === undefined) {
        current = QmpClient.connect(path, { timeout: 5000, resyncTimeout: 2000 }).then((c) => {
          clients.push(c);
          const idx = clients.length - 1;
          eventsSeen[idx] = 0;
          let expectK = 0;
          c.on('event', (ev: QmpEvent) => {
            if (ev.data.k !== expectK) eventOrderErrors++;
            expectK = (ev.data.k as number) + 1;
            eventsSeen[idx]!++;
          });
          void c.closed.then((err) => {
            current = undefined;
            if (err && !/QEMU closed the connection|ECONNRESET|EPIPE/.test(err.message)) badCloses.push(err.message);
          });
          return c;
        });
      }
      return current;
    };

    const answered = new Set<number>();
    let misrouted = 0;
    let disconnectedRetries = 0;
    let timeoutRetries = 0;
    let lostRetries = 0;
    let oobCount = 0;
    const job = async (n: number): Promise<void> => {
      const oob = rand() < 0.1;
      const short = !oob && rand() < 0.02;
      for (let attempt = 0; ; attempt++) {
        if (attempt > 50) throw new Error(`command ${n} kept failing`);
        const c = await getClient();
        try {
          const opts = short && attempt === 0 ? { timeout: 3 } : {};
          const r = oob
            ? await c.executeOob<{ n: number; oob: boolean }>('migrate-pause', { n }, opts)
            : await c.execute<{ n: number }>('echo', { n }, opts);
          if (r.n !== n || n % 7 === 0 && !oob) misrouted++;
          if (oob) oobCount++;
          answered.add(n);
          return;
        } catch (e) {
          if (e instanceof QmpError) {
            if (e.desc !== `fail ${n}` || e.command !== 'echo') misrouted++;
            answered.add(n);
            return;
          }
          if (e instanceof QmpDisconnectedError) { disconnectedRetries++; continue; }
          if (e instanceof QmpTimeoutError) { timeoutRetries++; continue; }
          if (e instanceof QmpProtocolError) { lostRetries++; continue; }
          throw e;
        }
      }
    };

    // 48 callers keep the client's queue and its in-flight window (8) full.
    let next = 0;
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 48 }, async () => {
      while (next < N) await job(next++);
    }));
    const ms = Date.now() - t0;

    assert.is(answered.size, N, 'every command answered exactly once');
    assert.is(misrouted, 0, 'no reply delivered to the wrong caller');
    assert.is(eventOrderErrors, 0, 'events in order, none duplicated or skipped within a connection');
    assert.equal(badCloses, [], 'connections only ended by the injected disconnects (no protocol error, no failed resync)');
    assert.ok(conns.length >= 5, `disconnects injected (${conns.length} connections)`);
    assert.ok(disconnectedRetries > 0, 'some commands were cut off by a disconnect');
    assert.ok(timeoutRetries > 0, 'some commands timed out');
    assert.ok(oobCount > 500, 'OOB commands exercised');
    const totalEvents = eventsSeen.reduce((a, b) => a + b, 0);
    assert.ok(totalEvents > 500, 'events were interleaved');
    console.log(`  stress: ${N} commands in ${ms} ms over ${conns.length} connections; retries: ${disconnectedRetries} disconnected, ${timeoutRetries} timed out, ${lostRetries} lost; ${totalEvents} events`);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await new Promise<void>((r) => server.close(() => r()));
    dir.cleanup();
  }
});

test('no unhandled rejection', () => {
  assert.equal(unhandled.map(String), []);
});

test.run();
