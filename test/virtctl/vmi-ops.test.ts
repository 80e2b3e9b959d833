// The verbs that go through the node agent of the VMI's node (the handler endpoint), against the
// local mode with real launchers and the test guest: `start --paused` → `console` attached →
// `unpause` → the guest boots on that console → input typed into the console runs in the guest →
// `pause`/`unpause` (VMI Paused condition; QEMU's own status through `qmp`) → `soft-reboot` (the
// guest reboots on the same console) → `vnc` (an RFB greeting through the local proxy) →
// guest agent info → Ctrl-] detaches; and the errors a user meets.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Resources } from '../../src/kube/resource.ts';
import { QVIRT, eventually, getVm, getVmi, runningVmi, startEnv, testVm, type Env } from './lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvo'); });
test.after(async () => { await env?.stop(); });

const pausedCondition = async (name: string) => (await getVmi(env, name))?.status?.conditions?.find((c) => c.type === 'Paused' && c.status === 'True');

function spawnQvirt(args: string[]): { child: ChildProcess; out: () => string; err: () => string; exit: Promise<number | null> } {
  const child = spawn(QVIRT, [...args, '--kubeconfig', env.local.kubeconfig], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', QVIRT_LOG_LEVEL: 'warn' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString('latin1'); });
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  const exit = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { child, out: () => out, err: () => err, exit };
}

test('console, pause/unpause, qmp, soft-reboot, vnc, guest agent info through the node agent', async () => {
  await env.local.client.create(Resources.virtualMachines, testVm('vm-ops', 'Manual'));
  let r = await env.qvirt('start', 'vm-ops', '--paused');
  assert.is(r.code, 0, r.err);
  const vmi = await runningVmi(env, 'vm-ops');
  await eventually(() => pausedCondition('vm-ops'), 60_000, 'VMI Paused after start --paused');

  // The console, attached while the guest has not run a single instruction: it sees the whole boot.
  const con = spawnQvirt(['console', 'vm-ops']);
  try {
    await eventually(() => con.err().includes('Successfully connected to vm-ops console'), 30_000, `console connected (stderr: ${con.err()})`);
    r = await env.qvirt('qmp', 'vm-ops', 'query-status');
    assert.is(r.code, 0, r.err);
    // QEMU started with -S and never continued: 'prelaunch', not running.
    assert.equal(JSON.parse(r.out), { running: false, singlestep: false, status: 'prelaunch' });

    r = await env.qvirt('unpause', 'vm', 'vm-ops');
    assert.is(r.code, 0, r.err);
    assert.is(r.out, 'VMI vm-ops was scheduled to unpause\n');
    await eventually(() => con.out().includes('QVIRT-GUEST-READY'), 120_000, 'the boot marker on qvirt console');
    assert.match(con.out(), /QVIRT-GUEST-BOOTED/);
    await eventually(async () => !(await pausedCondition('vm-ops')), 30_000, 'Paused condition gone');

    // Typing into the console: the guest's shell runs it.
    await eventually(() => { con.child.stdin!.write('echo QVIRT-CONSOLE-$((6*7))\n'); return con.out().includes('QVIRT-CONSOLE-42'); }, 60_000, 'the guest shell answering on the console');

    r = await env.qvirt('pause', 'vmi', 'vm-ops');
    assert.is(r.code, 0, r.err);
    assert.is(r.out, 'VMI vm-ops was scheduled to pause\n');
    await eventually(() => pausedCondition('vm-ops'), 30_000, 'Paused condition');
    assert.is((await getVm(env, 'vm-ops')).status?.printableStatus, 'Paused');
    r = await env.qvirt('pause', 'vm', 'vm-ops');
    assert.is(r.code, 1);
    assert.is(r.err, 'Error: cannot pause VirtualMachineInstance "vm-ops" in namespace "default": VMI is already paused\n');
    assert.is(JSON.parse((await env.qvirt('qmp', 'vm-ops', 'query-status')).out).status, 'paused');
    r = await env.qvirt('unpause', 'vmi', 'vm-ops');
    assert.is(r.code, 0, r.err);
    await eventually(async () => !(await pausedCondition('vm-ops')), 30_000, 'Paused condition gone');
    r = await env.qvirt('unpause', 'vmi', 'vm-ops');
    assert.is(r.code, 1);
    assert.match(r.err, /VMI is not paused/);

    // QMP: read-only unless --unsafe.
    r = await env.qvirt('qmp', 'vm-ops', 'stop');
    assert.is(r.code, 1);
    assert.match(r.err, /unsafe/);
    assert.is(JSON.parse((await env.qvirt('qmp', 'vm-ops', 'query-status')).out).status, 'running', 'the refused stop did nothing');
    // The interactive QMP shell, through the node agent: --unsafe stop, a query, cont, quit.
    const shell = spawnQvirt(['qmp', 'vm-ops', '--unsafe']);
    shell.child.stdin!.end('stop\nquery-status\ncont\nquery-status\nquery-block {"flat": true}\nquit\n');
    assert.is(await shell.exit, 0, shell.err());
    const statuses = [...shell.out().matchAll(/"status": "(\w+)"/g)].map((m) => m[1]);
    assert.equal(statuses, ['paused', 'running'], shell.out());
    assert.match(shell.out(), /\(QEMU vm-ops, unsafe\) /);

    // Soft reboot: the same VMI, the guest goes down and boots again on the same console.
    const before = con.out().length;
    r = await env.qvirt('soft-reboot', 'vm-ops');
    assert.is(r.code, 0, r.err);
    assert.is(r.out, 'VMI vm-ops was scheduled to soft-reboot\n');
    await eventually(() => con.out().slice(before).includes('QVIRT-GUEST-READY'), 120_000, 'the guest booted again after soft-reboot');
    assert.is((await getVmi(env, 'vm-ops'))?.metadata?.uid, vmi.metadata!.uid, 'a soft reboot keeps the VMI');

    // VNC: a local proxy; a VNC client gets QEMU's RFB greeting through it.
    const vnc = spawnQvirt(['vnc', 'vm-ops', '--proxy-only']);
    try {
      const port = await eventually(() => /\{"port":(\d+)\}/.exec(vnc.out())?.[1], 30_000, `the VNC proxy port (stderr: ${vnc.err()})`);
      assert.match(vnc.out(), new RegExp(`vnc://127\\.0\\.0\\.1:${port}`));
      const greeting = await new Promise<string>((resolve, reject) => {
        const s = net.createConnection(Number(port), '127.0.0.1');
        s.once('data', (d: Buffer) => { resolve(d.toString('latin1')); s.destroy(); });
        s.once('error', reject);
        setTimeout(() => { s.destroy(); reject(new Error('no RFB greeting')); }, 30_000);
      });
      assert.match(greeting, /^RFB 003\.00\d\n/);
    } finally {
      vnc.child.kill('SIGINT');
      assert.is(await vnc.exit, 0);
    }

    // The guest agent (the test guest runs qemu-guest-agent).
    const info = await eventually(async () => { const x = await env.qvirt('guestosinfo', 'vm-ops'); return x.code === 0 ? x : undefined; }, 60_000, 'guestosinfo');
    assert.type(JSON.parse(info.out), 'object');

    // Ctrl-] leaves the console.
    con.child.stdin!.write(Buffer.from([0x1d]));
    assert.is(await con.exit, 0);
  } finally {
    if (con.child.exitCode === null) con.child.kill('SIGKILL');
  }

  r = await env.qvirt('stop', 'vm-ops', '--force', '--grace-period', '0');
  assert.is(r.code, 0, r.err);
  await eventually(async () => (await getVmi(env, 'vm-ops')) === undefined, 90_000, 'VMI gone');
  await env.local.client.delete(Resources.virtualMachines, 'default', 'vm-ops');
});

test('errors: a missing VM or VMI, a stopped VM, a console that waits in vain', async () => {
  let r = await env.qvirt('pause', 'vm', 'nosuch');
  assert.is(r.code, 1);
  assert.is(r.err, 'Error: VirtualMachine "nosuch" not found in namespace "default"\n');
  r = await env.qvirt('unpause', 'vmi', 'nosuch');
  assert.is(r.err, 'Error: VirtualMachineInstance "nosuch" not found in namespace "default"\n');
  r = await env.qvirt('guestosinfo', 'nosuch', '-n', 'other');
  assert.is(r.err, 'Error: VirtualMachineInstance "nosuch" not found in namespace "other"\n');
  await env.local.client.create(Resources.virtualMachines, testVm('vm-off', 'Halted'));
  r = await env.qvirt('pause', 'vm', 'vm-off');
  assert.is(r.code, 1);
  assert.match(r.err, /cannot pause VirtualMachine "vm-off" in namespace "default": it is not set to run \(runStrategy Halted\); start it with 'qvirt start vm-off'/);
  r = await env.qvirt('console', 'vm-off', '--timeout', '0');
  assert.is(r.code, 1);
  assert.is(r.err, 'Error: VirtualMachineInstance "vm-off" not found in namespace "default"\n');
  r = await env.qvirt('pause', 'pod', 'x');
  assert.is(r.code, 2);
  assert.match(r.err, /unsupported resource type "pod"/);
  await env.local.client.delete(Resources.virtualMachines, 'default', 'vm-off');
});

test.run();
