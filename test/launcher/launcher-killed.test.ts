// A launcher killed with SIGKILL takes its QEMU with it: a real `qvirt launcher` process (started by
// the single-VM node, src/local/single-vm.ts) running the test guest under TCG is SIGKILLed, and
// its QEMU — re-parented, no launcher left to end it — must be gone within seconds (the kernel's
// parent-death signal, src/process/parent-death.ts), or a second QEMU would be started on
// the same disks by the VM controller. Its TPM's swtpm goes the same way.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importTestGuest, testGuestVmiYaml } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { loadVmiManifest } from '../../src/local/manifest.ts';
import { SingleVm } from '../../src/local/single-vm.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { processGone } from '../launcher-runtime/lib.ts';
import { tempDir } from '../lib/tmp.ts';
import { waitFor, within } from '../lib/within.ts';

const log = componentLogger('test', { level: 'warn' });

/** The children of `pid` whose executable's path includes `name`. */
function children(pid: number, name: string): number[] {
  let list: string;
  try { list = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8'); } catch { return []; }
  return list.trim().split(/\s+/).filter(Boolean).map(Number).filter((c) => {
    try { return readlinkSync(`/proc/${c}/exe`).includes(name); } catch { return false; }
  });
}

test('launcher SIGKILLed with its VM running: its QEMU, and the swtpm of its TPM, are gone within seconds', async () => {
  const work = tempDir('qvk');
  const store = new ImageStore(join(work.path, 'store'));
  await importTestGuest(store);
  const file = join(work.path, 'vm.yaml');
  writeFileSync(file, testGuestVmiYaml('killed'));
  const vmi = await loadVmiManifest(file);
  // A TPM (its swtpm must go too). Without the kernel and initrd: a TPM with kernelBoot's initrd under
  // BIOS is refused (launcher/convert/tpm.ts), and what runs in the guest does not matter here.
  vmi.spec.domain.devices.tpm = {};
  delete vmi.spec.domain.firmware;
  const launcherLog = join(work.path, 'launcher.log');
  const vm = new SingleVm({ vmi, root: join(work.path, 'r'), allowEmulation: true, imageStore: store, log, launcherLog, cacheDir: join(work.path, 'cache') });
  let qemu: number | undefined;
  let swtpm: number | undefined;
  let launcherKilled = false;
  try {
    await vm.start();
    const launcher = vm.launcherPid!;
    await waitFor('the VMI Running', () => vm.currentPhase === 'Running', 90_000, 100)
      .catch((err: Error) => { throw new Error(`${err.message}; launcher log: ${readFileSync(launcherLog, 'utf8').slice(-3000)}`); });
    qemu = await waitFor('QEMU as the launcher\'s child', () => children(launcher, 'qemu-system')[0], 10_000, 50);
    swtpm = await waitFor('swtpm as the launcher\'s child', () => children(launcher, 'swtpm')[0], 10_000, 50);
    process.kill(launcher, 'SIGKILL');
    launcherKilled = true;
    await waitFor(`QEMU (pid ${qemu}) gone after its launcher (pid ${launcher}) was SIGKILLed`, () => processGone(qemu!), 5_000, 50);
    await waitFor(`swtpm (pid ${swtpm}) gone after its launcher was SIGKILLed`, () => processGone(swtpm!), 5_000, 50);
    assert.is((await within(vm.done, 10_000, 'the single-VM node to see the launcher gone')).phase, 'Failed');
  } finally {
    for (const pid of [qemu, swtpm]) {
      if (pid !== undefined && !processGone(pid)) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
    }
    if (!launcherKilled) await vm.kill();
    await within(vm.done, 30_000, 'the single-VM node to end');
    work.cleanup();
  }
});

test.run();
