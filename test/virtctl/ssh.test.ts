// A real `ssh` client logs into a real distribution guest through KubeVirt's own virtctl (v1.9.0)
// and through qvirt's own CLI (`qvirt ssh|scp|port-forward`, `kubectl virt ssh`), one boot for both:
// `virtctl ssh` and `virtctl scp` run the local OpenSSH client with `virtctl port-forward --stdio`
// as its ProxyCommand, through the local mode's subresources (virt-api's portforward → the node
// agent → the guest's port 22). The guest is Debian 12 (test/guest/debian/build.sh): its sshd, its
// cloud-init (the user and key come from a cloudInitNoCloud volume), its qemu-guest-agent.
// Boot budget, measured here (QEMU 7.2 TCG, 2 cores): VM created → agent connected 31-45 s on a
// quiet host or with both cores kept busy by `yes`, 65-130 s when other test runs' guests load it
// (load average 9-14); sshd answers 3-7 s after the agent (both wait for cloud-init's init stage).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { importDebianGuest, debianVm } from '../guest/debian-guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';
import { within } from '../lib/within.ts';
import { virtctl, type VirtctlResult } from '../lib/virtctl.ts';
import { eventually, getVmi, runningVmi, serialLog, QVIRT, type Env } from './lib.ts';

const VM = 'deb';
/** VM created → guest agent connected: 31-45 s measured here under TCG (quiet), up to 130 s loaded. */
const BOOT_MS = 180_000;
/** Agent connected → sshd answering: 3-7 s measured (both start once cloud-init made the host keys). */
const SSHD_MS = 60_000;

let env!: Env;
let dir!: string;
let cleanupDir: (() => void) | undefined;
let key!: string;

async function startEnv(): Promise<Env> {
  const t = tempDir('qvssh');
  dir = t.path;
  cleanupDir = t.cleanup;
  const store = new ImageStore(join(t.path, 'store'));
  await importDebianGuest(store);
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: 'error' }) });
  const qenv = { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: local.kubeconfig, QVIRT_RUNTIME_DIR: join(t.path, 'run'), QVIRT_LOG_LEVEL: 'warn' };
  return {
    local,
    podsDir: join(t.path, 'data', 'pods'),
    qvirt: (...args) => new Promise((resolve) => {
      execFile(QVIRT, args, { env: qenv, timeout: 60_000 }, (err, out, errOut) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) });
      });
    }),
    stop: () => local.stop(),
  };
}

test.before(async () => {
  env = await startEnv();
  key = join(dir, 'id_ed25519');
  await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'qvirt-ssh-test', '-f', key], { timeout: 30_000 });
});
test.after(async () => {
  try { await env?.stop(); } finally { cleanupDir?.(); }
});

/** virtctl with the local mode's kubeconfig, HOME in the test's directory (virtctl's default known_hosts, ssh's ~/.ssh). */
const run = (args: readonly string[], timeoutMs = 60_000): Promise<VirtctlResult> =>
  virtctl(env.local.kubeconfig, args, { timeoutMs, env: { HOME: dir, KUBECONFIG: env.local.kubeconfig } });

/** The options every ssh/scp here passes: the test's key, and no host-key bookkeeping (a fresh guest each run). */
const sshOpts = () => ['-i', key, '--local-ssh-opts=-o StrictHostKeyChecking=no', '--local-ssh-opts=-o UserKnownHostsFile=/dev/null', '--local-ssh-opts=-o LogLevel=ERROR'];

const uid = async () => (await getVmi(env, VM))?.metadata?.uid ?? '';
const consoleTail = async () => `\n--- guest console (tail) ---\n${serialLog(env, await uid()).slice(-3000)}`;

test('the Debian guest boots with cloud-init, its agent connects', async () => {
  const pub = readFileSync(`${key}.pub`, 'utf8').trim();
  await env.local.client.create(Resources.virtualMachines, debianVm(VM, { sshPublicKey: pub }));
  const started = Date.now();
  await runningVmi(env, VM, [], BOOT_MS);
  await eventually(async () => (await getVmi(env, VM))?.status?.conditions?.some((c) => c.type === 'AgentConnected' && c.status === 'True'), BOOT_MS - (Date.now() - started), 'the VMI condition AgentConnected (qemu-guest-agent in the Debian guest)')
    .catch(async (err: Error) => { throw new Error(`${err.message}${await consoleTail()}`); });
  console.log(`  agent connected ${((Date.now() - started) / 1000).toFixed(1)} s after the VM was created`);

  const info = await eventually(async () => {
    const r = await run(['guestosinfo', VM]);
    return r.code === 0 ? r : undefined;
  }, 60_000, 'virtctl guestosinfo answering');
  const parsed = JSON.parse(info.out) as { hostname?: string; os?: { id?: string; versionId?: string; name?: string; prettyName?: string } };
  assert.is(parsed.os?.id, 'debian', info.out);
  assert.is(parsed.os?.versionId, '12', info.out);
  assert.match(parsed.os?.prettyName ?? '', /^Debian GNU\/Linux 12/);
  assert.is(parsed.hostname, VM, 'cloud-init set the hostname from the NoCloud meta-data (the VMI name)');
});

test('virtctl ssh: a real ssh client logs in with the key cloud-init installed', async () => {
  const started = Date.now();
  let last: VirtctlResult | undefined;
  const first = await eventually(async () => {
    last = await run(['ssh', `debian@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'true'], 60_000);
    return last.code === 0 ? last : undefined;
  }, SSHD_MS, 'sshd in the guest answering through virtctl ssh')
    .catch(async (err: Error) => { throw new Error(`${err.message}; last: code ${last?.code} ${last?.err}${await consoleTail()}`); });
  assert.is(first.code, 0);
  console.log(`  sshd answered ${((Date.now() - started) / 1000).toFixed(1)} s after guestosinfo did`);

  const r = await run(['ssh', `debian@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'cat /etc/os-release; id -un; hostname; cat ~/.ssh/authorized_keys; sudo -n id -un'], 60_000);
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /^ID=debian$/m);
  assert.match(r.out, /^VERSION_ID="12"$/m);
  assert.match(r.out, /^PRETTY_NAME="Debian GNU\/Linux 12 \(bookworm\)"$/m);
  const lines = r.out.trim().split('\n');
  assert.is(lines.at(-4), 'debian', 'id -un');
  assert.is(lines.at(-3), VM, 'hostname (cloud-init set it from the NoCloud meta-data: the VMI name)');
  assert.is(lines.at(-2), readFileSync(`${key}.pub`, 'utf8').trim(), 'the key in ~/.ssh/authorized_keys is the one in the cloud-init user data');
  assert.is(lines.at(-1), 'root', 'sudo -n: the passwordless sudo of the cloud-init user data');
  assert.not.match(r.err, /unable to resolve host/, 'cloud-init wrote the hostname into /etc/hosts');

  // The distribution's boot finished with no failed unit (cloud-init's later stages included).
  const state = await run(['ssh', `debian@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'systemctl is-system-running --wait; systemctl --failed --no-legend --plain'], BOOT_MS);
  assert.is(state.out, 'running\n', `systemctl is-system-running: ${state.out} ${state.err}`);

  // A failing remote command fails virtctl (which exits 1 and names ssh's status).
  const fail = await run(['ssh', `debian@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'exit 7']);
  assert.is(fail.code, 1, fail.err);
  assert.match(fail.err, /exit status 7/);

  // Another key is refused: the login is the key's, not an open door.
  const other = join(dir, 'other');
  await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other], { timeout: 30_000 });
  const refused = await run(['ssh', `debian@vmi/${VM}`, '--namespace', 'default', '-i', other, '--local-ssh-opts=-o StrictHostKeyChecking=no', '--local-ssh-opts=-o UserKnownHostsFile=/dev/null', '--local-ssh-opts=-o BatchMode=yes', '--command', 'true']);
  assert.is.not(refused.code, 0);
  assert.match(refused.err, /Permission denied \(publickey[,)]/, refused.err);
});

test('virtctl scp copies a file to the guest and back, byte for byte', async () => {
  const payload = randomBytes(300 * 1024);
  const src = join(dir, 'payload.bin');
  const back = join(dir, 'payload.back');
  writeFileSync(src, payload);
  const sha = createHash('sha256').update(payload).digest('hex');

  let r = await run(['scp', '--namespace', 'default', ...sshOpts(), src, `debian@vmi/${VM}:payload.bin`], 120_000);
  assert.is(r.code, 0, r.err);
  // In the guest: the same bytes, owned by the user.
  r = await run(['ssh', `debian@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'sha256sum payload.bin; stat -c %U:%s payload.bin']);
  assert.is(r.code, 0, r.err);
  assert.is(r.out, `${sha}  payload.bin\ndebian:${payload.length}\n`);

  r = await run(['scp', '--namespace', 'default', ...sshOpts(), `debian@vmi/${VM}:payload.bin`, back], 120_000);
  assert.is(r.code, 0, r.err);
  assert.ok(readFileSync(back).equals(payload), 'the file copied back is identical');
});


// qvirt's own ssh, scp and port-forward against the same guest (no second boot).
interface Run { readonly code: number; readonly out: string; readonly err: string }

/** `qvirt ARGS...` (or `bin ARGS...`) with the local mode's kubeconfig and HOME in the test's directory; never throws. */
function qvirt(args: readonly string[], o: { bin?: string; timeoutMs?: number; path?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(o.bin ?? QVIRT, [...args], {
      env: { PATH: o.path ?? process.env.PATH ?? '', HOME: dir, USER: 'nobody', KUBECONFIG: env.local.kubeconfig, QVIRT_LOG_LEVEL: 'warn' },
      timeout: o.timeoutMs ?? 60_000,
      killSignal: 'SIGTERM',
    }, (err, out, errOut) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) }));
  });
}

/** qvirt ssh's form of the same options (-t passes each to ssh). */
const qsshOpts = () => ['-i', key, '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o LogLevel=ERROR'];

test('qvirt ssh logs in with the key cloud-init installed; a failing command fails qvirt', async () => {
  let last: Run | undefined;
  await eventually(async () => {
    last = await qvirt(['ssh', `debian@vmi/${VM}`, ...qsshOpts(), '--command', 'true']);
    return last.code === 0 ? last : undefined;
  }, SSHD_MS, 'sshd in the guest answering through qvirt ssh')
    .catch(async (err: Error) => { throw new Error(`${err.message}; last: code ${last?.code} ${last?.err}${await consoleTail()}`); });

  const r = await qvirt(['ssh', `vm/${VM}/default`, '-l', 'debian', ...qsshOpts(), '-c', 'cat /etc/os-release; id -un; hostname; cat ~/.ssh/authorized_keys']);
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /^ID=debian$/m);
  const lines = r.out.trim().split('\n');
  assert.is(lines.at(-3), 'debian', 'id -un');
  assert.is(lines.at(-2), VM, 'hostname');
  assert.is(lines.at(-1), readFileSync(`${key}.pub`, 'utf8').trim(), 'the key cloud-init installed');

  // As virtctl: a failed client is exit 1, its status named.
  const fail = await qvirt(['ssh', `debian@vmi/${VM}`, ...qsshOpts(), '--command', 'exit 7']);
  assert.is(fail.code, 1, fail.err);
  assert.match(fail.err, /^Error: ssh exited with status 7\n$/m);

  // Another key is refused: the login is the key's.
  const other = join(dir, 'other-qvirt');
  await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other], { timeout: 30_000 });
  const refused = await qvirt(['ssh', `debian@vmi/${VM}`, '-i', other, '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o BatchMode=yes', '--command', 'true']);
  assert.is(refused.code, 1);
  assert.match(refused.err, /Permission denied \(publickey[,)]/);

  // --known-hosts: the guest's host key is recorded there under the VM's ssh host name.
  const known = join(dir, 'kubevirt_known_hosts');
  const k = await qvirt(['ssh', `debian@vmi/${VM}`, '-i', key, '--known-hosts', known, '-t', '-o StrictHostKeyChecking=accept-new', '-t', '-o HashKnownHosts=no', '-t', '-o LogLevel=ERROR', '-c', 'true']);
  assert.is(k.code, 0, k.err);
  assert.match(readFileSync(known, 'utf8'), /^vmi\.deb\.default (ssh|ecdsa)-\S+ /m);
});

test('qvirt scp copies a file and a directory to the guest and back, byte for byte', async () => {
  const payload = randomBytes(300 * 1024);
  const src = join(dir, 'payload.bin');
  writeFileSync(src, payload);
  const sha = createHash('sha256').update(payload).digest('hex');
  let r = await qvirt(['scp', ...qsshOpts(), src, `debian@vmi/${VM}:payload.bin`], { timeoutMs: 120_000 });
  assert.is(r.code, 0, r.err);
  r = await qvirt(['ssh', `debian@vmi/${VM}`, ...qsshOpts(), '--command', 'sha256sum payload.bin; stat -c %U:%s payload.bin']);
  assert.is(r.out, `${sha}  payload.bin\ndebian:${payload.length}\n`, r.err);
  const back = join(dir, 'payload.back');
  r = await qvirt(['scp', '-l', 'debian', ...qsshOpts(), `vmi/${VM}/default:payload.bin`, back], { timeoutMs: 120_000 });
  assert.is(r.code, 0, r.err);
  assert.ok(readFileSync(back).equals(payload), 'the file copied back is identical');

  // -r and --preserve: a directory, its file's mode kept.
  const tree = join(dir, 'tree');
  mkdirSync(join(tree, 'sub'), { recursive: true });
  writeFileSync(join(tree, 'sub', 'x.sh'), '#!/bin/sh\necho tree\n', { mode: 0o751 });
  r = await qvirt(['scp', '-r', '--preserve', ...qsshOpts(), tree, `debian@vmi/${VM}:tree`], { timeoutMs: 120_000 });
  assert.is(r.code, 0, r.err);
  r = await qvirt(['ssh', `debian@vmi/${VM}`, ...qsshOpts(), '--command', 'stat -c %a tree/sub/x.sh; tree/sub/x.sh']);
  assert.is(r.out, '751\ntree\n', r.err);
});

test('the guest\'s sshd through qvirt port-forward, and kubectl virt ssh', async () => {
  const pf = spawn(QVIRT, ['port-forward', `vmi/${VM}`, '0:22'], { env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: env.local.kubeconfig }, stdio: ['ignore', 'ignore', 'pipe'] });
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
  const r = await qvirt(['virt', 'ssh', `debian@vmi/${VM}`, ...qsshOpts(), '-t', '-v', '--command', 'echo via-plugin'], { bin: 'kubectl', path: `${dirname(QVIRT)}:${process.env.PATH ?? ''}` });
  assert.is(r.code, 0, r.err);
  assert.is(r.out, 'via-plugin\n');
  assert.match(r.err, /Executing proxy command: exec \S+\/bin\/kubectl-virt port-forward --stdio=true vmi\/deb\/default 22/);
});

test.run();
