// Owner-reference garbage collection: background, foreground (with blockOwnerDeletion) and
// orphan propagation, dangling owner references, and GC through a custom resource owner.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type V1ConfigMap, type V1Pod } from '@kubernetes/client-node';
import { apiError, createCrd, eventually, pod, startTestServer, type TestServer } from './lib.ts';
import { GROUP, gadget, gadgetCrd } from './fixtures.ts';

let s: TestServer;
test.before(async () => { s = await startTestServer(); });
test.after(async () => { await s.close(); });

const ownerRef = (o: V1ConfigMap, block = false) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata!.name!, uid: o.metadata!.uid!, controller: true, ...(block ? { blockOwnerDeletion: true } : {}) });
const exists = async (name: string) => {
  try { await s.core.readNamespacedPod({ name, namespace: 'default' }); return true; } catch { return false; }
};

test('background: dependents are deleted after the owner is gone', async () => {
  const owner = await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'bg-owner' } } });
  await s.core.createNamespacedPod({ namespace: 'default', body: { ...pod('bg-dep'), metadata: { name: 'bg-dep', ownerReferences: [ownerRef(owner)] } } as V1Pod });
  await s.core.deleteNamespacedConfigMap({ name: 'bg-owner', namespace: 'default', propagationPolicy: 'Background' });
  assert.is((await apiError(() => s.core.readNamespacedConfigMap({ name: 'bg-owner', namespace: 'default' }))).code, 404, 'owner goes at once');
  await eventually(async () => !(await exists('bg-dep')), 3000, 'dependent collected');
});

test('a dependent with another live owner only loses the dangling reference', async () => {
  const a = await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'two-a' } } });
  const b = await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'two-b' } } });
  await s.core.createNamespacedPod({ namespace: 'default', body: { ...pod('two-dep'), metadata: { name: 'two-dep', ownerReferences: [ownerRef(a), { ...ownerRef(b), controller: false }] } } as V1Pod });
  await s.core.deleteNamespacedConfigMap({ name: 'two-a', namespace: 'default' });
  await eventually(async () => (await s.core.readNamespacedPod({ name: 'two-dep', namespace: 'default' })).metadata!.ownerReferences!.length === 1, 3000, 'reference dropped');
  assert.is((await s.core.readNamespacedPod({ name: 'two-dep', namespace: 'default' })).metadata!.ownerReferences![0]!.name, 'two-b');
});

test('foreground: the owner waits with the foregroundDeletion finalizer until blocking dependents are gone', async () => {
  const owner = await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fg-owner' } } });
  // The dependent holds a finalizer, so it lingers and the owner must wait for it.
  await s.core.createNamespacedPod({ namespace: 'default', body: { ...pod('fg-dep'), metadata: { name: 'fg-dep', finalizers: ['qvirt.io/hold'], ownerReferences: [ownerRef(owner, true)] } } as V1Pod });
  await s.core.deleteNamespacedConfigMap({ name: 'fg-owner', namespace: 'default', propagationPolicy: 'Foreground' });
  const waiting = await s.core.readNamespacedConfigMap({ name: 'fg-owner', namespace: 'default' });
  assert.ok(waiting.metadata!.deletionTimestamp);
  assert.equal(waiting.metadata!.finalizers, ['foregroundDeletion']);
  await eventually(async () => !!(await s.core.readNamespacedPod({ name: 'fg-dep', namespace: 'default' })).metadata!.deletionTimestamp, 3000, 'dependent marked for deletion');
  assert.ok(await s.core.readNamespacedConfigMap({ name: 'fg-owner', namespace: 'default' }), 'owner still there');
  const held = await s.core.readNamespacedPod({ name: 'fg-dep', namespace: 'default' });
  await s.core.replaceNamespacedPod({ name: 'fg-dep', namespace: 'default', body: { ...held, metadata: { ...held.metadata!, finalizers: [] } } });
  await eventually(async () => !(await exists('fg-dep')), 3000, 'dependent gone');
  await eventually(async () => (await apiError(() => s.core.readNamespacedConfigMap({ name: 'fg-owner', namespace: 'default' }))).code === 404, 3000, 'owner gone after its dependent');
});

test('orphan: dependents stay and lose their owner reference', async () => {
  const owner = await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'or-owner' } } });
  await s.core.createNamespacedPod({ namespace: 'default', body: { ...pod('or-dep'), metadata: { name: 'or-dep', ownerReferences: [ownerRef(owner)] } } as V1Pod });
  await s.core.deleteNamespacedConfigMap({ name: 'or-owner', namespace: 'default', propagationPolicy: 'Orphan' });
  await eventually(async () => (await apiError(() => s.core.readNamespacedConfigMap({ name: 'or-owner', namespace: 'default' }))).code === 404, 3000, 'owner gone');
  await s.api.settled();
  const dep = await s.core.readNamespacedPod({ name: 'or-dep', namespace: 'default' });
  assert.is(dep.metadata!.ownerReferences, undefined);
  assert.not.ok(dep.metadata!.deletionTimestamp);
});

test('a dependent created with an owner that does not exist is collected', async () => {
  await s.core.createNamespacedPod({ namespace: 'default', body: { ...pod('dangling'), metadata: { name: 'dangling', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000000' }] } } as V1Pod });
  await eventually(async () => !(await exists('dangling')), 3000, 'dangling dependent collected');
});

test('custom resource owners: deleting a Gadget collects the pods it owns', async () => {
  assert.is((await createCrd(s.api.url, gadgetCrd())).status, 201);
  const g = (await s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('owner-g') })) as { metadata: { uid: string } };
  await s.core.createNamespacedPod({ namespace: 'default', body: { ...pod('virt-launcher-owner-g-abcde'), metadata: { name: 'virt-launcher-owner-g-abcde', ownerReferences: [{ apiVersion: `${GROUP}/v1`, kind: 'Gadget', name: 'owner-g', uid: g.metadata.uid, controller: true, blockOwnerDeletion: true }] } } as V1Pod });
  await s.custom.deleteNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', name: 'owner-g', propagationPolicy: 'Foreground' });
  await eventually(async () => !(await exists('virt-launcher-owner-g-abcde')), 3000, 'launcher pod collected');
  await eventually(async () => (await apiError(() => s.custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', name: 'owner-g' }))).code === 404, 3000, 'gadget gone');
});

test.run();
