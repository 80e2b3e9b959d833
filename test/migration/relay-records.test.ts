// The migration relays a SIGKILLed node agent leaves behind: which recorded processes are still the
// agent's (pure, a table), and for real: a child process plays the agent, starts socat target
// listeners (one connection forwarded: a forked child), is SIGKILLed; the parent-death signal ends
// the processes it spawned, the records let the next agent end the rest (the forked child, or every
// process when setpriv is missing) and remove the private certificate directory.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { componentLogger } from '../../src/log/logger.ts';
import { orphanPids, parseProcStat, parseRelayRecord, RELAY_RECORDS_DIR, RelayRecords, type ProcInfo, type RelayRecord } from '../../handler/migration/relay-records.ts';
import { HandlerController } from '../../handler/controller.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { NODE, startCluster } from '../handler-integration/lib.ts';
import { findSocat } from '../../handler/migration/socat-relay.ts';
import { ensureMigrationTls } from '../../handler/migration/tls.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('test', { level: 'silent' });
const repo = new URL('../../', import.meta.url).pathname;

test('orphanPids: the recorded group\'s socat processes, only while the pid is still the recorded one', () => {
  const rec: RelayRecord = { pid: 100, startTicks: 5000 };
  const p = (pid: number, pgrp: number, startTicks: number, comm = 'socat', state = 'S'): ProcInfo => ({ pid, pgrp, startTicks, comm, state });
  const rows: [string, ProcInfo[], number[]][] = [
    ['leader and its forked children', [p(100, 100, 5000), p(130, 100, 5100), p(131, 100, 5200), p(7, 7, 10, 'node')], [100, 130, 131]],
    ['leader gone, forked children left (the group lives on)', [p(130, 100, 5100)], [130]],
    ['the pid is another process now: the group is not ours', [p(100, 100, 9000), p(130, 100, 9100)], []],
    ['the pid is another process (a member of another group)', [p(100, 50, 9000)], []],
    ['a zombie is skipped', [p(100, 100, 5000), p(130, 100, 5100, 'socat', 'Z')], [100]],
    ['not socat: left alone', [p(100, 100, 5000), p(140, 100, 5100, 'bash')], [100]],
    ['started before the record: not a child of it', [p(150, 100, 4000)], []],
    ['nothing left', [p(7, 7, 10, 'node')], []],
  ];
  for (const [what, procs, want] of rows) assert.equal(orphanPids(rec, procs), want, what);
});

test('parseProcStat: fields 3, 5 and 22, a command name with spaces and parentheses', () => {
  const tail = '1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 10';
  assert.equal(parseProcStat(`42 (socat) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 10`), { pid: 42, comm: 'socat', state: 'S', pgrp: 42, startTicks: 123456 });
  assert.equal(parseProcStat(`43 (a (b) c) Z 1 40 ${tail}`)?.comm, 'a (b) c');
  assert.is(parseProcStat(`43 (a (b) c) Z 1 40 ${tail}`)?.pgrp, 40);
  assert.is(parseProcStat('garbage'), undefined);
  const self = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
  assert.ok(self && self.startTicks > 0 && self.pgrp > 0, 'this process\'s own stat parses');
});

test('parseRelayRecord: a record, or undefined for anything else', () => {
  assert.equal(parseRelayRecord('{"pid":12,"startTicks":34,"privateDir":"/tmp/qvirt-relay-x"}'), { pid: 12, startTicks: 34, privateDir: '/tmp/qvirt-relay-x' });
  assert.equal(parseRelayRecord('{"pid":12,"startTicks":34}'), { pid: 12, startTicks: 34 });
  assert.equal(parseRelayRecord('{"pid":12,"startTicks":34,"link":"/tmp/qvirt-m-ab-1-2"}'), { pid: 12, startTicks: 34, link: '/tmp/qvirt-m-ab-1-2' });
  for (const bad of ['', '{', 'null', '{"pid":1,"startTicks":3}', '{"pid":"12","startTicks":3}', '{"pid":12}', '[]']) assert.is(parseRelayRecord(bad), undefined, bad);
});

/** Live (not zombie) socat processes whose command line mentions `s`. */
function socatsMentioning(s: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const st = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      if (st?.comm === 'socat' && st.state !== 'Z' && cmd.includes(s)) out.push(Number(pid));
    } catch { /* gone */ }
  }
  return out.sort((a, b) => a - b);
}

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), what);
}

/** Plays a node agent in a child process (relay-owner.ts) with `path` as its PATH; resolves with its ports. */
async function startOwner(dir: string, records: string, forwardTo: string, privTmp: string, path: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(join(repo, 'node_modules/.bin/node'), [join(repo, 'test/migration/relay-owner.ts'), records, forwardTo, join(dir, 'tls')], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PATH: path, TMPDIR: privTmp } });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`relay owner exited (${code}) before listening`)));
  });
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

for (const deathSignal of [true, false]) {
  test(`a SIGKILLed agent's relays (${deathSignal ? 'with' : 'without'} setpriv's parent-death signal) are ended by the next agent, the private directory removed`, async () => {
    const t = tempDir('qrr');
    const sockets: TLSSocket[] = [];
    const conns: Socket[] = [];
    let child: ChildProcess | undefined;
    let sink: Server | undefined;
    const records = join(t.path, 'handler', 'migration-relays');
    const dst = join(t.path, 'dst.sock');
    try {
      const tls = ensureMigrationTls(join(t.path, 'tls'));
      // the target QEMU's stand-in: keeps every connection open
      sink = createServer((s) => { conns.push(s); s.on('error', () => {}); });
      await new Promise<void>((r) => sink!.listen(dst, r));
      const privTmp = join(t.path, 'priv');
      mkdirSync(privTmp);
      let path = process.env.PATH ?? '';
      if (!deathSignal) {
        // a PATH with socat and nothing else: no setpriv
        const bin = join(t.path, 'bin');
        mkdirSync(bin);
        symlinkSync(findSocat()!, join(bin, 'socat'));
        path = bin;
      }
      const owner = await startOwner(t.path, records, dst, privTmp, path);
      child = owner.child;
      // one connection through the main listener: a forked child that relays it
      const c = tlsConnect({ host: '127.0.0.1', port: owner.port, ca: tls.ca, cert: tls.cert, key: tls.key, checkServerIdentity: () => undefined });
      c.on('error', () => {});
      sockets.push(c);
      await new Promise<void>((r) => c.once('secureConnect', () => r()));
      c.write('a channel that stays open');
      await until(() => socatsMentioning(t.path).length === 3, 'two listeners and one forked child run');
      const before = socatsMentioning(t.path);
      assert.is(readdirSync(records).length, 2, 'both listeners are recorded');
      assert.is(readdirSync(privTmp).length, 1, 'the private certificate directory exists');

      child.kill('SIGKILL');
      await new Promise<void>((r) => child!.once('exit', () => r()));
      child = undefined;
      if (deathSignal) {
        await until(() => socatsMentioning(t.path).length === 1, 'the listeners died with their parent; the forked child did not');
        assert.ok(before.includes(socatsMentioning(t.path)[0]!), 'the one left is the forked child');
      }
      else {
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(socatsMentioning(t.path), before, 'without the parent-death signal every relay process outlives the agent');
      }

      const killed = await new RelayRecords(records).reapOrphans(log);
      assert.ok(killed.length >= 1, 'the next agent killed what was left');
      await until(() => socatsMentioning(t.path).length === 0, 'no relay process is left');
      assert.equal(readdirSync(records), [], 'the records are gone');
      assert.equal(readdirSync(privTmp), [], 'the private directory (with the key) is gone');
      assert.equal(await new RelayRecords(records).reapOrphans(log), [], 'a second start finds nothing');
    } finally {
      child?.kill('SIGKILL');
      for (const s of [...sockets, ...conns]) s.destroy();
      if (sink) await new Promise<void>((r) => sink!.close(() => r()));
      for (const pid of socatsMentioning(t.path)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
      t.cleanup();
    }
  });
}

test('a restarted node agent (HandlerController.start) ends the relays its SIGKILLed predecessor left', async () => {
  const t = tempDir('qrr');
  let child: ChildProcess | undefined;
  let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
  let handler: HandlerController | undefined;
  try {
    const stateDir = join(t.path, 'state');
    const privTmp = join(t.path, 'priv');
    mkdirSync(privTmp);
    ensureMigrationTls(join(t.path, 'tls'));
    // a PATH with socat and nothing else: no setpriv, so the listeners outlive the old agent
    const bin = join(t.path, 'bin');
    mkdirSync(bin);
    symlinkSync(findSocat()!, join(bin, 'socat'));
    // the target QEMU's socket need not exist: the listeners are what the old agent leaves; a path too
    // long for a unix socket, as a pod's is: the listener goes through a short link in the temp dir
    const owner = await startOwner(t.path, join(stateDir, RELAY_RECORDS_DIR), join(t.path, 'p'.repeat(100), 'dst.sock'), privTmp, bin);
    child = owner.child;
    await until(() => socatsMentioning(t.path).length === 2, 'the old agent\'s two listeners run');
    assert.equal(readdirSync(privTmp).map((n) => n.replace(/-.*/, '')).sort(), ['qvirt', 'qvirt'], 'its private directory and its short link');
    child.kill('SIGKILL');
    await new Promise<void>((r) => child!.once('exit', () => r()));
    child = undefined;
    await new Promise((r) => setTimeout(r, 300));
    assert.is(socatsMentioning(t.path).length, 2, 'without setpriv on its PATH, the old agent\'s listeners outlived it');
    cluster = await startCluster();
    handler = new HandlerController({ client: cluster.client, nodeName: NODE, podsDir: join(t.path, 'pods'), stateDir, log, recorder: new EventRecorder(cluster.client, 'virt-handler', { host: NODE, log }), migration: { address: '127.0.0.1', tls: undefined } });
    await handler.start();
    assert.equal(socatsMentioning(t.path), [], 'the new agent ended them on start');
    assert.equal(readdirSync(join(stateDir, RELAY_RECORDS_DIR)), []);
    assert.equal(readdirSync(privTmp), [], 'its private directory and its short link are gone');
  } finally {
    child?.kill('SIGKILL');
    await handler?.stop();
    await cluster?.close();
    for (const pid of socatsMentioning(t.path)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    t.cleanup();
  }
});

test('a record whose pid is another process now is dropped without killing anything', async () => {
  const t = tempDir('qrr');
  try {
    const dir = join(t.path, 'migration-relays');
    mkdirSync(dir);
    // this very process, with a start time it does not have
    const self = parseProcStat(readFileSync('/proc/self/stat', 'utf8'))!;
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ pid: process.pid, startTicks: self.startTicks - 1 }));
    writeFileSync(join(dir, 'broken.json'), 'not json');
    // a short link to a directory with a file: the link goes, the file stays; paths that are not ours stay
    const pods = join(t.path, 'pods');
    mkdirSync(pods);
    writeFileSync(join(pods, 'keep'), 'x');
    const link = join(t.path, 'qvirt-m-0123abcd-1-1');
    symlinkSync(pods, link);
    const notOurs = join(t.path, 'important');
    mkdirSync(notOurs);
    writeFileSync(join(dir, '999999.json'), JSON.stringify({ pid: 999999, startTicks: 1, link, privateDir: notOurs }));
    assert.equal(await new RelayRecords(dir).reapOrphans(log), []);
    assert.equal(readdirSync(dir), []);
    assert.is(existsSync(link), false, 'the short link is removed');
    assert.ok(existsSync(join(pods, 'keep')), 'not what it points to');
    assert.ok(existsSync(notOurs), 'a directory not named like a relay\'s private one is left alone');
    assert.ok(existsSync('/proc/self'), 'still alive');
  } finally {
    t.cleanup();
  }
});

test.run();
