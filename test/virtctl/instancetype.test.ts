// Instance types and preferences in the local mode, as a user meets them (issue 18): KubeVirt's own
// csmall/clarge/cluster-csmall/virtio/windows examples applied unchanged with kubectl; a VM of the
// test guest naming clarge and virtio boots with the instance type's 4 vCPUs and 2 GiB — in its VMI
// spec and in the guest itself (its QVIRT-CPUS and QVIRT-MEMORY console markers) — with the
// preference's NIC model, the ControllerRevision pinning clarge and the VM's status refs naming it;
// KubeVirt's virtctl expand prints the expanded VM; a VM naming an instance type that does not
// exist is admitted but does not start (Failure FailedFindInstancetype, the API's NotFound message,
// Stopped); KubeVirt's vm-cirros-csmall example, whose template sets memory.guest, is refused with
// KubeVirt's conflict message; inferFromVolume takes the names from a claim's labels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import type { VirtualMachine } from '../../src/api/types.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { virtctl } from '../lib/virtctl.ts';
import { INSTANCETYPE_EXAMPLES_DIR } from '../api/fixtures.ts';
import { eventually, getVm, getVmi, runningVmi, startEnv, testVm, waitForSerial, type Env } from './lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qit'); });
test.after(async () => { await env?.stop(); });

const kubectl = async (...args: string[]) => {
  try {
    const r = await promisify(execFile)('kubectl', ['--kubeconfig', env.local.kubeconfig, ...args], { timeout: 60_000 });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: e.stdout ?? '', err: e.stderr ?? '' };
  }
};
const example = (f: string) => join(INSTANCETYPE_EXAMPLES_DIR, f);

/** The test guest sized by the instance type: its template asks for no memory of its own. */
function sizedVm(name: string, matchers: Record<string, unknown>): VirtualMachine {
  const vm = testVm(name, 'Always');
  delete vm.spec.template.spec!.domain.resources;
  return { ...vm, spec: { ...vm.spec, ...matchers } };
}

test('KubeVirt\'s instancetype and preference examples apply unchanged with kubectl', async () => {
  for (const f of ['csmall.yaml', 'clarge.yaml', 'cluster-csmall.yaml', 'virtio.yaml', 'windows.yaml']) {
    const r = await kubectl('apply', '-n', 'default', '-f', example(f));
    assert.is(r.code, 0, `${f}: ${r.err}`);
  }
  const r = await kubectl('get', 'vmf,vmcf,vmpref', '-A', '-o', 'name');
  assert.equal(r.out.trim().split('\n').sort(), [
    'virtualmachineclusterinstancetype.instancetype.kubevirt.io/cluster-csmall',
    'virtualmachineinstancetype.instancetype.kubevirt.io/clarge',
    'virtualmachineinstancetype.instancetype.kubevirt.io/csmall',
    'virtualmachinepreference.instancetype.kubevirt.io/virtio',
    'virtualmachinepreference.instancetype.kubevirt.io/windows',
  ]);
});

test('a VM naming clarge and virtio: 4 vCPUs and 2 GiB in the VMI spec and in the guest, the NIC model, the pinned revision and the status refs', async () => {
  await env.local.client.create(Resources.virtualMachines, sizedVm('sized', { instancetype: { kind: 'VirtualMachineInstancetype', name: 'clarge' }, preference: { kind: 'VirtualMachinePreference', name: 'virtio' } }));
  const vmi = await runningVmi(env, 'sized', [], 240_000);
  assert.equal([vmi.spec.domain.cpu?.sockets, vmi.spec.domain.cpu?.cores, vmi.spec.domain.cpu?.threads, vmi.spec.domain.memory?.guest], [4, 1, 1, '2Gi']);
  assert.equal(vmi.spec.domain.devices.interfaces?.map((i) => i.model), ['virtio']);
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/instancetype-name'], 'clarge');
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/preference-name'], 'virtio');

  const console = await waitForSerial(env, vmi.metadata!.uid!, /QVIRT-MEMORY total-kb=\d+/, 240_000);
  // 4 online (possible: up to the hotplug maximum the defaulting adds, 4 × sockets).
  assert.match(console, /QVIRT-CPUS online=0-3 /, console.split('\n').filter((l) => l.includes('QVIRT-')).join('\n'));
  assert.match(console, /QVIRT-NIC name=eth0 mac=\S+ driver=virtio_net/, 'the virtio NIC the VMI spec names, in the guest');
  const kb = Number(/QVIRT-MEMORY total-kb=(\d+)/.exec(console)![1]);
  // 2 GiB less what the kernel keeps for itself.
  assert.ok(kb > 1.8 * 1024 * 1024 && kb <= 2 * 1024 * 1024, `the guest sees ${kb} kB`);

  const vm = await eventually(async () => { const v = await getVm(env, 'sized'); return v.status?.instancetypeRef?.controllerRevisionRef?.name ? v : undefined; }, 30_000, 'status.instancetypeRef');
  const clarge = await env.local.client.get<KubeObject>(Resources.virtualMachineInstancetypes, 'default', 'clarge');
  const revision = `sized-clarge-v1beta1-${clarge.metadata!.uid}-${clarge.metadata!.generation}`;
  assert.equal(vm.status?.instancetypeRef, { name: 'clarge', kind: 'VirtualMachineInstancetype', controllerRevisionRef: { name: revision } });
  assert.match(vm.status?.preferenceRef?.controllerRevisionRef?.name ?? '', /^sized-virtio-v1beta1-/);
  const labels = (await kubectl('get', 'controllerrevision', revision, '-n', 'default', '-o', 'jsonpath={.metadata.labels}')).out;
  assert.equal(JSON.parse(labels)['instancetype.kubevirt.io/object-name'], 'clarge');
  assert.equal(JSON.parse(labels)['instancetype.kubevirt.io/object-kind'], 'VirtualMachineInstancetype');
});

test('KubeVirt\'s virtctl expand: the VM with clarge and virtio written into its template', async () => {
  const r = await virtctl(env.local.kubeconfig, ['expand', '--vm', 'sized', '--output', 'yaml']);
  assert.is(r.code, 0, r.err);
  const vm = yaml.load(r.out) as VirtualMachine;
  assert.equal([vm.spec.template.spec?.domain.cpu?.sockets, vm.spec.template.spec?.domain.memory?.guest, vm.spec.instancetype], [4, '2Gi', undefined]);
  const file = example('vm-cirros-clarge-virtio.yaml');
  const posted = await virtctl(env.local.kubeconfig, ['expand', '--file', file]);
  assert.is.not(posted.code, 0);
  assert.match(posted.err, 'VM field(s) spec.template.spec.domain.memory.guest conflicts with selected instance type');
});

test('a VM naming an instance type that does not exist is admitted and does not start: Failure FailedFindInstancetype, Stopped', async () => {
  await env.local.client.create(Resources.virtualMachines, sizedVm('missing', { instancetype: { kind: 'VirtualMachineInstancetype', name: 'nonexistent' } }));
  const vm = await eventually(async () => { const v = await getVm(env, 'missing'); return v.status?.conditions?.some((c) => c.type === 'Failure') && v; }, 30_000, 'the Failure condition');
  const failure = vm.status!.conditions!.find((c) => c.type === 'Failure')!;
  assert.equal([failure.status, failure.reason, failure.message], ['True', 'FailedFindInstancetype', 'virtualmachineinstancetypes.instancetype.kubevirt.io "nonexistent" not found']);
  assert.is(vm.status?.printableStatus, 'Stopped');
  assert.is(await getVmi(env, 'missing'), undefined);
  const r = await kubectl('get', 'vm', 'missing', '-n', 'default', '--no-headers');
  assert.match(r.out, /missing\s+\S+\s+Stopped\s+False/);
});

test('KubeVirt\'s vm-cirros-csmall example (its template sets memory.guest) is refused with KubeVirt\'s conflict message', async () => {
  const r = await kubectl('apply', '-n', 'default', '-f', example('vm-cirros-csmall.yaml'));
  assert.is.not(r.code, 0);
  // kubectl prints a 422 with causes as `The request is invalid: <field>: <message>`, as against virt-api.
  assert.match(r.err, 'The request is invalid: spec.template.spec.domain.memory.guest: VM field(s) spec.template.spec.domain.memory.guest conflicts with selected instance type', r.err);
  assert.is((await kubectl('get', 'vm', 'vm-cirros-csmall', '-n', 'default')).code, 1);
});

test('inferFromVolume: the claim\'s labels name the instance type and preference, written into the VM; a template that then conflicts fails the VM', async () => {
  await env.local.client.create(Resources.persistentVolumeClaims, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: 'labelled', namespace: 'default', labels: { 'instancetype.kubevirt.io/default-instancetype': 'cluster-csmall', 'instancetype.kubevirt.io/default-preference': 'virtio', 'instancetype.kubevirt.io/default-preference-kind': 'VirtualMachinePreference' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } },
  } as KubeObject);
  const inferring = (name: string) => {
    const vm = sizedVm(name, { instancetype: { inferFromVolume: 'data' }, preference: { inferFromVolume: 'data' } });
    vm.spec.runStrategy = 'Halted';
    vm.spec.template.spec!.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'labelled' } }];
    return vm;
  };
  await env.local.client.create(Resources.virtualMachines, inferring('inferred'));
  const vm = await eventually(async () => { const v = await getVm(env, 'inferred'); return v.status?.instancetypeRef?.controllerRevisionRef ? v : undefined; }, 30_000, 'the inferred matchers pinned');
  assert.equal([vm.spec.instancetype, vm.spec.preference], [{ name: 'cluster-csmall' }, { name: 'virtio', kind: 'VirtualMachinePreference' }]);
  const conflicting = inferring('conflicting');
  conflicting.spec.template.spec!.domain.memory = { guest: '64Mi' };
  await env.local.client.create(Resources.virtualMachines, conflicting);
  const failed = await eventually(async () => (await getVm(env, 'conflicting')).status?.conditions?.find((c) => c.type === 'Failure'), 30_000, 'the Failure condition of conflicting');
  assert.is(failed.reason, 'FailedCreate');
  assert.match(failed.message ?? '', 'VM field(s) spec.template.spec.domain.memory.guest conflicts with selected instance type');
});

test('stopping the sized VM ends its guest', async () => {
  await env.local.client.patch(Resources.virtualMachines, 'default', 'sized', { spec: { runStrategy: 'Halted' } }, 'merge');
  await eventually(async () => !(await getVmi(env, 'sized')), 120_000, 'the VMI of sized gone');
});

test.run();
