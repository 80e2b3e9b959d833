// The launcher's VirtualMachineMemoryDump over a real command socket and a real QEMU (q35, 32 MiB,
// no guest: SeaBIOS finds nothing to boot and waits): the dump is an ELF core of the guest's RAM in
// the file asked for (a launcher-pod path, rooted as the local mode roots it), its progress and end
// are the domain's MemoryDump metadata in the Notify events, the guest is paused for the dump
// (Paused/Dump) and runs again after; a repeated request for the same file does nothing, a new
// file replaces the older dumps of the directory, a dump that cannot be written is reported
// Failed with QEMU's reason.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { elfHeader } from '../lib/elf-header.ts';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CmdClient } from '../../src/proto/launcher-client.ts';
import { harness, hasState, processGone, socketsIn, testVmi, type Harness, type RecordedDomainEvent } from './lib.ts';

const ARGV = ['-machine', 'q35', '-accel', 'tcg', '-m', '32', '-nodefaults', '-display', 'none'];
const MiB = 1024 * 1024;

async function withHarness(uid: string, fn: (h: Harness, cmd: CmdClient, root: string) => Promise<void>) {
  let root = '';
  const h = await harness({ uid, start: async () => ({ argv: ARGV }), notifyTimings: { intervalMs: 100, totalTimeoutMs: 3000 }, podPath: (p) => join(root, p) });
  root = join(h.dir, 'root');
  const cmd = new CmdClient(join(h.shareDir, 'sockets', 'launcher-sock'));
  let pid: number | undefined;
  try {
    await fn(h, cmd, root);
    pid = h.runtime.manager.qemu?.pid;
  } finally {
    cmd.close();
    pid ??= h.runtime.manager.qemu?.pid;
    await h.cleanup();
  }
  if (pid !== undefined) assert.ok(processGone(pid), `QEMU ${pid} is gone after the test`);
  assert.equal(socketsIn(h.dir), [], 'no socket files left');
}

const dumpOf = (e: RecordedDomainEvent) => e.domain.Spec.Metadata.KubeVirt.MemoryDump;
const finished = (file: string) => (e: RecordedDomainEvent) => dumpOf(e)?.FileName === file && dumpOf(e)?.Completed === true;

test('a dump is an ELF core of the guest memory; the domain reports it; the guest runs again', async () => {
  await withHarness('uid-dump', async (h, cmd, root) => {
    const vmi = testVmi('testvm', 'uid-dump');
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Running', 'Unknown'), 10_000, 'Running');
    const dir = join(root, 'var/run/kubevirt/hotplug-disks/dump');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'testvm-dump-20200101-000000.memory.dump'), 'an older dump');
    writeFileSync(join(dir, 'keep.txt'), 'not a dump');
    const file = 'testvm-dump-20260101-000000.memory.dump';
    const r = await cmd.virtualMachineMemoryDump(vmi, `/var/run/kubevirt/hotplug-disks/dump/${file}`);
    assert.equal(r, { success: true, message: '' });
    const done = await h.notify.waitDomain(finished(file), 60_000, 'the dump completed');
    const md = dumpOf(done)!;
    assert.equal([md.Failed, md.FailureReason], [false, '']);
    assert.match(md.StartTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(md.EndTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(h.notify.domainEvents.some((e) => dumpOf(e)?.FileName === file && !dumpOf(e)!.Completed), 'the dump was reported started before it was done');
    const path = join(dir, file);
    assert.equal(elfHeader(path), { magic: '\x7fELF', cls: 2, type: 4 }, 'ELF64 core file');
    const size = statSync(path).size;
    assert.ok(size >= 32 * MiB && size < 40 * MiB, `a dump of 32 MiB of RAM is ${size} bytes`);
    assert.equal(readdirSync(dir).sort(), ['keep.txt', file], 'the older dump was removed, other files kept');
    assert.ok(h.notify.domainEvents.some(hasState('Paused', 'Dump')), 'paused for the dump');
    await h.notify.waitDomain((e) => e.at >= done.at && e.domain.Status.Status === 'Running', 10_000, 'Running after the dump');

    // The same file again: nothing happens (the handler repeats its request until it sees the end).
    const events = h.notify.domainEvents.length;
    assert.equal(await cmd.virtualMachineMemoryDump(vmi, `/var/run/kubevirt/hotplug-disks/dump/${file}`), { success: true, message: '' });
    await new Promise((res) => setTimeout(res, 300));
    assert.is(h.notify.domainEvents.length, events, 'no new dump');
    assert.equal(h.runtime.manager.getDomain()?.Spec.Metadata.KubeVirt.MemoryDump, md);
  });
});

test('a dump that cannot be written is Failed with the reason; bad requests are refused', async () => {
  await withHarness('uid-dumpfail', async (h, cmd) => {
    const vmi = testVmi('testvm', 'uid-dumpfail');
    const early = await cmd.virtualMachineMemoryDump(vmi, '/var/run/kubevirt/hotplug-disks/x/a.memory.dump');
    assert.is(early.success, false);
    assert.match(early.message, /VirtualMachineMemoryDump: domain default_testvm is not defined/);
    assert.is((await cmd.syncVirtualMachine(vmi)).success, true);
    await h.notify.waitDomain(hasState('Running', 'Unknown'), 10_000, 'Running');
    assert.equal(await cmd.virtualMachineMemoryDump(vmi, 'relative/a.memory.dump'), { success: false, message: 'VirtualMachineMemoryDump: dumpPath "relative/a.memory.dump" is not an absolute path' });
    assert.equal(await cmd.call('VirtualMachineMemoryDump', { vmi: { vmiJson: Buffer.from('x') }, dumpPath: '/a' }), { success: false, message: 'No valid vmi object present in command server request' });
    const file = 'testvm-missing-20260101-000000.memory.dump';
    assert.is((await cmd.virtualMachineMemoryDump(vmi, `/no/such/dir/${file}`)).success, true, 'accepted: the result comes in the domain');
    const failed = await h.notify.waitDomain(finished(file), 20_000, 'the dump failed');
    const md = dumpOf(failed)!;
    assert.is(md.Failed, true);
    assert.match(md.FailureReason, /^Domain memory dump failed: .*No such file or directory/);
    assert.ok(md.EndTimestamp);
    assert.is(existsSync(join(h.dir, 'root/no/such/dir')), false);
    assert.is(h.runtime.manager.domainState.status, 'Running', 'the guest still runs');
  });
});

test.run();
