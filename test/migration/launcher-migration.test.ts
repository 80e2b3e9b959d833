// Live migration between two launcher runtimes (two "pods", real QEMU under TCG, real gRPC): the
// target starts with -incoming defer and listens on its pod's migration socket, the source migrates
// to its own pod's migration socket, a forwarder joins the two (the handlers' role). The guest prints
// a counter every 100 ms: it must continue on the target with no reboot and no missing value.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CmdClient } from '../../src/proto/launcher-client.ts';
import { migrationSocketPath } from '../../src/api/migration.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { guestImages, hasState, processGone, testVmi, waitFor, socketsIn } from '../launcher-runtime/lib.ts';
import { guestSide, SOURCE_ONLY_DEVICE, unixForwarder, TickReader, type Side } from './lib.ts';
import { threadsReport } from '../lib/proc-threads.ts';
import { runningAccelerator } from '../../launcher/migration/accelerator.ts';

const guest = await guestImages();

function vmiFor(uid: string, cfg: { allowPostCopy?: boolean } = {}): VirtualMachineInstance {
  const vmi = testVmi('mig', uid, { domain: { devices: {}, memory: { guest: '256Mi' } } } as Partial<VirtualMachineInstance['spec']>);
  vmi.status = { phase: 'Running', migrationState: { migrationUid: `vmim-${uid}`, migrationConfiguration: { allowPostCopy: cfg.allowPostCopy ?? false } } } as VirtualMachineInstance['status'];
  return vmi;
}

interface Pair {
  src: Side; dst: Side; srcCmd: CmdClient; dstCmd: CmdClient; ticks: TickReader;
  forwarder: Awaited<ReturnType<typeof unixForwarder>>; vmi: VirtualMachineInstance;
}

/** `sourceArgs`: QEMU arguments only the source gets. */
async function withPair(uid: string, append: string, cfg: { allowPostCopy?: boolean; sourceArgs?: string[] }, fn: (p: Pair) => Promise<void>): Promise<void> {
  const src = await guestSide(guest, uid, append, 256, cfg.sourceArgs);
  const dst = await guestSide(guest, uid, append);
  const srcCmd = new CmdClient(join(src.h.shareDir, 'sockets', 'launcher-sock'), { timeoutMs: 60_000 });
  const dstCmd = new CmdClient(join(dst.h.shareDir, 'sockets', 'launcher-sock'), { timeoutMs: 60_000 });
  const forwarder = await unixForwarder(migrationSocketPath(src.h.shareDir, uid), migrationSocketPath(dst.h.shareDir, uid));
  const ticks = new TickReader([{ side: 'source', path: src.serial }, { side: 'target', path: dst.serial }]);
  const pids: number[] = [];
  try {
    const vmi = vmiFor(uid, cfg);
    assert.is((await srcCmd.syncVirtualMachine(vmi)).success, true);
    pids.push(src.h.runtime.manager.qemu!.pid);
    await src.h.notify.waitDomain(hasState('Running', 'Unknown'), 20_000, 'source Running');
    await ticks.waitFor('source', 5, 90_000);
    const r = await dstCmd.call('SyncMigrationTarget', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: null });
    assert.is(r.success, true, r.message);
    pids.push(dst.h.runtime.manager.qemu!.pid);
    await dst.h.notify.waitDomain(hasState('Paused', 'Migration'), 20_000, 'target Paused/Migration (inmigrate)');
    await fn({ src, dst, srcCmd, dstCmd, ticks, forwarder, vmi });
  } finally {
    ticks.stop();
    srcCmd.close();
    dstCmd.close();
    await forwarder.close();
    await src.h.cleanup();
    await dst.h.cleanup();
  }
  for (const pid of pids) assert.ok(processGone(pid), `QEMU ${pid} is gone`);
  assert.equal(socketsIn(src.h.dir), []);
  assert.equal(socketsIn(dst.h.dir), []);
}

function migrate(cmd: CmdClient, vmi: VirtualMachineInstance, options: Record<string, unknown>) {
  return cmd.call('MigrateVirtualMachine', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: Buffer.from(JSON.stringify(options)) });
}
const vmiCall = (cmd: CmdClient, rpc: 'CancelVirtualMachineMigration' | 'FinalizeVirtualMachineMigration', vmi: VirtualMachineInstance) =>
  cmd.call(rpc, { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: null });

test('migrates a running guest: the counter continues on the target, source Shutoff/Migrated, its QEMU exits', async () => {
  await withPair('uid-mig-ok', 'qvirt.tick=100', {}, async ({ src, dst, srcCmd, dstCmd, ticks, forwarder, vmi }) => {
    const srcPid = src.h.runtime.manager.qemu!.pid;
    const r = await migrate(srcCmd, vmi, { Bandwidth: '0', ProgressTimeout: 150, CompletionTimeoutPerGiB: 150, MaxDowntimeMs: 300, ParallelMigrationThreads: 8 });
    assert.is(r.success, true, r.message);
    const migrated = await src.h.notify.waitDomain(hasState('Shutoff', 'Migrated'), 60_000, 'source Shutoff/Migrated');
    const srcMeta = migrated.domain.Spec.Metadata.KubeVirt.Migration!;
    assert.ok(srcMeta.StartTimestamp && srcMeta.EndTimestamp, 'source metadata has start and end');
    // Under TCG the guest is stopped for the copy (launcher/migration/accelerator.ts): the mode says Paused.
    const tcg = await runningAccelerator(dst.h.runtime.manager.qemu!.qmp) === 'tcg';
    assert.equal([srcMeta.Failed, srcMeta.Mode, srcMeta.UID], [false, tcg ? 'Paused' : 'PreCopy', 'vmim-uid-mig-ok']);
    const ended = await dst.h.notify.waitDomain((e) => e.domain.Status.Status === 'Running' && Boolean(e.domain.Spec.Metadata.KubeVirt.Migration?.EndTimestamp), 30_000, 'target Running with EndTimestamp')
      .catch((e: Error) => { throw new Error(`${e.message}; target QEMU threads: ${threadsReport(dst.h.runtime.manager.qemu!.pid)}`); });
    assert.ok(ended);
    await waitFor('source QEMU exit', () => processGone(srcPid), 20_000);
    const final = src.h.runtime.migration.outgoing!.finalInfo!;
    // 8 multifd channels on KVM; one stream under TCG, where QEMU 7.2's multifd corrupts guests (launcher/migration/accelerator.ts).
    if (!tcg) assert.ok(forwarder.connections > 1, `multifd used several channels (${forwarder.connections})`);
    else assert.is(forwarder.connections, 1, 'under TCG one stream, no multifd channels');
    assert.is((await vmiCall(dstCmd, 'FinalizeVirtualMachineMigration', vmi)).success, true);
    // The counter: continues on the target from where the source stopped, no reboot.
    const before = ticks.of('source');
    const dstPid = dst.h.runtime.manager.qemu!.pid;
    const after = await ticks.waitFor('target', 10, 30_000).catch((e: Error) => {
      throw new Error(`${e.message}; target QEMU threads: ${threadsReport(dstPid)}; target serial tail: ${JSON.stringify(readFileSync(dst.serial(), 'utf8').slice(-300))}`);
    });
    const last = before.at(-1)!;
    const first = after[0]!;
    assert.is(first.n, last.n + 1, `target's first tick ${first.n} follows the source's last ${last.n}; the target's serial log begins: ${JSON.stringify(readFileSync(dst.serial(), 'utf8').slice(0, 600))}`);
    assert.ok(first.uptime > last.uptime, 'guest uptime keeps growing (no reboot)');
    assert.not.ok(src.serial() === dst.serial());
    assert.not.ok(readFileSync(dst.serial(), 'utf8').includes('QVIRT-GUEST-BOOTED'), 'the target never booted the guest');
    for (let i = 1; i < after.length; i++) assert.is(after[i]!.n, after[i - 1]!.n + 1, 'no missing tick on the target');
    const gap = first.at - last.at;
    const downtime = final.downtime ?? 0;
    console.log(`    migration: total ${final['total-time']} ms, downtime ${downtime} ms, transferred ${((final.ram?.transferred ?? 0) / 2 ** 20).toFixed(1)} MiB; host-observed tick gap ${gap} ms (tick 100 ms)`);
    // The gap seen from the host: one tick period, the downtime, and scheduling noise on a loaded host.
    assert.ok(gap <= 100 + downtime + 1500, `tick gap ${gap} ms ≤ 100 ms + downtime ${downtime} ms + 1.5 s slack`);
    assert.ok(downtime > 0 && (final['total-time'] ?? 0) > 0);
  });
});

test('cancel in flight: source keeps running, metadata Failed with abortStatus Succeeded, target QEMU ends as a failed migration', async () => {
  await withPair('uid-mig-cancel', 'qvirt.tick=100', {}, async ({ src, dst, srcCmd, ticks, vmi }) => {
    const dstPid = dst.h.runtime.manager.qemu!.pid;
    const r = await migrate(srcCmd, vmi, { Bandwidth: '1Mi', ParallelMigrationThreads: 8 });
    assert.is(r.success, true, r.message);
    await new Promise((res) => setTimeout(res, 1500));
    const c = await vmiCall(srcCmd, 'CancelVirtualMachineMigration', vmi);
    assert.is(c.success, true, c.message);
    const meta = src.h.runtime.manager.migrationMetadata!;
    assert.equal([meta.Failed, meta.AbortStatus, meta.FailureReason], [true, 'Succeeded', 'Live migration has been aborted']);
    assert.ok(meta.EndTimestamp);
    assert.equal([src.h.runtime.manager.domainState.status], ['Running']);
    await waitFor('target QEMU exit', () => processGone(dstPid), 20_000);
    await dst.h.notify.waitDomain(hasState('Shutoff', 'Failed'), 10_000, 'target Shutoff/Failed');
    const n = ticks.of('source').length;
    await ticks.waitFor('source', n + 5, 20_000);
    // A second cancel has nothing to cancel.
    assert.is((await vmiCall(srcCmd, 'CancelVirtualMachineMigration', vmi)).success, false);
  });
});

test('target killed mid-migration: source keeps running, migration failed', async () => {
  await withPair('uid-mig-kill', 'qvirt.tick=100', {}, async ({ src, dst, srcCmd, ticks, vmi }) => {
    const r = await migrate(srcCmd, vmi, { Bandwidth: '1Mi', ParallelMigrationThreads: 8 });
    assert.is(r.success, true, r.message);
    await new Promise((res) => setTimeout(res, 1500));
    dst.h.runtime.manager.qemu!.signal('SIGKILL');
    await src.h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.Migration?.Failed === true, 30_000, 'source metadata Failed');
    const meta = src.h.runtime.manager.migrationMetadata!;
    assert.ok(meta.EndTimestamp);
    assert.is(meta.AbortStatus, '');
    assert.ok(meta.FailureReason.length > 0, `failure reason: ${meta.FailureReason}`);
    assert.is(src.h.runtime.manager.domainState.status, 'Running');
    const n = ticks.of('source').length;
    await ticks.waitFor('source', n + 5, 20_000);
  });
});

// The device state is the stream's last part: a target that cannot load it has already taken all of
// the guest's memory. QEMU's return path makes the source wait for the target's verdict; without it
// the source reported completed, shut its guest off, and the guest was lost with the target.
test('a target that fails to load the device state: the source keeps its guest running, migration failed', async () => {
  await withPair('uid-mig-badload', 'qvirt.tick=100', { sourceArgs: [...SOURCE_ONLY_DEVICE] }, async ({ src, dst, srcCmd, ticks, vmi }) => {
    const srcPid = src.h.runtime.manager.qemu!.pid;
    const dstPid = dst.h.runtime.manager.qemu!.pid;
    const r = await migrate(srcCmd, vmi, { Bandwidth: '0', ProgressTimeout: 150, CompletionTimeoutPerGiB: 150 });
    assert.is(r.success, true, r.message);
    await src.h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.Migration?.Failed === true, 60_000, 'source metadata Failed')
      .catch((e: Error) => { throw new Error(`${e.message}; source domain ${JSON.stringify(src.h.runtime.manager.domainState)}`); });
    const meta = src.h.runtime.manager.migrationMetadata!;
    assert.ok(meta.EndTimestamp);
    // The target exits without a word on the stream; QEMU 7.2's source sets no error-desc for it.
    assert.match(meta.FailureReason, /^QEMU reported the migration failed/);
    assert.is(src.h.runtime.manager.domainState.status, 'Running');
    assert.ok(!processGone(srcPid), 'the source QEMU still runs');
    await waitFor('target QEMU exit', () => processGone(dstPid), 20_000);
    await dst.h.notify.waitDomain(hasState('Shutoff', 'Failed'), 10_000, 'target Shutoff/Failed');
    const n = ticks.of('source').length;
    await ticks.waitFor('source', n + 5, 20_000);
  });
});

test('a guest dirtying memory faster than the bandwidth: pre-copy times out and aborts cleanly', async () => {
  await withPair('uid-mig-timeout', 'qvirt.tick=100 qvirt.dirty=96', {}, async ({ src, srcCmd, ticks, vmi }) => {
    const t0 = Date.now();
    // 8 MiB/s: too slow for the dirtied 96 MiB, live on KVM and as one copy of the stopped guest under TCG.
    const r = await migrate(srcCmd, vmi, { Bandwidth: '8Mi', CompletionTimeoutPerGiB: 8, ProgressTimeout: 150, AllowAutoConverge: false, AllowPostCopy: false, ParallelMigrationThreads: 8 });
    assert.is(r.success, true, r.message);
    await src.h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.Migration?.Failed === true, 60_000, 'source metadata Failed');
    const meta = src.h.runtime.manager.migrationMetadata!;
    console.log(`    aborted after ${Date.now() - t0} ms: ${meta.FailureReason}`);
    assert.match(meta.FailureReason, /not completed after 8 sec/);
    assert.is(src.h.runtime.manager.domainState.status, 'Running');
    const n = ticks.of('source').length;
    await ticks.waitFor('source', n + 5, 20_000);
  });
});

test('the same guest with post-copy allowed: switches to post-copy after the completion timeout and completes', async () => {
  await withPair('uid-mig-postcopy', 'qvirt.tick=100 qvirt.dirty=96', { allowPostCopy: true }, async ({ src, dst, srcCmd, ticks, vmi }) => {
    const r = await migrate(srcCmd, vmi, { Bandwidth: '16Mi', CompletionTimeoutPerGiB: 4, ProgressTimeout: 150, AllowPostCopy: true, AllowWorkloadDisruption: true });
    assert.is(r.success, true, r.message);
    await src.h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.Migration?.Mode === 'PostCopy', 60_000, 'source in PostCopy mode');
    const migrated = await src.h.notify.waitDomain(hasState('Shutoff', 'Migrated'), 120_000, 'source Shutoff/Migrated');
    assert.is(migrated.domain.Spec.Metadata.KubeVirt.Migration!.Failed, false);
    await dst.h.notify.waitDomain((e) => e.domain.Status.Status === 'Running' && Boolean(e.domain.Spec.Metadata.KubeVirt.Migration?.EndTimestamp), 30_000, 'target Running');
    const last = ticks.of('source').at(-1)!;
    const after = await ticks.waitFor('target', 5, 30_000);
    assert.ok(after[0]!.n > last.n - 1 && after[0]!.n <= last.n + 1, `target continues the counter (source last ${last.n}, target first ${after[0]!.n})`);
    const fin = src.h.runtime.migration.outgoing!.finalInfo!;
    console.log(`    post-copy: total ${fin['total-time']} ms, downtime ${fin.downtime} ms, post-copy bytes ${((fin.ram?.['postcopy-bytes'] ?? 0) / 2 ** 20).toFixed(1)} MiB`);
  });
});

test.run();
