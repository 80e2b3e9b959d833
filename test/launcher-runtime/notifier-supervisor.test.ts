// The notifier against a real Notify server that comes and goes (KubeVirt's retry policy, never
// blocking the caller, collapsing MODIFIED events while the handler is away), and the QEMU
// supervisor's own pieces: the argv it adds, a leftover QEMU found through the locked pidfile,
// and a start failure that carries QEMU's stderr.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Notifier } from '../../launcher/notify/notifier.ts';
import { buildDomain } from '../../launcher/domain/domain.ts';
import { supervisedArgv, leftoverQemuPid, QemuProcess, QemuStartError } from '../../launcher/supervise/qemu-process.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { NotifyRecorder, processGone } from './lib.ts';
import { tempDir } from '../lib/tmp.ts';
import { settlesWithin } from '../lib/within.ts';

const log = componentLogger('launcher');
const ref = { namespace: 'ns', name: 'vm', uid: 'u1' };
const dom = (status: string, reason: string) => buildDomain({ ...ref, acpi: true, status: status as 'Running', reason: reason as 'Unknown', gracePeriod: null });

test('notifier: events queued while the handler is away are delivered when it appears, MODIFIED collapsed', async () => {
  const dir = tempDir('qvn');
  const sock = join(dir.path, 'domain-notify-pipe.sock');
  const n = new Notifier({ socketPath: sock, log, vmiRef: ref, intervalMs: 100, sendTimeoutMs: 1000, totalTimeoutMs: 10_000 });
  let rec: NotifyRecorder | undefined;
  try {
    const t0 = Date.now();
    n.notifyDomain('ADDED', dom('Paused', 'StartingUp'));
    n.notifyDomain('MODIFIED', dom('Running', 'Unknown'));
    n.notifyDomain('MODIFIED', dom('Paused', 'User'));
    n.notifyK8sEvent('Warning', 'IOerror', 'VM Paused due to IO error at the volume: disk0');
    n.notifyDomain('MODIFIED', dom('Running', 'Unknown'));
    // Waiting for the handler would take until it appears (it never does before the flush below); the
    // bound only allows for a loaded machine's first calls (measured 50+ ms on 2 cores shared by 3 test files).
    assert.ok(Date.now() - t0 < 1000, `enqueueing never waits for the handler (${Date.now() - t0} ms)`);
    await new Promise((r) => setTimeout(r, 400));
    rec = await NotifyRecorder.listen(sock);
    await n.flush();
    assert.equal(rec.domainEvents.map((e) => `${e.type} ${e.domain.Status.Status}/${e.domain.Status.Reason}`), [
      'ADDED Paused/StartingUp', 'MODIFIED Paused/User', 'MODIFIED Running/Unknown',
    ]);
    assert.equal(rec.k8sEvents.map((e) => [e.reason, e.type, e.involvedObject.name, e.involvedObject.uid]), [['IOerror', 'Warning', 'vm', 'u1']]);
  } finally {
    n.close();
    await rec?.stop();
    dir.cleanup();
  }
});

test('notifier: gives up on an event after the total timeout; final-notify wait', async () => {
  const dir = tempDir('qvn');
  const sock = join(dir.path, 'none.sock');
  const n = new Notifier({ socketPath: sock, log, vmiRef: ref, intervalMs: 50, sendTimeoutMs: 200, totalTimeoutMs: 500 });
  const failed: string[] = [];
  n.on('failed', (f) => failed.push(f.type ?? ''));
  try {
    const t0 = Date.now();
    n.notifyDomain('MODIFIED', { ...dom('NoState', 'NonExistent'), ObjectMeta: { ...dom('NoState', 'NonExistent').ObjectMeta, deletionTimestamp: '2026-01-01T00:00:00Z' } });
    assert.is(await n.waitForFinalNotify(5000), true, 'the wait ends when the deletion event was given up too');
    await n.flush();
    const ms = Date.now() - t0;
    assert.ok(ms >= 400 && ms < 3000, `gave up after ~500 ms (${ms})`);
    assert.equal(failed, ['MODIFIED']);
    assert.is(await new Notifier({ socketPath: sock, log, vmiRef: ref }).waitForFinalNotify(100), false);
  } finally {
    n.close();
    dir.cleanup();
  }
});

test('notifier: once the deletion is delivered, a later domain event is dropped, not retried against a node agent that closed the socket', async () => {
  const dir = tempDir('qvn');
  const sock = join(dir.path, 'domain-notify-pipe.sock');
  const n = new Notifier({ socketPath: sock, log, vmiRef: ref, intervalMs: 1000, sendTimeoutMs: 1000, totalTimeoutMs: 10_000 });
  const rec = await NotifyRecorder.listen(sock);
  const deleted = () => ({ ...dom('NoState', 'NonExistent'), ObjectMeta: { ...dom('NoState', 'NonExistent').ObjectMeta, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  try {
    n.notifyDomain('MODIFIED', deleted());
    assert.is(await n.waitForFinalNotify(5000), true);
    await n.flush();
    await rec.stop(); // the node agent is done with this VMI and closes its socket
    const t0 = Date.now();
    n.notifyDomain('MODIFIED', deleted()); // the deletion again (DeleteVirtualMachine after the state change)
    await n.flush();
    const ms = Date.now() - t0;
    assert.ok(ms < 500, `the flush after the deletion took ${ms} ms (retries of a moot event hold the launcher's exit up)`);
    assert.is(rec.domainEvents.length, 1);
  } finally {
    n.close();
    dir.cleanup();
  }
});

test('supervisedArgv adds what the machine argv lacks and keeps what it has', () => {
  const plain = supervisedArgv(['-machine', 'none'], { pidfile: '/r/qemu.pid', debugMonitorSocket: '/r/dbg.sock' });
  assert.is(plain.binary, 'qemu-system-x86_64');
  assert.equal(plain.args, [
    '-machine', 'none', '-S', '-no-shutdown', '-pidfile', '/r/qemu.pid',
    '-chardev', 'socket,id=qvirt-qmp,fd=3', '-mon', 'chardev=qvirt-qmp,mode=control',
    '-chardev', 'socket,id=qvirt-qmp-debug,path=/r/dbg.sock,server=on,wait=off', '-mon', 'chardev=qvirt-qmp-debug,mode=control',
  ]);
  // A converter's LaunchPlan argv: binary first, -S, -pidfile and monitors already there.
  const conv = ['/usr/bin/qemu-system-x86_64', '-S', '-pidfile', '/r/qemu.pid', '-no-shutdown',
    '-chardev', 'socket,id=charmonitor,fd=3', '-mon', 'chardev=charmonitor,id=monitor,mode=control',
    '-chardev', 'socket,id=charmonitor1,path=/r/dbg.sock,server=on,wait=off', '-mon', 'chardev=charmonitor1,mode=control'];
  const c = supervisedArgv(conv, { pidfile: '/r/qemu.pid', debugMonitorSocket: '/r/dbg.sock' });
  assert.is(c.binary, '/usr/bin/qemu-system-x86_64');
  assert.equal(c.args, conv.slice(1));
  assert.throws(() => supervisedArgv(['-daemonize'], { pidfile: '/p' }), /-daemonize/);
  assert.throws(() => supervisedArgv(['-pidfile', '/other'], { pidfile: '/p' }), /-pidfile \/other/);
});

test('a leftover QEMU holding the pidfile is found and terminated before the new one starts', async () => {
  const dir = tempDir('qvs');
  const pidfile = join(dir.path, 'qemu.pid');
  const old = spawn('qemu-system-x86_64', ['-machine', 'none', '-nodefaults', '-display', 'none', '-pidfile', pidfile], { stdio: 'ignore' });
  const oldExited = new Promise<void>((r) => old.once('exit', () => r()));
  let proc: QemuProcess | undefined;
  let failed = false;
  try {
    // QEMU writes and locks its pidfile early in its start, which a loaded host can delay by seconds.
    const deadline = Date.now() + 30_000;
    while (leftoverQemuPid(pidfile) === undefined && old.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.is(leftoverQemuPid(pidfile), old.pid, `the leftover QEMU holds ${pidfile} within 30 s (exit code ${old.exitCode})`);
    let refused: unknown;
    await QemuProcess.start({ argv: ['-machine', 'none', '-nodefaults', '-display', 'none'], pidfile, log, killLeftover: false }).catch((e: unknown) => { refused = e; });
    assert.instance(refused, QemuStartError);
    assert.match((refused as Error).message, new RegExp(`QEMU pid ${old.pid} from an earlier launcher`));
    proc = await QemuProcess.start({ argv: ['-machine', 'none', '-nodefaults', '-display', 'none'], pidfile, log });
    assert.ok(processGone(old.pid!), 'the leftover was terminated');
    assert.is(leftoverQemuPid(pidfile), proc.pid);
    const exit = await proc.terminate();
    assert.equal([exit.code, exit.signal], [0, null]);
    assert.is(existsSync(pidfile), false);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    // Both gone before the test ends (the runner fails a run that leaks a QEMU), each wait bounded.
    if (old.exitCode === null && old.signalCode === null) old.kill('SIGKILL');
    if (proc && !proc.hasExited) proc.signal('SIGKILL');
    const gone = await settlesWithin(Promise.all([oldExited, proc?.exited]), 10_000);
    dir.cleanup();
    if (!failed) assert.ok(gone, `both QEMUs (${old.pid}, ${proc?.pid ?? 'none'}) exited within 10 s of SIGKILL`);
  }
});

test('a start failure carries QEMU\'s stderr; a stale pidfile of a dead process is ignored', async () => {
  const dir = tempDir('qvs');
  const pidfile = join(dir.path, 'qemu.pid');
  writeFileSync(pidfile, '999999\n');
  try {
    assert.is(leftoverQemuPid(pidfile), undefined);
    let err: unknown;
    await QemuProcess.start({ argv: ['-machine', 'none', '-nodefaults', '-display', 'none', '-device', 'nonexistent-dev'], pidfile, log }).catch((e: unknown) => { err = e; });
    assert.instance(err, QemuStartError);
    assert.match((err as Error).message, /nonexistent-dev/);
    assert.is((err as QemuStartError).exit?.code, 1);
  } finally {
    dir.cleanup();
  }
});

test.run();
