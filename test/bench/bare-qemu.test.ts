// The density bench's machine baseline (bench/bare-qemu.ts): the launcher's argv for a VMI, QEMU taken
// to "running" with no launcher, stopped without leaks; and the argv comparison the bench checks with.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { argvDifference, bareDensity, prepareBareQemu } from '../../bench/bare-qemu.ts';
import { isVcpuThread, processCpuMs, threadCpuMs } from '../../bench/proc-cpu.ts';
import { importTestGuest, testGuestVmiYaml } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { loadVmiManifest } from '../../src/local/manifest.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('test', { level: 'warn' });

test('argvDifference: the same argv under different roots is the same; anything else is named', () => {
  const rows: Array<[string[], string, string[], string, string | undefined]> = [
    [['-pidfile', '/r1/x/qemu.pid', '-m', '128'], '/r1', ['-pidfile', '/r2/x/qemu.pid', '-m', '128'], '/r2', undefined],
    [['-m', '128'], '/r1', ['-m', '256'], '/r2', 'argument 1: "128" vs "256"'],
    [['-m', '128'], '/r1', ['-m', '128', '-S'], '/r2', 'argument 2: undefined vs "-S"'],
    [['-kernel', '/r1/k'], '/r1', ['-kernel', '/elsewhere/k'], '/r2', 'argument 1: "<root>/k" vs "/elsewhere/k"'],
  ];
  for (const [a, ra, b, rb, want] of rows) assert.is(argvDifference({ args: a, root: ra }, { args: b, root: rb }), want, JSON.stringify([a, b]));
});

test('processCpuMs / threadCpuMs: this busy process is charged, a missing pid is NaN', () => {
  // Spin until Node itself counts 60 ms of CPU (not wall time: the machine may be busy).
  const before = processCpuMs(process.pid);
  const u0 = process.cpuUsage();
  const used = () => { const u = process.cpuUsage(u0); return (u.user + u.system) / 1000; };
  while (used() < 60) { /* spin */ }
  const after = processCpuMs(process.pid);
  assert.ok(after - before >= 45, `charged ${after - before} ms for 60 ms of CPU`);
  const split = threadCpuMs(process.pid, (comm) => comm === 'node' || comm === 'MainThread');
  assert.ok(split.part + split.rest >= after - 10, 'the threads add up to the process');
  assert.ok(Number.isNaN(processCpuMs(2 ** 22 + 1)));
  assert.ok(isVcpuThread('CPU 0/TCG') && isVcpuThread('CPU 12/KVM') && !isVcpuThread('qemu-system-x86') && !isVcpuThread('IO mon_iothread'));
});

test('bare QEMU: the launcher\'s argv for the VMI, two started 100 ms apart to "running", then gone', async () => {
  const work = tempDir('qbt');
  try {
    const store = new ImageStore(join(work.path, 'store'));
    await importTestGuest(store);
    const manifest = join(work.path, 'vmi.yaml');
    writeFileSync(manifest, testGuestVmiYaml('bare'));
    const vmi = await loadVmiManifest(manifest);
    const opts = { store, cacheDir: join(work.path, 'cache'), log };
    const qs = [await prepareBareQemu(vmi, join(work.path, 'a'), opts), await prepareBareQemu(vmi, join(work.path, 'b'), opts)];
    const [a, b] = qs as [typeof qs[0], typeof qs[0]];
    // The launcher's argv: its supervisor's additions are there, and both roots give the same argv.
    for (const flag of ['-S', '-no-shutdown', '-pidfile', '-kernel']) assert.ok(a.args.includes(flag), flag);
    assert.ok(a.args.some((x) => /(^|,)fd=3(,|$)/.test(x)), 'QMP on fd 3');
    assert.is(argvDifference(a, b), undefined);
    assert.ok(existsSync(a.args[a.args.indexOf('-kernel') + 1]!), 'kernel-boot files are in place');

    const starts = await bareDensity(qs, 100);
    assert.is(starts.length, 2);
    for (const s of starts) {
      assert.ok(s.ms > 0 && s.ms < 60_000, `start took ${s.ms} ms`);
      assert.ok(s.qemuCpuMs > 0, `QEMU's own CPU ${s.qemuCpuMs} ms`);
    }
    // Stopped: the pid in each pidfile is gone.
    for (const q of qs) {
      const pid = Number(readFileSync(q.args[q.args.indexOf('-pidfile') + 1]!, 'utf8').trim());
      assert.ok(pid > 1);
      assert.not.ok(existsSync(`/proc/${pid}/stat`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '), `QEMU ${pid} still runs`);
    }
    await Promise.all(qs.map((q) => q.cleanup()));
  } finally {
    work.cleanup();
  }
});

test.run();
