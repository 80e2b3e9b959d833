// Block migration between two launcher runtimes (two "pods", real QEMU under TCG, real gRPC): the
// guest has a local disk (a qcow2 overlay over a base image, as a containerDisk is), writes a marker
// to it before the migration and keeps writing numbered blocks during it; each side's overlay is its
// own file, so only the NBD mirror can bring the source's writes to the target. Two forwarders
// stand in for the handlers' proxies (the migration stream and the disks' stream). On the target
// the guest reads back, past its page cache, the marker and the block it wrote last on the source.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { CmdClient } from '../../src/proto/launcher-client.ts';
import { BLOCK_MIGRATION_PORT, migrationSocketPath } from '../../src/api/migration.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { kernelCmdline, type GuestArtifacts } from '../../src/local/guest/guest.ts';
import { guestImages, harness, hasState, processGone, testVmi, waitFor, waitSerial, type Harness } from '../launcher-runtime/lib.ts';
import { blockPasses, blockPassesAcross, SOURCE_ONLY_DEVICE, unixForwarder } from './lib.ts';
import { tempDir } from '../lib/tmp.ts';

const guest = await guestImages();

/** One side: the test guest with a console shell on a socket and a local disk (overlay over `base`); `extraArgs` appended to QEMU's. */
async function side(g: GuestArtifacts, uid: string, base: string, extraArgs: string[] = []): Promise<{ h: Harness; serialLog: () => string; console: () => string }> {
  let serialLog = '';
  let consoleSock = '';
  const h: Harness = await harness({
    uid,
    notifyTimings: { intervalMs: 100, totalTimeoutMs: 3000 },
    finalNotifyTimeoutMs: 2000,
    start: async () => {
      const dir = h.runDir;
      serialLog = join(dir, 'serial.log');
      consoleSock = join(dir, 'serial.sock');
      const top = join(dir, 'disk.qcow2');
      execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', base, '-F', 'raw', top]);
      const cache = { direct: false, 'no-flush': false };
      const argv = [
        '-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-m', '256', '-smp', '1',
        '-nodefaults', '-no-user-config', '-display', 'none',
        '-kernel', g.kernel, '-initrd', g.initrd, '-append', `${kernelCmdline} panic=-1 qvirt.ga=0 qvirt.dhcp=0`,
        '-chardev', `socket,id=serial0,path=${consoleSock},server=on,wait=off,logfile=${serialLog},logappend=on`, '-device', 'isa-serial,chardev=serial0',
        '-blockdev', JSON.stringify({ driver: 'file', filename: base, 'node-name': 'libvirt-2-storage', 'read-only': true, cache }),
        '-blockdev', JSON.stringify({ driver: 'file', filename: top, 'node-name': 'libvirt-1-storage', 'auto-read-only': true, discard: 'unmap', cache }),
        '-blockdev', JSON.stringify({ 'node-name': 'libvirt-1-format', 'read-only': false, discard: 'unmap', cache, driver: 'qcow2', file: 'libvirt-1-storage', backing: 'libvirt-2-storage' }),
        '-device', JSON.stringify({ driver: 'virtio-blk-pci', drive: 'libvirt-1-format', id: 'ua-scratch', serial: 'BLKMIG', 'write-cache': 'on' }),
        ...extraArgs,
      ];
      return {
        argv, domain: { hypervisor: 'qemu' },
        devices: [{ alias: 'scratch', kind: 'disk', qemuId: 'ua-scratch', driver: 'virtio-blk-pci', nodeNames: ['libvirt-1-format', 'libvirt-1-storage', 'libvirt-2-storage'] }],
      };
    },
  });
  return { h, serialLog: () => serialLog, console: () => consoleSock };
}

/** Types a line into the guest's console shell. */
function type(sock: string, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(sock, () => s.end(`${line}\n`, () => setTimeout(() => { s.destroy(); resolve(); }, 200)));
    s.on('error', reject);
  });
}

function vmiFor(uid: string, volume: VirtualMachineInstance['spec']['volumes'], allowPostCopy = false): VirtualMachineInstance {
  const vmi = testVmi('blk', uid, { domain: { devices: { disks: [{ name: 'scratch', disk: { bus: 'virtio' } }] }, memory: { guest: '256Mi' } }, volumes: volume } as Partial<VirtualMachineInstance['spec']>);
  vmi.status = { phase: 'Running', migrationState: { migrationUid: `vmim-${uid}`, migrationConfiguration: { allowPostCopy } } } as VirtualMachineInstance['status'];
  return vmi;
}


// Each pass: write block 4096+n, drop the page cache, read back the marker (sector 2048) and the block
// of the previous pass from the disk.
const LOOP = 'n=0; while :; do echo w$n | dd of=/dev/vda bs=512 seek=$((4096+n)) conv=fsync 2>/dev/null; echo 3 > /proc/sys/vm/drop_caches; '
  + 'b=$(dd if=/dev/vda bs=512 skip=2048 count=1 2>/dev/null | head -n 1); p=$(dd if=/dev/vda bs=512 skip=$((4095+n)) count=1 2>/dev/null | head -n 1); '
  + 'echo "QVIRT-BLK n=$n boot=$b prev=${p:-none}"; n=$((n+1)); usleep 300000; done &';

interface Pair {
  src: Awaited<ReturnType<typeof side>>; dst: Awaited<ReturnType<typeof side>>; srcCmd: CmdClient; dstCmd: CmdClient;
  fwdBlock: Awaited<ReturnType<typeof unixForwarder>>; vmi: VirtualMachineInstance; mark: string; pids: number[];
}

/** Two sides, the guest writing its disk on the source, the target waiting (-incoming): then `fn`. */
async function withPair(uid: string, fn: (p: Pair) => Promise<void>, allowPostCopy = false, sourceArgs: string[] = []): Promise<void> {
  const t = tempDir('blkm');
  const base = join(t.path, 'base.raw');
  execFileSync('qemu-img', ['create', '-q', '-f', 'raw', base, '64M']);
  const src = await side(guest, uid, base, sourceArgs);
  const dst = await side(guest, uid, base);
  const srcCmd = new CmdClient(join(src.h.shareDir, 'sockets', 'launcher-sock'), { timeoutMs: 60_000 });
  const dstCmd = new CmdClient(join(dst.h.shareDir, 'sockets', 'launcher-sock'), { timeoutMs: 60_000 });
  const fwd = await unixForwarder(migrationSocketPath(src.h.shareDir, uid), migrationSocketPath(dst.h.shareDir, uid));
  const fwdBlock = await unixForwarder(migrationSocketPath(src.h.shareDir, uid, BLOCK_MIGRATION_PORT), migrationSocketPath(dst.h.shareDir, uid, BLOCK_MIGRATION_PORT));
  const pids: number[] = [];
  try {
    const vmi = vmiFor(uid, [{ name: 'scratch', containerDisk: { image: 'example/disk' } }], allowPostCopy);
    assert.is((await srcCmd.syncVirtualMachine(vmi)).success, true);
    pids.push(src.h.runtime.manager.qemu!.pid);
    await waitSerial(src.serialLog(), 'QVIRT-GUEST-READY', 120_000);
    const mark = `MARK-${Date.now()}`;
    await type(src.console(), `echo ${mark} | dd of=/dev/vda bs=512 seek=2048 conv=fsync 2>/dev/null; echo QVIRT-MARK-''WRITTEN`);
    await waitSerial(src.serialLog(), 'QVIRT-MARK-WRITTEN', 30_000);
    await type(src.console(), LOOP);
    await waitFor('source writes', () => blockPasses(readFileSync(src.serialLog(), 'utf8')).length >= 3, 60_000);
    const r = await dstCmd.call('SyncMigrationTarget', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: null });
    assert.is(r.success, true, r.message);
    pids.push(dst.h.runtime.manager.qemu!.pid);
    await fn({ src, dst, srcCmd, dstCmd, fwdBlock, vmi, mark, pids });
  } finally {
    srcCmd.close();
    dstCmd.close();
    await fwd.close();
    await fwdBlock.close();
    await src.h.cleanup();
    await dst.h.cleanup();
    t.cleanup();
  }
  for (const pid of pids) assert.ok(processGone(pid), `QEMU ${pid} is gone`);
}

const migrateCall = (cmd: CmdClient, vmi: VirtualMachineInstance, options: Record<string, unknown>) =>
  cmd.call('MigrateVirtualMachine', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: Buffer.from(JSON.stringify(options)) });

test('block migration: a local disk\'s writes (before and during the migration) reach the target, no reboot', async () => {
  await withPair('uid-blk-ok', async ({ src, dst, srcCmd, fwdBlock, vmi, mark }) => {
    const srcPid = src.h.runtime.manager.qemu!.pid;
    const m = await migrateCall(srcCmd, vmi, { Bandwidth: '0', ParallelMigrationThreads: 8 });
    assert.is(m.success, true, m.message);
    await src.h.notify.waitDomain(hasState('Shutoff', 'Migrated'), 120_000, 'source Shutoff/Migrated');
    await dst.h.notify.waitDomain((e) => e.domain.Status.Status === 'Running' && Boolean(e.domain.Spec.Metadata.KubeVirt.Migration?.EndTimestamp), 30_000, 'target Running with EndTimestamp');
    await waitFor('source QEMU exit', () => processGone(srcPid), 20_000);

    const srcText = readFileSync(src.serialLog(), 'utf8');
    await waitFor('target reads', () => blockPasses(readFileSync(dst.serialLog(), 'utf8')).length >= 5, 60_000)
      .catch((e: Error) => { throw new Error(`${e.message}; the target's serial log ends: ${JSON.stringify(readFileSync(dst.serialLog(), 'utf8').slice(-800))}`); });
    // The two logs as one text (blockPassesAcross): a line may begin on the source and end on the target.
    const dstText = readFileSync(dst.serialLog(), 'utf8');
    const { all: passes, source: srcLines, target: dstLines } = blockPassesAcross(srcText, dstText);
    assert.equal(passes.map((l) => l.n), passes.map((_, i) => i), `no pass lost or repeated: ${passes.map((l) => l.n).join(' ')}; the source's log ends ${JSON.stringify(srcText.slice(-300))}, the target's begins ${JSON.stringify(dstText.slice(0, 300))}`);
    const lastSrc = srcLines.at(-1)!;
    const firstDst = dstLines[0]!;
    assert.not.ok(readFileSync(dst.serialLog(), 'utf8').includes('QVIRT-GUEST-BOOTED'), 'the target never booted the guest');
    assert.ok(firstDst.n <= lastSrc.n + 1, `the loop continues on the target (first ${firstDst.n}, source's last ${lastSrc.n})`);
    for (const l of [...srcLines, ...dstLines]) {
      assert.is(l.boot, mark, `pass ${l.n} read the marker written before the migration`);
      assert.is(l.prev, l.n === 0 ? 'none' : `w${l.n - 1}`, `pass ${l.n} read back the block of pass ${l.n - 1}`);
    }
    // The target's first pass read the block the source's guest wrote during the migration.
    assert.ok(srcLines.some((l) => l.n === firstDst.n - 1), `block w${firstDst.n - 1} was written on the source`);
    assert.ok(fwdBlock.connections >= 1, 'the disks went over the block migration socket');
    console.log(`    block migration: ${srcLines.length} passes on the source, ${dstLines.length} read back on the target; block socket connections ${fwdBlock.connections}`);
  });
});

test('block migration cancelled after the disks were in sync: the guest keeps running on the source with its disk, the mirrors and NBD nodes are gone, the target ends', async () => {
  await withPair('uid-blk-cancel', async ({ src, dst, srcCmd, vmi, mark }) => {
    const dstPid = dst.h.runtime.manager.qemu!.pid;
    // 1 MiB/s: the RAM takes long enough to cancel once the (small) overlay is mirrored.
    const m = await migrateCall(srcCmd, vmi, { Bandwidth: '1Mi', ParallelMigrationThreads: 8 });
    assert.is(m.success, true, m.message);
    const qmp = src.h.runtime.manager.qemu!.qmp;
    await waitFor('RAM migration running (the mirrors were ready)', () => (src.h.runtime.migration.outgoing?.lastInfo?.ram?.transferred ?? 0) > 0, 60_000);
    const jobs = await qmp.execute('query-block-jobs') as { device: string; ready: boolean }[];
    assert.equal(jobs.map((j) => [j.device, j.ready]), [['migration-mirror-0', true]], 'the mirror is ready while the RAM migrates');
    // The progress the node agent reports counts the disk with the RAM (libvirt's job info does).
    const job = (await src.h.runtime.manager.stats()).MigrateDomainJobInfo as { DataTotal: number };
    const ramTotal = src.h.runtime.migration.outgoing!.lastInfo!.ram!.total!;
    const diskTotal = src.h.runtime.migration.outgoing!.diskProgress!.total;
    assert.ok(diskTotal >= 65536, `the overlay's data is counted (${diskTotal} bytes)`);
    assert.is(job.DataTotal, ramTotal + diskTotal);
    const c = await srcCmd.call('CancelVirtualMachineMigration', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: null });
    assert.is(c.success, true, c.message);
    const meta = src.h.runtime.manager.migrationMetadata!;
    assert.equal([meta.Failed, meta.AbortStatus], [true, 'Succeeded']);
    assert.equal(await qmp.execute('query-block-jobs'), [], 'no mirror left');
    const nodes = await qmp.execute('query-named-block-nodes', { flat: true }) as { 'node-name': string }[];
    assert.equal(nodes.filter((n) => n['node-name'].startsWith('migration-')), [], 'no NBD node left');
    await waitFor('target QEMU exit', () => processGone(dstPid), 20_000);
    // The guest goes on writing and reading its disk on the source.
    const n = blockPasses(readFileSync(src.serialLog(), 'utf8')).length;
    await waitFor('more passes on the source', () => blockPasses(readFileSync(src.serialLog(), 'utf8')).length >= n + 5, 30_000);
    for (const l of blockPasses(readFileSync(src.serialLog(), 'utf8'))) {
      assert.is(l.boot, mark);
      assert.is(l.prev, l.n === 0 ? 'none' : `w${l.n - 1}`);
    }
  });
});

test('block migration switching to post-copy: the mirrors complete at the switch (pre-switchover), the disk\'s writes are on the target', async () => {
  await withPair('uid-blk-postcopy', async ({ src, dst, srcCmd, vmi, mark }) => {
    // 8 MiB/s and 2 s per GiB: post-copy starts while the RAM is still being sent.
    const m = await migrateCall(srcCmd, vmi, { Bandwidth: '8Mi', CompletionTimeoutPerGiB: 2, AllowPostCopy: true, AllowWorkloadDisruption: true });
    assert.is(m.success, true, m.message);
    await src.h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.Migration?.Mode === 'PostCopy', 60_000, 'source in PostCopy mode');
    await src.h.notify.waitDomain(hasState('Shutoff', 'Migrated'), 120_000, 'source Shutoff/Migrated');
    await dst.h.notify.waitDomain((e) => e.domain.Status.Status === 'Running' && Boolean(e.domain.Spec.Metadata.KubeVirt.Migration?.EndTimestamp), 60_000, 'target Running with EndTimestamp');
    await waitFor('target reads', () => blockPasses(readFileSync(dst.serialLog(), 'utf8')).length >= 3, 60_000);
    // The two logs as one text (blockPassesAcross): a line may begin on the source and end on the target.
    const { source: srcLines, target: dstLines } = blockPassesAcross(readFileSync(src.serialLog(), 'utf8'), readFileSync(dst.serialLog(), 'utf8'));
    assert.ok(srcLines.some((l) => l.n === dstLines[0]!.n - 1), `block w${dstLines[0]!.n - 1} was written on the source`);
    for (const l of [...srcLines, ...dstLines]) assert.equal([l.boot, l.prev], [mark, l.n === 0 ? 'none' : `w${l.n - 1}`], `pass ${l.n}`);
  }, true);
});

test('block migration whose target cannot be reached for the disks: the migration fails naming why, the guest keeps running on the source, nothing is left', async () => {
  await withPair('uid-blk-nonbd', async ({ src, srcCmd, fwdBlock, vmi, mark }) => {
    await fwdBlock.close();
    const m = await migrateCall(srcCmd, vmi, { Bandwidth: '0', ParallelMigrationThreads: 8 });
    assert.is(m.success, true, m.message);
    await waitFor('the migration fails', () => src.h.runtime.manager.migrationMetadata?.Failed === true, 30_000);
    const meta = src.h.runtime.manager.migrationMetadata!;
    assert.match(meta.FailureReason ?? '', /block migration: blockdev-add "migration-nbd-0" failed/);
    assert.ok(meta.EndTimestamp);
    assert.is(src.h.runtime.manager.domainState.status, 'Running');
    const qmp = src.h.runtime.manager.qemu!.qmp;
    assert.equal(await qmp.execute('query-block-jobs'), []);
    const nodes = await qmp.execute('query-named-block-nodes', { flat: true }) as { 'node-name': string }[];
    assert.equal(nodes.filter((n) => n['node-name'].startsWith('migration-')), []);
    const n = blockPasses(readFileSync(src.serialLog(), 'utf8')).length;
    await waitFor('more passes on the source', () => blockPasses(readFileSync(src.serialLog(), 'utf8')).length >= n + 3, 30_000);
    for (const l of blockPasses(readFileSync(src.serialLog(), 'utf8'))) assert.equal([l.boot, l.prev], [mark, l.n === 0 ? 'none' : `w${l.n - 1}`]);
  });
});

// The disks are mirrored and the source's block devices handed over before the device state is sent:
// a target that then fails to load it must give the source its disks back, writable (QEMU's return path).
test('block migration whose target fails to load the device state: the guest keeps running on the source and writing its disk', async () => {
  await withPair('uid-blk-badload', async ({ src, dst, srcCmd, vmi, mark }) => {
    const srcPid = src.h.runtime.manager.qemu!.pid;
    const dstPid = dst.h.runtime.manager.qemu!.pid;
    const m = await migrateCall(srcCmd, vmi, { Bandwidth: '0', ParallelMigrationThreads: 8 });
    assert.is(m.success, true, m.message);
    await waitFor('the migration fails', () => src.h.runtime.manager.migrationMetadata?.Failed === true, 120_000)
      .catch((e: Error) => { throw new Error(`${e.message}; source domain ${JSON.stringify(src.h.runtime.manager.domainState)}`); });
    assert.ok(src.h.runtime.manager.migrationMetadata!.EndTimestamp);
    assert.is(src.h.runtime.manager.domainState.status, 'Running');
    assert.not.ok(processGone(srcPid), 'the source QEMU still runs');
    await waitFor('target QEMU exit', () => processGone(dstPid), 20_000);
    const qmp = src.h.runtime.manager.qemu!.qmp;
    assert.equal(await qmp.execute('query-block-jobs'), [], 'no mirror left');
    const nodes = await qmp.execute('query-named-block-nodes', { flat: true }) as { 'node-name': string }[];
    assert.equal(nodes.filter((n) => n['node-name'].startsWith('migration-')), [], 'no NBD node left');
    // The guest writes and reads back its disk on the source: its block devices are active again.
    const n = blockPasses(readFileSync(src.serialLog(), 'utf8')).length;
    await waitFor('more passes on the source', () => blockPasses(readFileSync(src.serialLog(), 'utf8')).length >= n + 5, 30_000)
      .catch((e: Error) => { throw new Error(`${e.message}; the source's serial log ends: ${JSON.stringify(readFileSync(src.serialLog(), 'utf8').slice(-600))}`); });
    const passes = blockPasses(readFileSync(src.serialLog(), 'utf8'));
    assert.equal(passes.map((l) => l.n), passes.map((_, i) => i), 'no pass lost or repeated');
    for (const l of passes) assert.equal([l.boot, l.prev], [mark, l.n === 0 ? 'none' : `w${l.n - 1}`], `pass ${l.n}`);
  }, false, [...SOURCE_ONLY_DEVICE]);
});

test.run();
