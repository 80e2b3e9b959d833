// CustomResourceDefinitions and their custom resources through client-node's CustomObjectsApi:
// dynamic serving, status and scale subresources, generation, schema validation with 422 causes,
// pruning, defaulting, CEL rules, Table output with printer columns, multi-version serving and
// CRD deletion.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { apiError, createCrd, eventually, raw, startTestServer, type TestServer } from './lib.ts';
import { GROUP, gadget, gadgetCrd } from './fixtures.ts';

let s: TestServer;
type G = { metadata: { name: string; resourceVersion: string; generation: number; uid: string; labels?: Record<string, string> }; spec: Record<string, unknown>; status?: Record<string, unknown>; apiVersion: string; kind: string };
const co = (name: string) => ({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', name });
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

test.before(async () => {
  s = await startTestServer();
  const crd = (await createCrd(s.api.url, gadgetCrd())).json;
  const conds = (crd as { status: { conditions: { type: string; status: string }[] } }).status.conditions;
  assert.ok(conds.some((c) => c.type === 'Established' && c.status === 'True'));
});
test.after(async () => { await s.close(); });

test('discovery lists the new group, version and resource with subresources', async () => {
  const groups = (await raw(`${s.api.url}/apis`)).json as { groups: { name: string; preferredVersion: { version: string } }[] };
  const g = groups.groups.find((x) => x.name === GROUP);
  assert.is(g?.preferredVersion.version, 'v1');
  const rl = (await raw(`${s.api.url}/apis/${GROUP}/v1`)).json as { resources: { name: string; shortNames?: string[]; namespaced: boolean; kind: string }[] };
  assert.equal(rl.resources.map((r) => r.name), ['gadgets', 'gadgets/status', 'gadgets/scale']);
  assert.equal(rl.resources[0]!.shortNames, ['gd']);
});

test('create, get, list, replace and delete a custom resource', async () => {
  const created = (await s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('g1', { mode: 'Always', replicas: 1 }) })) as G;
  assert.is(created.metadata.generation, 1);
  assert.equal(created.spec.ports, [], 'defaulted');
  const got = (await s.custom.getNamespacedCustomObject(co('g1'))) as G;
  assert.is(got.metadata.uid, created.metadata.uid);
  const list = (await s.custom.listNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets' })) as { kind: string; items: G[] };
  assert.is(list.kind, 'GadgetList');
  assert.is(list.items[0]!.kind, 'Gadget');
  const replaced = (await s.custom.replaceNamespacedCustomObject({ ...co('g1'), body: { ...got, spec: { ...got.spec, replicas: 2 } } })) as G;
  assert.is(replaced.metadata.generation, 2);
  const nf = await apiError(() => s.custom.getNamespacedCustomObject(co('nope')));
  assert.is(nf.status.message, `gadgets.${GROUP} "nope" not found`);
  assert.equal(nf.status.details, { name: 'nope', group: GROUP, kind: 'gadgets' });
  const dup = await apiError(() => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('g1') }));
  assert.is(dup.status.message, `gadgets.${GROUP} "g1" already exists`);
  const stale = await apiError(() => s.custom.replaceNamespacedCustomObject({ ...co('g1'), body: got }));
  assert.is(stale.code, 409);
  assert.is(stale.status.message, `Operation cannot be fulfilled on gadgets.${GROUP} "g1": the object has been modified; please apply your changes to the latest version and try again`);
  const noRv = await apiError(() => s.custom.replaceNamespacedCustomObject({ ...co('g1'), body: { ...got, metadata: { name: 'g1' } } }));
  assert.is(noRv.code, 422);
  await s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('tmp') });
  await s.custom.deleteNamespacedCustomObject(co('tmp'));
  assert.is((await apiError(() => s.custom.getNamespacedCustomObject(co('tmp')))).code, 404);
});

test('status subresource: status ignored on create and main updates, spec ignored on status updates; generation follows spec only', async () => {
  const c = (await s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: { ...gadget('st'), status: { printableStatus: 'Fake' } } })) as G;
  assert.is(c.status, undefined);
  const st = (await s.custom.replaceNamespacedCustomObjectStatus({ ...co('st'), body: { ...c, spec: { mode: 'Manual' }, status: { printableStatus: 'Running', replicas: 1 } } })) as G;
  assert.is(st.status?.printableStatus, 'Running');
  assert.is(st.spec.mode, 'Always');
  assert.is(st.metadata.generation, 1, 'status changes do not bump generation');
  const main = (await s.custom.patchNamespacedCustomObject({ ...co('st'), body: { spec: { mode: 'Manual' }, status: { printableStatus: 'Hacked' } } }, merge)) as G;
  assert.is(main.status?.printableStatus, 'Running');
  assert.is(main.metadata.generation, 2);
  const labels = (await s.custom.patchNamespacedCustomObject({ ...co('st'), body: { metadata: { labels: { a: 'b' } } } }, merge)) as G;
  assert.is(labels.metadata.generation, 2, 'metadata changes do not bump generation');
  const sp = (await s.custom.patchNamespacedCustomObjectStatus({ ...co('st'), body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } }, merge)) as G;
  assert.is((sp.status!.conditions as unknown[]).length, 1);
});

test('scale subresource reads and writes spec.replicas', async () => {
  await s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('sc', { mode: 'Always', replicas: 1 }) });
  await s.custom.patchNamespacedCustomObjectStatus({ ...co('sc'), body: { status: { replicas: 1, selector: 'app=sc' } } }, merge);
  const scale = (await s.custom.getNamespacedCustomObjectScale(co('sc'))) as { kind: string; apiVersion: string; spec: { replicas: number }; status: { replicas: number; selector: string } };
  assert.equal([scale.kind, scale.apiVersion, scale.spec.replicas, scale.status.replicas, scale.status.selector], ['Scale', 'autoscaling/v1', 1, 1, 'app=sc']);
  await s.custom.replaceNamespacedCustomObjectScale({ ...co('sc'), body: { ...scale, spec: { replicas: 3 } } });
  assert.is(((await s.custom.getNamespacedCustomObject(co('sc'))) as G).spec.replicas, 3);
  await s.custom.patchNamespacedCustomObjectScale({ ...co('sc'), body: { spec: { replicas: 4 } } }, merge);
  assert.is(((await s.custom.getNamespacedCustomObject(co('sc'))) as G).spec.replicas, 4);
  const tooMany = await apiError(() => s.custom.patchNamespacedCustomObjectScale({ ...co('sc'), body: { spec: { replicas: 9 } } }, merge));
  assert.is(tooMany.code, 422, 'scale writes go through schema validation');
});

test('schema validation: 422 Invalid listing each cause with its field path', async () => {
  const e = await apiError(() => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('bad', { mode: 'Sometimes', replicas: 9, owner: 'Bob', tags: ['a', 'b', 'c'], memory: 1.5 }) }));
  assert.is(e.code, 422);
  assert.is(e.status.reason, 'Invalid');
  assert.equal(e.status.details?.kind, 'Gadget');
  assert.equal(e.status.details?.group, GROUP);
  const causes = Object.fromEntries(e.status.details!.causes!.map((c) => [c.field, `${c.reason}: ${c.message}`]));
  assert.equal(causes, {
    'spec.mode': 'FieldValueNotSupported: Unsupported value: "Sometimes": supported values: "Always", "Halted", "Manual"',
    'spec.replicas': 'FieldValueInvalid: Invalid value: 9: spec.replicas in body should be less than or equal to 5',
    'spec.owner': "FieldValueInvalid: Invalid value: \"Bob\": spec.owner in body should match '^[a-z]+$'",
    'spec.tags': 'FieldValueTooMany: Too many: 3: must have at most 2 items',
    'spec.memory': 'FieldValueTypeInvalid: Invalid value: "number": spec.memory in body must be of type integer,string: "number"',
    '<nil>': 'FieldValueInvalid: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
  });
  assert.match(e.status.message, new RegExp(`^Gadget.${GROUP.replace(/\./g, '\\.')} "bad" is invalid: \\[`));
  const req = await apiError(() => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('bad2', { replicas: 1 }) }));
  // CEL rules are not evaluated on an object with blocking errors; a cause says so.
  assert.equal(req.status.details!.causes, [
    { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.mode' },
    { reason: 'FieldValueInvalid', message: 'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation', field: '<nil>' },
  ]);
  const type = await apiError(() => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('bad3', { mode: 'Always', replicas: 'two' }) }));
  assert.equal(type.status.details!.causes![0]!.message, 'Invalid value: "string": spec.replicas in body must be of type integer: "string"');
});

test('unknown fields are pruned, preserve-unknown-fields subtrees kept, int-or-string accepts both', async () => {
  const c = (await s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('prune', { mode: 'Always', bogus: 1, memory: '1Gi', template: { anything: { goes: [1] } } }) })) as G;
  assert.is(c.spec.bogus, undefined);
  assert.equal(c.spec.template, { anything: { goes: [1] } });
  assert.is(c.spec.memory, '1Gi');
  const strict = await raw(`${s.api.url}/apis/${GROUP}/v1/namespaces/default/gadgets?fieldValidation=Strict`, { method: 'POST', body: gadget('strict', { mode: 'Always', bogus: 1 }) });
  assert.is(strict.status, 400);
  assert.match((strict.json as { message: string }).message, /strict decoding error: unknown field "spec.bogus"/);
  const warn = await raw(`${s.api.url}/apis/${GROUP}/v1/namespaces/default/gadgets?fieldValidation=Warn`, { method: 'POST', body: gadget('warn', { mode: 'Always', bogus: 1 }) });
  assert.is(warn.status, 201);
  assert.match(warn.headers.get('warning') ?? '', /unknown field \\"spec.bogus\\"/);
});

test('CEL rules: messages, fieldPath, exists_one/all, transition rules with oldSelf', async () => {
  const halted = await apiError(() => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('cel1', { mode: 'Halted', replicas: 2 }) }));
  assert.equal(halted.status.details!.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: a Halted gadget runs no replicas', field: 'spec' }]);
  const ports = await apiError(() => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('cel2', { mode: 'Always', ports: [{ port: 80 }, { port: 443 }] }) }));
  assert.equal(ports.status.details!.causes!.map((c) => [c.field, c.message]), [['spec.ports', 'Invalid value: ports need exactly one primary']]);
  await s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget('cel3', { mode: 'Always', owner: 'alice', ports: [{ port: 80, primary: true }, { port: 443 }] }) });
  const immut = await apiError(() => s.custom.patchNamespacedCustomObject({ ...co('cel3'), body: { spec: { owner: 'bob' } } }, merge));
  assert.is(immut.code, 422);
  assert.match(immut.status.message, /owner is immutable/);
  await s.custom.patchNamespacedCustomObject({ ...co('cel3'), body: { spec: { replicas: 2 } } }, merge);
});

test('a CRD with a CEL rule this server cannot evaluate is refused at creation', async () => {
  const crd = gadgetCrd('self.mode.lowerAscii() == quantity(self.memory).asString()');
  (crd.metadata as { name: string }).name = `widgets.${GROUP}`;
  crd.spec.names = { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: [], categories: [] };
  const r = await createCrd(s.api.url, crd);
  assert.is(r.status, 422);
  const e = { status: r.json as { details?: { causes?: { field: string; message: string }[] } } };
  const cause = e.status.details!.causes!.find((c) => /quantity/.test(c.message));
  assert.ok(cause, JSON.stringify(e.status));
  assert.is(cause!.field, 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[3].rule', 'versions with schemas of their own are reported each at its own');
  assert.match(cause!.message, /undeclared reference to 'quantity'/);
  const bad = await createCrd(s.api.url, { ...crd, spec: { ...crd.spec, scope: 'Galaxy' } });
  assert.is(bad.status, 422);
});

test('Table output: CRD printer columns with condition filters and ages', async () => {
  await s.custom.patchNamespacedCustomObjectStatus({ ...co('g1'), body: { status: { printableStatus: 'Running', conditions: [{ type: 'Paused', status: 'False' }, { type: 'Ready', status: 'True' }] } } }, merge);
  const t = (await raw(`${s.api.url}/apis/${GROUP}/v1/namespaces/default/gadgets?labelSelector=`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } })).json as {
    kind: string; columnDefinitions: { name: string; type: string; priority: number }[]; rows: { cells: unknown[]; object: { kind: string; metadata: { name: string } } }[];
  };
  assert.is(t.kind, 'Table');
  assert.equal(t.columnDefinitions.map((c) => c.name), ['Name', 'Age', 'Status', 'Ready', 'Replicas', 'Node']);
  assert.is(t.columnDefinitions[5]!.priority, 1);
  const row = t.rows.find((r) => r.cells[0] === 'g1')!;
  assert.match(String(row.cells[1]), /^\d+s$/);
  assert.equal(row.cells.slice(2), ['Running', 'True', 2, null]);
  assert.is(row.object.kind, 'PartialObjectMetadata');
  const one = (await raw(`${s.api.url}/apis/${GROUP}/v1/namespaces/default/gadgets/g1`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json as { rows: unknown[] };
  assert.is(one.rows.length, 1);
});

test('a non-storage version is served with its own apiVersion over the same objects', async () => {
  const got = (await s.custom.getNamespacedCustomObject({ group: GROUP, version: 'v1alpha1', namespace: 'default', plural: 'gadgets', name: 'g1' })) as G;
  assert.is(got.apiVersion, `${GROUP}/v1alpha1`);
  const list = (await s.custom.listNamespacedCustomObject({ group: GROUP, version: 'v1alpha1', namespace: 'default', plural: 'gadgets' })) as { apiVersion: string; items: G[] };
  assert.is(list.apiVersion, `${GROUP}/v1alpha1`);
  assert.ok(list.items.every((i) => i.apiVersion === `${GROUP}/v1alpha1`));
  const v1 = (await s.custom.getNamespacedCustomObject(co('g1'))) as G;
  assert.is(v1.apiVersion, `${GROUP}/v1`);
});

test('cluster-scoped custom resources and label selectors on custom resources', async () => {
  const crd = gadgetCrd();
  crd.metadata.name = `things.${GROUP}`;
  crd.spec.names = { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList', shortNames: [], categories: [] };
  crd.spec.scope = 'Cluster';
  assert.is((await createCrd(s.api.url, crd)).status, 201);
  await s.custom.createClusterCustomObject({ group: GROUP, version: 'v1', plural: 'things', body: { ...gadget('t1', { mode: 'Always' }, { k: 'v' }), kind: 'Thing' } });
  await s.custom.createClusterCustomObject({ group: GROUP, version: 'v1', plural: 'things', body: { ...gadget('t2', { mode: 'Always' }), kind: 'Thing' } });
  const l = (await s.custom.listClusterCustomObject({ group: GROUP, version: 'v1', plural: 'things', labelSelector: 'k=v' })) as { items: G[] };
  assert.equal(l.items.map((i) => i.metadata.name), ['t1']);
  // Deleting the CRD deletes its objects, then stops serving the resource.
  await s.objects.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `things.${GROUP}` } } as never);
  await eventually(async () => (await raw(`${s.api.url}/apis/${GROUP}/v1/things`)).status === 404, 3000, 'resource unserved');
  const crds = (await raw(`${s.api.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`)).json as { items: { metadata: { name: string } }[] };
  assert.equal(crds.items.map((c) => c.metadata.name), [`gadgets.${GROUP}`]);
});

test('server-side apply: create, merge, removal of fields the manager stopped setting, other managers kept', async () => {
  const apply = (manager: string, body: unknown) => raw(`${s.api.url}/apis/${GROUP}/v1/namespaces/default/gadgets/ssa?fieldManager=${manager}`, { method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body });
  const first = await apply('alice', { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'ssa', labels: { a: '1' } }, spec: { mode: 'Always', replicas: 2, tags: ['x'] } });
  assert.is(first.status, 201, first.text);
  const bob = await apply('bob', { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'ssa' }, spec: { owner: 'bob' } });
  assert.is(bob.status, 200, bob.text);
  const rv = (bob.json as G).metadata.resourceVersion;
  const same = await apply('bob', { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'ssa' }, spec: { owner: 'bob' } });
  assert.is((same.json as G).metadata.resourceVersion, rv, 'an identical apply is a no-op');
  const second = await apply('alice', { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'ssa' }, spec: { mode: 'Manual', tags: ['y'] } });
  const g = second.json as G & { metadata: { managedFields: { manager: string; operation: string; fieldsV1: unknown }[] } };
  assert.equal(g.spec, { mode: 'Manual', tags: ['y'], owner: 'bob', ports: [] }, 'replicas dropped (alice no longer sets it); bob keeps owner');
  assert.is(g.metadata.labels, undefined, 'label alice stopped applying is removed');
  assert.equal(g.metadata.managedFields.map((f) => `${f.manager}/${f.operation}`).sort(), ['alice/Apply', 'bob/Apply']);
  assert.equal(g.metadata.managedFields.find((f) => f.manager === 'alice')!.fieldsV1, { 'f:spec': { 'f:mode': {}, 'f:tags': {} } });
  const noManager = await raw(`${s.api.url}/apis/${GROUP}/v1/namespaces/default/gadgets/ssa`, { method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'ssa' } } });
  assert.is(noManager.status, 422);
  // A non-apply update of an applied object takes what it changes (client-node's User-Agent names it).
  const merged = (await s.custom.patchNamespacedCustomObject({ ...co('ssa'), body: { spec: { replicas: 1 } } }, merge)) as { metadata: { managedFields: { manager: string; operation: string; fieldsV1: unknown }[] } };
  assert.equal(merged.metadata.managedFields.map((f) => `${f.operation} ${JSON.stringify(f.fieldsV1)}`).sort(), [
    'Apply {"f:spec":{"f:mode":{},"f:tags":{}}}',
    'Apply {"f:spec":{"f:owner":{}}}',
    'Update {"f:spec":{"f:replicas":{}}}',
  ]);
});

test('a wrong kind or apiVersion in the body is 400', async () => {
  const e = await apiError(() => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: { ...gadget('k'), kind: 'Widget' } }));
  assert.is(e.code, 400);
  assert.match(e.status.message, /the kind in the data \(Widget\) does not match the expected kind \(Gadget\)/);
});

test.run();
