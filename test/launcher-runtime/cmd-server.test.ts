// The launcher's command server over a real unix socket with a real QEMU (`-machine none`: no
// guest, so these run in a second): markReady, SyncVirtualMachine starting QEMU paused then `cont`,
// pause/unpause with Paused/User in GetDomain and real Notify events, the QMP passthrough
// allow-list, unsupported RPCs, bad requests, kill -9 → Crashed, and nothing left behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CmdClient, QmpPassthroughClient, negotiateCmdVersion } from '../../src/proto/launcher-client.ts';
import { harness, hasState, testVmi, socketsIn, processGone, type Harness } from './lib.ts';

const NONE_ARGV = ['-machine', 'none', '-nodefaults', '-display', 'none', '-accel', 'tcg'];

async function withHarness(uid: string, fn: (h: Harness, cmd: CmdClient) => Promise<void>, markReady = true) {
  const h = await harness({ uid, start: async () => ({ argv: NONE_ARGV }), markReady, notifyTimings: { intervalMs: 100, totalTimeoutMs: 3000 } });
  const cmd = new CmdClient(join(h.shareDir, 'sockets', markReady ? 'launcher-sock' : 'launcher-init-sock'));
  let pid: number | undefined;
  try {
    await fn(h, cmd);
    pid = h.runtime.manager.qemu?.pid;
  } finally {
    cmd.close();
    pid ??= h.runtime.manager.qemu?.pid;
    await h.cleanup();
  }
  if (pid !== undefined) assert.ok(processGone(pid), `QEMU ${pid} is gone after the test`);
  assert.equal(socketsIn(h.dir), [], 'no socket files left');
  assert.is(existsSync(h.dir), false);
}

test('markReady renames launcher-init-sock to launcher-sock; CmdInfo answers [1]', async () => {
  await withHarness('uid-ready', async (h, cmd) => {
    const init = join(h.shareDir, 'sockets', 'launcher-init-sock');
    const ready = join(h.shareDir, 'sockets', 'launcher-sock');
    assert.ok(existsSync(init));
    assert.is(existsSync(ready), false);
    assert.is((await cmd.ping()).success, true);
    h.runtime.markReady();
    assert.is(existsSync(init), false);
    assert.ok(existsSync(ready));
    const c2 = new CmdClient(ready);
    try {
      assert.is((await c2.ping()).success, true);
      assert.is(await negotiateCmdVersion(ready), 1);
      const d = await c2.getDomain();
      assert.equal(d, { response: { success: true, message: '' }, domain: '' }, 'no domain before SyncVirtualMachine');
    } finally {
      c2.close();
    }
  }, false);
});

test('Sync starts QEMU paused then cont; pause/unpause; notify events; GetDomain', async () => {
  await withHarness('uid-sync', async (h, cmd) => {
    const vmi = testVmi('testvm', 'uid-sync');
    const r = await cmd.syncVirtualMachine(vmi);
    assert.equal(r, { success: true, message: '' });
    const added = await h.notify.waitDomain((e) => e.type === 'ADDED', 5000, 'ADDED');
    assert.is(added.domain.Spec.Name, 'default_testvm');
    assert.is(added.domain.Spec.Metadata.KubeVirt.UID, 'uid-sync');
    assert.is(added.domain.Spec.Metadata.KubeVirt.GracePeriod?.DeletionGracePeriodSeconds, 30);
    await h.notify.waitDomain(hasState('Running', 'Unknown'), 5000, 'Running');
    let d = JSON.parse((await cmd.getDomain()).domain);
    assert.equal([d.Status.Status, d.Status.Reason], ['Running', 'Unknown']);
    assert.is(d.ObjectMeta.name, 'testvm');
    assert.is(d.ObjectMeta.namespace, 'default');

    // Sync again while running: nothing changes, no second QEMU.
    const pid = h.runtime.manager.qemu!.pid;
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    assert.is(h.runtime.manager.qemu!.pid, pid);

    assert.is((await cmd.pauseVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Paused', 'User'), 5000, 'Paused/User');
    d = JSON.parse((await cmd.getDomain()).domain);
    assert.equal([d.Status.Status, d.Status.Reason], ['Paused', 'User']);
    const pt = new QmpPassthroughClient(join(h.shareDir, 'sockets', 'launcher-sock'));
    try {
      const st = await pt.execute('query-status', undefined, { caller: 'test' });
      assert.is(st.success, true, st.message);
      assert.is(JSON.parse(st.returnJson).status, 'paused');
    } finally {
      pt.close();
    }
    const n = h.notify.domainEvents.length;
    assert.is((await cmd.unpauseVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain((e) => h.notify.domainEvents.indexOf(e) >= n && hasState('Running', 'Unknown')(e), 5000, 'Running again');
    const v = await cmd.getQemuVersion();
    assert.ok(/^\d+\.\d+\.\d+$/.test(v.version), v.version);
    const stats = JSON.parse((await cmd.getDomainStats()).domainStats);
    assert.is(stats.Name, 'default_testvm');
    assert.ok(stats.Memory.RSSSet && stats.Memory.RSS > 0, 'RSS from /proc');
    assert.ok(stats.Cpu.TimeSet);
    // One GetDomainStats (-machine none: no vCPU, no balloon; the local-mode Prometheus test has both):
    // the QMP queries pipelined and /proc, over the command socket.
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      assert.is((await cmd.getDomainStats()).response?.success, true);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(`  GetDomainStats: median ${times[10]!.toFixed(2)} ms, max ${times[19]!.toFixed(2)} ms (20 calls)`);
  });
});

test('QMP passthrough: read-only allowed, system_reset refused unless unsafe', async () => {
  await withHarness('uid-pt', async (h, cmd) => {
    assert.is((await cmd.syncVirtualMachine(testVmi('testvm', 'uid-pt'))).success, true);
    const pt = new QmpPassthroughClient(join(h.shareDir, 'sockets', 'launcher-sock'));
    try {
      const ok = await pt.execute('query-status', undefined, { caller: 'tester' });
      assert.is(ok.success, true);
      assert.is(JSON.parse(ok.returnJson).status, 'running');
      const refused = await pt.execute('system_reset', undefined, { caller: 'tester' });
      assert.equal([refused.success, refused.refused], [false, true]);
      assert.match(refused.message, /not a read-only query/);
      const stopRefused = await pt.execute('stop', undefined, { caller: 'tester' });
      assert.is(stopRefused.refused, true);
      assert.is(h.runtime.manager.domainState.status, 'Running', 'refused commands never reach QEMU');
      const allowed = await pt.execute('system_reset', undefined, { caller: 'tester', unsafe: true });
      assert.is(allowed.success, true, allowed.message);
      assert.equal(JSON.parse(allowed.returnJson), {});
      const qemuErr = await pt.execute('device_del', { id: 'nope' }, { caller: 'tester', unsafe: true });
      assert.equal([qemuErr.success, qemuErr.refused, qemuErr.errorClass], [false, false, 'DeviceNotFound']);
      const badArgs = await pt.execute('query-status', undefined, { caller: 'tester' });
      assert.is(badArgs.success, true);
    } finally {
      pt.close();
    }
  });
});

test('unsupported and invalid requests say what failed', async () => {
  await withHarness('uid-unsup', async (_h, cmd) => {
    const vmi = testVmi('testvm', 'uid-unsup');
    const m = await cmd.call('MigrateVirtualMachine', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: Buffer.from('{}') });
    assert.equal(m, { success: false, message: 'MigrateVirtualMachine failed: MigrateVirtualMachine: the domain is not running' });
    const badOpts = await cmd.call('MigrateVirtualMachine', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: Buffer.from('{"Bandwidth":"fast"}') });
    assert.match(badOpts.message, /MigrationOptions\.Bandwidth: "fast" is not a valid quantity/);
    const cancel = await cmd.call('CancelVirtualMachineMigration', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) } });
    assert.match(cancel.message, /no migration of this domain is running/);
    const hp = await cmd.call('HotplugHostDevices', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) } });
    assert.is(hp.message, 'HotplugHostDevices is not supported by qvirt yet');
    const bad = await cmd.call('PauseVirtualMachine', { vmi: { vmiJson: Buffer.from('not json') } });
    assert.equal(bad, { success: false, message: 'No valid vmi object present in command server request' });
    const noDomain = await cmd.pauseVirtualMachine(vmi);
    assert.is(noDomain.success, false);
    assert.match(noDomain.message, /PauseVirtualMachine: domain default_testvm is not defined/);
    const other = await cmd.syncVirtualMachine(testVmi('testvm', 'someone-else'));
    assert.is(other.success, false);
    assert.match(other.message, /uid someone-else is not this launcher's VMI/);
    const freeze = await cmd.freezeVirtualMachine(vmi, 10);
    assert.is(freeze.success, false);
  });
});

test('startStrategy Paused stays Paused/User until unpaused', async () => {
  await withHarness('uid-sp', async (h, cmd) => {
    const vmi = testVmi('testvm', 'uid-sp', { startStrategy: 'Paused' });
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Paused', 'User'), 5000, 'Paused/User');
    const st = await h.runtime.manager.qemu!.qmp.execute('query-status') as { status: string };
    assert.is(st.status, 'prelaunch');
    assert.is((await cmd.unpauseVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Running', 'Unknown'), 5000, 'Running');
  });
});

test('kill -9 of QEMU is reported as Crashed; Delete sends the deletion event; the runtime ends', async () => {
  await withHarness('uid-crash', async (h, cmd) => {
    const vmi = testVmi('testvm', 'uid-crash');
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Running', 'Unknown'), 5000, 'Running');
    const pid = h.runtime.manager.qemu!.pid;
    process.kill(pid, 'SIGKILL');
    await h.notify.waitDomain(hasState('Crashed', 'Crashed'), 5000, 'Crashed/Crashed');
    const d = JSON.parse((await cmd.getDomain()).domain);
    assert.equal([d.Status.Status, d.Status.Reason], ['Crashed', 'Crashed']);
    assert.ok(processGone(pid));
    assert.is(existsSync(join(h.runDir, 'qemu.pid')), false, 'pidfile removed after a crash');
    // The handler deletes the dead domain: final event with deletionTimestamp, then no domain.
    assert.is((await cmd.deleteVirtualMachine(vmi)).success, true);
    const del = await h.notify.waitDomain((e) => Boolean(e.domain.ObjectMeta.deletionTimestamp), 5000, 'deletion');
    assert.equal([del.type, del.domain.Status.Status, del.domain.Status.Reason], ['MODIFIED', 'NoState', 'NonExistent']);
    // With the deletion delivered the launcher ends at once (KubeVirt's waitForFinalNotify) and its
    // command socket goes: the domain's absence is read from the manager, not over a socket that a
    // GetDomain after the deletion races.
    const result = await h.runtime.done;
    assert.is(h.runtime.manager.getDomain(), undefined, 'no domain after the deletion');
    assert.is(result.reason, 'qemu-exited');
    assert.equal([result.state.status, result.state.reason], ['NoState', 'NonExistent']);
    assert.is(existsSync(join(h.shareDir, 'sockets', 'launcher-sock')), false, 'command socket removed when done');
  });
});

test('Kill destroys QEMU: Shutoff/Destroyed', async () => {
  await withHarness('uid-kill', async (h, cmd) => {
    const vmi = testVmi('testvm', 'uid-kill');
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    const pid = h.runtime.manager.qemu!.pid;
    assert.is((await cmd.killVirtualMachine(vmi)).success, true);
    assert.ok(processGone(pid), 'Kill returns after QEMU is gone');
    await h.notify.waitDomain(hasState('Shutoff', 'Destroyed'), 5000, 'Shutoff/Destroyed');
  });
});

test.run();
