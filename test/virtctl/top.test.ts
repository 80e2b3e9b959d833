// `qvirt top vmi|vm` against the local mode as a user runs it (bin/qvirt with the local mode's
// kubeconfig): a running VM of the test guest whose user-data keeps writing its scratch disk shows
// CPU, memory and a write rate; a stopped VM, a missing VMI and bad flags are refused in words.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { eventually, getVmi, runningVmi, serialLog, startEnv, testVm, type Env } from './lib.ts';

let env!: Env;
const VM = 'top-vm';

const USER_DATA = `#!/bin/sh
for d in /sys/block/vd*; do [ "$(cat $d/serial 2>/dev/null)" = scratch ] && dev=/dev/\${d##*/}; done
( while :; do dd if=/dev/urandom of=$dev bs=64k count=16 conv=fsync 2>/dev/null; done ) &
echo QVIRT-TOP-WRITING dev=$dev
`;

test.before(async () => {
  env = await startEnv('qtop');
  const vm = testVm(VM, 'Always', {
    volumes: [{ name: 'scratch', emptyDisk: { capacity: '16Mi' } }, { name: 'cloudinit', cloudInitNoCloud: { userData: USER_DATA } }],
  }) as unknown as { spec: { template: { spec: { domain: { devices: Record<string, unknown> } } } } };
  vm.spec.template.spec.domain.devices.disks = [{ name: 'scratch', serial: 'scratch', disk: { bus: 'virtio' } }, { name: 'cloudinit', disk: { bus: 'virtio' } }];
  await env.local.client.create(Resources.virtualMachines, vm as never);
  await env.local.client.create(Resources.virtualMachines, testVm('top-stopped', 'Halted') as never);
});

test.after(async () => { await env?.stop(); });

/** `qvirt top ...` output rows split into columns. */
const rowsOf = (out: string) => out.trim().split('\n').map((l) => l.trim().split(/\s{3,}/));

test('top vmi NAME: CPU in millicores, memory in Mi, the scratch disk\'s write rate', async () => {
  const vmi = await runningVmi(env, VM, [], 120_000);
  await eventually(() => serialLog(env, vmi.metadata!.uid!).includes('QVIRT-TOP-WRITING dev=/dev/vd'), 90_000, 'the guest writing its scratch disk');
  const r = await env.qvirt('top', 'vmi', VM);
  assert.is(r.code, 0, r.err);
  console.log(r.out.replace(/^/gm, '  ').trimEnd());
  const [header, row] = rowsOf(r.out);
  assert.equal(header, ['NAME', 'CPU(cores)', 'MEMORY(bytes)', 'READ(bytes/s)', 'WRITE(bytes/s)']);
  assert.is(row![0], VM);
  assert.match(row![1]!, /^[1-9]\d*m$/, `CPU moves: ${r.out}`);
  assert.match(row![2]!, /^[1-9]\d*Mi$/, `memory: ${r.out}`);
  assert.match(row![3]!, /^\d+(Ki|Mi)?$/);
  assert.match(row![4]!, /^[1-9]\d*(Ki|Mi)?$/, `the guest writes, so the write rate is above 0: ${r.out}`);
});

test('top vm (all VMs of the namespace, the stopped one left out), -A --network --no-headers, --sort-by', async () => {
  const all = await env.qvirt('top', 'vm', '--interval', '500ms');
  assert.is(all.code, 0, all.err);
  const rows = rowsOf(all.out);
  assert.equal(rows.map((r) => r[0]), ['NAME', VM], 'only the running VM');
  const wide = await env.qvirt('top', 'vmi', '-A', '--network', '--no-headers', '--sort-by', 'cpu');
  assert.is(wide.code, 0, wide.err);
  const [row] = rowsOf(wide.out);
  assert.equal([row![0], row![1], row!.length], ['default', VM, 8]);
  assert.match(row![6]!, /^\d+(Ki|Mi)?$/, 'a receive rate (0 without a pod network)');
});

test('refusals: a VM that is not running, a missing VMI, another namespace\'s, bad flags', async () => {
  const stopped = await env.qvirt('top', 'vm', 'top-stopped');
  assert.is(stopped.code, 1);
  assert.match(stopped.err, /VirtualMachine "top-stopped" in namespace "default" is not running: it has no VirtualMachineInstance/);
  const missing = await env.qvirt('top', 'vmi', 'nope');
  assert.is(missing.code, 1);
  assert.match(missing.err, /VirtualMachineInstance "nope" not found in namespace "default"|virtualmachineinstances.* "nope" not found/i);
  const empty = await env.qvirt('top', 'vmi', '-n', 'kube-system');
  assert.equal([empty.code, empty.err.trim(), empty.out], [0, 'No resources found in kube-system namespace.', '']);
  const bad = await env.qvirt('top', 'vmi', VM, '--sort-by', 'disk');
  assert.equal([bad.code, bad.err.includes('--sort-by: must be cpu or memory (got "disk")')], [2, true], bad.err);
  const both = await env.qvirt('top', 'pods');
  assert.is(both.code, 2);
  assert.match(both.err, /unsupported resource type "pods"/);
  assert.ok(await getVmi(env, VM), 'the VM still runs');
});

test.run();
