// The controllers' status writes against the API server when their informer copy is stale: the
// node agent adds a condition (LiveMigratable) after the controller read the VMI; the controller's
// patch computed from the old copy must not replace status.conditions without it. With the
// resourceVersion it was computed from, the write is a 409 and nothing is lost (KubeVirt's VMI
// controller uses Update for the same reason); the bare section patch shows what went wrong before.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { optimisticSectionPatch, sectionPatch } from '../../controller/shell.ts';
import { startCluster, type Cluster } from './lib.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const NS = 'default';
let cluster: Cluster;
test.before(async () => { cluster = await startCluster(); });
test.after(async () => { await cluster?.close(); });

const get = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, NS, name);
const asRecord = (v: VirtualMachineInstance) => v as unknown as Record<string, unknown>;

async function staleScene(name: string): Promise<{ stale: VirtualMachineInstance; next: VirtualMachineInstance }> {
  await cluster.client.create(Resources.virtualMachineInstances, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: NS },
    spec: { domain: { devices: {}, resources: { requests: { memory: '64M' } } } },
  } as VirtualMachineInstance);
  await cluster.client.patch(Resources.virtualMachineInstances, NS, name, [{ op: 'add', path: '/status', value: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } }], 'json');
  const stale = await get(name);
  // The node agent, after the controller read `stale`:
  await cluster.client.patch(Resources.virtualMachineInstances, NS, name, [{ op: 'add', path: '/status/conditions/-', value: { type: 'LiveMigratable', status: 'True' } }], 'json');
  // The controller's decision on the stale copy: Ready becomes True.
  const next = structuredClone(stale);
  next.status!.conditions = [{ type: 'Ready', status: 'True' }];
  return { stale, next };
}

test('optimisticSectionPatch: nothing when nothing changed; else uid test, resourceVersion, then the section ops', () => {
  const v = { metadata: { uid: 'u1', resourceVersion: '7' }, status: { phase: 'Running' } };
  assert.equal(optimisticSectionPatch(v, structuredClone(v), ['status']), []);
  assert.equal(optimisticSectionPatch(v, { ...v, status: { phase: 'Failed' } }, ['status']), [
    { op: 'test', path: '/metadata/uid', value: 'u1' },
    { op: 'add', path: '/metadata/resourceVersion', value: '7' },
    { op: 'replace', path: '/status/phase', value: 'Failed' },
  ]);
});

test('a write computed from a stale copy is a 409 and keeps the condition written meanwhile', async () => {
  const { stale, next } = await staleScene('vmi-guarded');
  const ops = optimisticSectionPatch(asRecord(stale), asRecord(next), ['status']);
  const err = await cluster.client.patch(Resources.virtualMachineInstances, NS, 'vmi-guarded', ops, 'json').then(() => undefined, (e: unknown) => e as { code?: number; statusCode?: number });
  assert.ok(err, 'the stale write was accepted');
  assert.is(err!.code ?? err!.statusCode, 409);
  assert.equal((await get('vmi-guarded')).status?.conditions?.map((c) => c.type), ['Ready', 'LiveMigratable']);
  // Made again from the fresh object, it goes through and keeps both.
  const fresh = await get('vmi-guarded');
  const again = structuredClone(fresh);
  again.status!.conditions = again.status!.conditions!.map((c) => c.type === 'Ready' ? { ...c, status: 'True' } : c);
  await cluster.client.patch(Resources.virtualMachineInstances, NS, 'vmi-guarded', optimisticSectionPatch(asRecord(fresh), asRecord(again), ['status']), 'json');
  assert.equal((await get('vmi-guarded')).status?.conditions?.map((c) => `${c.type}=${c.status}`), ['Ready=True', 'LiveMigratable=True']);
});

test('without the resourceVersion the same write drops the condition (the race the guard closes)', async () => {
  const { stale, next } = await staleScene('vmi-unguarded');
  await cluster.client.patch(Resources.virtualMachineInstances, NS, 'vmi-unguarded', sectionPatch(asRecord(stale), asRecord(next), ['status']), 'json');
  assert.equal((await get('vmi-unguarded')).status?.conditions?.map((c) => c.type), ['Ready']);
});

test.run();
