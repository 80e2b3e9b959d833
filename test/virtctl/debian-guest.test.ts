// One boot of a real distribution guest (Debian 12 with systemd, cloud-init, sshd and
// qemu-guest-agent: test/guest/debian-guest.ts) in the local mode, for every virtctl case where the
// guest's own software matters: ssh and scp through KubeVirt's virtctl and qvirt's CLI
// (debian-ssh-cases.ts), then spec.accessCredentials (debian-access-credentials-cases.ts). The VM,
// its users, keys and Secrets: debian-guest-vm.ts.
// Under TCG a boot of this guest costs about 90 s of CPU (cloud-init's three Python stages most of
// it), so the cases share one VM rather than booting one each.
// Boot budget, measured here (QEMU 7.2 TCG, 2 cores): VM created → agent connected 31-45 s on a
// quiet host or with both cores kept busy by `yes`, 65-130 s when other test runs' guests load it
// (load average 9-14); sshd answers 3-7 s after the agent (both wait for cloud-init's init stage).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { virtctl } from '../lib/virtctl.ts';
import { eventually, getVmi, runningVmi } from './lib.ts';
import { BOOT_MS, VM, consoleTail, createDebianGuestVm, dir, envView, local, setUid, startDebianGuestEnv, stopDebianGuestEnv } from './debian-guest-vm.ts';
import { sshCases } from './debian-ssh-cases.ts';
import { accessCredentialsCases, closeRootChannel } from './debian-access-credentials-cases.ts';

test.before(startDebianGuestEnv);
test.after(async () => {
  try { await closeRootChannel(); } finally { await stopDebianGuestEnv(); }
});

test('the Debian guest boots with cloud-init, its agent connects', async () => {
  await createDebianGuestVm();
  const started = Date.now();
  const vmi = await runningVmi(envView(), VM, [], BOOT_MS);
  setUid(vmi.metadata!.uid!);
  // Until the agent connects the guest is still booting: ssh attempts then only take CPU from it.
  await eventually(async () => (await getVmi(envView(), VM))?.status?.conditions?.some((c) => c.type === 'AgentConnected' && c.status === 'True'), BOOT_MS - (Date.now() - started), 'the VMI condition AgentConnected (qemu-guest-agent in the Debian guest)')
    .catch((err: Error) => { throw new Error(`${err.message}${consoleTail()}`); });
  console.log(`  agent connected ${((Date.now() - started) / 1000).toFixed(1)} s after the VM was created`);

  const info = await eventually(async () => {
    const r = await virtctl(local().kubeconfig, ['guestosinfo', VM], { timeoutMs: 60_000, env: { HOME: dir, KUBECONFIG: local().kubeconfig } });
    return r.code === 0 ? r : undefined;
  }, 60_000, 'virtctl guestosinfo answering');
  const parsed = JSON.parse(info.out) as { hostname?: string; os?: { id?: string; versionId?: string; name?: string; prettyName?: string } };
  assert.is(parsed.os?.id, 'debian', info.out);
  assert.is(parsed.os?.versionId, '12', info.out);
  assert.match(parsed.os?.prettyName ?? '', /^Debian GNU\/Linux 12/);
  assert.is(parsed.hostname, VM, 'cloud-init set the hostname from the NoCloud meta-data (the VMI name)');
});

sshCases(test);
accessCredentialsCases(test);

test.run();
