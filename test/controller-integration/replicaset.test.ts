// The ReplicaSet controller as a running process: scale 3 → 5 → 1 through spec and through the
// scale subresource (what `kubectl scale` uses), every VMI started by the VMI controller, status
// with the labelSelector the scale subresource reports, and orphan adoption.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { eventually, SimulatedNode, type Cluster, startControlPlane, type ControlPlane } from './lib.ts';
import type { ControllerManager } from '../../controller/manager.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../src/api/types.ts';

const NS = 'default';
let plane: ControlPlane;
let cluster: Cluster;
let manager: ControllerManager;
let node: SimulatedNode;

const template = {
  metadata: { labels: { 'kubevirt.io/vmReplicaSet': 'testreplicaset' } },
  spec: {
    domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '64M' } } },
    volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest' } }],
  },
};

const vmisOf = async () => (await cluster.client.list<VirtualMachineInstance>(Resources.virtualMachineInstances, { namespace: NS, labelSelector: 'kubevirt.io/vmReplicaSet=testreplicaset' })).items;
const live = (l: VirtualMachineInstance[]) => l.filter((v) => v.metadata?.deletionTimestamp == null);
const rsGet = () => cluster.client.get<VirtualMachineInstanceReplicaSet>(Resources.virtualMachineInstanceReplicaSets, NS, 'testreplicaset');

async function settledAt(n: number): Promise<VirtualMachineInstanceReplicaSet> {
  return eventually(async () => {
    const vmis = await vmisOf();
    const rs = await rsGet();
    const running = vmis.filter((v) => v.status?.phase === 'Running');
    return vmis.length === n && running.length === n && rs.status?.replicas === n && rs.status.readyReplicas === n && rs;
  }, 15_000, `${n} running replicas`);
}

test.before(async () => {
  plane = await startControlPlane();
  ({ cluster, manager } = plane);
  node = plane.node!;
});

test.after(async () => {
  await plane?.stop();
});

test('3 replicas: three VMIs named from the replica set, each with one launcher pod, status with labelSelector', async () => {
  await cluster.client.create(Resources.virtualMachineInstanceReplicaSets, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet',
    metadata: { name: 'testreplicaset', namespace: NS },
    spec: { replicas: 3, selector: { matchLabels: { 'kubevirt.io/vmReplicaSet': 'testreplicaset' } }, template },
  } as VirtualMachineInstanceReplicaSet);
  const rs = await settledAt(3);
  assert.is(rs.status?.labelSelector, 'kubevirt.io/vmReplicaSet=testreplicaset');
  for (const vmi of await vmisOf()) {
    assert.match(vmi.metadata!.name!, /^testreplicaset[a-z0-9]{5}$/);
    assert.is(vmi.metadata?.ownerReferences?.[0]?.kind, 'VirtualMachineInstanceReplicaSet');
    assert.is(vmi.metadata?.ownerReferences?.[0]?.uid, rs.metadata?.uid);
    const pods = (await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: `kubevirt.io/created-by=${vmi.metadata!.uid}` })).items;
    assert.is(pods.length, 1);
  }
});

test('scale to 5 through spec, then to 1 through the scale subresource', async () => {
  await cluster.client.patch(Resources.virtualMachineInstanceReplicaSets, NS, 'testreplicaset', { spec: { replicas: 5 } }, 'merge');
  await settledAt(5);
  const scale = await cluster.client.get<{ spec?: { replicas?: number }; status?: { replicas?: number; selector?: string } } & { metadata?: { name?: string } }>(Resources.virtualMachineInstanceReplicaSets, NS, 'testreplicaset', 'scale');
  assert.is(scale.status?.replicas, 5);
  assert.is(scale.status?.selector, 'kubevirt.io/vmReplicaSet=testreplicaset');
  await cluster.client.patch(Resources.virtualMachineInstanceReplicaSets, NS, 'testreplicaset', { spec: { replicas: 1 } }, 'merge', 'scale');
  await settledAt(1);
  const pods = (await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: 'kubevirt.io=virt-launcher' })).items;
  assert.is(pods.length, 1, 'the pods of deleted VMIs are gone');
});

test('an orphan VMI matching the selector is adopted and counts as a replica', async () => {
  await cluster.client.patch(Resources.virtualMachineInstanceReplicaSets, NS, 'testreplicaset', { spec: { replicas: 2 } }, 'merge');
  await settledAt(2);
  // Pause so the controller does not scale down while the orphan appears; then adopt.
  await cluster.client.patch(Resources.virtualMachineInstanceReplicaSets, NS, 'testreplicaset', { spec: { paused: true } }, 'merge');
  await eventually(async () => (await rsGet()).status?.conditions?.some((c) => c.type === 'ReplicaPaused'), 5000, 'ReplicaPaused');
  await cluster.client.create(Resources.virtualMachineInstances, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'orphan', namespace: NS, labels: { ...template.metadata.labels } }, spec: structuredClone(template.spec) } as VirtualMachineInstance);
  const rs = await rsGet();
  await eventually(async () => {
    const o = (await vmisOf()).find((v) => v.metadata?.name === 'orphan');
    return o?.metadata?.ownerReferences?.[0]?.uid === rs.metadata?.uid;
  }, 5000, 'orphan adopted');
  await cluster.client.patch(Resources.virtualMachineInstanceReplicaSets, NS, 'testreplicaset', { spec: { paused: false } }, 'merge');
  await settledAt(2);
  assert.is(live(await vmisOf()).length, 2);
});

test('events: SuccessfulCreate and SuccessfulDelete on the replica set', async () => {
  const l = await cluster.client.list<{ reason?: string; involvedObject?: { kind?: string } } & { metadata?: object }>(Resources.events, { namespace: NS });
  const reasons = new Set(l.items.filter((e) => e.involvedObject?.kind === 'VirtualMachineInstanceReplicaSet').map((e) => e.reason));
  assert.ok(reasons.has('SuccessfulCreate'), [...reasons].join());
  assert.ok(reasons.has('SuccessfulDelete'), [...reasons].join());
});

test.run();
