// The evacuation controller as a running process: the drain taint on a node makes it create one
// kubevirt-evacuation-* migration per VMI that should move (evictionStrategy LiveMigrate,
// LiveMigratable=True), none for the others, no duplicates while it runs; an eviction's mark
// (status.evacuationNodeName) does the same for that VMI alone.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { eventually, sleep, type Cluster, startControlPlane, type ControlPlane } from './lib.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration, EvictionStrategy } from '../../src/api/types.ts';

const NS = 'default';
let plane: ControlPlane;
let cluster: Cluster;

test.before(async () => {
  plane = await startControlPlane();
  ({ cluster } = plane);
});
test.after(async () => { await plane?.stop(); });

async function runningMigratableVMI(name: string, evictionStrategy: EvictionStrategy): Promise<VirtualMachineInstance> {
  await cluster.client.create(Resources.virtualMachineInstances, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS },
    spec: { evictionStrategy, domain: { devices: {}, resources: { requests: { memory: '64M' } } } },
  } as VirtualMachineInstance);
  const v = await eventually(async () => { const x = await cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, NS, name); return x.status?.phase === 'Running' && x; }, 10_000, `${name} Running`);
  // What virt-handler reports for a migratable domain.
  await cluster.client.patch(Resources.virtualMachineInstances, NS, name, [
    ...(v.status?.conditions ? [] : [{ op: 'add', path: '/status/conditions', value: [] }]),
    { op: 'add', path: '/status/conditions/-', value: { type: 'LiveMigratable', status: 'True' } },
  ], 'json');
  return v;
}

const migrationsOf = async (vmiName: string) => (await cluster.client.list<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { namespace: NS })).items.filter((m) => m.spec.vmiName === vmiName);

test('the drain taint evacuates LiveMigrate VMIs only, once each; an eviction mark evacuates its VMI', async () => {
  const node = plane.node!.name;
  await runningMigratableVMI('evac-a', 'LiveMigrate');
  await runningMigratableVMI('stay-b', 'None');
  await sleep(500);
  assert.is((await migrationsOf('evac-a')).length, 0, 'nothing before the drain');

  await cluster.client.patch(Resources.nodes, undefined, node, { spec: { taints: [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }] } }, 'merge');
  const [m] = await eventually(async () => { const ms = await migrationsOf('evac-a'); return ms.length > 0 && ms; }, 10_000, 'evacuation migration');
  assert.match(m!.metadata!.name!, /^kubevirt-evacuation-[a-z0-9]{5}$/);
  assert.is(m!.metadata?.annotations?.['kubevirt.io/evacuationMigration'], node);
  assert.is(m!.spec.priority, 'system-critical');
  const event = await eventually(async () => (await cluster.client.list<{ metadata?: object; reason?: string; message?: string; involvedObject?: { name?: string } }>(Resources.events, { namespace: NS })).items
    .find((e) => e.involvedObject?.name === 'evac-a' && e.reason === 'SuccessfulCreate' && e.message === `Created Migration ${m!.metadata!.name}`), 10_000, 'SuccessfulCreate event');
  assert.ok(event);
  await sleep(1500);
  assert.is((await migrationsOf('evac-a')).length, 1, 'one migration while it is unfinished');
  assert.is((await migrationsOf('stay-b')).length, 0, 'evictionStrategy None stays');

  // Without the taint, only VMIs an eviction marked move.
  await cluster.client.patch(Resources.nodes, undefined, node, { spec: { taints: null } }, 'merge');
  await runningMigratableVMI('evac-c', 'LiveMigrate');
  await sleep(500);
  assert.is((await migrationsOf('evac-c')).length, 0);
  await cluster.client.patch(Resources.virtualMachineInstances, NS, 'evac-c', [{ op: 'add', path: '/status/evacuationNodeName', value: node }], 'json');
  await eventually(async () => (await migrationsOf('evac-c')).length === 1, 10_000, 'migration of the marked VMI');
});

test.run();
