// The ssh/scp cases of test/virtctl/debian-guest.test.ts, on its one Debian guest VM (debian-guest-vm.ts):
// a real `ssh` client logs in through KubeVirt's own virtctl (v1.9.0) and through qvirt's own CLI
// (`qvirt ssh|scp|port-forward`, `kubectl virt ssh`) as `tester`, with the key cloud-init installed
// from the user data. `virtctl ssh` and `virtctl scp` run the local OpenSSH client with
// `virtctl port-forward --stdio` as its ProxyCommand, through the local mode's subresources
// (virt-api's portforward → the node agent → the guest's port 22).
// The cases leave the guest as they found it but for files in tester's home.
import * as assert from 'uvu/assert';
import type { Test } from 'uvu';
import { execFile, spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { within } from '../lib/within.ts';
import { virtctl, type VirtctlResult } from '../lib/virtctl.ts';
import { eventually, QVIRT } from './lib.ts';
import { BOOT_MS, SSHD_MS, USER, VM, consoleTail, dir, keyFile, local, pub, qvirt, type Run } from './debian-guest-vm.ts';

/** virtctl with the local mode's kubeconfig, HOME in the test's directory (virtctl's default known_hosts, ssh's ~/.ssh). */
const run = (args: readonly string[], timeoutMs = 60_000): Promise<VirtctlResult> =>
  virtctl(local().kubeconfig, args, { timeoutMs, env: { HOME: dir, KUBECONFIG: local().kubeconfig } });

/** The options every virtctl ssh/scp here passes: tester's key, and no host-key bookkeeping (a fresh guest each run). */
const sshOpts = () => ['-i', keyFile('user'), '--local-ssh-opts=-o StrictHostKeyChecking=no', '--local-ssh-opts=-o UserKnownHostsFile=/dev/null', '--local-ssh-opts=-o LogLevel=ERROR'];

export function sshCases(test: Test): void {
  test('virtctl ssh: a real ssh client logs in with the key cloud-init installed', async () => {
    const started = Date.now();
    let last: VirtctlResult | undefined;
    const first = await eventually(async () => {
      last = await run(['ssh', `${USER}@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'true'], 60_000);
      return last.code === 0 ? last : undefined;
    }, SSHD_MS, 'sshd in the guest answering through virtctl ssh')
      .catch(async (err: Error) => { throw new Error(`${err.message}; last: code ${last?.code} ${last?.err}${consoleTail()}`); });
    assert.is(first.code, 0);
    console.log(`  sshd answered ${((Date.now() - started) / 1000).toFixed(1)} s after guestosinfo did`);

    const r = await run(['ssh', `${USER}@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'cat /etc/os-release; id -un; hostname; cat ~/.ssh/authorized_keys; sudo -n id -un'], 60_000);
    assert.is(r.code, 0, r.err);
    assert.match(r.out, /^ID=debian$/m);
    assert.match(r.out, /^VERSION_ID="12"$/m);
    assert.match(r.out, /^PRETTY_NAME="Debian GNU\/Linux 12 \(bookworm\)"$/m);
    const lines = r.out.trim().split('\n');
    assert.is(lines.at(-4), USER, 'id -un');
    assert.is(lines.at(-3), VM, 'hostname (cloud-init set it from the NoCloud meta-data: the VMI name)');
    assert.is(lines.at(-2), pub('user'), 'the key in ~/.ssh/authorized_keys is the one in the cloud-init user data');
    assert.is(lines.at(-1), 'root', 'sudo -n: the passwordless sudo of the cloud-init user data');
    assert.not.match(r.err, /unable to resolve host/, 'cloud-init wrote the hostname into /etc/hosts');

    // The distribution's boot finished with no failed unit (cloud-init's later stages included).
    const state = await run(['ssh', `${USER}@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'systemctl is-system-running --wait; systemctl --failed --no-legend --plain'], BOOT_MS);
    assert.is(state.out, 'running\n', `systemctl is-system-running: ${state.out} ${state.err}`);

    // A failing remote command fails virtctl (which exits 1 and names ssh's status).
    const fail = await run(['ssh', `${USER}@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'exit 7']);
    assert.is(fail.code, 1, fail.err);
    assert.match(fail.err, /exit status 7/);

    // Another key is refused: the login is the key's, not an open door.
    const other = join(dir, 'other');
    await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other], { timeout: 30_000 });
    const refused = await run(['ssh', `${USER}@vmi/${VM}`, '--namespace', 'default', '-i', other, '--local-ssh-opts=-o StrictHostKeyChecking=no', '--local-ssh-opts=-o UserKnownHostsFile=/dev/null', '--local-ssh-opts=-o BatchMode=yes', '--command', 'true']);
    assert.is.not(refused.code, 0);
    assert.match(refused.err, /Permission denied \(publickey[,)]/, refused.err);
  });

  test('virtctl scp copies a file to the guest and back, byte for byte', async () => {
    const payload = randomBytes(300 * 1024);
    const src = join(dir, 'payload.bin');
    const back = join(dir, 'payload.back');
    writeFileSync(src, payload);
    const sha = createHash('sha256').update(payload).digest('hex');

    let r = await run(['scp', '--namespace', 'default', ...sshOpts(), src, `${USER}@vmi/${VM}:payload.bin`], 120_000);
    assert.is(r.code, 0, r.err);
    // In the guest: the same bytes, owned by the user.
    r = await run(['ssh', `${USER}@vmi/${VM}`, '--namespace', 'default', ...sshOpts(), '--command', 'sha256sum payload.bin; stat -c %U:%s payload.bin']);
    assert.is(r.code, 0, r.err);
    assert.is(r.out, `${sha}  payload.bin\n${USER}:${payload.length}\n`);

    r = await run(['scp', '--namespace', 'default', ...sshOpts(), `${USER}@vmi/${VM}:payload.bin`, back], 120_000);
    assert.is(r.code, 0, r.err);
    assert.ok(readFileSync(back).equals(payload), 'the file copied back is identical');
  });


  /** qvirt ssh's form of the same options (-t passes each to ssh). */
  const qsshOpts = () => ['-i', keyFile('user'), '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o LogLevel=ERROR'];

  test('qvirt ssh logs in with the key cloud-init installed; a failing command fails qvirt', async () => {
    let last: Run | undefined;
    await eventually(async () => {
      last = await qvirt(['ssh', `${USER}@vmi/${VM}`, ...qsshOpts(), '--command', 'true']);
      return last.code === 0 ? last : undefined;
    }, SSHD_MS, 'sshd in the guest answering through qvirt ssh')
      .catch(async (err: Error) => { throw new Error(`${err.message}; last: code ${last?.code} ${last?.err}${consoleTail()}`); });

    const r = await qvirt(['ssh', `vm/${VM}/default`, '-l', USER, ...qsshOpts(), '-c', 'cat /etc/os-release; id -un; hostname; cat ~/.ssh/authorized_keys']);
    assert.is(r.code, 0, r.err);
    assert.match(r.out, /^ID=debian$/m);
    const lines = r.out.trim().split('\n');
    assert.is(lines.at(-3), USER, 'id -un');
    assert.is(lines.at(-2), VM, 'hostname');
    assert.is(lines.at(-1), pub('user'), 'the key cloud-init installed');

    // As virtctl: a failed client is exit 1, its status named.
    const fail = await qvirt(['ssh', `${USER}@vmi/${VM}`, ...qsshOpts(), '--command', 'exit 7']);
    assert.is(fail.code, 1, fail.err);
    assert.match(fail.err, /^Error: ssh exited with status 7\n$/m);

    // Another key is refused: the login is the key's.
    const other = join(dir, 'other-qvirt');
    await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other], { timeout: 30_000 });
    const refused = await qvirt(['ssh', `${USER}@vmi/${VM}`, '-i', other, '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', '-t', '-o BatchMode=yes', '--command', 'true']);
    assert.is(refused.code, 1);
    assert.match(refused.err, /Permission denied \(publickey[,)]/);

    // --known-hosts: the guest's host key is recorded there under the VM's ssh host name.
    const known = join(dir, 'kubevirt_known_hosts');
    const k = await qvirt(['ssh', `${USER}@vmi/${VM}`, '-i', keyFile('user'), '--known-hosts', known, '-t', '-o StrictHostKeyChecking=accept-new', '-t', '-o HashKnownHosts=no', '-t', '-o LogLevel=ERROR', '-c', 'true']);
    assert.is(k.code, 0, k.err);
    assert.match(readFileSync(known, 'utf8'), /^vmi\.deb\.default (ssh|ecdsa)-\S+ /m);
  });

  test('qvirt scp copies a file and a directory to the guest and back, byte for byte', async () => {
    const payload = randomBytes(300 * 1024);
    const src = join(dir, 'payload.bin');
    writeFileSync(src, payload);
    const sha = createHash('sha256').update(payload).digest('hex');
    let r = await qvirt(['scp', ...qsshOpts(), src, `${USER}@vmi/${VM}:payload.bin`], { timeoutMs: 120_000 });
    assert.is(r.code, 0, r.err);
    r = await qvirt(['ssh', `${USER}@vmi/${VM}`, ...qsshOpts(), '--command', 'sha256sum payload.bin; stat -c %U:%s payload.bin']);
    assert.is(r.out, `${sha}  payload.bin\n${USER}:${payload.length}\n`, r.err);
    const back = join(dir, 'payload.back');
    r = await qvirt(['scp', '-l', USER, ...qsshOpts(), `vmi/${VM}/default:payload.bin`, back], { timeoutMs: 120_000 });
    assert.is(r.code, 0, r.err);
    assert.ok(readFileSync(back).equals(payload), 'the file copied back is identical');

    // -r and --preserve: a directory, its file's mode kept.
    const tree = join(dir, 'tree');
    mkdirSync(join(tree, 'sub'), { recursive: true });
    writeFileSync(join(tree, 'sub', 'x.sh'), '#!/bin/sh\necho tree\n', { mode: 0o751 });
    r = await qvirt(['scp', '-r', '--preserve', ...qsshOpts(), tree, `${USER}@vmi/${VM}:tree`], { timeoutMs: 120_000 });
    assert.is(r.code, 0, r.err);
    r = await qvirt(['ssh', `${USER}@vmi/${VM}`, ...qsshOpts(), '--command', 'stat -c %a tree/sub/x.sh; tree/sub/x.sh']);
    assert.is(r.out, '751\ntree\n', r.err);
  });

  test('the guest\'s sshd through qvirt port-forward, and kubectl virt ssh', async () => {
    const pf = spawn(QVIRT, ['port-forward', `vmi/${VM}`, '0:22'], { env: { PATH: process.env.PATH ?? '', HOME: dir, KUBECONFIG: local().kubeconfig }, stdio: ['ignore', 'ignore', 'pipe'] });
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
    const r = await qvirt(['virt', 'ssh', `${USER}@vmi/${VM}`, ...qsshOpts(), '-t', '-v', '--command', 'echo via-plugin'], { bin: 'kubectl', path: `${dirname(QVIRT)}:${process.env.PATH ?? ''}` });
    assert.is(r.code, 0, r.err);
    assert.is(r.out, 'via-plugin\n');
    assert.match(r.err, /Executing proxy command: exec \S+\/bin\/kubectl-virt port-forward --stdio=true vmi\/deb\/default 22/);
  });
}
