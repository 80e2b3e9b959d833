// The one Debian guest VM that test/virtctl/debian-guest.test.ts boots for its ssh/scp cases
// (debian-ssh-cases.ts) and its accessCredentials cases (debian-access-credentials-cases.ts):
// the local mode it runs in, the keys, the Secrets, the VM, and `qvirt` run as a user runs it.
//
// The VM (Debian 12 with systemd, cloud-init, sshd and qemu-guest-agent: test/guest/debian-guest.ts):
//  - its cloudInitNoCloud user data creates two users and no default one: `tester`, who logs in
//    with the key in the user data (KEY_USER) and has passwordless sudo, for the ssh cases; and
//    `debian`, with no key from cloud-init, whose keys come from the guest agent;
//  - spec.accessCredentials: `boot-keys` (propagationMethod noCloud: cloud-init's meta-data
//    public-keys, root's authorized_keys, as no default user exists and root may log in),
//    `agent-keys` (qemuGuestAgent, users [debian]) and `passwords` (userPassword, qemuGuestAgent).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cloudConfigUser, debianVm, importDebianGuest } from '../guest/debian-guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import type { VirtualMachine } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { QVIRT, serialLog, type Env } from './lib.ts';

export const VM = 'deb';
/** The user the cloud-init user data creates with KEY_USER's key (the ssh cases log in as it). */
export const USER = 'tester';
/** VM created → guest agent connected: 31-45 s measured here under TCG (quiet), up to 130 s loaded. */
export const BOOT_MS = 180_000;
/** Agent connected → sshd answering: 3-7 s measured (both start once cloud-init made the host keys). */
export const SSHD_MS = 60_000;
/** debian's password, from the `passwords` Secret. */
export const PASSWORD = 'Corr3ct-h0rse';

/** The ssh keys: `user` is in the user data (tester's), `n` in boot-keys (root's), a/b/c go through agent-keys (debian's). */
export type KeyName = 'user' | 'n' | 'a' | 'b' | 'c';

const USER_DATA = (userKey: string) => [
  '#cloud-config',
  '# no default user: the noCloud keys go to root alone, debian\'s keys come from the guest agent',
  'disable_root: false',
  'users:',
  ...cloudConfigUser(USER, userKey),
  ...cloudConfigUser('debian'),
  '',
].join('\n');

export interface Run { readonly code: number; readonly out: string; readonly err: string }

const t = tempDir('qvdeb');
/** The test's directory: HOME of every client it runs. */
export const dir = t.path;
const keyFiles: Record<KeyName, string> = { user: '', n: '', a: '', b: '', c: '' };
let localMode: LocalMode | undefined;
let vmiUid = '';

export const local = (): LocalMode => {
  if (!localMode) throw new Error('the local mode is not started (startDebianGuestEnv)');
  return localMode;
};
/** Key `k`'s private key file. */
export const keyFile = (k: KeyName): string => keyFiles[k];
/** Key `k`'s OpenSSH public key line. */
export const pub = (k: KeyName): string => readFileSync(`${keyFiles[k]}.pub`, 'utf8').trim();
/** The VMI's uid once the boot case saw it Running ('' before). */
export const uid = (): string => vmiUid;
export const setUid = (u: string): void => { vmiUid = u; };

/** The local mode as test/virtctl/lib.ts's helpers take it. */
export const envView = (): Env => ({ local: local(), podsDir: join(dir, 'data', 'pods'), qvirt: (...a: string[]) => qvirt(a), stop: async () => undefined });

/** The guest's serial console, its last `chars`, for failure messages. */
export const consoleTail = (chars = 3000): string => `\n--- guest console (tail) ---\n${serialLog(envView(), vmiUid).slice(-chars)}`;

/** `qvirt ARGS...` (or `bin ARGS...`) with the local mode's kubeconfig and HOME in the test's directory; never throws. */
export function qvirt(args: readonly string[], o: { bin?: string; timeoutMs?: number; path?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(o.bin ?? QVIRT, [...args], {
      env: { PATH: o.path ?? process.env.PATH ?? '', HOME: dir, USER: 'nobody', KUBECONFIG: local().kubeconfig, QVIRT_LOG_LEVEL: 'warn' },
      timeout: o.timeoutMs ?? 60_000,
      killSignal: 'SIGTERM',
    }, (err, out, errOut) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) }));
  });
}

/** Imports the Debian guest, starts a local mode and makes the keys. */
export async function startDebianGuestEnv(): Promise<void> {
  const store = new ImageStore(join(dir, 'store'));
  await importDebianGuest(store);
  localMode = await startLocalMode({ dataDir: join(dir, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: 'error' }) });
  for (const k of Object.keys(keyFiles) as KeyName[]) {
    keyFiles[k] = join(dir, `id_${k}`);
    await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `key-${k}`, '-f', keyFiles[k]], { timeout: 30_000 });
  }
}

export async function stopDebianGuestEnv(): Promise<void> {
  try { await localMode?.stop(); } finally { t.cleanup(); }
}

/** Creates the three Secrets and the VM. */
export async function createDebianGuestVm(): Promise<void> {
  const secret = (name: string, data: Record<string, string>) => local().client.create(Resources.secrets, {
    apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type: 'Opaque',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  } as KubeObject);
  await secret('boot-keys', { 'key-n': `${pub('n')}\n` });
  await secret('agent-keys', { 'key-a': `${pub('a')}\n` });
  await secret('passwords', { debian: PASSWORD });
  const vm: VirtualMachine = debianVm(VM, { sshPublicKey: pub('user'), user: USER });
  const spec = vm.spec.template!.spec!;
  spec.volumes!.find((v) => v.cloudInitNoCloud)!.cloudInitNoCloud = { userData: USER_DATA(pub('user')) };
  spec.accessCredentials = [
    { sshPublicKey: { source: { secret: { secretName: 'boot-keys' } }, propagationMethod: { noCloud: {} } } },
    { sshPublicKey: { source: { secret: { secretName: 'agent-keys' } }, propagationMethod: { qemuGuestAgent: { users: ['debian'] } } } },
    { userPassword: { source: { secret: { secretName: 'passwords' } }, propagationMethod: { qemuGuestAgent: {} } } },
  ];
  await local().client.create(Resources.virtualMachines, vm);
}
