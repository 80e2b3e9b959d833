// The VM and VMI controllers as running processes against the embedded API server: KubeVirt's
// example VM is started, its VMI and launcher pod look like KubeVirt's, the simulated kubelet and
// virt-handler move it to Running, and stop/start/restart go through the same writes virtctl and
// virt-api make (kubevirt-model §5.1).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { Resources } from '../../src/kube/resource.ts';
import { isNotFound, type KubeList } from '../../src/kube/client.ts';
import { eventually, handlerPhasePatch, runningPodStatus, SimulatedNode, type Cluster, startControlPlane, type ControlPlane } from './lib.ts';
import type { ControllerManager } from '../../controller/manager.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const fixture = (name: string) => yaml.load(readFileSync(new URL(`../fixtures/kubevirt-examples/${name}`, import.meta.url), 'utf8')) as VirtualMachine;
const NS = 'default';

let plane: ControlPlane;
let cluster: Cluster;
let manager: ControllerManager;

const getVM = (name: string) => cluster.client.get<VirtualMachine>(Resources.virtualMachines, NS, name);
const getVMI = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, NS, name).catch((err: unknown) => { if (isNotFound(err)) return undefined; throw err; });
const podsOf = async (vmi: VirtualMachineInstance) =>
  (await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: `kubevirt.io/created-by=${vmi.metadata!.uid}` })).items;

test.before(async () => {
  plane = await startControlPlane({ node: false });
  ({ cluster, manager } = plane);
});

test.after(async () => {
  await plane?.stop();
});

test('vm-cirros (Halted): the VM gets its finalizer and printableStatus Stopped, no VMI', async () => {
  await cluster.client.create(Resources.virtualMachines, { ...fixture('vm-cirros.yaml'), metadata: { ...fixture('vm-cirros.yaml').metadata, namespace: NS } });
  const vm = await eventually(async () => { const v = await getVM('vm-cirros'); return v.status?.printableStatus === 'Stopped' && v; }, 5000, 'printableStatus Stopped');
  assert.equal(vm.metadata?.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
  assert.is(vm.status?.ready, false);
  assert.is(vm.status?.created, false);
  assert.is(await getVMI('vm-cirros'), undefined);
});

test('virtctl start: VMI and launcher pod as KubeVirt makes them; kubelet + handler → Running', async () => {
  // virt-api's start of a Halted VM: test + replace /spec/runStrategy.
  await cluster.client.patch(Resources.virtualMachines, NS, 'vm-cirros', [
    { op: 'test', path: '/spec/runStrategy', value: 'Halted' },
    { op: 'replace', path: '/spec/runStrategy', value: 'Always' },
  ], 'json');
  const vm = await getVM('vm-cirros');
  const vmi = await eventually(async () => { const v = await getVMI('vm-cirros'); return v?.status?.phase === 'Scheduling' && v; }, 5000, 'VMI Scheduling');
  assert.equal(vmi.metadata?.labels, { 'kubevirt.io/vm': 'vm-cirros' });
  assert.equal(vmi.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm-cirros', uid: vm.metadata!.uid!, controller: true, blockOwnerDeletion: true }]);
  assert.equal(vmi.metadata?.finalizers, ['kubevirt.io/virtualMachineControllerFinalize', 'kubevirt.io/foregroundDeleteVirtualMachine']);
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/vm-generation'], String(vm.metadata?.generation));
  assert.equal(vmi.status?.phaseTransitionTimestamps?.map((t) => t.phase), ['Pending', 'Scheduling']);
  assert.ok(vmi.spec.domain.firmware?.uuid, 'firmware uuid defaulted');

  const pods = await podsOf(vmi);
  assert.is(pods.length, 1, 'exactly one launcher pod');
  const pod = pods[0]!;
  assert.match(pod.metadata!.name!, /^virt-launcher-vm-cirros-[a-z0-9]{5}$/);
  assert.is(pod.metadata?.labels?.['kubevirt.io'], 'virt-launcher');
  assert.is(pod.metadata?.labels?.['vm.kubevirt.io/name'], 'vm-cirros');
  assert.is(pod.metadata?.labels?.['kubevirt.io/vm'], 'vm-cirros');
  assert.is(pod.metadata?.annotations?.['kubevirt.io/domain'], 'vm-cirros');
  assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, vmi.metadata?.uid);
  assert.equal(pod.metadata?.ownerReferences?.[0]?.kind, 'VirtualMachineInstance');
  const names = pod.spec!.containers.map((c) => c.name);
  assert.ok(names.includes('compute'), `containers: ${names}`);
  assert.ok(names.includes('volumecontainerdisk'), `containers: ${names}`);
  assert.is(pod.spec!.containers.find((c) => c.name === 'compute')!.image, 'qvirt/launcher:latest');
  assert.ok(pod.spec!.volumes!.some((v) => v.name === 'container-disks'), 'container-disks volume');
  assert.equal(pod.spec!.readinessGates, [{ conditionType: 'kubevirt.io/virtual-machine-unpaused' }]);
  assert.is((await getVM('vm-cirros')).status?.printableStatus, 'Starting');

  // kubelet: bind, run.
  await cluster.client.request('POST', `/api/v1/namespaces/${NS}/pods/${pod.metadata!.name}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: pod.metadata!.name }, target: { apiVersion: 'v1', kind: 'Node', name: 'node01' } } });
  const bound = await cluster.client.get<Pod>(Resources.pods, NS, pod.metadata!.name!);
  await cluster.client.patch(Resources.pods, NS, pod.metadata!.name!, { status: runningPodStatus(bound) }, 'merge', 'status');
  const scheduled = await eventually(async () => { const v = await getVMI('vm-cirros'); return v?.status?.phase === 'Scheduled' && v; }, 5000, 'VMI Scheduled');
  assert.is(scheduled.status?.nodeName, 'node01');
  assert.is(scheduled.metadata?.labels?.['kubevirt.io/nodeName'], 'node01');
  // The readiness gate condition is written on the pod.
  await eventually(async () => {
    const p = await cluster.client.get<Pod>(Resources.pods, NS, pod.metadata!.name!);
    return p.status?.conditions?.some((c) => c.type === 'kubevirt.io/virtual-machine-unpaused' && c.status === 'True');
  }, 5000, 'pod unpaused gate');

  // virt-handler: Scheduled → Running.
  await cluster.client.patch(Resources.virtualMachineInstances, NS, 'vm-cirros', handlerPhasePatch(scheduled, 'Running'), 'json');
  const running = await eventually(async () => { const v = await getVMI('vm-cirros'); return v?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && v; }, 5000, 'VMI Ready');
  assert.is(running.status?.phase, 'Running');
  const vmRunning = await eventually(async () => { const v = await getVM('vm-cirros'); return v.status?.printableStatus === 'Running' && v.status.ready === true && v; }, 5000, 'VM Running');
  assert.is(vmRunning.status?.created, true);
  assert.ok(vmRunning.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 'VM Ready condition mirrors the VMI');
});

test('events: SuccessfulCreate on the VM and on the VMI', async () => {
  const events = await eventually(async () => {
    const l = await cluster.client.list<{ reason?: string; involvedObject?: { kind?: string; name?: string }; message?: string } & { metadata?: object }>(Resources.events, { namespace: NS });
    const vmEv = l.items.find((e) => e.involvedObject?.kind === 'VirtualMachine' && e.reason === 'SuccessfulCreate');
    const vmiEv = l.items.find((e) => e.involvedObject?.kind === 'VirtualMachineInstance' && e.reason === 'SuccessfulCreate');
    return vmEv && vmiEv && { vmEv, vmiEv };
  }, 5000, 'events');
  assert.is(events.vmEv.message, 'Started the virtual machine by creating the new virtual machine instance vm-cirros');
  assert.match(events.vmiEv.message!, /^Created virtual machine pod virt-launcher-vm-cirros-/);
});

test('the VM controller creates its VMI mutated (defaults, finalizer, Pending), as through KubeVirt\'s VMI webhook: no second write before the launcher pod', async () => {
  const writes: { type: string; vmi: VirtualMachineInstance }[] = [];
  const watch = await cluster.client.watch<VirtualMachineInstance>(Resources.virtualMachineInstances, { namespace: NS, fieldSelector: 'metadata.name=vm-mutated' }, (ev) => { if (ev.type !== 'BOOKMARK') writes.push({ type: ev.type, vmi: ev.object }); }, () => undefined);
  try {
    const vm = fixture('vm-cirros.yaml');
    await cluster.client.create(Resources.virtualMachines, { ...vm, metadata: { ...vm.metadata, name: 'vm-mutated', namespace: NS }, spec: { ...vm.spec, runStrategy: 'Always' } });
    await eventually(async () => { const v = await getVMI('vm-mutated'); return v?.status?.phase === 'Scheduling' && v; }, 5000, 'VMI Scheduling');
    const first = writes[0]!;
    assert.is(first.type, 'ADDED');
    assert.is(first.vmi.status?.phase, 'Pending');
    assert.equal(first.vmi.status?.phaseTransitionTimestamps?.map((t) => t.phase), ['Pending']);
    assert.ok(first.vmi.metadata?.finalizers?.includes('kubevirt.io/foregroundDeleteVirtualMachine'), 'the VMI finalizer at create');
    assert.ok(first.vmi.spec.domain.firmware?.uuid, 'firmware uuid defaulted at create');
    assert.ok(first.vmi.spec.domain.machine?.type, 'machine type defaulted at create');
    // The next write is the VMI controller's own (the launcher pod exists): the spec is never written again.
    for (const w of writes.slice(1)) assert.equal(w.vmi.spec, first.vmi.spec);
  } finally {
    watch.abort();
    await cluster.client.delete(Resources.virtualMachines, NS, 'vm-mutated');
    await eventually(async () => !(await getVMI('vm-mutated')) && (await cluster.client.list(Resources.virtualMachines, { namespace: NS })).items.every((v) => v.metadata?.name !== 'vm-mutated'), 10_000, 'vm-mutated gone');
  }
});

test('virtctl restart: [Stop{uid}, Start] gives a new VMI uid; exactly one pod', async () => {
  const node = new SimulatedNode(cluster);
  await node.start();
  try {
    const old = (await getVMI('vm-cirros'))!;
    const vm = await getVM('vm-cirros');
    // virt-api: add or test+replace /status/stateChangeRequests through the status subresource.
    const requests = [{ action: 'Stop', uid: old.metadata!.uid }, { action: 'Start' }];
    await cluster.client.patch(Resources.virtualMachines, NS, 'vm-cirros', vm.status?.stateChangeRequests
      ? [{ op: 'test', path: '/status/stateChangeRequests', value: vm.status.stateChangeRequests }, { op: 'replace', path: '/status/stateChangeRequests', value: requests }]
      : [{ op: 'add', path: '/status/stateChangeRequests', value: requests }], 'json', 'status');
    const fresh = await eventually(async () => { const v = await getVMI('vm-cirros'); return v && v.metadata?.uid !== old.metadata?.uid && v.status?.phase === 'Running' && v; }, 10_000, 'a new running VMI').catch(async (err) => {
      console.log(JSON.stringify({ vm: (await getVM('vm-cirros')).status, vmi: await getVMI('vm-cirros'), pods: (await cluster.client.list<Pod>(Resources.pods, { namespace: NS })).items.map((p) => [p.metadata, p.status?.phase]) }, null, 1));
      throw err;
    });
    assert.is.not(fresh.metadata?.uid, old.metadata?.uid);
    const vmAfter = await eventually(async () => { const v = await getVM('vm-cirros'); return v.status?.printableStatus === 'Running' && v.status.ready === true && !v.status.stateChangeRequests && v; }, 5000, 'requests drained, VM ready');
    assert.is(vmAfter.status?.ready, true);
    const pods = await podsOf(fresh);
    assert.is(pods.length, 1);
    // The old VMI's pods are gone with it.
    assert.is((await podsOf(old)).length, 0);
  } finally {
    await node.stop();
  }
});

test('virtctl stop (Always → Halted): VMI and pod go, VM Stopped; start again', async () => {
  const node = new SimulatedNode(cluster);
  await node.start();
  try {
    await cluster.client.patch(Resources.virtualMachines, NS, 'vm-cirros', [{ op: 'replace', path: '/spec/runStrategy', value: 'Halted' }], 'json');
    await eventually(async () => (await getVMI('vm-cirros')) === undefined, 10_000, 'VMI gone');
    // Stopped comes with the VMI's final phase already; created turns false with the status update after the VMI is gone.
    const vm = await eventually(async () => { const v = await getVM('vm-cirros'); return v.status?.printableStatus === 'Stopped' && v.status.created === false && v; }, 5000, 'VM Stopped, its VMI no longer created');
    assert.is(vm.status?.created, false);
    const pods = (await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: 'kubevirt.io=virt-launcher' })).items;
    assert.is(pods.length, 0);
    await cluster.client.patch(Resources.virtualMachines, NS, 'vm-cirros', [{ op: 'replace', path: '/spec/runStrategy', value: 'Always' }], 'json');
    await eventually(async () => { const v = await getVM('vm-cirros'); return v.status?.printableStatus === 'Running'; }, 10_000, 'VM Running again');
  } finally {
    await node.stop();
  }
});

test('deleting the VM deletes its VMI first, then the VM goes', async () => {
  const node = new SimulatedNode(cluster);
  await node.start();
  try {
    await cluster.client.delete(Resources.virtualMachines, NS, 'vm-cirros');
    await eventually(async () => (await getVMI('vm-cirros')) === undefined, 10_000, 'VMI gone');
    await eventually(async () => { try { await getVM('vm-cirros'); return false; } catch (err) { return isNotFound(err); } }, 10_000, 'VM gone');
    const pods: KubeList<Pod> = await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: 'kubevirt.io=virt-launcher' });
    assert.is(pods.items.length, 0);
  } finally {
    await node.stop();
  }
});

test('an orphan VMI of the VM\'s name is adopted, not duplicated', async () => {
  const node = new SimulatedNode(cluster);
  await node.start();
  try {
    await cluster.client.create(Resources.virtualMachineInstances, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm-orphan', namespace: NS }, spec: { domain: { devices: {}, memory: { guest: '128Mi' } } } } as VirtualMachineInstance);
    const orphan = await eventually(async () => { const v = await getVMI('vm-orphan'); return v?.status?.phase === 'Running' && v; }, 10_000, 'orphan Running');
    const vm = await cluster.client.create(Resources.virtualMachines, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm-orphan', namespace: NS }, spec: { runStrategy: 'Always', template: { spec: { domain: { devices: {}, memory: { guest: '128Mi' } } } } } } as VirtualMachine);
    const adopted = await eventually(async () => { const v = await getVMI('vm-orphan'); return v?.metadata?.ownerReferences?.[0]?.uid === vm.metadata?.uid && v; }, 5000, 'adopted');
    assert.is(adopted.metadata?.uid, orphan.metadata?.uid);
    await eventually(async () => (await getVM('vm-orphan')).status?.printableStatus === 'Running', 5000, 'VM Running');
    assert.is((await podsOf(adopted)).length, 1);
  } finally {
    await node.stop();
  }
});

test.run();
