// What block migration costs: a 256 MiB idle test guest (TCG) with a local disk (a qcow2 overlay over
// a raw base image, as a containerDisk is) migrated back and forth over unix sockets, median of 3,
// once as a plain live migration (the disk not copied: the baseline, measured in the same run) and
// once as a block migration with the launcher's own code (launcher/migration/block.ts: NBD exports
// on the target, sync=top mirrors, pause-before-switchover, mirrors completed while the guest is
// stopped, target resumed once its exports are gone), for an overlay holding 0 and 64 MiB of data.
// Same QMP settings as the launcher applies (unlimited bandwidth, 8 multifd channels on KVM; under TCG
// one stream and the guest stopped for the copy, launcher/migration/accelerator.ts).
//  Figures: total (mirror start → target resumed, wall; details: the mirrors' start → READY), and
//  QEMU's downtime, each as a ratio to the live migration's. The guest's own disk traffic is nil here (idle); the copy is the overlay's data.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGuest, kernelCmdline } from '../src/local/guest/guest.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { componentLogger } from '../src/log/logger.ts';
import { QemuProcess } from '../launcher/supervise/qemu-process.ts';
import { incomingMigrationSetup, parseMigrationOptions, sourceMigrationSetup } from '../launcher/migration/options.ts';
import { incomingArgv } from '../launcher/migration/target.ts';
import { sourceCompleted, targetCompleted } from './bare-migration.ts';
import { BlockMirrors, resumeAfterBlockMigration, startBlockExports, type MigratedDisk } from '../launcher/migration/block.ts';
import { onQmpEvents } from '../launcher/supervise/qmp-connection.ts';
import { median, report, saveResults } from './lib.ts';
import { copiesStoppedGuest, multifdChannels, runningAccelerator } from '../launcher/migration/accelerator.ts';

const RUNS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = componentLogger('bench', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' });
const DISK: MigratedDisk = { name: 'rootdisk', node: 'libvirt-1-format' };

interface Sample { total: number; downtime: number; diskBytes: number; mirrorMs: number }

async function run(dir: string, tag: string, block: boolean, dataMiB: number): Promise<Sample[]> {
  const g = await ensureGuest();
  const base = join(dir, `${tag}-base.raw`);
  execFileSync('qemu-img', ['create', '-q', '-f', 'raw', base, '256M']);
  const argv = (i: number) => {
    const top = join(dir, `${tag}-top${i}.qcow2`);
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', base, '-F', 'raw', top]);
    if (i === 0 && dataMiB > 0) execFileSync('qemu-io', ['-f', 'qcow2', '-c', `write -P 0x5a 0 ${dataMiB}M`, top], { stdio: 'ignore' });
    const cache = { direct: false, 'no-flush': false };
    return ['-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-m', '256', '-smp', '1', '-nodefaults', '-no-user-config', '-display', 'none',
      '-kernel', g.kernel, '-initrd', g.initrd, '-append', `${kernelCmdline} qvirt.shell=0 qvirt.ga=0 qvirt.dhcp=0`,
      '-chardev', `file,id=serial0,path=${join(dir, `${tag}-serial${i}.log`)}`, '-device', 'isa-serial,chardev=serial0',
      '-blockdev', JSON.stringify({ driver: 'file', filename: base, 'node-name': 'libvirt-2-storage', 'read-only': true, cache }),
      '-blockdev', JSON.stringify({ driver: 'file', filename: top, 'node-name': 'libvirt-1-storage', 'auto-read-only': true, discard: 'unmap', cache }),
      '-blockdev', JSON.stringify({ 'node-name': DISK.node, 'read-only': false, discard: 'unmap', cache, driver: 'qcow2', file: 'libvirt-1-storage', backing: 'libvirt-2-storage' }),
      '-device', JSON.stringify({ driver: 'virtio-blk-pci', drive: DISK.node, id: 'ua-rootdisk' })];
  };
  const options = parseMigrationOptions(JSON.stringify({ Bandwidth: '0Mi', ParallelMigrationThreads: 8 }));
  let src = await QemuProcess.start({ argv: argv(0), pidfile: join(dir, `${tag}-q0.pid`), log });
  await src.qmp.execute('cont');
  // The channels qvirt uses on this accelerator (8 on KVM, one stream under TCG: launcher/migration/accelerator.ts).
  const accelerator = await runningAccelerator(src.qmp);
  const channels = multifdChannels(8, accelerator);
  // Under TCG the launcher copies a stopped guest (accelerator.ts): so does this bench.
  const stopped = copiesStoppedGuest(accelerator);
  for (let i = 0; i < 600 && !readFileSync(join(dir, `${tag}-serial0.log`), 'utf8').includes('QVIRT-GUEST-READY'); i++) await sleep(100);
  await sleep(3000);
  const out: Sample[] = [];
  try {
    for (let i = 1; i <= RUNS; i++) {
      const dst = await QemuProcess.start({ argv: incomingArgv(argv(i), block), pidfile: join(dir, `${tag}-q${i}.pid`), log });
      const mig = join(dir, `${tag}-m${i}.sock`);
      const nbd = join(dir, `${tag}-n${i}.sock`);
      for (const s of incomingMigrationSetup({ allowPostCopy: false, parallelMigrationThreads: channels })) await dst.qmp.execute(s.execute, s.arguments);
      if (block) await startBlockExports(dst.qmp, [DISK], { kind: 'unix', path: nbd }, log);
      await dst.qmp.execute('migrate-incoming', { uri: `unix:${mig}` });
      const arrived = targetCompleted(dst.qmp, log, stopped && !block);
      const resumed = new Promise<number>((resolve) => { const sub = onQmpEvents(dst.qmp, ['RESUME'], () => { sub.close(); resolve(performance.now()); }, log); });
      if (block) {
        // As the launcher does: once the incoming migration completed, the exports go, then `cont`.
        resumeAfterBlockMigration(dst.qmp, [DISK], log);
      }
      for (const s of sourceMigrationSetup({ ...options, parallelMigrationThreads: channels }, block)) await src.qmp.execute(s.execute, s.arguments);
      const t0 = performance.now();
      let diskBytes = 0;
      let mirrorMs = 0;
      if (block) {
        const mirrors = await BlockMirrors.start(src.qmp, [DISK], { kind: 'unix', path: nbd }, log, { progressTimeoutMs: 150_000 });
        diskBytes = mirrors.total;
        mirrorMs = performance.now() - t0;
        const s = src;
        const switchover = onQmpEvents(s.qmp, ['MIGRATION'], (ev) => {
          if (ev.data?.status !== 'pre-switchover') return;
          switchover.close();
          void mirrors.complete().then(() => s.qmp.execute('migrate-continue', { state: 'pre-switchover' })).catch((err: unknown) => log.error({ err: String(err) }, 'completing the mirrors failed'));
        }, log);
      }
      const stoppedAt = performance.now();
      if (stopped) await src.qmp.execute('stop');
      await src.qmp.execute('migrate', { uri: `unix:${mig}` });
      const info = await sourceCompleted(src.qmp, tag);
      // The guest arrived stopped: the launcher's target resumes it (resumeMigratedGuest).
      if (stopped && !block) await arrived;
      const end = await resumed;
      out.push({ total: end - t0, downtime: stopped ? Math.max(info.downtime ?? 0, Math.round(end - stoppedAt)) : info.downtime ?? 0, diskBytes, mirrorMs });
      await src.terminate();
      src = dst;
    }
  } finally {
    await src.terminate();
  }
  return out;
}

const t = tempDir('qbm');
try {
  const live = await run(t.path, 'live', false, 64);
  for (const dataMiB of [0, 64]) {
    const b = await run(t.path, `block${dataMiB}`, true, dataMiB);
    const details = (k: keyof Sample) => ({ runs: b.length, min: Math.min(...b.map((x) => x[k])), max: Math.max(...b.map((x) => x[k])), diskBytes: median(b.map((x) => x.diskBytes)), mirrorToReadyMs: Math.round(median(b.map((x) => x.mirrorMs))) });
    report({ name: `block migration total, ${dataMiB} MiB in the overlay`, value: median(b.map((s) => s.total)), unit: 'ms', baseline: median(live.map((s) => s.total)), baselineName: 'live migration (disk not copied)', details: details('total') });
    report({ name: `block migration downtime, ${dataMiB} MiB in the overlay`, value: median(b.map((s) => s.downtime)), unit: 'ms', baseline: median(live.map((s) => s.downtime)), baselineName: 'live migration (disk not copied)', details: details('downtime') });
  }
} finally {
  t.cleanup();
}
process.exitCode = saveResults('block-migration') ? 0 : 1;
