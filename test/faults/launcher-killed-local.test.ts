// A launcher SIGKILLed under the local mode: its VMI goes Failed within seconds and the VM's run
// strategy (Always) brings a new VMI up, with exactly one QEMU for the VM at the end. Before the
// node agent read a dead launcher from its command socket refusing connections, the VMI waited for
// the 30 s watchdog (44 s to the new VMI, issue 22).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { startEnv, getVmi, runningVmi, testVm, type Env } from '../virtctl/lib.ts';
import { waitFor } from '../lib/within.ts';
import { computePid, launcherPodOf, processGone, qemuOf } from './lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvf'); });
test.after(async () => { await env?.stop(); });

/** How soon a SIGKILLed launcher's VMI must be Failed (or gone): seconds, not the watchdog's 30. */
const FAILED_WITHIN_MS = 10_000;

test('launcher SIGKILLed: the VMI Failed within seconds, a new VMI Running, one QEMU', async () => {
  const name = 'crash-launcher';
  await env.local.client.create(Resources.virtualMachines, testVm(name, 'Always'));
  try {
    const first = await runningVmi(env, name);
    const uid = first.metadata!.uid!;
    const launcher = await waitFor('the launcher pod\'s compute pid', async () => computePid(await launcherPodOf(env.local.client, 'default', uid)), 30_000, 100);
    const qemu = await waitFor('the VM\'s QEMU', () => qemuOf('default', name)[0], 30_000, 100);

    const killedAt = Date.now();
    process.kill(launcher, 'SIGKILL');
    await waitFor(`QEMU ${qemu} gone with its launcher ${launcher}`, () => processGone(qemu), 5_000, 50);
    const qemuGoneMs = Date.now() - killedAt;
    await waitFor(`VMI ${uid} Failed or replaced after its launcher was killed`, async () => {
      const v = await getVmi(env, name);
      return v === undefined || v.metadata?.uid !== uid || v.status?.phase === 'Failed';
    }, 120_000, 100);
    const failedMs = Date.now() - killedAt;
    const second = await runningVmi(env, name, [uid]);
    const runningMs = Date.now() - killedAt;
    console.log(`launcher SIGKILL → QEMU gone ${qemuGoneMs} ms, VMI Failed ${failedMs} ms, new VMI Running ${runningMs} ms`);
    assert.ok(failedMs <= FAILED_WITHIN_MS, `VMI Failed ${failedMs} ms after its launcher was killed (bound ${FAILED_WITHIN_MS} ms)`);
    assert.is.not(second.metadata!.uid, uid);
    const qemus = await waitFor('exactly one QEMU for the VM', () => { const q = qemuOf('default', name); return q.length === 1 ? q : undefined; }, 30_000, 200);
    assert.is.not(qemus[0], qemu);
  } finally {
    await env.local.client.delete(Resources.virtualMachines, 'default', name).catch(() => undefined);
    await waitFor('no QEMU left for the VM', () => qemuOf('default', name).length === 0, 60_000, 200);
  }
});

test.run();
