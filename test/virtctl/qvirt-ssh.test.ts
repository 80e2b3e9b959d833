// A real `ssh` client logs into a real distribution guest through qvirt's own CLI: `qvirt ssh` and
// `qvirt scp` run the local OpenSSH client with `qvirt port-forward --stdio` as its ProxyCommand,
// through the local mode's subresources.kubevirt.io portforward (virt-api's route → the node agent
// → the guest's port 22). The guest is Debian 12 (test/guest/debian-guest.ts): its sshd, and the
// user and key cloud-init installs from a cloudInitNoCloud volume. Also: the guest's sshd banner
// through a plain `qvirt port-forward`, and `kubectl virt ssh` (the plugin's ProxyCommand).
// Boot budget as test/virtctl/ssh.test.ts measured it (VM created → sshd answering ~40-60 s under
// TCG on 2 busy cores); the waits allow about three times that.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { debianVm, importDebianGuest } from '../guest/debian-guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';
import { within } from '../lib/within.ts';
import { QVIRT, eventually, runningVmi, serialLog, type Env } from './lib.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const VM = 'qdeb';
const BOOT_MS = 180_000;

const t = tempDir('qvqs');
let local!: LocalMode;
let key!: string;

interface Run { readonly code: number; readonly out: string; readonly err: string }

/** `qvirt ARGS...` (or `bin ARGS...`) with the local mode's kubeconfig and HOME in the test's directory; never throws. */
function qvirt(args: readonly string[], o: { bin?: string; timeoutMs?: number; path?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(o.bin ?? QVIRT, [...args], {
      env: { PATH: o.path ?? process.env.PATH ?? '', HOME: t.path, USER: 'nobody', KUBECONFIG: local.kubeconfig, QVIRT_LOG_LEVEL: 'warn' },
      timeout: o.timeoutMs ?? 60_000,
      killSignal: 'SIGTERM',
    }, (err, out, errOut) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) }));
  });
}

/** The options every ssh/scp here passes: the test's key, and no host-key bookkeeping (a fresh guest each run). */
const sshOpts = () => ['-i', key, '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o LogLevel=ERROR'];

test.before(async () => {
  const store = new ImageStore(join(t.path, 'store'));
  await importDebianGuest(store);
  local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: 'error' }) });
  key = join(t.path, 'id_ed25519');
  await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'qvirt-ssh-test', '-f', key], { timeout: 30_000 });
});
test.after(async () => {
  try { await local?.stop(); } finally { t.cleanup(); }
});

const envView = (): Env => ({ local, podsDir: join(t.path, 'data', 'pods'), qvirt: (...a: string[]) => qvirt(a), stop: async () => undefined });

test('qvirt ssh logs in with the key cloud-init installed; a failing command fails qvirt', async () => {
  await local.client.create(Resources.virtualMachines, debianVm(VM, { sshPublicKey: readFileSync(`${key}.pub`, 'utf8').trim() }));
  const vmi = await runningVmi(envView(), VM, [], BOOT_MS);
  // The guest agent starts beside sshd: until it connects the guest is still booting, and each
  // ssh attempt (a qvirt process) would only take CPU from the emulated boot.
  await eventually(async () => {
    const v = await local.client.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, 'default', VM);
    return v.status?.conditions?.some((c) => c.type === 'AgentConnected' && c.status === 'True');
  }, BOOT_MS, 'the guest agent connected (the guest booted)');
  let last: Run | undefined;
  await eventually(async () => {
    last = await qvirt(['ssh', `debian@vmi/${VM}`, ...sshOpts(), '--command', 'true']);
    return last.code === 0 ? last : undefined;
  }, BOOT_MS, 'sshd in the guest answering through qvirt ssh')
    .catch((err: Error) => { throw new Error(`${err.message}; last: code ${last?.code} ${last?.err}\n--- guest console (tail) ---\n${serialLog(envView(), vmi.metadata!.uid!).slice(-3000)}`); });

  const r = await qvirt(['ssh', `vm/${VM}/default`, '-l', 'debian', ...sshOpts(), '-c', 'cat /etc/os-release; id -un; hostname; cat ~/.ssh/authorized_keys']);
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /^ID=debian$/m);
  const lines = r.out.trim().split('\n');
  assert.is(lines.at(-3), 'debian', 'id -un');
  assert.is(lines.at(-2), VM, 'hostname');
  assert.is(lines.at(-1), readFileSync(`${key}.pub`, 'utf8').trim(), 'the key cloud-init installed');

  // As virtctl: a failed client is exit 1, its status named.
  const fail = await qvirt(['ssh', `debian@vmi/${VM}`, ...sshOpts(), '--command', 'exit 7']);
  assert.is(fail.code, 1, fail.err);
  assert.match(fail.err, /^Error: ssh exited with status 7\n$/m);

  // Another key is refused: the login is the key's.
  const other = join(t.path, 'other');
  await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other], { timeout: 30_000 });
  const refused = await qvirt(['ssh', `debian@vmi/${VM}`, '-i', other, '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o BatchMode=yes', '--command', 'true']);
  assert.is(refused.code, 1);
  assert.match(refused.err, /Permission denied \(publickey[,)]/);

  // --known-hosts: the guest's host key is recorded there under the VM's ssh host name.
  const known = join(t.path, 'kubevirt_known_hosts');
  const k = await qvirt(['ssh', `debian@vmi/${VM}`, '-i', key, '--known-hosts', known, '-t', '-o StrictHostKeyChecking=accept-new', '-t', '-o HashKnownHosts=no', '-t', '-o LogLevel=ERROR', '-c', 'true']);
  assert.is(k.code, 0, k.err);
  assert.match(readFileSync(known, 'utf8'), /^vmi\.qdeb\.default (ssh|ecdsa)-\S+ /m);
});

test('qvirt scp copies a file and a directory to the guest and back, byte for byte', async () => {
  const payload = randomBytes(300 * 1024);
  const src = join(t.path, 'payload.bin');
  writeFileSync(src, payload);
  const sha = createHash('sha256').update(payload).digest('hex');
  let r = await qvirt(['scp', ...sshOpts(), src, `debian@vmi/${VM}:payload.bin`], { timeoutMs: 120_000 });
  assert.is(r.code, 0, r.err);
  r = await qvirt(['ssh', `debian@vmi/${VM}`, ...sshOpts(), '--command', 'sha256sum payload.bin; stat -c %U:%s payload.bin']);
  assert.is(r.out, `${sha}  payload.bin\ndebian:${payload.length}\n`, r.err);
  const back = join(t.path, 'payload.back');
  r = await qvirt(['scp', '-l', 'debian', ...sshOpts(), `vmi/${VM}/default:payload.bin`, back], { timeoutMs: 120_000 });
  assert.is(r.code, 0, r.err);
  assert.ok(readFileSync(back).equals(payload), 'the file copied back is identical');

  // -r and --preserve: a directory, its file's mode kept.
  const tree = join(t.path, 'tree');
  mkdirSync(join(tree, 'sub'), { recursive: true });
  writeFileSync(join(tree, 'sub', 'x.sh'), '#!/bin/sh\necho tree\n', { mode: 0o751 });
  r = await qvirt(['scp', '-r', '--preserve', ...sshOpts(), tree, `debian@vmi/${VM}:tree`], { timeoutMs: 120_000 });
  assert.is(r.code, 0, r.err);
  r = await qvirt(['ssh', `debian@vmi/${VM}`, ...sshOpts(), '--command', 'stat -c %a tree/sub/x.sh; tree/sub/x.sh']);
  assert.is(r.out, '751\ntree\n', r.err);
});

test('the guest\'s sshd through qvirt port-forward, and kubectl virt ssh', async () => {
  const pf = spawn(QVIRT, ['port-forward', `vmi/${VM}`, '0:22'], { env: { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: local.kubeconfig }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  pf.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  try {
    const port = Number(await eventually(() => /forwarding tcp 127\.0\.0\.1:(\d+) to 22/.exec(err)?.[1], 30_000, `the port-forward listening (${err})`));
    const banner = await within(new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('data', (d: Buffer) => { resolve(d.toString('latin1')); s.destroy(); });
      s.once('error', reject);
    }), 30_000, 'sshd\'s banner through qvirt port-forward');
    assert.match(banner, /^SSH-2\.0-OpenSSH_\S+ Debian/);
  } finally {
    pf.kill('SIGINT');
    await within(new Promise((r) => pf.once('exit', r)), 20_000, 'qvirt port-forward to exit').catch(() => pf.kill('SIGKILL'));
  }
  const r = await qvirt(['virt', 'ssh', `debian@vmi/${VM}`, ...sshOpts(), '-t', '-v', '--command', 'echo via-plugin'], { bin: 'kubectl', path: `${dirname(QVIRT)}:${process.env.PATH ?? ''}` });
  assert.is(r.code, 0, r.err);
  assert.is(r.out, 'via-plugin\n');
  assert.match(r.err, /Executing proxy command: exec \S+\/bin\/kubectl-virt port-forward --stdio=true vmi\/qdeb\/default 22/);
});

test.run();
