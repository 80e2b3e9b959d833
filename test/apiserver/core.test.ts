// Core v1 through the real @kubernetes/client-node: CRUD, generateName, selectors, paging,
// optimistic concurrency, the three patch types, finalizers, pod deletion, Status error bodies.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PatchStrategy, setHeaderOptions, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { apiError, eventually, pod, raw, startTestServer, type TestServer } from './lib.ts';

let s: TestServer;
test.before(async () => { s = await startTestServer(); });
test.after(async () => { await s.close(); });

test('default and kube-system namespaces exist at start; namespaces CRUD', async () => {
  const list = await s.core.listNamespace();
  const names = list.items.map((n) => n.metadata!.name);
  assert.ok(names.includes('default') && names.includes('kube-system'), names.join(','));
  const ns = await s.core.createNamespace({ body: { metadata: { name: 'crud' } } });
  assert.is(ns.status?.phase, 'Active');
  assert.equal(ns.spec?.finalizers, ['kubernetes']);
  assert.is(ns.metadata?.labels?.['kubernetes.io/metadata.name'], 'crud');
  const got = await s.core.readNamespace({ name: 'crud' });
  assert.is(got.metadata?.uid, ns.metadata?.uid);
  const protectedNs = await apiError(() => s.core.deleteNamespace({ name: 'kube-system' }));
  assert.is(protectedNs.code, 403);
  assert.is(protectedNs.status.message, 'namespaces "kube-system" is forbidden: this namespace may not be deleted');
});

test('pod create fills uid, creationTimestamp, resourceVersion, defaults and Pending; get and list return it', async () => {
  const created = await s.core.createNamespacedPod({ namespace: 'default', body: pod('p1') as V1Pod });
  assert.match(created.metadata!.uid!, /^[0-9a-f-]{36}$/);
  assert.ok(created.metadata!.creationTimestamp instanceof Date);
  assert.ok(Number(created.metadata!.resourceVersion) > 0);
  assert.is(created.status?.phase, 'Pending');
  assert.is(created.spec?.restartPolicy, 'Always');
  assert.is(created.spec?.containers[0]!.terminationMessagePolicy, 'File');
  const got = await s.core.readNamespacedPod({ name: 'p1', namespace: 'default' });
  assert.is(got.metadata!.resourceVersion, created.metadata!.resourceVersion);
  const list = await s.core.listNamespacedPod({ namespace: 'default' });
  assert.ok(list.items.some((p) => p.metadata!.name === 'p1'));
  assert.ok(Number(list.metadata!.resourceVersion) >= Number(created.metadata!.resourceVersion));
});

test('AlreadyExists and NotFound are Kubernetes Status bodies', async () => {
  const dup = await apiError(() => s.core.createNamespacedPod({ namespace: 'default', body: pod('p1') as V1Pod }));
  assert.is(dup.code, 409);
  assert.equal({ kind: dup.status.kind, apiVersion: dup.status.apiVersion, status: dup.status.status, reason: dup.status.reason, message: dup.status.message, code: dup.status.code },
    { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'AlreadyExists', message: 'pods "p1" already exists', code: 409 });
  assert.equal(dup.status.details, { name: 'p1', kind: 'pods' });
  const nf = await apiError(() => s.core.readNamespacedPod({ name: 'nope', namespace: 'default' }));
  assert.is(nf.code, 404);
  assert.is(nf.status.reason, 'NotFound');
  assert.is(nf.status.message, 'pods "nope" not found');
  const nsMissing = await apiError(() => s.core.createNamespacedPod({ namespace: 'ghost', body: pod('x') as V1Pod }));
  assert.is(nsMissing.code, 404);
  assert.is(nsMissing.status.message, 'namespaces "ghost" not found');
});

test('generateName yields a unique name with a 5-character suffix', async () => {
  const a = await s.core.createNamespacedPod({ namespace: 'default', body: pod('', { generateName: 'virt-launcher-vm-' }) as V1Pod });
  const b = await s.core.createNamespacedPod({ namespace: 'default', body: pod('', { generateName: 'virt-launcher-vm-' }) as V1Pod });
  assert.match(a.metadata!.name!, /^virt-launcher-vm-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.is.not(a.metadata!.name, b.metadata!.name);
  const noName = await apiError(() => s.core.createNamespacedPod({ namespace: 'default', body: { metadata: {}, spec: { containers: [] } } }));
  assert.is(noName.code, 422);
  assert.is(noName.status.details?.causes?.[0]?.field, 'metadata.name');
});

test('invalid names are 422 Invalid with a metadata.name cause', async () => {
  const bad = await apiError(() => s.core.createNamespacedPod({ namespace: 'default', body: pod('Bad_Name') as V1Pod }));
  assert.is(bad.code, 422);
  assert.is(bad.status.reason, 'Invalid');
  assert.match(bad.status.message, /^Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
});

test('label selectors: =, ==, !=, in, notin, exists, !', async () => {
  await s.core.createNamespace({ body: { metadata: { name: 'sel' } } });
  const mk = (name: string, labels: Record<string, string>, nodeName?: string) => s.core.createNamespacedPod({ namespace: 'sel', body: pod(name, { labels, ...(nodeName ? { nodeName } : {}) }) as V1Pod });
  await mk('a', { app: 'web', tier: 'front' }, 'node1');
  await mk('b', { app: 'web', tier: 'back' });
  await mk('c', { app: 'db' }, 'node2');
  await mk('d', {});
  const names = async (labelSelector?: string, fieldSelector?: string) =>
    (await s.core.listNamespacedPod({ namespace: 'sel', ...(labelSelector ? { labelSelector } : {}), ...(fieldSelector ? { fieldSelector } : {}) })).items.map((p) => p.metadata!.name).join(',');
  assert.is(await names('app=web'), 'a,b');
  assert.is(await names('app==web'), 'a,b');
  assert.is(await names('app!=web'), 'c,d');
  assert.is(await names('app in (db, web),tier notin (back)'), 'a,c');
  assert.is(await names('tier'), 'a,b');
  assert.is(await names('!tier'), 'c,d');
  assert.is(await names(undefined, 'spec.nodeName=node1'), 'a');
  assert.is(await names(undefined, 'spec.nodeName='), 'b,d');
  assert.is(await names(undefined, 'metadata.name!=a,status.phase=Pending'), 'b,c,d');
  assert.is(await names('app=web', 'metadata.name=b'), 'b');
  const across = await s.core.listPodForAllNamespaces({ fieldSelector: 'metadata.namespace=sel', labelSelector: 'app=db' });
  assert.equal(across.items.map((p) => p.metadata!.name), ['c']);
  const badField = await apiError(() => s.core.listNamespacedPod({ namespace: 'sel', fieldSelector: 'spec.bogus=1' }));
  assert.is(badField.code, 400);
  assert.match(badField.status.message, /field label not supported: spec.bogus/);
  const badLabel = await apiError(() => s.core.listNamespacedPod({ namespace: 'sel', labelSelector: 'a b c' }));
  assert.is(badLabel.code, 400);
});

test('limit/continue pages through a consistent snapshot', async () => {
  await s.core.createNamespace({ body: { metadata: { name: 'page' } } });
  for (let i = 0; i < 7; i++) await s.core.createNamespacedConfigMap({ namespace: 'page', body: { metadata: { name: `cm${i}` }, data: { i: String(i) } } });
  const first = await s.core.listNamespacedConfigMap({ namespace: 'page', limit: 3 });
  assert.equal(first.items.map((c) => c.metadata!.name), ['cm0', 'cm1', 'cm2']);
  assert.is(first.metadata!.remainingItemCount, 4);
  assert.ok(first.metadata!._continue);
  // Changes after the first page do not show up in later pages of the same list.
  await s.core.deleteNamespacedConfigMap({ name: 'cm5', namespace: 'page' });
  await s.core.createNamespacedConfigMap({ namespace: 'page', body: { metadata: { name: 'cm9' } } });
  const second = await s.core.listNamespacedConfigMap({ namespace: 'page', limit: 3, _continue: first.metadata!._continue! });
  assert.equal(second.items.map((c) => c.metadata!.name), ['cm3', 'cm4', 'cm5']);
  assert.is(second.metadata!.resourceVersion, first.metadata!.resourceVersion);
  const third = await s.core.listNamespacedConfigMap({ namespace: 'page', limit: 3, _continue: second.metadata!._continue! });
  assert.equal(third.items.map((c) => c.metadata!.name), ['cm6']);
  assert.not.ok(third.metadata!._continue);
});

test('update with a stale resourceVersion is 409 Conflict with the exact Kubernetes message', async () => {
  const cm = await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'occ' }, data: { a: '1' } } });
  const updated = await s.core.replaceNamespacedConfigMap({ name: 'occ', namespace: 'default', body: { ...cm, data: { a: '2' } } });
  assert.ok(Number(updated.metadata!.resourceVersion) > Number(cm.metadata!.resourceVersion));
  const stale = await apiError(() => s.core.replaceNamespacedConfigMap({ name: 'occ', namespace: 'default', body: { ...cm, data: { a: '3' } } }));
  assert.is(stale.code, 409);
  assert.is(stale.status.reason, 'Conflict');
  assert.is(stale.status.message, 'Operation cannot be fulfilled on configmaps "occ": the object has been modified; please apply your changes to the latest version and try again');
  assert.equal(stale.status.details, { name: 'occ', kind: 'configmaps' });
  // A no-op update writes nothing and keeps the resourceVersion.
  const same = await s.core.replaceNamespacedConfigMap({ name: 'occ', namespace: 'default', body: updated });
  assert.is(same.metadata!.resourceVersion, updated.metadata!.resourceVersion);
});

test('pod status subresource: main updates ignore status, status updates ignore spec', async () => {
  const p = await s.core.readNamespacedPod({ name: 'p1', namespace: 'default' });
  const st = await s.core.replaceNamespacedPodStatus({ name: 'p1', namespace: 'default', body: { ...p, spec: { ...p.spec!, nodeName: 'sneaky' }, status: { phase: 'Running', podIP: '10.0.0.5' } } });
  assert.is(st.status?.phase, 'Running');
  assert.is(st.spec?.nodeName, undefined);
  const main = await s.core.replaceNamespacedPod({ name: 'p1', namespace: 'default', body: { ...st, metadata: { ...st.metadata!, labels: { x: 'y' } }, status: { phase: 'Failed' } } });
  assert.is(main.status?.phase, 'Running');
  assert.is(main.metadata?.labels?.x, 'y');
});

test('merge, JSON (with test) and strategic merge patches', async () => {
  const merge = await s.core.patchNamespacedPod({ name: 'p1', namespace: 'default', body: { metadata: { labels: { m: '1', x: null } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  assert.equal(merge.metadata?.labels, { m: '1' });
  const json = await s.core.patchNamespacedPod({ name: 'p1', namespace: 'default', body: [
    { op: 'test', path: '/metadata/labels/m', value: '1' },
    { op: 'add', path: '/metadata/annotations', value: { a: 'b' } },
    { op: 'replace', path: '/metadata/labels/m', value: '2' },
  ] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
  assert.is(json.metadata?.labels?.m, '2');
  assert.is(json.metadata?.annotations?.a, 'b');
  const failed = await apiError(() => s.core.patchNamespacedPod({ name: 'p1', namespace: 'default', body: [{ op: 'test', path: '/metadata/labels/m', value: 'nope' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch)));
  assert.is(failed.code, 422);
  // Strategic: containers merge by name (the image is one of the few mutable pod fields).
  const smp = await s.core.patchNamespacedPod({ name: 'p1', namespace: 'default', body: { spec: { containers: [{ name: 'compute', image: 'registry.local/virt-launcher:v2' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
  assert.is(smp.spec!.containers.length, 1);
  assert.is(smp.spec!.containers[0]!.image, 'registry.local/virt-launcher:v2');
  assert.equal(smp.spec!.containers[0]!.env!.map((e) => `${e.name}=${e.value}`), ['A=1']);
  // Other pod spec changes are forbidden, as kube-apiserver forbids them.
  const forbidden = await apiError(() => s.core.patchNamespacedPod({ name: 'p1', namespace: 'default', body: { spec: { containers: [{ name: 'compute', env: [{ name: 'B', value: '2' }] }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)));
  assert.is(forbidden.code, 422);
  assert.is(forbidden.status.details!.causes![0]!.reason, 'FieldValueForbidden');
  assert.match(forbidden.status.message, /^Pod "p1" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`/);
  // Env lists merge by name where they may change (a Deployment's pod template).
  await s.objects.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'smp', namespace: 'default' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i', env: [{ name: 'A', value: '1' }] }, { name: 'd', image: 'j' }] } } } } as KubernetesObject);
  const dep = await raw(`${s.api.url}/apis/apps/v1/namespaces/default/deployments/smp`, { method: 'PATCH', headers: { 'Content-Type': PatchStrategy.StrategicMergePatch }, body: { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'B', value: '2' }] }] } } } } });
  const containers = (dep.json as { spec: { template: { spec: { containers: { name: string; env?: { name: string; value: string }[] }[] } } }; metadata: { generation: number } }).spec.template.spec.containers;
  assert.equal(containers.map((c) => c.name), ['c', 'd']);
  assert.equal(containers[0]!.env!.map((e) => `${e.name}=${e.value}`), ['B=2', 'A=1'], 'the patch\'s new item first, as kube-apiserver orders it without $setElementOrder');
  assert.is((dep.json as { metadata: { generation: number } }).metadata.generation, 2);
  await s.core.patchNamespacedPodStatus({ name: 'p1', namespace: 'default', body: { status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
  const st = await s.core.patchNamespacedPodStatus({ name: 'p1', namespace: 'default', body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
  assert.equal(st.status!.conditions!.map((c) => `${c.type}=${c.status}`), ['Ready=True', 'PodScheduled=True']);
  // A patch carrying a stale resourceVersion is a conflict.
  const stale = await apiError(() => s.core.patchNamespacedPod({ name: 'p1', namespace: 'default', body: { metadata: { resourceVersion: '1', labels: { z: '1' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
  assert.is(stale.code, 409);
  const unsupported = await raw(`${s.api.url}/api/v1/namespaces/default/pods/p1`, { method: 'PATCH', body: '{}', headers: { 'Content-Type': 'text/plain' } });
  assert.is(unsupported.status, 415);
});

test('pods/binding assigns an unbound pod to a node once', async () => {
  await s.core.createNamespacedPod({ namespace: 'default', body: pod('tobind') as V1Pod });
  const st = await raw(`${s.api.url}/api/v1/namespaces/default/pods/tobind/binding`, { method: 'POST', body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'tobind' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node1' } } });
  assert.is(st.status, 201);
  assert.is((st.json as { status: string }).status, 'Success');
  const bound = await s.core.readNamespacedPod({ name: 'tobind', namespace: 'default' });
  assert.is(bound.spec!.nodeName, 'node1');
  assert.equal(bound.status!.conditions!.map((c) => `${c.type}=${c.status}`), ['PodScheduled=True']);
  const again = await raw(`${s.api.url}/api/v1/namespaces/default/pods/tobind/binding`, { method: 'POST', body: { target: { kind: 'Node', name: 'node2' } } });
  assert.is(again.status, 409);
  assert.match((again.json as { message: string }).message, /pod tobind is already assigned to node "node1"/);
  const viaUpdate = await apiError(() => s.core.patchNamespacedPod({ name: 'tobind', namespace: 'default', body: { spec: { nodeName: 'node2' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
  assert.is(viaUpdate.code, 422);
  await s.core.deleteNamespacedPod({ name: 'tobind', namespace: 'default', gracePeriodSeconds: 0 });
});

test('dryRun=All validates and returns the object without storing it', async () => {
  const rv = s.api.resourceVersion();
  const dry = await s.core.createNamespacedPod({ namespace: 'default', body: pod('dry') as V1Pod, dryRun: 'All' });
  assert.is(dry.metadata!.name, 'dry');
  assert.is(s.api.resourceVersion(), rv);
  const nf = await apiError(() => s.core.readNamespacedPod({ name: 'dry', namespace: 'default' }));
  assert.is(nf.code, 404);
});

test('finalizers keep a deleted object with deletionTimestamp until they are removed', async () => {
  await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fin', finalizers: ['qvirt.io/test'] } } });
  const del = await s.core.deleteNamespacedConfigMap({ name: 'fin', namespace: 'default' });
  assert.ok(del);
  const held = await s.core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' });
  assert.ok(held.metadata!.deletionTimestamp);
  assert.is(held.metadata!.deletionGracePeriodSeconds, 0);
  const add = await apiError(() => s.core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: { metadata: { finalizers: ['qvirt.io/test', 'other'] } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
  assert.is(add.code, 422);
  await s.core.patchNamespacedConfigMap({ name: 'fin', namespace: 'default', body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const gone = await apiError(() => s.core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' }));
  assert.is(gone.code, 404);
});

test('delete preconditions: a wrong uid is a 409 Conflict', async () => {
  await s.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'pre' }, stringData: { a: 'b' } } });
  const e = await apiError(() => s.core.deleteNamespacedSecret({ name: 'pre', namespace: 'default', body: { preconditions: { uid: 'not-it' } } }));
  assert.is(e.code, 409);
  assert.match(e.status.message, /^Operation cannot be fulfilled on Secret "pre": the UID in the precondition \(not-it\) does not match the UID in record/);
  await s.core.deleteNamespacedSecret({ name: 'pre', namespace: 'default' });
});

test('Secret stringData is merged into data (base64, over a data key of the same name) on create, update and patch, never stored', async () => {
  const created = await s.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'sd' }, data: { a: Buffer.from('old').toString('base64'), keep: Buffer.from('k').toString('base64') }, stringData: { a: 'new', b: 'two\nlines' } } });
  assert.equal(created.data, { a: Buffer.from('new').toString('base64'), keep: Buffer.from('k').toString('base64'), b: Buffer.from('two\nlines').toString('base64') });
  assert.is(created.stringData, undefined);
  const stored = await s.core.readNamespacedSecret({ name: 'sd', namespace: 'default' });
  assert.equal(stored.data, created.data);
  assert.is(stored.stringData, undefined);
  const updated = await s.core.replaceNamespacedSecret({ name: 'sd', namespace: 'default', body: { ...stored, stringData: { keep: 'changed' } } });
  assert.is(Buffer.from(updated.data!.keep!, 'base64').toString(), 'changed');
  assert.is(updated.stringData, undefined);
  const patched = await s.core.patchNamespacedSecret({ name: 'sd', namespace: 'default', body: { stringData: { c: 'patched' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  assert.is(Buffer.from(patched.data!.c!, 'base64').toString(), 'patched');
  assert.is(Buffer.from(patched.data!.a!, 'base64').toString(), 'new');
  assert.is(patched.stringData, undefined);
  await s.core.deleteNamespacedSecret({ name: 'sd', namespace: 'default' });
});

test('pod deletion: a bound running pod waits for grace-0 deletion; unbound or finished pods go at once', async () => {
  await s.core.createNamespacedPod({ namespace: 'default', body: pod('unbound') as V1Pod });
  await s.core.deleteNamespacedPod({ name: 'unbound', namespace: 'default' });
  assert.is((await apiError(() => s.core.readNamespacedPod({ name: 'unbound', namespace: 'default' }))).code, 404);

  await s.core.createNamespacedPod({ namespace: 'default', body: pod('bound', { nodeName: 'node1' }) as V1Pod });
  await s.core.patchNamespacedPodStatus({ name: 'bound', namespace: 'default', body: { status: { phase: 'Running' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  await s.core.deleteNamespacedPod({ name: 'bound', namespace: 'default', gracePeriodSeconds: 20 });
  const terminating = await s.core.readNamespacedPod({ name: 'bound', namespace: 'default' });
  assert.is(terminating.metadata!.deletionGracePeriodSeconds, 20);
  assert.ok(terminating.metadata!.deletionTimestamp!.getTime() > Date.now() + 15_000);
  // The kubelet-like actor confirms with grace 0.
  await s.core.deleteNamespacedPod({ name: 'bound', namespace: 'default', gracePeriodSeconds: 0 });
  assert.is((await apiError(() => s.core.readNamespacedPod({ name: 'bound', namespace: 'default' }))).code, 404);

  await s.core.createNamespacedPod({ namespace: 'default', body: pod('done', { nodeName: 'node1' }) as V1Pod });
  await s.core.patchNamespacedPodStatus({ name: 'done', namespace: 'default', body: { status: { phase: 'Running' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  await s.core.deleteNamespacedPod({ name: 'done', namespace: 'default' });
  assert.ok((await s.core.readNamespacedPod({ name: 'done', namespace: 'default' })).metadata!.deletionTimestamp);
  // Reaching a final phase while terminating removes it (the kubelet would delete it then).
  await s.core.patchNamespacedPodStatus({ name: 'done', namespace: 'default', body: { status: { phase: 'Succeeded' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  assert.is((await apiError(() => s.core.readNamespacedPod({ name: 'done', namespace: 'default' }))).code, 404);
});

test('deletecollection deletes what the selector matches', async () => {
  await s.core.createNamespace({ body: { metadata: { name: 'dc' } } });
  for (const n of ['a', 'b', 'c']) await s.core.createNamespacedConfigMap({ namespace: 'dc', body: { metadata: { name: n, labels: { del: n === 'c' ? 'no' : 'yes' } } } });
  await s.core.deleteCollectionNamespacedConfigMap({ namespace: 'dc', labelSelector: 'del=yes' });
  const left = await s.core.listNamespacedConfigMap({ namespace: 'dc' });
  assert.equal(left.items.map((c) => c.metadata!.name), ['c']);
});

test('deleting a namespace empties it, refuses new content meanwhile, then removes it', async () => {
  await s.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
  await s.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['qvirt.io/hold'] } } });
  await s.core.createNamespacedSecret({ namespace: 'doomed', body: { metadata: { name: 's' } } });
  await s.core.deleteNamespace({ name: 'doomed' });
  const ns = await s.core.readNamespace({ name: 'doomed' });
  assert.is(ns.status?.phase, 'Terminating');
  const refused = await apiError(() => s.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }));
  assert.is(refused.code, 403);
  assert.match(refused.status.message, /unable to create new content in namespace doomed because it is being terminated/);
  await eventually(async () => (await s.core.listNamespacedSecret({ namespace: 'doomed' })).items.length === 0, 3000, 'secret deleted');
  assert.ok(await s.core.readNamespace({ name: 'doomed' }));
  await s.core.patchNamespacedConfigMap({ name: 'held', namespace: 'doomed', body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  await eventually(async () => (await apiError(() => s.core.readNamespace({ name: 'doomed' }))).code === 404, 3000, 'namespace removed');
});

test('events (core and events.k8s.io), leases, nodes, PVC status, service accounts', async () => {
  await s.core.createNamespacedEvent({ namespace: 'default', body: { metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'p1', namespace: 'default' }, reason: 'Started', message: 'm', type: 'Normal' } });
  const evs = await s.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=p1,reason=Started' });
  assert.is(evs.items.length, 1);
  const node = await s.core.createNode({ body: { metadata: { name: 'node1', labels: { 'kubernetes.io/hostname': 'node1' } } } });
  assert.is(node.metadata!.namespace, undefined);
  const ns = await s.core.replaceNodeStatus({ name: 'node1', body: { ...node, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
  assert.is(ns.status!.conditions![0]!.status, 'True');
  const pvc = await s.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: { metadata: { name: 'disk' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } });
  assert.is(pvc.status?.phase, 'Pending');
  const bound = await s.core.patchNamespacedPersistentVolumeClaimStatus({ name: 'disk', namespace: 'default', body: { status: { phase: 'Bound' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  assert.is(bound.status?.phase, 'Bound');
  await s.core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'sa1' } } });
  const lease = await s.objects.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'virt-controller', namespace: 'kube-system' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } } as KubernetesObject);
  assert.is((lease as { spec: { holderIdentity: string } }).spec.holderIdentity, 'a');
  const ev2 = await s.objects.create({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e2', namespace: 'default' }, eventTime: new Date().toISOString(), reason: 'X', action: 'Y', reportingController: 'qvirt', reportingInstance: 'i', type: 'Normal', regarding: { kind: 'Pod', name: 'p1' } } as KubernetesObject);
  assert.ok(ev2.metadata?.uid);
  const dep = await s.objects.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default' }, spec: { replicas: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } } as KubernetesObject);
  assert.is(dep.metadata?.generation, 1);
});

test('the wire: builtin list items carry no kind/apiVersion, unknown paths are 404 Status, wrong methods 405', async () => {
  const r = await raw(`${s.api.url}/api/v1/namespaces/default/configmaps`);
  const list = r.json as { kind: string; apiVersion: string; items: Record<string, unknown>[] };
  assert.is(list.kind, 'ConfigMapList');
  assert.is(list.apiVersion, 'v1');
  assert.ok(list.items.length > 0);
  assert.is(list.items[0]!.kind, undefined);
  const nf = await raw(`${s.api.url}/apis/nope.io/v1/things`);
  assert.is(nf.status, 404);
  assert.is((nf.json as { kind: string }).kind, 'Status');
  const m = await raw(`${s.api.url}/api/v1/pods`, { method: 'POST', body: pod('x') });
  assert.is(m.status, 405);
  const bad = await raw(`${s.api.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: '{not json' });
  assert.is(bad.status, 400);
  assert.is((bad.json as { reason: string }).reason, 'BadRequest');
  const v = await raw(`${s.api.url}/version`);
  assert.is((v.json as { major: string }).major, '1');
  for (const p of ['/healthz', '/readyz', '/livez']) assert.is((await raw(`${s.api.url}${p}`)).text, 'ok');
});

test.run();
