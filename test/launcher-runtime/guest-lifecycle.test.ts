// The launcher runtime with the real test guest under TCG, from a hand-written argv: graceful
// shutdown through gRPC (ACPI power button → the guest's acpid powers off → Shutoff/Shutdown
// within the grace period), soft reboot via ACPI (power-off turned into reset + cont), the guest
// agent (ping, info, exec, freeze, agent shutdown), and the launcher's own SIGTERM flow ending in
// the handler's Delete and the final notification. After each test no QEMU and no socket is left.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CmdClient } from '../../src/proto/launcher-client.ts';
import { harness, hasState, testVmi, socketsIn, processGone, guestImages, guestArgv, waitSerial, waitFor, markers, type Harness } from './lib.ts';
import { within } from '../lib/within.ts';

const guest = await guestImages();

async function withGuest(uid: string, agent: boolean, fn: (h: Harness, cmd: CmdClient, serialLog: string) => Promise<void>, graceSeconds = 30) {
  let serialLog = '';
  const h = await harness({
    uid,
    graceSeconds,
    notifyTimings: { intervalMs: 100, totalTimeoutMs: 3000 },
    finalNotifyTimeoutMs: 3000,
    start: async () => {
      const a = guestArgv(guest, h.runDir, { agent });
      serialLog = a.serialLog;
      return { argv: a.argv, guestAgentSocket: a.agentSocket, domain: { hypervisor: 'qemu' } };
    },
  });
  const cmd = new CmdClient(join(h.shareDir, 'sockets', 'launcher-sock'), { timeoutMs: 60_000 });
  let pid: number | undefined;
  try {
    await fn(h, cmd, join(h.runDir, 'serial.log'));
  } finally {
    pid = h.runtime.manager.qemu?.pid;
    cmd.close();
    await h.cleanup();
  }
  void serialLog;
  if (pid !== undefined) assert.ok(processGone(pid), `QEMU ${pid} is gone after the test`);
  assert.equal(socketsIn(h.dir), [], 'no socket files left');
  assert.is(existsSync(h.dir), false);
}

/** Syncs the VMI and waits until its guest's qemu-ga has started and the launcher sees the agent channel open. */
async function syncedWithAgent(h: Harness, cmd: CmdClient, serial: string, vmi: ReturnType<typeof testVmi>): Promise<void> {
  assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
  await waitSerial(serial, markers.gaStarted);
  await waitFor('agent channel open (VSERPORT_CHANGE)', () => h.runtime.manager.isAgentConnected, 30_000);
}

test('gRPC Shutdown without agent: ACPI → guest powers off → Shutoff/Shutdown within the grace period', async () => {
  await withGuest('uid-acpi', false, async (h, cmd, serial) => {
    const vmi = testVmi('testvm', 'uid-acpi');
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Running', 'Unknown'), 60_000, 'Running');
    await waitSerial(serial, markers.ready);
    const pid = h.runtime.manager.qemu!.pid;
    const t0 = Date.now();
    assert.is((await cmd.shutdownVirtualMachine(vmi)).success, true);
    const marked = await h.notify.waitDomain((e) => Boolean(e.domain.Spec.Metadata.KubeVirt.GracePeriod?.DeletionTimestamp), 30_000, 'deletionTimestamp in grace period metadata');
    assert.is(marked.domain.Status.Status, 'Running');
    const off = await h.notify.waitDomain(hasState('Shutoff', 'Shutdown'), 30_000, 'Shutoff/Shutdown');
    const ms = off.at - t0;
    assert.ok(ms < 30_000, `powered off within the grace period (${ms} ms)`);
    await waitSerial(serial, markers.poweroff, 1000);
    await waitFor('QEMU exit', () => processGone(pid), 30_000);
    const d = JSON.parse((await cmd.getDomain()).domain);
    assert.equal([d.Status.Status, d.Status.Reason], ['Shutoff', 'Shutdown']);
    // Events after Shutoff never rewrite why it ended (our own quit's SHUTDOWN, the exit). The
    // process being gone is not the launcher having recorded the exit, nor its events delivered:
    // wait for both before judging the last event.
    await within(h.runtime.manager.waitQemuExit(), 30_000, "the launcher to record QEMU's exit");
    await within(h.runtime.notifier!.flush(), 30_000, "the launcher's domain events to be delivered");
    const last = h.notify.domainEvents.at(-1)!;
    assert.equal([last.domain.Status.Status, last.domain.Status.Reason], ['Shutoff', 'Shutdown']);
    console.log(`    ACPI shutdown: Shutdown RPC → Shutoff/Shutdown in ${ms} ms`);
  });
});

test('SoftReboot without agent: ACPI power-off becomes reset + cont, the guest boots again', async () => {
  await withGuest('uid-reboot', false, async (h, cmd, serial) => {
    const vmi = testVmi('testvm', 'uid-reboot');
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await waitSerial(serial, markers.ready);
    const pid = h.runtime.manager.qemu!.pid;
    assert.is((await cmd.softRebootVirtualMachine(vmi)).success, true);
    await waitSerial(serial, markers.booted, 120_000, 2);
    assert.is(h.runtime.manager.qemu!.pid, pid, 'same QEMU');
    assert.equal([h.runtime.manager.domainState.status, h.runtime.manager.domainState.reason], ['Running', 'Unknown']);
    // What was reported is what was delivered: nothing still on its way.
    await within(h.runtime.notifier!.flush(), 30_000, "the launcher's domain events to be delivered");
    assert.not.ok(h.notify.domainEvents.some((e) => e.domain.Status.Status === 'Shutoff'), 'never reported Shutoff');
  });
});

test('guest agent: ping, guest info, exec, freeze/thaw, agent shutdown', async () => {
  await withGuest('uid-agent', true, async (h, cmd, serial) => {
    const vmi = testVmi('testvm', 'uid-agent');
    await syncedWithAgent(h, cmd, serial, vmi);
    const connected = await h.notify.waitDomain((e) => (e.domain.Spec.Devices.Channels as { Target: { State: string } }[] | undefined)?.[0]?.Target.State === 'connected', 30_000, 'agent channel connected');
    assert.ok(connected);
    assert.is((await cmd.guestPing('default_testvm', 5)).response?.success, true);
    const info = JSON.parse((await cmd.getGuestInfo()).guestInfoResponse);
    assert.ok(typeof info.guestAgentVersion === 'string' && info.guestAgentVersion.length > 0, JSON.stringify(info));
    assert.ok(info.os && typeof info.os.kernelRelease === 'string', JSON.stringify(info.os));
    assert.ok(Array.isArray(info.supportedCommands) && info.supportedCommands.length > 10);
    const d = JSON.parse((await cmd.getDomain()).domain);
    assert.is(d.Status.OSInfo.KernelRelease, info.os.kernelRelease, 'OS info reaches the domain status');
    const ex = await cmd.exec('default_testvm', '/bin/sh', ['-c', 'echo hello-$((40+2)); exit 3'], 10);
    assert.equal([ex.exitCode, ex.stdOut.trim()], [3, 'hello-42']);
    const users = JSON.parse((await cmd.getUsers()).guestUserListResponse);
    assert.ok(Array.isArray(users.items));
    const fs = JSON.parse((await cmd.getFilesystems()).guestFilesystemsResponse);
    assert.ok(Array.isArray(fs.items));
    assert.is((await cmd.freezeVirtualMachine(vmi, 30)).success, true);
    await h.notify.waitDomain((e) => e.domain.Status.FSFreezeStatus.Status === 'frozen', 30_000, 'frozen');
    assert.is((await cmd.unfreezeVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain((e) => e.domain.Status.FSFreezeStatus.Status === 'thawed', 30_000, 'thawed');
    // Shutdown goes through the agent now.
    assert.is((await cmd.shutdownVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Shutoff', 'Shutdown'), 30_000, 'Shutoff/Shutdown');
  });
});

test('a paused guest: Shutdown presses the ACPI button at once (not its agent, which cannot answer); the guest acts on it when continued', async () => {
  await withGuest('uid-paused', true, async (h, cmd, serial) => {
    const vmi = testVmi('testvm', 'uid-paused');
    await syncedWithAgent(h, cmd, serial, vmi);
    assert.is((await cmd.pauseVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Paused', 'User'), 30_000, 'Paused');
    const t0 = Date.now();
    assert.is((await cmd.shutdownVirtualMachine(vmi)).success, true);
    // Through the agent it would have waited out the agent's 2 s timeout first.
    assert.ok(Date.now() - t0 < 2000, `Shutdown of a paused guest took ${Date.now() - t0} ms`);
    assert.is((await cmd.unpauseVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Shutoff', 'Shutdown'), 60_000, 'Shutoff/Shutdown once continued');
  });
});

test('launcher SIGTERM: marked for graceful shutdown → handler shuts down and deletes → runtime done', async () => {
  await withGuest('uid-term', false, async (h, cmd, serial) => {
    const vmi = testVmi('testvm', 'uid-term');
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await waitSerial(serial, markers.ready);
    const done = h.runtime.shutdown();
    // What virt-handler does: sees markedForGracefulShutdown, sends Shutdown, then Delete once off.
    await h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.GracePeriod?.MarkedForGracefulShutdown === true, 30_000, 'markedForGracefulShutdown');
    assert.is((await cmd.shutdownVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Shutoff', 'Shutdown'), 30_000, 'Shutoff/Shutdown');
    assert.is((await cmd.deleteVirtualMachine(vmi)).success, true);
    const result = await done;
    assert.is(result.reason, 'qemu-exited');
    assert.equal([result.exit?.code, result.exit?.signal], [0, null]);
    const final = h.notify.domainEvents.at(-1)!;
    assert.ok(final.domain.ObjectMeta.deletionTimestamp, 'the last event is the deletion');
    assert.is(existsSync(join(h.shareDir, 'sockets', 'launcher-sock')), false);
  });
});

test('launcher SIGTERM with a guest that ignores the handler: destroyed after the grace period', async () => {
  await withGuest('uid-grace', false, async (h, cmd, serial) => {
    const vmi = testVmi('testvm', 'uid-grace');
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await waitSerial(serial, markers.ready);
    const t0 = Date.now();
    const done = h.runtime.shutdown(); // nobody sends Shutdown: the grace period (2 s) runs out
    await h.notify.waitDomain(hasState('Shutoff', 'Destroyed'), 15_000, 'Shutoff/Destroyed');
    const ms = Date.now() - t0;
    assert.ok(ms >= 2000 && ms < 12_000, `destroyed after the grace period (${ms} ms)`);
    const result = await done;
    assert.equal([result.state.status, result.state.reason], ['Shutoff', 'Destroyed']);
  }, 2);
});

test.run();
