// `qvirt start|stop|restart` against the local mode, as a user runs them (bin/qvirt subprocesses),
// with real launchers and the test guest under QEMU: what each verb does under each run strategy
// (Always, Manual, RerunOnFailure, Halted), and the errors it gives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { startEnv, eventually, getVm, getVmi, runningVmi, testVm, waitForSerial, type Env } from './lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvc'); });
test.after(async () => { await env?.stop(); });

const READY = 'QVIRT-GUEST-READY';

async function stopped(name: string): Promise<void> {
  await eventually(async () => (await getVmi(env, name)) === undefined && (await getVm(env, name)).status?.printableStatus === 'Stopped', 90_000, `VM ${name} Stopped with no VMI`);
}

test('runStrategy Always: start refused, restart gives a new VMI that boots again, stop halts it, start brings it back', async () => {
  await env.local.client.create(Resources.virtualMachines, testVm('vm-always', 'Always'));
  const first = await runningVmi(env, 'vm-always');
  await waitForSerial(env, first.metadata!.uid!, READY);

  let r = await env.qvirt('start', 'vm-always');
  assert.is(r.code, 1);
  assert.match(r.err, /^Error: cannot start VirtualMachine "vm-always" in namespace "default": VM is already running; use 'qvirt restart vm-always' to restart it\n$/);

  r = await env.qvirt('restart', 'vm-always');
  assert.is(r.code, 0, r.err);
  assert.is(r.out, 'VM vm-always was scheduled to restart\n');
  const second = await runningVmi(env, 'vm-always', [first.metadata!.uid!]);
  await waitForSerial(env, second.metadata!.uid!, READY);
  assert.is((await getVm(env, 'vm-always')).spec.runStrategy, 'Always', 'restart keeps the run strategy');

  r = await env.qvirt('stop', 'vm-always');
  assert.is(r.code, 0, r.err);
  assert.is(r.out, 'VM vm-always was scheduled to stop\n');
  assert.is((await getVm(env, 'vm-always')).spec.runStrategy, 'Halted', 'stop of an Always VM sets Halted, as virt-api');
  await stopped('vm-always');

  r = await env.qvirt('stop', 'vm-always');
  assert.is(r.code, 1);
  assert.match(r.err, /^Error: cannot stop VirtualMachine "vm-always" in namespace "default": VM is not running/);
  r = await env.qvirt('restart', 'vm-always');
  assert.is(r.code, 1);
  assert.match(r.err, /RunStrategy Halted does not support manual restart requests/);

  r = await env.qvirt('start', 'vm-always');
  assert.is(r.code, 0, r.err);
  assert.is((await getVm(env, 'vm-always')).spec.runStrategy, 'Always');
  const third = await runningVmi(env, 'vm-always', [first.metadata!.uid!, second.metadata!.uid!]);
  // A forced stop: the VMI's grace period is cut to 0 first.
  r = await env.qvirt('stop', 'vm-always', '--force', '--grace-period', '0');
  assert.is(r.code, 0, r.err);
  await stopped('vm-always');
  assert.ok(third.metadata!.uid);
  await env.local.client.delete(Resources.virtualMachines, 'default', 'vm-always');
});

test('runStrategy Manual: nothing runs until start; start twice is refused; stop keeps Manual; restart of a stopped VM is refused', async () => {
  await env.local.client.create(Resources.virtualMachines, testVm('vm-manual', 'Manual'));
  await eventually(async () => (await getVm(env, 'vm-manual')).status?.printableStatus === 'Stopped', 30_000, 'VM Stopped');
  assert.is(await getVmi(env, 'vm-manual'), undefined);

  let r = await env.qvirt('start', 'vm-manual');
  assert.is(r.code, 0, r.err);
  const vmi = await runningVmi(env, 'vm-manual');
  r = await env.qvirt('start', 'vm-manual');
  assert.is(r.code, 1);
  assert.match(r.err, /VM is already running/);

  r = await env.qvirt('stop', 'vm-manual');
  assert.is(r.code, 0, r.err);
  await stopped('vm-manual');
  assert.is((await getVm(env, 'vm-manual')).spec.runStrategy, 'Manual', 'stop of a Manual VM is a state change request, not a spec change');

  r = await env.qvirt('restart', 'vm-manual');
  assert.is(r.code, 1);
  assert.match(r.err, /^Error: cannot restart VirtualMachine "vm-manual" in namespace "default": VM is not running; use 'qvirt start vm-manual' to start it\n$/);
  r = await env.qvirt('start', 'vm-manual');
  assert.is(r.code, 0, r.err);
  await runningVmi(env, 'vm-manual', [vmi.metadata!.uid!]);
  r = await env.qvirt('stop', 'vm-manual', '--force', '--grace-period', '0');
  assert.is(r.code, 0, r.err);
  await stopped('vm-manual');
  await env.local.client.delete(Resources.virtualMachines, 'default', 'vm-manual');
});

test('runStrategy RerunOnFailure: start refused while running, restart gives a new VMI, stop keeps it stopped', async () => {
  await env.local.client.create(Resources.virtualMachines, testVm('vm-rerun', 'RerunOnFailure'));
  const first = await runningVmi(env, 'vm-rerun');
  let r = await env.qvirt('start', 'vm-rerun');
  assert.is(r.code, 1);
  assert.match(r.err, /VM is already running/);
  r = await env.qvirt('restart', 'vm-rerun', '--force', '--grace-period', '0');
  assert.is(r.code, 0, r.err);
  const second = await runningVmi(env, 'vm-rerun', [first.metadata!.uid!]);
  await waitForSerial(env, second.metadata!.uid!, READY);
  r = await env.qvirt('stop', 'vm-rerun');
  assert.is(r.code, 0, r.err);
  await stopped('vm-rerun');
  assert.is((await getVm(env, 'vm-rerun')).spec.runStrategy, 'RerunOnFailure');
  await env.local.client.delete(Resources.virtualMachines, 'default', 'vm-rerun');
});

test('runStrategy Halted: start --paused runs the VM paused (VMI Paused condition); errors for a missing VM and bad flags', async () => {
  await env.local.client.create(Resources.virtualMachines, testVm('vm-halted', 'Halted'));
  let r = await env.qvirt('restart', 'vm-halted');
  assert.is(r.code, 1);
  assert.match(r.err, /RunStrategy Halted does not support manual restart requests/);
  r = await env.qvirt('start', 'vm-halted', '--paused');
  assert.is(r.code, 0, r.err);
  const vmi = await runningVmi(env, 'vm-halted');
  await eventually(async () => (await getVmi(env, 'vm-halted'))?.status?.conditions?.find((c) => c.type === 'Paused' && c.status === 'True'), 60_000, 'VMI Paused condition');
  assert.is((await getVm(env, 'vm-halted')).spec.runStrategy, 'Always', 'the paused start flips Halted to Always (the VM controller does, as KubeVirt)');
  assert.ok(vmi.metadata!.uid);
  r = await env.qvirt('stop', 'vm-halted', '--force', '--grace-period', '0');
  assert.is(r.code, 0, r.err);
  await stopped('vm-halted');

  r = await env.qvirt('start', 'no-such-vm');
  assert.is(r.code, 1);
  assert.is(r.err, 'Error: VirtualMachine "no-such-vm" not found in namespace "default"\n');
  r = await env.qvirt('restart', 'vm-halted', '--force', '--grace-period', '5');
  assert.is(r.code, 1);
  assert.match(r.err, /For force restart, only gracePeriod=0 is supported/);
  await env.local.client.delete(Resources.virtualMachines, 'default', 'vm-halted');
});

test.run();
