// The launcher's access credential decisions (KubeVirt's virtwrap/access-credentials): which
// credentials the guest agent propagates, what each user's authorized_keys and password become from
// the mounted Secrets, when to propagate again, what the domain reports, the deprecated-flow
// warning, `getent passwd` parsing — and readSecretDir on a real mounted Secret's layout (kubelet's
// `..data` entries).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AccessCredentialMessage, INITIAL_PROPAGATION_STATE, afterPropagation, agentCredentials, credentialsSignature, deprecatedFlowWarning, desiredCredentials,
  parseAuthorizedKeys, passwdEntry, propagationResult, reloadReason, type AgentCredential, type SecretContent,
} from '../../launcher/access-credentials/credentials.ts';
import { authorizedKeysFileContent } from '../../launcher/access-credentials/authorized-keys-file.ts';
import { readSecretDir } from '../../launcher/access-credentials/manager.ts';
import type { AccessCredential, VirtualMachineInstance } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';

const tmp = tempDir('qv-ac');
test.after(() => tmp.cleanup());

const vmi = (accessCredentials: AccessCredential[]): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'default' },
  spec: { domain: { devices: {} }, accessCredentials },
});
const agentKey = (secretName: string, users: string[]): AccessCredential => ({ sshPublicKey: { source: { secret: { secretName } }, propagationMethod: { qemuGuestAgent: { users } } } });
const noCloudKey = (secretName: string): AccessCredential => ({ sshPublicKey: { source: { secret: { secretName } }, propagationMethod: { noCloud: {} } } });
const configDriveKey = (secretName: string): AccessCredential => ({ sshPublicKey: { source: { secret: { secretName } }, propagationMethod: { configDrive: {} } } });
const password = (secretName: string): AccessCredential => ({ userPassword: { source: { secret: { secretName } }, propagationMethod: { qemuGuestAgent: {} } } });

test('agentCredentials: only qemuGuestAgent propagation, in spec order; cloud-init keys and credentials without a secret are not the agent\'s', () => {
  assert.equal(agentCredentials(vmi([
    noCloudKey('nc'), agentKey('a', ['debian', 'root']), configDriveKey('cd'), password('pw'),
    { sshPublicKey: { source: {}, propagationMethod: { qemuGuestAgent: { users: ['x'] } } } },
    { userPassword: { source: {}, propagationMethod: { qemuGuestAgent: {} } } },
  ])), [
    { kind: 'sshPublicKey', secretName: 'a', users: ['debian', 'root'] },
    { kind: 'userPassword', secretName: 'pw' },
  ]);
  assert.equal(agentCredentials({ ...vmi([]), spec: { domain: { devices: {} } } }), []);
});

test('parseAuthorizedKeys: lines trimmed, blank ones dropped, CRLF tolerated', () => {
  assert.equal(parseAuthorizedKeys(' ssh-ed25519 AAA a@b \r\n\n\tssh-rsa BBB c\n'), ['ssh-ed25519 AAA a@b', 'ssh-rsa BBB c']);
  assert.equal(parseAuthorizedKeys(''), []);
});

const files = (...f: Array<[string, string]>): SecretContent => ({ files: f.map(([name, content]) => ({ name, content })) });
const KA = 'ssh-ed25519 AAAA key-a';
const KB = 'ssh-ed25519 BBBB key-b';
const KC = 'ssh-ed25519 CCCC key-c';

const desiredRows: Array<{ name: string; creds: AgentCredential[]; secrets: Record<string, SecretContent>; keys: Record<string, string[]>; passwords?: Record<string, string>; errors?: string[] }> = [
  {
    name: 'one secret, one user: every file\'s keys in file order',
    creds: [{ kind: 'sshPublicKey', secretName: 's', users: ['debian'] }],
    secrets: { s: files(['a', `${KA}\n`], ['b', `${KB}\n${KC}`]) },
    keys: { debian: [KA, KB, KC] },
  },
  {
    name: 'a key added to the secret: the whole list, so the guest gets it',
    creds: [{ kind: 'sshPublicKey', secretName: 's', users: ['debian'] }],
    secrets: { s: files(['a', `${KA}\n${KB}\n`]) },
    keys: { debian: [KA, KB] },
  },
  {
    name: 'a key taken out of the secret: not in the list, so it leaves the guest',
    creds: [{ kind: 'sshPublicKey', secretName: 's', users: ['debian'] }],
    secrets: { s: files(['a', `${KB}\n`]) },
    keys: { debian: [KB] },
  },
  {
    name: 'an empty secret: the user\'s file emptied',
    creds: [{ kind: 'sshPublicKey', secretName: 's', users: ['debian'] }],
    secrets: { s: files() },
    keys: { debian: [] },
  },
  {
    name: 'two secrets for one user, one secret for two users: keys per user, in credential order, each once',
    creds: [{ kind: 'sshPublicKey', secretName: 's1', users: ['debian', 'root'] }, { kind: 'sshPublicKey', secretName: 's2', users: ['debian'] }],
    secrets: { s1: files(['k', KA]), s2: files(['k', `${KB}\n${KA}`]) },
    keys: { debian: [KA, KB], root: [KA] },
  },
  {
    name: 'passwords: one file per user, trimmed; empty ones skipped; a later secret wins',
    creds: [{ kind: 'userPassword', secretName: 'p1' }, { kind: 'userPassword', secretName: 'p2' }],
    secrets: { p1: files(['debian', 'first\n'], ['root', '  \n']), p2: files(['debian', ' second ']) },
    keys: {},
    passwords: { debian: 'second' },
  },
  {
    name: 'an unreadable secret: its error, and its users left out (not emptied) while other users go on',
    creds: [{ kind: 'sshPublicKey', secretName: 'bad', users: ['debian'] }, { kind: 'sshPublicKey', secretName: 'ok', users: ['debian', 'root'] }, { kind: 'userPassword', secretName: 'pbad' }],
    secrets: { bad: { error: 'no dir' }, ok: files(['k', KB]), pbad: { error: 'no pw dir' } },
    keys: { root: [KB] },
    errors: ['no dir', 'no pw dir'],
  },
];
for (const r of desiredRows) {
  test(`desiredCredentials: ${r.name}`, () => {
    const d = desiredCredentials(r.creds, new Map(Object.entries(r.secrets)));
    assert.equal(Object.fromEntries(d.authorizedKeys), r.keys);
    assert.equal(Object.fromEntries(d.passwords), r.passwords ?? {});
    assert.equal(d.errors, r.errors ?? []);
  });
}

test('credentialsSignature: changes with any key, user or password, not with order of map insertion', () => {
  const c: AgentCredential[] = [{ kind: 'sshPublicKey', secretName: 's', users: ['a', 'b'] }, { kind: 'userPassword', secretName: 'p' }];
  const sig = (s: Record<string, SecretContent>) => credentialsSignature(desiredCredentials(c, new Map(Object.entries(s))));
  const base = sig({ s: files(['k', KA]), p: files(['a', 'x']) });
  assert.is(sig({ p: files(['a', 'x']), s: files(['k', KA]) }), base);
  assert.is.not(sig({ s: files(['k', `${KA}\n${KB}`]), p: files(['a', 'x']) }), base);
  assert.is.not(sig({ s: files(['k', KA]), p: files(['a', 'y']) }), base);
  assert.is.not(sig({ s: { error: 'e' }, p: files(['a', 'x']) }), base);
});

test('propagationResult: success with no message, else the last failure (what KubeVirt\'s metadata ends with)', () => {
  assert.equal(propagationResult([]), { Succeeded: true, Message: '' });
  assert.equal(propagationResult(['first', 'last']), { Succeeded: false, Message: 'last' });
  assert.equal(propagationResult([AccessCredentialMessage.agentOffline]), { Succeeded: false, Message: 'Guest agent is offline' });
});

const RESYNC = 300_000;
const reloadRows: Array<{ name: string; state: typeof INITIAL_PROPAGATION_STATE; sig: string; now: number; want: ReturnType<typeof reloadReason> }> = [
  { name: 'nothing applied yet', state: INITIAL_PROPAGATION_STATE, sig: 'x', now: 0, want: 'pending' },
  { name: 'the last attempt failed: again at the next check', state: { pending: true, applied: 'x', appliedAt: 0 }, sig: 'x', now: 1000, want: 'pending' },
  { name: 'applied and unchanged', state: { pending: false, applied: 'x', appliedAt: 0 }, sig: 'x', now: 15_000, want: undefined },
  { name: 'a secret changed', state: { pending: false, applied: 'x', appliedAt: 0 }, sig: 'y', now: 15_000, want: 'changed' },
  { name: 'unchanged for the resync period: everything again', state: { pending: false, applied: 'x', appliedAt: 0 }, sig: 'x', now: RESYNC, want: 'resync' },
];
for (const r of reloadRows) {
  test(`reloadReason: ${r.name}`, () => assert.is(reloadReason(r.state, r.sig, r.now, RESYNC), r.want));
}

test('afterPropagation: success records what was applied and when; failure keeps it and retries', () => {
  const ok = afterPropagation(INITIAL_PROPAGATION_STATE, 'x', { Succeeded: true, Message: '' }, 5);
  assert.equal(ok, { pending: false, applied: 'x', appliedAt: 5 });
  const failed = afterPropagation(ok, 'y', { Succeeded: false, Message: 'm' }, 9);
  assert.equal(failed, { pending: true, applied: 'x', appliedAt: 5 });
  assert.is(reloadReason(failed, 'y', 10), 'pending');
});

test('deprecatedFlowWarning: once per run of successes through the file flow; re-armed by a failure or the agent flow', () => {
  const ok = { Succeeded: true, Message: '' };
  const bad = { Succeeded: false, Message: 'm' };
  let sent = false;
  const step = (r: typeof ok, used: boolean) => { const w = deprecatedFlowWarning(sent, r, used); sent = w.sent; return w.send; };
  assert.equal([step(ok, true), step(ok, true), step(bad, true), step(ok, true), step(ok, false), step(ok, true)], [true, false, false, true, false, true]);
});

test('passwdEntry: home, uid and gid from getent; a short entry is an error in KubeVirt\'s words', () => {
  assert.equal(passwdEntry('debian', 'debian:x:1000:1000:Debian,,,:/home/debian:/bin/bash\n'), { home: '/home/debian', uid: '1000', gid: '1000' });
  assert.throws(() => passwdEntry('x', 'x:x:1'), /^unable to detect home directory of user x$/);
  assert.is(authorizedKeysFileContent([KA, KB]), `${KA}\n${KB}`);
});

test('readSecretDir: a kubelet-mounted Secret (keys as links into ..data) reads as its keys in name order; a missing directory is KubeVirt\'s error', async () => {
  const dir = join(tmp.path, 'keys-access-cred');
  const data = join(dir, '..2026_11_22_00_00_00.1');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'b'), KB);
  writeFileSync(join(data, 'a'), KA);
  symlinkSync('..2026_11_22_00_00_00.1', join(dir, '..data'));
  symlinkSync('..data/b', join(dir, 'b'));
  symlinkSync('..data/a', join(dir, 'a'));
  assert.equal(await readSecretDir(dir), { files: [{ name: 'a', content: KA }, { name: 'b', content: KB }] });
  const missing = await readSecretDir(join(tmp.path, 'nope'));
  assert.ok('error' in missing);
  if ('error' in missing) assert.match(missing.error, /^error occurred while reading the list of secrets files from the base directory \S+\/nope: ENOENT/);
});

test.run();
