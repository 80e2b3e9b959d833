// Failure paths as running controllers meet them: a VMI that fails before it ever ran puts its VM
// into crash-loop backoff (startFailure, CrashLoopBackOff, no instant restart); a node whose
// virt-handler stopped heartbeating is marked unschedulable and its stranded VMIs fail with
// NodeUnresponsive; a VM with both spec.running and spec.runStrategy is refused before any controller.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { eventually, handlerPhasePatch, newManager, SimulatedNode, sleep, type Cluster, startControlPlane, type ControlPlane } from './lib.ts';
import type { ControllerManager } from '../../controller/manager.ts';
import type { Node } from '../../controller/pod.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const NS = 'default';
let plane: ControlPlane;
let cluster: Cluster;
let manager: ControllerManager;
let node: SimulatedNode;
/** The controllers' clock: real time plus a skew the backoff test advances. */
let skewMs = 0;
const now = () => new Date(Date.now() + skewMs);

const spec = () => ({ domain: { devices: {}, memory: { guest: '128Mi' } } });
const getVM = (name: string) => cluster.client.get<VirtualMachine>(Resources.virtualMachines, NS, name);
const getVMI = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, NS, name).catch((err: unknown) => { if (isNotFound(err)) return undefined; throw err; });

test.before(async () => {
  plane = await startControlPlane({ node: { handler: false }, manager: { now } });
  ({ cluster, manager } = plane);
  node = plane.node!;
});

test.after(async () => {
  await manager?.stop(); // a test replaces the plane's manager
  await plane?.stop();
});

test('a VMI failing before Running: VM CrashLoopBackOff with startFailure, no immediate restart', async () => {
  await cluster.client.create(Resources.virtualMachines, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm-crash', namespace: NS }, spec: { runStrategy: 'Always', template: { spec: spec() } } } as VirtualMachine);
  const vmi = await eventually(async () => { const v = await getVMI('vm-crash'); return v?.status?.phase === 'Scheduled' && v; }, 10_000, 'VMI Scheduled');
  // virt-handler reports the domain failed to start.
  await cluster.client.patch(Resources.virtualMachineInstances, NS, 'vm-crash', handlerPhasePatch(vmi, 'Failed'), 'json');
  const vm = await eventually(async () => { const v = await getVM('vm-crash'); return v.status?.printableStatus === 'CrashLoopBackOff' && v; }, 10_000, 'CrashLoopBackOff');
  assert.is(vm.status?.startFailure?.consecutiveFailCount, 1);
  assert.is(vm.status?.startFailure?.lastFailedVMIUID, vmi.metadata?.uid);
  assert.ok(Date.parse(vm.status!.startFailure!.retryAfterTimestamp!) > Date.now(), 'retry lies in the future');
  await eventually(async () => (await getVMI('vm-crash')) === undefined, 10_000, 'failed VMI removed');
  await sleep(500);
  assert.is(await getVMI('vm-crash'), undefined, 'no restart before the backoff expires');
  // Once the retry time has passed, the next look at the VM starts it again.
  skewMs = Date.parse(vm.status!.startFailure!.retryAfterTimestamp!) - Date.now() + 1500;
  await cluster.client.patch(Resources.virtualMachines, NS, 'vm-crash', { metadata: { annotations: { touched: '1' } } }, 'merge');
  const again = await eventually(async () => { const v = await getVMI('vm-crash'); return v && v.metadata?.uid !== vmi.metadata?.uid && v; }, 5000, 'restart after the backoff');
  assert.ok(again);
  skewMs = 0;
});

test('a node without heartbeat: unschedulable, its VMI without a pod fails with NodeUnresponsive', async () => {
  const stale = new Date(Date.now() - 10 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await cluster.client.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-dead', labels: { 'kubevirt.io/schedulable': 'true' }, annotations: { 'kubevirt.io/heartbeat': stale } } } as Node);
  const n = await eventually(async () => { const x = await cluster.client.get<Node>(Resources.nodes, undefined, 'node-dead'); return x.metadata?.labels?.['kubevirt.io/schedulable'] === 'false' && x; }, 10_000, 'node unschedulable');
  assert.ok(n);
  // A VMI virt-handler on node-dead was running; its launcher pod has failed (the node is gone).
  await manager.stop();
  const vmi = await cluster.client.create(Resources.virtualMachineInstances, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: 'stranded', namespace: NS, labels: { 'kubevirt.io/nodeName': 'node-dead' }, finalizers: ['kubevirt.io/foregroundDeleteVirtualMachine'] },
    spec: spec(),
    status: { phase: 'Running', nodeName: 'node-dead' },
  } as VirtualMachineInstance);
  const pod = await cluster.client.create(Resources.pods, {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'virt-launcher-stranded-abcde', namespace: NS, labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': vmi.metadata!.uid! }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'stranded', uid: vmi.metadata!.uid!, controller: true, blockOwnerDeletion: true }] },
    spec: { nodeName: 'node-dead', containers: [{ name: 'compute', image: 'qvirt/launcher:latest' }] },
  } as never);
  await cluster.client.patch(Resources.pods, NS, (pod as { metadata: { name: string } }).metadata.name, { status: { phase: 'Failed' } }, 'merge', 'status');
  manager = newManager(cluster, { now });
  await manager.start();
  await manager.leading;
  const failed = await eventually(async () => { const x = await getVMI('stranded'); return x?.status?.phase === 'Failed' && x; }, 10_000, 'VMI failed');
  assert.is(failed.status?.reason, 'NodeUnresponsive');
});

test('a VMI naming a missing claim waits for it (KubeVirt\'s event and message, recorded once), then gets its pod once the claim appears', async () => {
  const name = 'vmi-nopvc';
  await cluster.client.create(Resources.virtualMachineInstances, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: NS },
    spec: { domain: { devices: { disks: [{ name: 'pvcdisk', disk: { bus: 'virtio' } }] }, memory: { guest: '128Mi' } }, volumes: [{ name: 'pvcdisk', persistentVolumeClaim: { claimName: 'disk-later' } }] } } as VirtualMachineInstance);
  const message = 'PVC default/disk-later does not exist, waiting for it to appear';
  const waiting = await eventually(async () => { const v = await getVMI(name); return v?.status?.conditions?.find((c) => c.type === 'Synchronized' && c.status === 'False') && v; }, 10_000, 'Synchronized=False');
  assert.equal(waiting.status?.conditions?.find((c) => c.type === 'Synchronized')?.reason, 'FailedPvcNotFound');
  assert.equal(waiting.status?.conditions?.find((c) => c.type === 'Synchronized')?.message, message);
  await sleep(2500); // the controller looks again every second
  const events = (await cluster.client.list<{ metadata?: object; type?: string; reason?: string; message?: string; count?: number; involvedObject?: { name?: string } }>(Resources.events, { namespace: NS })).items
    .filter((e) => e.involvedObject?.name === name && e.reason === 'FailedPvcNotFound');
  assert.equal(events.map((e) => [e.type, e.message, e.count ?? 1]), [['Normal', message, 1]]);
  const pods = async () => (await cluster.client.list<{ metadata?: { labels?: Record<string, string> } }>(Resources.pods, { namespace: NS })).items.filter((p) => p.metadata?.labels?.['vm.kubevirt.io/name'] === name);
  assert.is((await pods()).length, 0, 'no launcher pod without its claim');
  const c = await cluster.client.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'disk-later', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } }, volumeName: 'pv-disk-later' } });
  await cluster.client.updateStatus(Resources.persistentVolumeClaims, { ...c, status: { phase: 'Bound', capacity: { storage: '64Mi' }, accessModes: ['ReadWriteOnce'] } });
  await eventually(async () => (await pods()).length === 1, 10_000, 'the launcher pod created once the claim exists');
  await cluster.client.delete(Resources.virtualMachineInstances, NS, name);
});

test('spec.running and spec.runStrategy together never reach the controller: the API refuses them (CRD CEL rule)', async () => {
  const err = await cluster.client.create(Resources.virtualMachines, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm-both', namespace: NS }, spec: { running: true, runStrategy: 'Always', template: { spec: spec() } } } as VirtualMachine)
    .then(() => undefined, (e: unknown) => e as { code?: number; message?: string });
  assert.is(err?.code, 422);
  assert.match(err!.message!, /Running and RunStrategy are mutually exclusive/);
  assert.is(await getVMI('vm-both'), undefined);
});

test.run();
