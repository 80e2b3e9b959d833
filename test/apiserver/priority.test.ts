// PriorityClass in the embedded API server, and kube-apiserver's Priority admission of pods: the
// system classes at start, user classes validated, a pod's priorityClassName resolved into
// spec.priority (unknown → Forbidden in kube-apiserver's words), the global default class.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { raw, startTestServer, type TestServer } from './lib.ts';
import { admitPodPriority, validatePriorityClass } from '../../src/apiserver/priority.ts';
import type { Obj } from '../../src/apiserver/store.ts';

let s: TestServer;
test.before(async () => { s = await startTestServer(); });
test.after(async () => { await s.close(); });

const podBody = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec } });
const pcUrl = () => `${s.api.url}/apis/scheduling.k8s.io/v1/priorityclasses`;
const podsUrl = () => `${s.api.url}/api/v1/namespaces/default/pods`;

test('validatePriorityClass: value bounds, reserved names, preemptionPolicy (table)', () => {
  const rows: Array<[string, Record<string, unknown>, string[]]> = [
    ['user class', { metadata: { name: 'high' }, value: 1000 }, []],
    ['above the user maximum', { metadata: { name: 'too' }, value: 1_000_000_001 }, ['value: maximum allowed value of a user defined priority is 1000000000']],
    ['system- prefix reserved', { metadata: { name: 'system-mine' }, value: 1 }, ["metadata.name: priority class names with 'system-' prefix are reserved"]],
    ['a system class at its value', { metadata: { name: 'system-node-critical' }, value: 2_000_001_000 }, []],
    ['not an integer', { metadata: { name: 'x' }, value: 1.5 }, ['value: must be an integer']],
    ['bad preemptionPolicy', { metadata: { name: 'x' }, value: 1, preemptionPolicy: 'Sometimes' }, ['preemptionPolicy: supported values: "Never", "PreemptLowerPriority"']],
  ];
  for (const [name, pc, want] of rows) assert.equal(validatePriorityClass(pc).map((e) => `${e.field}: ${e.detail}`), want, name);
});

test('admitPodPriority: class value, global default, none → 0; unknown class and a conflicting priority refused', () => {
  const classes = [{ metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'Never' }, { metadata: { name: 'dflt' }, value: 7, globalDefault: true }] as unknown as Obj[];
  const p1: Record<string, unknown> = { metadata: { name: 'a' }, spec: { priorityClassName: 'high' } };
  admitPodPriority(p1, classes);
  assert.equal(p1.spec, { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
  const p2: Record<string, unknown> = { metadata: { name: 'b' }, spec: {} };
  admitPodPriority(p2, classes);
  assert.equal(p2.spec, { priorityClassName: 'dflt', priority: 7, preemptionPolicy: 'PreemptLowerPriority' });
  const p3: Record<string, unknown> = { metadata: { name: 'c' }, spec: {} };
  admitPodPriority(p3, []);
  assert.equal(p3.spec, { priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
  assert.throws(() => admitPodPriority({ metadata: { name: 'd' }, spec: { priorityClassName: 'nope' } }, classes), /^pods "d" is forbidden: no PriorityClass with name nope was found$/);
  assert.throws(() => admitPodPriority({ metadata: { name: 'e' }, spec: { priorityClassName: 'high', priority: 5 } }, classes), /must not be provided in pod spec; priority admission controller computed 1000/);
});

test('served: the system classes exist at start; a user class; pods get spec.priority from it; an unknown class is Forbidden', async () => {
  const list = await raw(pcUrl());
  assert.is(list.status, 200);
  const names = (list.json as { items: Array<{ metadata: { name: string }; value: number }> }).items.map((i) => `${i.metadata.name}=${i.value}`);
  assert.ok(names.includes('system-node-critical=2000001000') && names.includes('system-cluster-critical=2000000000'), names.join(','));

  const bad = await raw(pcUrl(), { method: 'POST', body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'huge' }, value: 2_000_000_000 } });
  assert.is(bad.status, 422);
  assert.match(bad.text, 'maximum allowed value of a user defined priority is 1000000000');
  const made = await raw(pcUrl(), { method: 'POST', body: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'vm-high' }, value: 100000 } });
  assert.is(made.status, 201, made.text);
  assert.is((made.json as { preemptionPolicy: string }).preemptionPolicy, 'PreemptLowerPriority');

  const table = await raw(pcUrl(), { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  const t = table.json as { columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
  assert.equal(t.columnDefinitions.map((c) => c.name), ['Name', 'Value', 'Global-Default', 'Age', 'PreemptionPolicy'], 'kubectl get pc columns');
  assert.ok(t.rows.some((r) => r.cells[0] === 'vm-high' && r.cells[1] === 100000 && r.cells[2] === false && r.cells[4] === 'PreemptLowerPriority'), JSON.stringify(t.rows));

  const p = await raw(podsUrl(), { method: 'POST', body: podBody('prio', { priorityClassName: 'vm-high' }) });
  assert.is(p.status, 201, p.text);
  assert.is((p.json as { spec: { priority: number } }).spec.priority, 100000);
  const plain = await raw(podsUrl(), { method: 'POST', body: podBody('plain') });
  assert.is((plain.json as { spec: { priority: number } }).spec.priority, 0);
  const unknown = await raw(podsUrl(), { method: 'POST', body: podBody('lost', { priorityClassName: 'missing' }) });
  assert.is(unknown.status, 403);
  assert.is((unknown.json as { message: string }).message, 'pods "lost" is forbidden: no PriorityClass with name missing was found');
});

test.run();
