// The accessCredentials cases of test/virtctl/debian-guest.test.ts, on its one Debian guest VM
// (debian-guest-vm.ts), logged into with a real `ssh` through `qvirt ssh`:
//  - `boot-keys`, propagationMethod noCloud: cloud-init's meta-data public-keys at boot (root's
//    authorized_keys: the user data defines no default user and lets root log in);
//  - `agent-keys`, propagationMethod qemuGuestAgent users [debian]: debian's authorized_keys is the
//    Secret's keys, kept in step while the VM runs — a key added to the Secret logs in within a
//    bound, a key taken out no longer does, the VM never restarts;
//  - `passwords`, userPassword qemuGuestAgent: debian's password.
// Then an agent without guest-ssh-add-authorized-keys (blocked in qemu-ga.conf, as an agent older
// than 5.2): the file is written through guest-exec and the file commands, with KubeVirt's Warning;
// and the agent stopped: AccessCredentialsSynchronized False "Guest agent is offline" until it is
// back. A propagation is bounded by the pod runner's rewrite of the mounted Secret (at once) plus
// the launcher's next check (KubeVirt's 15 s) plus a few agent commands.
// Under TCG an ssh login costs the guest seconds of CPU (its key exchange), and retrying logins
// through a 15 s propagation took ~35 of them: the wait for a change reads debian's authorized_keys
// over one root connection kept open (OpenSSH's ControlMaster), then one login proves it.
// These cases restart and stop the guest's agent: they run after the ssh cases.
import * as assert from 'uvu/assert';
import type { Test } from 'uvu';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { eventually, getVmi } from './lib.ts';
import { BOOT_MS, PASSWORD, VM, consoleTail, dir, envView, keyFile, local, pub, qvirt, uid, type KeyName, type Run } from './debian-guest-vm.ts';

/** Secret changed → the guest has it: the launcher's 15 s check, agent commands, slack for a loaded host. */
const PROPAGATION_MS = 60_000;
let bootId = '';

let sshRuns = 0;
/** `ssh user@vmi/VM command` with key `k` only (BatchMode: a refused key fails, never prompts). */
const ssh = (user: string, k: KeyName, command: string) => (sshRuns++, qvirt(['ssh', `${user}@vmi/${VM}`, '-i', keyFile(k),
  '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o LogLevel=ERROR', '-t', '-o BatchMode=yes', '-t', '-o IdentitiesOnly=yes',
  '--command', command]));

/** The root connection's control socket (openRootChannel). */
const rootControl = () => join(dir, 'root.ctl');

/**
 * Logs root in (the noCloud key) and leaves the connection open in the background (ControlPersist):
 * guestFile's commands then run on it without a new key exchange. Closed in test.after.
 */
async function openRootChannel(): Promise<void> {
  const r = await qvirt(['ssh', `root@vmi/${VM}`, '-i', keyFile('n'),
    '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o LogLevel=ERROR', '-t', '-o BatchMode=yes', '-t', '-o IdentitiesOnly=yes',
    '-t', '-o ControlMaster=yes', '-t', `-o ControlPath=${rootControl()}`, '-t', '-o ControlPersist=900', '--command', 'true']);
  assert.is(r.code, 0, `root's connection kept open: ${r.err}`);
}

/** A guest file's content read on the root connection (undefined if it cannot be read). */
function guestFile(path: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('ssh', ['-o', `ControlPath=${rootControl()}`, '-o', 'ControlMaster=no', '-o', 'BatchMode=yes', 'root@qvirt-guest', `cat ${path}`], { timeout: 30_000 },
      (err, out) => resolve(err ? undefined : String(out)));
  });
}

/** Waits until debian's authorized_keys holds exactly `want` (qemu-ga joins them with newlines, no final one). */
async function debianKeysAre(want: ReadonlyArray<KeyName>, what: string): Promise<void> {
  const expected = want.map(pub).join('\n');
  let last: string | undefined;
  await eventually(async () => (last = await guestFile('/home/debian/.ssh/authorized_keys'))?.trim() === expected, PROPAGATION_MS, what, 1000)
    .catch((err: Error) => { throw new Error(`${err.message}; debian's authorized_keys: ${JSON.stringify(last)}`); });
}

/** Waits until `user` logs in with key `k` (and the command prints what `check` wants); returns the output and the time it took. */
async function loginWorks(user: string, k: KeyName, timeoutMs: number, what: string, command = 'true'): Promise<{ out: string; ms: number }> {
  const t0 = Date.now();
  let last: Run | undefined;
  const out = await eventually(async () => {
    last = await ssh(user, k, command);
    return last.code === 0 ? last.out : undefined;
  }, timeoutMs, what, 2000).catch((err: Error) => {
    throw new Error(`${err.message}; last ssh: code ${last?.code} ${last?.err.trim()}${consoleTail(2000)}`);
  });
  return { out, ms: Date.now() - t0 };
}

async function loginRefused(user: string, k: KeyName, timeoutMs: number, what: string): Promise<void> {
  let last: Run | undefined;
  await eventually(async () => {
    last = await ssh(user, k, 'true');
    return last.code !== 0 && /Permission denied \(publickey/.test(last.err);
  }, timeoutMs, what, 2000).catch((err: Error) => { throw new Error(`${err.message}; last ssh: code ${last?.code} ${last?.err.trim()}`); });
}

const condition = (v: VirtualMachineInstance | undefined) => v?.status?.conditions?.find((c) => c.type === 'AccessCredentialsSynchronized');

async function eventsOfVmi(): Promise<Array<{ type: string; reason: string; message: string }>> {
  const list = await local().client.list<KubeObject & { type?: string; reason?: string; message?: string; involvedObject?: { kind?: string; name?: string; uid?: string } }>(Resources.events, { namespace: 'default' });
  return list.items.filter((e) => e.involvedObject?.kind === 'VirtualMachineInstance' && e.involvedObject.name === VM && e.involvedObject.uid === uid())
    .map((e) => ({ type: e.type ?? '', reason: e.reason ?? '', message: e.message ?? '' }));
}

async function setSecret(name: string, data: Record<string, string>): Promise<void> {
  const cur = await local().client.get<KubeObject & { data?: Record<string, string> }>(Resources.secrets, 'default', name);
  await local().client.update(Resources.secrets, { ...cur, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) });
}

/** Closes the kept-open root connection (and its qvirt port-forward). */
export async function closeRootChannel(): Promise<void> {
  console.log(`  ${sshRuns} ssh logins tried by the accessCredentials cases`);
  await promisify(execFile)('ssh', ['-o', `ControlPath=${rootControl()}`, '-O', 'exit', 'root@qvirt-guest'], { timeout: 10_000 }).catch(() => undefined);
}

export function accessCredentialsCases(test: Test): void {
  test('at boot: the noCloud key logs root in, the agent\'s Secret logs debian in, the password is set; AccessCredentialsSynchronized True', async () => {
    assert.ok(uid(), 'the VM of the first test runs');
    // noCloud: cloud-init put the key there at boot (root's authorized_keys, without the disable_root prefix).
    const root = await loginWorks('root', 'n', BOOT_MS, 'root logging in with the noCloud key', 'cat /root/.ssh/authorized_keys; cat /proc/sys/kernel/random/boot_id');
    const rootLines = root.out.trim().split('\n');
    assert.is(rootLines[0], pub('n'));
    bootId = rootLines.at(-1)!;
    await openRootChannel();

    // qemuGuestAgent: debian has no key from cloud-init; the launcher's first check after the agent is up gives it key A.
    await debianKeysAre(['a'], 'key A in debian\'s authorized_keys');
    const deb = await loginWorks('debian', 'a', PROPAGATION_MS, 'debian logging in with key A from the agent-keys Secret', 'cat ~/.ssh/authorized_keys');
    assert.is(deb.out.trim(), pub('a'));

    const v = await eventually(async () => { const x = await getVmi(envView(), VM); return condition(x)?.status === 'True' ? x : undefined; }, PROPAGATION_MS, 'AccessCredentialsSynchronized True');
    const c = condition(v)!;
    assert.equal({ status: c.status, reason: c.reason, message: c.message }, { status: 'True', reason: undefined, message: undefined });
    assert.ok(c.lastTransitionTime);
    assert.ok((await eventsOfVmi()).some((e) => e.type === 'Normal' && e.reason === 'AccessCredentialsSyncSuccess' && e.message === 'Access credentials sync successful.'));

    // The password from the Secret: debian's shadow entry is its hash (checked with the guest's own crypt()).
    const pw = await ssh('debian', 'a', `sudo perl -e '$h = (getpwnam("debian"))[1]; print crypt($ARGV[0], $h) eq $h ? "match" : "differs: $h"' '${PASSWORD}'`);
    assert.is(pw.out, 'match', pw.err);
  });

  test('a key added to the Secret logs in without a restart; a key taken out no longer does', async () => {
    assert.ok(uid(), 'the VM of the first test runs');
    const changed = Date.now();
    await setSecret('agent-keys', { 'key-a': `${pub('a')}\n`, 'key-b': `${pub('b')}\n` });
    await debianKeysAre(['a', 'b'], 'key B added to debian\'s authorized_keys');
    const added = await loginWorks('debian', 'b', PROPAGATION_MS, 'debian logging in with key B, added to the Secret', 'cat ~/.ssh/authorized_keys');
    assert.equal(added.out.trim().split('\n'), [pub('a'), pub('b')]);
    console.log(`  key B usable ${((Date.now() - changed) / 1000).toFixed(1)} s after the Secret changed (its login took ${(added.ms / 1000).toFixed(1)} s)`);

    await setSecret('agent-keys', { 'key-b': `${pub('b')}\n` });
    await debianKeysAre(['b'], 'key A gone from debian\'s authorized_keys');
    await loginRefused('debian', 'a', PROPAGATION_MS, 'key A refused once taken out of the Secret');
    // qemu-ga writes the keys joined by newlines, with no final one.
    const after = await ssh('debian', 'b', 'cat ~/.ssh/authorized_keys; echo; cat /proc/sys/kernel/random/boot_id');
    assert.equal(after.out.trim().split('\n'), [pub('b'), bootId], after.err);
    assert.is((await getVmi(envView(), VM))?.metadata?.uid, uid(), 'the same VMI throughout');
  });

  test('an agent without guest-ssh-add-authorized-keys: the file written through guest-exec and file commands, with KubeVirt\'s deprecated-flow Warning', async () => {
    assert.ok(uid(), 'the VM of the first test runs');
    const block = await ssh('debian', 'b', "printf '[general]\\nblock-rpcs=guest-ssh-add-authorized-keys\\n' | sudo tee /etc/qemu/qemu-ga.conf >/dev/null && sudo systemctl restart qemu-guest-agent && systemctl is-active qemu-guest-agent");
    assert.is(block.out.trim(), 'active', block.err);
    await setSecret('agent-keys', { 'key-b': `${pub('b')}\n`, 'key-c': `${pub('c')}\n` });
    await debianKeysAre(['b', 'c'], 'key C in debian\'s authorized_keys, by the file flow');
    const c = await loginWorks('debian', 'c', PROPAGATION_MS, 'debian logging in with key C, written by the file flow', 'stat -c "%a %U:%G %n" ~/.ssh ~/.ssh/authorized_keys; cat ~/.ssh/authorized_keys');
    const lines = c.out.trim().split('\n');
    assert.equal(lines.slice(0, 2), ['700 debian:debian /home/debian/.ssh', '600 debian:debian /home/debian/.ssh/authorized_keys']);
    // KubeVirt's file flow joins the keys with newlines and writes no final one.
    assert.equal(lines.slice(2), [pub('b'), pub('c')]);
    await eventually(async () => (await eventsOfVmi()).some((e) => e.type === 'Warning' && e.reason === 'AccessCredentialsSyncSuccess'
      && e.message === 'Used deprecated method to set SSH keys. It will be removed in a future release. Update qemu guest agent to 5.2 or newer to keep SSH key injection working.'), 20_000, 'the deprecated-flow Warning');
    assert.is(condition(await getVmi(envView(), VM))?.status, 'True');
  });

  test('the agent stopped: AccessCredentialsSynchronized False "Guest agent is offline" with a Warning; the change lands once it is back', async () => {
    assert.ok(uid(), 'the VM of the first test runs');
    const stop = await ssh('debian', 'b', 'sudo rm -f /etc/qemu/qemu-ga.conf && sudo systemctl stop qemu-guest-agent; systemctl is-active qemu-guest-agent');
    assert.is(stop.out.trim(), 'inactive', stop.err);
    await setSecret('agent-keys', { 'key-b': `${pub('b')}\n` });
    const v = await eventually(async () => { const x = await getVmi(envView(), VM); return condition(x)?.status === 'False' ? x : undefined; }, PROPAGATION_MS, 'AccessCredentialsSynchronized False');
    assert.equal({ status: condition(v)?.status, message: condition(v)?.message }, { status: 'False', message: 'Guest agent is offline' });
    assert.ok((await eventsOfVmi()).some((e) => e.type === 'Warning' && e.reason === 'AccessCredentialsSyncFailed' && e.message === 'Access credentials sync failed: Guest agent is offline'));
    // Key C still works: nothing reached the guest while the agent was away.
    const start = await ssh('debian', 'c', 'sudo systemctl start qemu-guest-agent; systemctl is-active qemu-guest-agent');
    assert.is(start.out.trim(), 'active', start.err);
    await debianKeysAre(['b'], 'key C gone from debian\'s authorized_keys once the agent is back');
    await loginRefused('debian', 'c', PROPAGATION_MS, 'key C refused once the agent is back and the change applied');
    await eventually(async () => condition(await getVmi(envView(), VM))?.status === 'True', PROPAGATION_MS, 'AccessCredentialsSynchronized True again');
  });
}
