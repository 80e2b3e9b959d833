// The migration controller as a running process: a VirtualMachineInstanceMigration of a running
// VMI gets its finalizer, goes Pending, gets a target pod (→ Scheduling), the simulated kubelet
// runs it (→ Scheduled) and the VMI is handed off to the target node (migrationState, target-node
// label, → PreparingTarget after the hand-off is seen). Deleting a migration of a missing VMI fails it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { eventually, SimulatedNode, type Cluster, startControlPlane, type ControlPlane } from './lib.ts';
import type { ControllerManager } from '../../controller/manager.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';

const NS = 'default';
let plane: ControlPlane;
let cluster: Cluster;
let manager: ControllerManager;
let node: SimulatedNode;

const getMigration = (name: string) => cluster.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, NS, name);
const getVMI = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, NS, name);

test.before(async () => {
  plane = await startControlPlane();
  ({ cluster, manager } = plane);
  node = plane.node!;
});

test.after(async () => {
  await plane?.stop();
});

test('a migration walks Pending → Scheduling → Scheduled → PreparingTarget with a target pod and the hand-off', async () => {
  await cluster.client.create(Resources.virtualMachineInstances, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: 'vmi-migratable', namespace: NS },
    spec: {
      domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }], interfaces: [{ name: 'default', masquerade: {} }] }, resources: { requests: { memory: '64M' } } },
      networks: [{ name: 'default', pod: {} }],
      volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest' } }],
    },
  } as VirtualMachineInstance);
  const vmi = await eventually(async () => { const v = await getVMI('vmi-migratable'); return v.status?.phase === 'Running' && v; }, 10_000, 'VMI Running');

  await cluster.client.create(Resources.virtualMachineInstanceMigrations, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration',
    metadata: { name: 'migration-job', namespace: NS },
    spec: { vmiName: 'vmi-migratable' },
  } as VirtualMachineInstanceMigration);
  const m = await eventually(async () => { const x = await getMigration('migration-job'); return ['Scheduling', 'Scheduled', 'PreparingTarget'].includes(x.status?.phase ?? '') && x; }, 10_000, 'migration Scheduling');
  assert.ok(m.metadata?.finalizers?.includes('kubevirt.io/migrationJobFinalize'));
  assert.is(m.metadata?.labels?.['kubevirt.io/vmi-name'], m.spec.vmiName, 'the create mutator label');
  assert.equal(m.status?.phaseTransitionTimestamps?.slice(0, 2).map((t) => t.phase), ['Pending', 'Scheduling']);
  const pods = (await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: `kubevirt.io/created-by=${vmi.metadata!.uid}` })).items;
  assert.is(pods.length, 2, 'source and target pod');
  const target = pods.find((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] === m.metadata?.uid);
  assert.ok(target, 'target pod labelled with the migration UID');
  assert.match(target!.metadata!.name!, /^virt-launcher-vmi-migratable-[a-z0-9]{5}$/);

  const handedOff = await eventually(async () => { const v = await getVMI('vmi-migratable'); return v.status?.migrationState?.migrationUid === m.metadata?.uid && v; }, 10_000, 'hand-off');
  assert.is(handedOff.status?.migrationState?.targetPod, target!.metadata!.name);
  assert.is(handedOff.status?.migrationState?.targetNode, 'node01');
  assert.is(handedOff.metadata?.labels?.['kubevirt.io/migrationTargetNodeName'], 'node01');
  await eventually(async () => (await getMigration('migration-job')).status?.phase === 'PreparingTarget', 10_000, 'PreparingTarget');
  const events = (await cluster.client.list<{ reason?: string; involvedObject?: { kind?: string } } & { metadata?: object }>(Resources.events, { namespace: NS })).items
    .filter((e) => e.involvedObject?.kind === 'VirtualMachineInstanceMigration').map((e) => e.reason);
  assert.ok(events.includes('SuccessfulCreate'), events.join());
  assert.ok(events.includes('SuccessfulHandOver'), events.join());
});

test('a migration of a VMI that does not exist fails', async () => {
  await cluster.client.create(Resources.virtualMachineInstanceMigrations, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration',
    metadata: { name: 'migration-nothing', namespace: NS },
    spec: { vmiName: 'no-such-vmi' },
  } as VirtualMachineInstanceMigration);
  await eventually(async () => (await getMigration('migration-nothing')).status?.phase === 'Failed', 10_000, 'Failed');
  // The phase is written first, the finalizer goes in the next sync of the final object.
  const m = await eventually(async () => { const x = await getMigration('migration-nothing'); return !x.metadata?.finalizers?.includes('kubevirt.io/migrationJobFinalize') && x; }, 10_000, 'finalizer removed once final');
  assert.is(m.status?.phase, 'Failed');
});

test.run();
