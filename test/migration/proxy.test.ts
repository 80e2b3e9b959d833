// The handlers' migration proxy (source unix socket → mutual TLS → target listener → target unix
// socket), both data paths — socat processes (the default) and the Node worker relay (the fallback
// without socat) — and each against the other (nodes of one cluster may differ): several concurrent
// connections arrive whole, each way; the first connection (QEMU's main channel) reaches the target
// socket first; the end of a stream reaches the far side after all its bytes; a peer whose
// certificate is not a handler's is turned away, on either side; plain TCP without TLS; a listen
// failure names the address; close() ends the listeners, every connection and every socat process.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { componentLogger } from '../../src/log/logger.ts';
import { ensureCertFiles } from '../../src/pki/cert-files.ts';
import { MigrationProxyError, RELAY_ENV, SourceListener, TargetListener, type RelayKind } from '../../handler/migration/proxy.ts';
import { findSocat } from '../../handler/migration/socat-relay.ts';
import { ensureMigrationTls, type MigrationTls } from '../../handler/migration/tls.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('test', { level: 'silent' });
const tmp = tempDir('qpx');
const tls = ensureMigrationTls(join(tmp.path, 'tls'));

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Stands in for the target QEMU: each connection starts with a 4-byte length; once that many bytes
 * came, it answers with their digest (the way back); at the stream's end it records the digest of
 * everything it got (the half-close came after the last byte).
 */
async function digestSink(path: string): Promise<{ server: Server; received: string[]; lengths: number[] }> {
  const received: string[] = [];
  /** The announced length of each connection, in the order the sink accepted them. */
  const lengths: number[] = [];
  let accepted = 0;
  const server = createServer((s) => {
    const seq = accepted++;
    const all = createHash('sha256');
    const body = createHash('sha256');
    let header = Buffer.alloc(0);
    let want = -1;
    let got = 0;
    s.on('data', (d: Buffer) => {
      if (want < 0) {
        header = Buffer.concat([header, d]);
        if (header.length < 4) return;
        want = header.readUInt32BE(0);
        lengths[seq] = want;
        d = header.subarray(4);
      }
      all.update(d);
      body.update(d);
      got += d.length;
      if (got === want) s.write(body.digest('hex'));
    });
    s.on('end', () => { received.push(all.digest('hex')); s.end(); });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(path, r));
  return { server, received, lengths };
}

/** Sends `data` (length-prefixed) on a new connection to `path`, reads the answer, then half-closes. */
function sendAndReadBack(path: string, data: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const c: Socket = connect(path);
    let back = '';
    c.on('data', (d) => {
      back += d.toString();
      if (back.length === 64) { c.end(); resolve(back); }
    });
    c.on('error', reject);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    c.write(len);
    // in pieces, as QEMU writes
    for (let off = 0; off < data.length; off += 100_000) c.write(data.subarray(off, off + 100_000));
  });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), what);
}

/** socat processes whose command line mentions `s` (their listen/forward paths or target port). */
function socatsMentioning(s: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.startsWith('socat') || cmd.includes('/socat\0')) { if (cmd.includes(s)) out.push(Number(pid)); }
    } catch { /* gone */ }
  }
  return out;
}

async function chain(t: MigrationTls | undefined, name: string, relays: { source: RelayKind; target: RelayKind }, targetTls: MigrationTls | undefined = t) {
  const dst = join(tmp.path, `${name}-dst.sock`);
  const sink = await digestSink(dst);
  const target = await TargetListener.start({ address: '127.0.0.1', unixPath: dst, tls: targetTls, log, relay: relays.target });
  const source = await SourceListener.start({ unixPath: join(tmp.path, `${name}-src`, 'mig.sock'), host: '127.0.0.1', port: target.port, multifdPort: target.multifdPort, tls: t, log, relay: relays.source });
  return {
    sink, target, source,
    async close() {
      await source.close();
      await target.close();
      await new Promise<void>((r) => sink.server.close(() => r()));
      assert.equal(socatsMentioning(dst), [], 'no target socat left');
      assert.equal(socatsMentioning(`127.0.0.1:${target.port}`), [], 'no source socat left');
      assert.equal(readdirSync(privateParent), [], 'the private certificate directories (and short socket links) are gone');
    },
  };
}

// The relays' private directories go under the temp dir: this test's own, to see that they are removed.
const privateParent = join(tmp.path, 'priv');
mkdirSync(privateParent);
process.env.TMPDIR = privateParent;
const socat = findSocat();
if (!socat) throw new Error('these tests need socat (scripts/setup.sh installs it)');

const COMBOS = [
  { name: 'socat', tag: 'ss', relays: { source: 'socat', target: 'socat' } },
  { name: 'node', tag: 'nn', relays: { source: 'node', target: 'node' } },
  { name: 'node source → socat target', tag: 'ns', relays: { source: 'node', target: 'socat' } },
  { name: 'socat source → node target', tag: 'sn', relays: { source: 'socat', target: 'node' } },
] as const;

for (const { name, tag, relays } of COMBOS) {
  test(`${name}: the first connection (QEMU's main channel) reaches the target socket first, the other 8 after it`, async () => {
    const c = await chain(tls, `${tag}-ord`, relays);
    try {
      // all at once, as QEMU opens them: main (1 MiB) then 8 multifd channels (small: they would win a race)
      const main = randomBytes(1024 * 1024);
      const rest = Array.from({ length: 8 }, (_, i) => randomBytes(1000 + i));
      const first = sendAndReadBack(c.source.unixPath, main);
      await until(() => c.source.connections === 1, 'the source accepted the main channel');
      const answers = await Promise.all([first, ...rest.map((p) => sendAndReadBack(c.source.unixPath, p))]);
      assert.equal(answers, [main, ...rest].map(sha));
      assert.is(c.sink.lengths[0], main.length, 'the main channel was accepted first');
      assert.equal([...c.sink.lengths].slice(1).sort(), rest.map((p) => p.length).sort());
    } finally {
      await c.close();
    }
  });

  test(`${name}: TLS: 8 concurrent connections (multifd) each arrive whole, end after their last byte, and answer back`, async () => {
    const c = await chain(tls, `${tag}-tls`, relays);
    try {
      const payloads = Array.from({ length: 8 }, (_, i) => randomBytes(2 * 1024 * 1024 + i * 4099));
      const answers = await Promise.all(payloads.map((p) => sendAndReadBack(c.source.unixPath, p)));
      assert.equal(answers, payloads.map(sha), 'each sink digest matches what was sent, and came back to the sender');
      await until(() => c.sink.received.length === 8, 'every stream ended at the sink');
      assert.equal([...c.sink.received].sort(), payloads.map(sha).sort(), 'the end came after the last byte');
      assert.is(c.source.connections, 8);
      assert.is(c.target.connections, 8);
    } finally {
      await c.close();
    }
  });

  test(`${name}: plain TCP (migrations.disableTLS): the same relay without TLS`, async () => {
    const c = await chain(undefined, `${tag}-tcp`, relays);
    try {
      const p = randomBytes(3 * 1024 * 1024);
      assert.is(await sendAndReadBack(c.source.unixPath, p), sha(p));
      assert.is(c.target.connections, 1);
    } finally {
      await c.close();
    }
  });

  test(`${name}: a peer with a certificate of the same CA but not the handler CN is turned away by the target`, async () => {
    const c = await chain(tls, `${tag}-cn`, relays);
    try {
      const dir = join(tmp.path, 'tls');
      const intruder = ensureCertFiles(dir, `intruder-${tag}`, { commonName: 'not-a-handler' }, { usages: ['clientAuth'] });
      const closed = await new Promise<string>((resolve) => {
        const s = tlsConnect({ host: '127.0.0.1', port: c.target.port, ca: tls.ca, cert: intruder.certPem, key: intruder.keyPem, checkServerIdentity: () => undefined });
        s.on('secureConnect', () => s.write('data that must not reach QEMU'));
        s.on('error', (e) => resolve(`error: ${e.message}`));
        s.on('close', () => resolve('closed'));
      });
      assert.ok(closed.length > 0);
      assert.is(c.target.connections, 0, 'never forwarded');
      assert.is(c.sink.received.length, 0, 'nothing reached the target socket');
    } finally {
      await c.close();
    }
  });

  test(`${name}: close() ends the listeners, every open connection and every relay process`, async () => {
    const c = await chain(tls, `${tag}-close`, relays);
    const open = connect(c.source.unixPath);
    await new Promise<void>((r) => open.once('connect', () => r()));
    open.write('partial');
    for (let i = 0; i < 100 && c.target.connections < 1; i++) await new Promise((r) => setTimeout(r, 20));
    assert.is(c.target.connections, 1);
    const ended = new Promise<void>((r) => open.once('close', () => r()));
    open.on('error', () => {});
    await c.close();
    await ended;
    assert.is(existsSync(c.source.unixPath), false, 'the source socket file is gone');
    const refused = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port: c.target.port });
      s.on('connect', () => { s.destroy(); resolve(false); });
      s.on('error', () => resolve(true));
    });
    assert.ok(refused, 'the target port no longer accepts');
  });

}

for (const relay of ['socat', 'node'] as const) {
  for (const secure of [true, false]) {
    test(`${relay} target (${secure ? 'TLS' : 'plain TCP'}): a connection opened and closed with no data (a port scan, a health check) leaves the listener serving the next one`, async () => {
      const c = await chain(secure ? tls : undefined, `${relay}-${secure ? 't' : 'p'}-empty`, { source: relay, target: relay });
      try {
        for (const port of [c.target.port, c.target.multifdPort].filter((p) => p !== undefined)) {
          // closed right away, and closed after a while without a byte
          for (const waitMs of [0, 200]) {
            await new Promise<void>((resolve) => {
              const s = connect({ host: '127.0.0.1', port });
              // reading: a socket nobody reads never reports the far side's close (what made this look like a hang)
              s.resume();
              s.on('error', () => resolve());
              s.on('connect', () => setTimeout(() => s.end(), waitMs));
              s.on('close', () => resolve());
            });
          }
        }
        const p = randomBytes(256 * 1024);
        assert.is(await sendAndReadBack(c.source.unixPath, p), sha(p), 'the next connection went through');
        const q = randomBytes(1000);
        assert.is(await sendAndReadBack(c.source.unixPath, q), sha(q), 'and the one after it');
      } finally {
        await c.close();
      }
    });
  }
}

test('socat: a multifd channel waits at the gate until the main channel is connected', async () => {
  const c = await chain(tls, 'gate', { source: 'socat', target: 'socat' });
  try {
    assert.type(c.target.multifdPort, 'number');
    const early = randomBytes(5000);
    // straight to the multifd port, as a source handler would send a multifd channel
    const direct = tlsConnect({ host: '127.0.0.1', port: c.target.multifdPort!, ca: tls.ca, cert: tls.cert, key: tls.key, checkServerIdentity: () => undefined });
    direct.on('error', () => {});
    await new Promise<void>((r) => direct.once('secureConnect', () => r()));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(early.length);
    direct.write(Buffer.concat([len, early]));
    await new Promise((r) => setTimeout(r, 300));
    assert.is(c.sink.lengths.length, 0, 'not forwarded before the main channel');
    const main = randomBytes(7000);
    assert.is(await sendAndReadBack(c.source.unixPath, main), sha(main));
    await until(() => c.sink.lengths.length === 2, 'the multifd channel followed');
    assert.equal(c.sink.lengths, [main.length, early.length], 'main first, then the multifd channel');
    direct.destroy();
  } finally {
    await c.close();
  }
});

for (const relay of ['socat', 'node'] as const) {
  for (const wrong of ['another CA', 'not the handler CN'] as const) {
    test(`${relay}: the source refuses a target whose certificate is from ${wrong}`, async () => {
      const dir = join(tmp.path, 'tls');
      let serverTls: { ca: string; cert: string; key: string };
      if (wrong === 'another CA') serverTls = ensureMigrationTls(join(tmp.path, 'other-ca'));
      else {
        const notHandler = ensureCertFiles(dir, 'not-handler-server', { commonName: 'not-a-handler' }, { usages: ['serverAuth', 'clientAuth'] });
        serverTls = { ca: tls.ca, cert: notHandler.certPem, key: notHandler.keyPem };
      }
      // an impostor target: it takes any client and records what it is sent
      let got = 0;
      const impostor = createTlsServer({ cert: serverTls.cert, key: serverTls.key }, (s) => { s.on('data', (d: Buffer) => { got += d.length; }); s.on('error', () => {}); });
      impostor.on('tlsClientError', () => {});
      await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', () => r()));
      const port = (impostor.address() as { port: number }).port;
      const source = await SourceListener.start({ unixPath: join(tmp.path, `${relay}-${wrong.length}-imp`, 'mig.sock'), host: '127.0.0.1', port, tls, log, relay });
      try {
        const ended = await new Promise<string>((resolve) => {
          const s = connect(source.unixPath);
          s.on('error', (e) => resolve(e.message));
          s.on('close', () => resolve('closed'));
          s.write('data that must not reach an impostor');
        });
        assert.ok(ended.length > 0, 'the source dropped the connection');
        await new Promise((r) => setTimeout(r, 200));
        assert.is(got, 0, 'the impostor got nothing');
      } finally {
        await source.close();
        await new Promise<void>((r) => impostor.close(() => r()));
        assert.equal(socatsMentioning(`127.0.0.1:${port}`), [], 'no source socat left');
      }
    });
  }
}

test(`${RELAY_ENV} picks the data path of a node agent; a bad value names the variable`, async () => {
  const dst = join(tmp.path, 'env.sock');
  try {
    process.env[RELAY_ENV] = 'node';
    const n = await TargetListener.start({ address: '127.0.0.1', unixPath: dst, tls, log });
    assert.is(n.multifdPort, undefined, 'the Node relay: one port');
    await n.close();
    process.env[RELAY_ENV] = 'socat';
    const s = await TargetListener.start({ address: '127.0.0.1', unixPath: dst, tls, log });
    assert.type(s.multifdPort, 'number', 'socat: a multifd port');
    await s.close();
    process.env[RELAY_ENV] = 'fast';
    try {
      await TargetListener.start({ address: '127.0.0.1', unixPath: dst, tls, log });
      assert.unreachable('a bad value was taken');
    } catch (err) {
      assert.instance(err, MigrationProxyError);
      assert.match((err as Error).message, `${RELAY_ENV}="fast"`);
    }
  } finally {
    delete process.env[RELAY_ENV];
  }
  assert.equal(socatsMentioning(dst), []);
});

test('a target listener that cannot listen fails with the address in the message', async () => {
  try {
    await TargetListener.start({ address: '203.0.113.7', unixPath: join(tmp.path, 'x.sock'), tls, log });
    assert.unreachable('listened on an address this host does not have');
  } catch (err) {
    assert.instance(err, MigrationProxyError);
    assert.match((err as Error).message, '203.0.113.7');
  }
});

test.after(() => tmp.cleanup());
test.run();
