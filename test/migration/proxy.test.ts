// The handlers' migration proxy (source unix socket → mutual TLS → target listener → target unix
// socket), its data path in worker threads: several concurrent connections arrive whole and in
// order, each way; the end of a stream reaches the far side after all its bytes; a
// peer whose certificate is not a handler's is turned away; plain TCP without TLS; a listen failure
// names the address; close() ends the workers, the listeners and every connection.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { componentLogger } from '../../src/log/logger.ts';
import { ensureSignedCert } from '../../src/apiserver/auth.ts';
import { MigrationProxyError, SourceListener, TargetListener } from '../../handler/migration/proxy.ts';
import { ensureMigrationTls, type MigrationTls } from '../../handler/migration/tls.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('test', { level: 'silent' });
const tmp = tempDir('qpx');
const tls = await ensureMigrationTls(join(tmp.path, 'tls'));

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Stands in for the target QEMU: each connection starts with a 4-byte length; once that many bytes
 * came, it answers with their digest (the way back); at the stream's end it records the digest of
 * everything it got (the half-close came after the last byte).
 */
async function digestSink(path: string): Promise<{ server: Server; received: string[] }> {
  const received: string[] = [];
  const server = createServer((s) => {
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
  return { server, received };
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

async function chain(t: MigrationTls | undefined, name: string) {
  const dst = join(tmp.path, `${name}-dst.sock`);
  const sink = await digestSink(dst);
  const target = await TargetListener.start({ address: '127.0.0.1', unixPath: dst, tls: t, log });
  const source = await SourceListener.start({ unixPath: join(tmp.path, `${name}-src`, 'mig.sock'), host: '127.0.0.1', port: target.port, tls: t, log });
  return {
    sink, target, source,
    async close() {
      await source.close();
      await target.close();
      await new Promise<void>((r) => sink.server.close(() => r()));
    },
  };
}

test('TLS: 8 concurrent connections (multifd) each arrive whole, end after their last byte, and answer back', async () => {
  const c = await chain(tls, 'tls');
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

test('plain TCP (migrations.disableTLS): the same relay without TLS', async () => {
  const c = await chain(undefined, 'tcp');
  try {
    const p = randomBytes(3 * 1024 * 1024);
    assert.is(await sendAndReadBack(c.source.unixPath, p), sha(p));
    assert.is(c.target.connections, 1);
  } finally {
    await c.close();
  }
});

test('a peer with a certificate of the same CA but not the handler CN is turned away', async () => {
  const c = await chain(tls, 'cn');
  try {
    const dir = join(tmp.path, 'tls');
    await ensureSignedCert(dir, 'intruder', '/CN=not-a-handler', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
    const closed = await new Promise<string>((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port: c.target.port, ca: tls.ca, cert: readFileSync(join(dir, 'intruder.crt')), key: readFileSync(join(dir, 'intruder.key')), checkServerIdentity: () => undefined });
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

test('a target listener that cannot listen fails with the address in the message', async () => {
  try {
    await TargetListener.start({ address: '203.0.113.7', unixPath: join(tmp.path, 'x.sock'), tls, log });
    assert.unreachable('listened on an address this host does not have');
  } catch (err) {
    assert.instance(err, MigrationProxyError);
    assert.match((err as Error).message, '203.0.113.7');
  }
});

test('close() ends the listeners and every open connection', async () => {
  const c = await chain(tls, 'close');
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

test.after(() => tmp.cleanup());
test.run();
