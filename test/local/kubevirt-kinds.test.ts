// KubeVirt's kinds beyond the core in the local mode, as a user meets them with the real kubectl:
// a VirtualMachinePool applied and scaled with `kubectl scale vmpool` (the scale subresource), its
// VMs named <pool>-<index>, and a pool virt-api would refuse refused with its words; a
// VirtualMachineInstancePreset merged into a new VMI. No guest boots (a Halted pool template, a VMI
// no node can take): this is about the API and the controllers. PriorityClass with the Priority
// admission of the launcher pods.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Resources } from '../../src/kube/resource.ts';
import { eventually, startEnv, type Env } from '../virtctl/lib.ts';
import type { VirtualMachine } from '../../src/api/types.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvkinds'); });
test.after(async () => { await env?.stop(); });

const kubectl = async (input: string | undefined, ...args: string[]): Promise<{ out: string; err: string; code: number }> => {
  const p = promisify(execFile)('kubectl', ['--kubeconfig', env.local.kubeconfig, ...args], { timeout: 30_000 });
  if (input !== undefined) { p.child.stdin!.end(input); }
  return p.then((r) => ({ out: r.stdout, err: r.stderr, code: 0 }), (e: { stdout?: string; stderr?: string; code?: number }) => ({ out: e.stdout ?? '', err: e.stderr ?? '', code: e.code ?? 1 }));
};

const pool = (name: string, extra = '') => `apiVersion: pool.kubevirt.io/v1beta1
kind: VirtualMachinePool
metadata:
  name: ${name}
spec:
  replicas: 2
  selector:
    matchLabels:
      kubevirt.io/vmpool: ${name}
${extra}  virtualMachineTemplate:
    metadata:
      labels:
        kubevirt.io/vmpool: ${name}
    spec:
      runStrategy: Halted
      template:
        metadata:
          labels:
            kubevirt.io/vmpool: ${name}
        spec:
          domain:
            devices: {}
            resources:
              requests:
                memory: 64Mi
`;

const vmNames = async (p: string) => (await env.local.client.list<VirtualMachine>(Resources.virtualMachines, { namespace: 'default', labelSelector: `kubevirt.io/vmpool=${p}` })).items
  .filter((v) => v.metadata?.deletionTimestamp == null).map((v) => v.metadata!.name!).sort();

test('VirtualMachinePool: kubectl apply, get vmpool, kubectl scale (the scale subresource) up and down; a bad one refused with virt-api\'s words', async () => {
  const applied = await kubectl(pool('fleet'), 'apply', '-f', '-');
  assert.is(applied.code, 0, applied.err);
  await eventually(async () => JSON.stringify(await vmNames('fleet')) === '["fleet-0","fleet-1"]', 30_000, 'fleet-0 and fleet-1');
  const scaled = await kubectl(undefined, 'scale', 'vmpool', 'fleet', '--replicas=4');
  assert.is(scaled.code, 0, scaled.err);
  assert.match(scaled.out, /virtualmachinepool.pool.kubevirt.io\/fleet scaled/);
  await eventually(async () => JSON.stringify(await vmNames('fleet')) === '["fleet-0","fleet-1","fleet-2","fleet-3"]', 30_000, 'four VMs');
  const got = await eventually(async () => {
    const r = await kubectl(undefined, 'get', 'vmpool', 'fleet');
    return /fleet\s+4\s+4\s+0\s+/.test(r.out) && r.out;
  }, 30_000, 'kubectl get vmpool: Desired 4, Current 4, Ready 0 (Halted)');
  assert.match(got, /NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE/);
  assert.is((await kubectl(undefined, 'patch', 'vmpool', 'fleet', '--type=merge', '-p', '{"spec":{"scaleInStrategy":{"proactive":{"selectionPolicy":{"sortPolicy":"DescendingOrder"}}}}}')).code, 0);
  assert.is((await kubectl(undefined, 'scale', 'vmpool', 'fleet', '--replicas=1')).code, 0);
  await eventually(async () => JSON.stringify(await vmNames('fleet')) === '["fleet-0"]', 30_000, 'fleet-0 left (highest indexes removed first)');
  const bad = await kubectl(pool('broken', '  maxUnavailable: 0%\n'), 'apply', '-f', '-');
  assert.is(bad.code, 1, bad.out);
  // kubectl's words for virt-api's 422 with causes.
  assert.match(bad.err, /The request is invalid: spec\.maxUnavailable: maxUnavailable percentage value 0 must be between 1 and 100/);
  assert.is((await kubectl(undefined, 'delete', 'vmpool', 'fleet', '--wait=true')).code, 0);
  await eventually(async () => (await vmNames('fleet')).length === 0, 30_000, 'the pool\'s VMs deleted with it');
});

test('VirtualMachineInstancePreset: still served (deprecated); a matching preset fills the new VMI\'s unset fields and names itself in an annotation; conflicting presets refuse the VMI', async () => {
  const presets = `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata:
  name: small
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: small
  domain:
    cpu:
      cores: 2
    clock:
      timezone: Europe/Paris
`;
  const applied = await kubectl(presets, 'apply', '-f', '-');
  assert.is(applied.code, 0, applied.err);
  // A node selector no node has: the VMI stays Pending, no guest boots.
  const vmiYaml = (name: string, flavor: string) => `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: ${name}
  labels:
    kubevirt.io/flavor: ${flavor}
spec:
  nodeSelector:
    qvirt.io/no-such-node: "true"
  domain:
    devices: {}
    resources:
      requests:
        memory: 64Mi
`;
  const created = await kubectl(vmiYaml('presetted', 'small'), 'create', '-f', '-');
  assert.is(created.code, 0, created.err);
  assert.match(created.err, /Warning: kubevirt.io\/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2./);
  const vmi = await eventually(async () => {
    const v = await env.local.client.get<any>(Resources.virtualMachineInstances, 'default', 'presetted');
    return v.status?.phase ? v : undefined;
  }, 30_000, 'the VMI defaulted');
  assert.equal([vmi.spec.domain.cpu.cores, vmi.spec.domain.clock.timezone, vmi.spec.domain.resources.requests.memory], [2, 'Europe/Paris', '64Mi']);
  assert.is(vmi.metadata.annotations['virtualmachinepreset.kubevirt.io/small'], 'kubevirt.io/v1');
  const other = await kubectl(presets.replace('name: small', 'name: big').replace('cores: 2', 'cores: 4'), 'apply', '-f', '-');
  assert.is(other.code, 0, other.err);
  const refused = await kubectl(vmiYaml('clash', 'small'), 'create', '-f', '-');
  assert.is(refused.code, 1);
  assert.match(refused.err, /VirtualMachinePresets cannot be applied due to conflicts: presets '(big|small)' and '(big|small)' conflict: spec.cpu/);
  assert.is((await kubectl(undefined, 'delete', 'vmi', 'presetted', '--wait=false')).code, 0);
});

test('PriorityClass: kubectl get pc lists the system classes; a VMI\'s priorityClassName gives its launcher pod that priority; an unknown class refuses the pod, and the VMI says so', async () => {
  const pcs = await kubectl(undefined, 'get', 'pc', '--no-headers');
  assert.is(pcs.code, 0, pcs.err);
  assert.match(pcs.out, /^system-cluster-critical\s+2000000000\s+false\s/m);
  assert.match(pcs.out, /^system-node-critical\s+2000001000\s+false\s/m);
  const cls = await kubectl('apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: vm-high\nvalue: 100000\n', 'apply', '-f', '-');
  assert.is(cls.code, 0, cls.err);
  // A node selector no node has: the launcher pod is made but never runs, no guest boots.
  const vmiYaml = (name: string, pc: string) => `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: ${name}
spec:
  priorityClassName: ${pc}
  nodeSelector:
    qvirt.io/no-such-node: "true"
  domain:
    devices: {}
    resources:
      requests:
        memory: 64Mi
`;
  assert.is((await kubectl(vmiYaml('prio', 'vm-high'), 'create', '-f', '-')).code, 0);
  const pod = await eventually(async () => {
    const pods = await env.local.client.list<any>(Resources.pods, { namespace: 'default' });
    return pods.items.find((p: any) => p.metadata.ownerReferences?.some((o: any) => o.kind === 'VirtualMachineInstance' && o.name === 'prio'));
  }, 30_000, 'the launcher pod of prio');
  assert.equal([pod.spec.priorityClassName, pod.spec.priority, pod.spec.preemptionPolicy], ['vm-high', 100000, 'PreemptLowerPriority']);
  assert.is((await kubectl(vmiYaml('lost', 'no-such-class'), 'create', '-f', '-')).code, 0);
  const event = await eventually(async () => {
    const evs = await env.local.client.list<any>(Resources.events, { namespace: 'default' });
    return evs.items.find((e: any) => e.involvedObject?.name === 'lost' && e.reason === 'FailedCreate');
  }, 30_000, 'a FailedCreate event on the VMI lost');
  assert.match(event.message, /no PriorityClass with name no-such-class was found/);
  assert.is((await kubectl(undefined, 'delete', 'vmi', 'prio', 'lost', '--wait=false')).code, 0);
});

test.run();
