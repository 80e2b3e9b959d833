// The VirtualMachinePool controller as a running process against the embedded API server with the
// VM and VMI controllers and a simulated node (no guests): VMs named <pool>-<index> with their
// per-VM indexed claims and ConfigMap refs, each started; scale through spec and through the scale
// subresource (what `kubectl scale vmpool` uses), scale-in by the sort policy, a deleted VM
// replaced at its index; a template change rolled out (VMs updated, VMIs restarted, revision
// labels); the pool deleted with its VMs and revisions.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { eventually, type Cluster, startControlPlane, type ControlPlane } from './lib.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import type { VirtualMachinePool } from '../../src/api/pool/types.ts';

const NS = 'default';
let plane: ControlPlane;
let cluster: Cluster;

const REV = 'kubevirt.io/vm-pool-revision-name';
const poolManifest = {
  apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool',
  metadata: { name: 'web', namespace: NS },
  spec: {
    replicas: 3,
    selector: { matchLabels: { 'kubevirt.io/vmpool': 'web' } },
    nameGeneration: { appendIndexToConfigMapRefs: true },
    virtualMachineTemplate: {
      metadata: { labels: { 'kubevirt.io/vmpool': 'web' } },
      spec: {
        runStrategy: 'Always',
        template: {
          metadata: { labels: { 'kubevirt.io/vmpool': 'web' } },
          spec: {
            domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '64M' } } },
            volumes: [
              { name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest' } },
              { name: 'settings', configMap: { name: 'settings' } },
            ],
          },
        },
      },
    },
  },
};

const vmsOf = async () => (await cluster.client.list<VirtualMachine>(Resources.virtualMachines, { namespace: NS, labelSelector: 'kubevirt.io/vmpool=web' })).items;
const vmisOf = async () => (await cluster.client.list<VirtualMachineInstance>(Resources.virtualMachineInstances, { namespace: NS, labelSelector: 'kubevirt.io/vmpool=web' })).items;
const poolGet = () => cluster.client.get<VirtualMachinePool>(Resources.virtualMachinePools, NS, 'web');
const sorted = (l: { metadata?: { name?: string } }[]) => l.map((v) => v.metadata?.name ?? '').sort();

/** The pool at exactly these VMs, each with a Running VMI, and its status saying so. */
async function settledAt(names: string[]): Promise<VirtualMachinePool> {
  return eventually(async () => {
    const vms = (await vmsOf()).filter((v) => v.metadata?.deletionTimestamp == null);
    const vmis = (await vmisOf()).filter((v) => v.status?.phase === 'Running' && v.metadata?.deletionTimestamp == null);
    const p = await poolGet();
    return JSON.stringify(sorted(vms)) === JSON.stringify([...names].sort()) && JSON.stringify(sorted(vmis)) === JSON.stringify([...names].sort())
      && p.status?.replicas === names.length && p.status.readyReplicas === names.length && p;
  }, 20_000, `pool at ${names.join(',')}`);
}

test.before(async () => {
  plane = await startControlPlane();
  ({ cluster } = plane);
});

test.after(async () => {
  await plane?.stop();
});

test('3 replicas: VMs web-0..2 owned by the pool with its finalizer, indexed ConfigMap refs, a pinned revision, each started; status with labelSelector', async () => {
  await cluster.client.create(Resources.virtualMachinePools, structuredClone(poolManifest));
  const p = await settledAt(['web-0', 'web-1', 'web-2']);
  assert.is(p.status?.labelSelector, 'kubevirt.io/vmpool=web');
  assert.ok(p.metadata?.finalizers?.includes('pool.kubevirt.io/finalizer'));
  for (const vm of await vmsOf()) {
    const i = vm.metadata!.name!.split('-')[1];
    assert.equal(vm.metadata?.ownerReferences, [{ apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool', name: 'web', uid: p.metadata!.uid!, controller: true, blockOwnerDeletion: true }]);
    assert.ok(vm.metadata?.finalizers?.includes('pool.kubevirt.io/finalizer'));
    assert.is(vm.metadata?.labels?.[REV], 'web-1');
    assert.is(vm.spec.template.spec!.volumes![1]!.configMap!.name, `settings-${i}`);
  }
  for (const vmi of await vmisOf()) assert.is(vmi.metadata?.labels?.[REV], 'web-1', 'the VMI carries the revision it was started from');
  const rev = await cluster.client.get<KubeObject & { data?: { replicas?: number }; revision?: number }>(Resources.controllerRevisions, NS, 'web-1');
  assert.equal([rev.revision, rev.data?.replicas, rev.metadata?.ownerReferences?.[0]?.uid], [1, 3, p.metadata!.uid]);
});

test('scale to 5 through the scale subresource, down to 2 highest index first (DescendingOrder), a deleted VM comes back at its index', async () => {
  await cluster.client.patch(Resources.virtualMachinePools, NS, 'web', { spec: { replicas: 5 } }, 'merge', 'scale');
  await settledAt(['web-0', 'web-1', 'web-2', 'web-3', 'web-4']);
  const scale = await cluster.client.get<KubeObject & { status?: { replicas?: number; selector?: string } }>(Resources.virtualMachinePools, NS, 'web', 'scale');
  assert.equal([scale.status?.replicas, scale.status?.selector], [5, 'kubevirt.io/vmpool=web']);
  await cluster.client.patch(Resources.virtualMachinePools, NS, 'web', { spec: { replicas: 2, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'DescendingOrder' } } } } }, 'merge');
  await settledAt(['web-0', 'web-1']);
  await cluster.client.delete(Resources.virtualMachines, NS, 'web-0');
  const back = await eventually(async () => {
    const vm = (await vmsOf()).find((v) => v.metadata?.name === 'web-0' && v.metadata.deletionTimestamp == null);
    return vm && vm.metadata?.uid;
  }, 20_000, 'web-0 recreated');
  assert.ok(back);
  await settledAt(['web-0', 'web-1']);
});

test('a template change: the VMs are updated to the new revision and their VMIs restarted from it (proactive, the default)', async () => {
  const before = new Map((await vmisOf()).map((v) => [v.metadata!.name!, v.metadata!.uid!]));
  const p = await poolGet();
  const tpl = structuredClone(p.spec.virtualMachineTemplate);
  tpl.spec.template.metadata = { labels: { ...(tpl.spec.template.metadata?.labels ?? {}), tier: 'front' } };
  await cluster.client.patch(Resources.virtualMachinePools, NS, 'web', { spec: { virtualMachineTemplate: tpl } }, 'merge');
  const gen = (await poolGet()).metadata!.generation!;
  await eventually(async () => {
    const vmis = (await vmisOf()).filter((v) => v.status?.phase === 'Running' && v.metadata?.deletionTimestamp == null);
    return vmis.length === 2 && vmis.every((v) => v.metadata?.labels?.tier === 'front' && v.metadata.labels[REV] === `web-${gen}` && v.metadata.uid !== before.get(v.metadata.name!));
  }, 20_000, 'VMIs restarted from the new revision');
  for (const vm of await vmsOf()) assert.is(vm.metadata?.labels?.[REV], `web-${gen}`);
  // Revisions no VM or VMI names any more are pruned.
  await eventually(async () => {
    const revs = (await cluster.client.list<{ metadata?: { name?: string } }>(Resources.controllerRevisions, { namespace: NS })).items.map((r) => r.metadata?.name);
    return JSON.stringify(revs) === JSON.stringify([`web-${gen}`]);
  }, 10_000, 'old revisions pruned');
});

test('deleting the pool deletes its VMs (and their VMIs) and revisions', async () => {
  await cluster.client.delete(Resources.virtualMachinePools, NS, 'web');
  await eventually(async () => (await vmsOf()).length === 0 && (await vmisOf()).length === 0, 20_000, 'VMs and VMIs gone');
  await eventually(async () => (await cluster.client.list(Resources.virtualMachinePools, { namespace: NS })).items.length === 0, 10_000, 'pool gone');
  const revs = (await cluster.client.list(Resources.controllerRevisions, { namespace: NS })).items;
  assert.is(revs.length, 0);
});

test.run();
