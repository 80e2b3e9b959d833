// Table tests for the API server's pure functions: field selectors (label selectors are
// test/api/label-selector.test.ts), the patch types, CEL, JSONPath, ages, structural schema
// validation and watch selector transitions.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseFieldSelector } from '../../src/apiserver/field-selector.ts';
import { parseLabelSelector } from '../../src/api/label-selector.ts';
import { jsonPatch, mergePatch, strategicMergePatch, applyMerge, PatchError, type Json } from '../../src/apiserver/patch.ts';
import { compileCel, CelCompileError, CelEvalError } from '../../src/apiserver/cel.ts';
import { evalJsonPath, humanDuration, parseJsonPath } from '../../src/apiserver/table.ts';
import { applyDefaults, compileSchema, prune, validate, type Schema } from '../../src/apiserver/schema-validation.ts';
import { watchDecision } from '../../src/apiserver/watch.ts';
import { fieldErrorMessage } from '../../src/apiserver/errors.ts';

test('field selectors', () => {
  assert.equal(parseFieldSelector('metadata.name=a\\,b,status.phase!=Running'), [{ field: 'metadata.name', op: '=', value: 'a,b' }, { field: 'status.phase', op: '!=', value: 'Running' }]);
});

test('merge patch (RFC 7386)', () => {
  const table: [Json, Json, Json][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [t, p, want] of table) assert.equal(mergePatch(t, p), want, JSON.stringify([t, p]));
});

test('JSON patch (RFC 6902)', () => {
  const doc = { a: { b: [1, 2, 3] }, c: 'x', 'd/e': 1, 'f~g': 2 };
  assert.equal(jsonPatch(doc, [{ op: 'add', path: '/a/b/1', value: 9 }]), { ...doc, a: { b: [1, 9, 2, 3] } });
  assert.equal(jsonPatch(doc, [{ op: 'add', path: '/a/b/-', value: 4 }]), { ...doc, a: { b: [1, 2, 3, 4] } });
  assert.equal(jsonPatch(doc, [{ op: 'remove', path: '/c' }]), { a: { b: [1, 2, 3] }, 'd/e': 1, 'f~g': 2 });
  assert.equal(jsonPatch(doc, [{ op: 'replace', path: '/d~1e', value: 5 }, { op: 'remove', path: '/f~0g' }]), { a: { b: [1, 2, 3] }, c: 'x', 'd/e': 5 });
  assert.equal((jsonPatch(doc, [{ op: 'move', from: '/c', path: '/z' }]) as { z: unknown }).z, 'x');
  assert.equal((jsonPatch(doc, [{ op: 'copy', from: '/a/b', path: '/y' }]) as { y: unknown }).y, [1, 2, 3]);
  assert.equal(jsonPatch(doc, [{ op: 'test', path: '/a/b', value: [1, 2, 3] }]), doc);
  assert.equal(doc.a.b, [1, 2, 3], 'the input is not modified');
  const fails: unknown[][] = [
    [{ op: 'test', path: '/c', value: 'y' }], [{ op: 'remove', path: '/nope' }], [{ op: 'replace', path: '/nope', value: 1 }],
    [{ op: 'add', path: '/a/b/9', value: 1 }], [{ op: 'add', path: '/x/y', value: 1 }], [{ op: 'bogus', path: '/c' }],
  ];
  for (const f of fails) assert.throws(() => jsonPatch(doc, f), (e: unknown) => e instanceof PatchError, JSON.stringify(f));
});

test('strategic merge patch: merge keys, directives, primitive lists', () => {
  const pod: Json = {
    metadata: { finalizers: ['a'], labels: { x: '1' } },
    spec: {
      containers: [{ name: 'c1', image: 'i1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }, { name: 'c2', image: 'i2' }],
      volumes: [{ name: 'v1', emptyDir: {} }],
      tolerations: [{ key: 't1' }],
    },
    status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }] },
  };
  const cases: [string, Json, (r: Json) => unknown, unknown][] = [
    ['containers merge by name', { spec: { containers: [{ name: 'c1', image: 'new' }] } }, (r: any) => r.spec.containers.map((c: any) => `${c.name}:${c.image}`), ['c1:new', 'c2:i2']],
    ['a new container comes before the others (kube-apiserver without $setElementOrder)', { spec: { containers: [{ name: 'c3', image: 'i3' }] } }, (r: any) => r.spec.containers.map((c: any) => c.name), ['c3', 'c1', 'c2']],
    ['env merges inside a merged container', { spec: { containers: [{ name: 'c1', env: [{ name: 'B', value: '9' }] }] } }, (r: any) => r.spec.containers[0].env.map((e: any) => `${e.name}=${e.value}`), ['A=1', 'B=9']],
    ['$patch: delete removes an item', { spec: { containers: [{ name: 'c2', $patch: 'delete' }] } }, (r: any) => r.spec.containers.map((c: any) => c.name), ['c1']],
    ['$patch: replace on a list', { spec: { volumes: [{ name: 'v9' }, { $patch: 'replace' }] } }, (r: any) => r.spec.volumes, [{ name: 'v9' }]],
    ['lists without merge key are replaced', { spec: { tolerations: [{ key: 't2' }] } }, (r: any) => r.spec.tolerations, [{ key: 't2' }]],
    ['conditions merge by type', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, (r: any) => r.status.conditions.map((c: any) => `${c.type}=${c.status}`), ['Ready=True', 'PodScheduled=True']],
    ['finalizers merge as a set, in the patch\'s order', { metadata: { finalizers: ['b', 'a'] } }, (r: any) => r.metadata.finalizers, ['b', 'a']],
    ['$deleteFromPrimitiveList', { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, (r: any) => r.metadata.finalizers, []],
    ['null deletes a key', { metadata: { labels: { x: null } } }, (r: any) => r.metadata.labels, {}],
    ['$setElementOrder reorders merged items', { spec: { '$setElementOrder/containers': [{ name: 'c2' }, { name: 'c1' }] } }, (r: any) => r.spec.containers.map((c: any) => c.name), ['c2', 'c1']],
    ['$retainKeys drops unlisted keys', { spec: { volumes: [{ name: 'v1', hostPath: { path: '/x' }, $retainKeys: ['name', 'hostPath'] }] } }, (r: any) => r.spec.volumes[0], { name: 'v1', hostPath: { path: '/x' } }],
  ];
  for (const [what, patch, pick, want] of cases) assert.equal(pick(strategicMergePatch(pod, patch)), want, what);
  assert.equal(applyMerge({ a: { b: 1, c: [1, 2] } }, { a: { c: [3], d: null } }), { a: { b: 1, c: [3] } }, 'apply never deletes and replaces lists');
});

test('CEL: evaluation table', () => {
  const self = {
    name: 'vm-1', replicas: 3, ratio: 0.5, running: true, tags: ['a', 'b'], labels: { app: 'web' },
    disks: [{ name: 'root', bus: 'virtio' }, { name: 'data', bus: 'sata' }], empty: [], nested: { deep: { value: 7 } },
  };
  const oldSelf = { ...self, replicas: 2 };
  const table: [string, unknown][] = [
    ['true', true], ['1 + 2 * 3', 7], ['7.0 / 2.0', 3.5], ['7 / 2.0', 3.5], ['1 == 1.0', true], ['-2.5 * 2.0', -5], ['self.ratio * 3.0', 1.5], ['int(7.9)', 7], ['(1 + 2) * 3', 9], ['7 / 2', 3], ['-7 / 2', -3], ['7 % 3', 1], ['1.5 * 2.0', 3],
    ['"a" + "b"', 'ab'], ["'it''s'".replace("''", "\\'"), "it's"], ['r"\\d"', '\\d'], ['"""tri"ple"""', 'tri"ple'], ['0x10', 16],
    ['self.replicas > 2 && self.running', true], ['self.replicas < 2 || !self.running', false], ['self.replicas >= 3 ? "big" : "small"', 'big'],
    ['has(self.name)', true], ['has(self.nope)', false], ['has(self.nested.deep)', true], ['self.nested.deep.value == 7', true],
    ['size(self.tags)', 2], ['self.tags.size()', 2], ['size(self.name)', 4], ['size(self.labels)', 1],
    ["'a' in self.tags", true], ["'z' in self.tags", false], ["'app' in self.labels", true], ['self.labels["app"]', 'web'], ['self.tags[1]', 'b'],
    ['self.disks.all(d, d.name != "")', true], ['self.disks.exists(d, d.bus == "sata")', true], ['self.disks.exists_one(d, d.bus == "virtio")', true],
    ['self.disks.all(x, self.disks.exists_one(y, y.name == x.name))', true], ['self.empty.all(x, false)', true], ['self.empty.exists(x, true)', false],
    ['self.disks.map(d, d.name)', ['root', 'data']], ['self.disks.filter(d, d.bus == "virtio").size()', 1], ['self.disks.map(d, d.bus == "sata", d.name)', ['data']],
    ['self.name.startsWith("vm-")', true], ['self.name.endsWith("-1")', true], ['self.name.contains("m-")', true],
    ["self.name.matches('^vm-[0-9]+$')", true], ["matches(self.name, '^x')", false], ['self.name.upperAscii()', 'VM-1'], ['"a,b".split(",")', ['a', 'b']],
    ['self.tags.join("-")', 'a-b'], ['int("42") + 1', 43], ['string(5)', '5'], ['double(1) / 4.0', 0.25], ['[1, 2] + [3]', [1, 2, 3]], ['{"a": 1}.a', 1],
    ['self.replicas - oldSelf.replicas', 1], ['self == oldSelf', false], ['self.tags == oldSelf.tags', true],
    ['(has(self.a) ? 1 : 0) + (has(self.name) ? 1 : 0) <= 1', true], ['!has(self.a) || self.a != "x"', true],
    // CEL's logical operators absorb errors on the other side.
    ['false && self.nope', false], ['self.nope && false', false], ['true || self.nope', true],
    ['self.disks.exists(d, d.nope == 1) || true', true],
  ];
  for (const [expr, want] of table) assert.equal(compileCel(expr).eval({ self, oldSelf }), want, expr);
  assert.ok(compileCel('self.a == oldSelf.a').usesOldSelf);
  assert.not.ok(compileCel('self.a == 1').usesOldSelf);
});

test('CEL: runtime errors and compile-time rejections', () => {
  for (const expr of ['self.nope', 'self.tags[5]', '1 / 0', 'self.name + 1', 'self.nope || false', 'size(1)', 'self.labels.x.y', "int('x')"])
    assert.throws(() => compileCel(expr).eval({ self: { name: 'a', tags: [], labels: {} } }), (e: unknown) => e instanceof CelEvalError, expr);
  for (const expr of ['quantity("1Gi")', 'self.x.isSorted()', 'url("x")', 'other == 1', 'self.', '(1', '1 +', 'self.all(x)', "'unterminated", 'has(self)', 'self.startsWith()', "self.matches('[')", 'self.x.optMap(v, v)'])
    assert.throws(() => compileCel(expr), (e: unknown) => e instanceof CelCompileError, expr);
});

test('JSONPath for printer columns', () => {
  const obj = { status: { conditions: [{ type: 'Paused', status: 'False' }, { type: 'Ready', status: 'True' }], interfaces: [{ ipAddress: '10.0.0.1' }, { ipAddress: '10.0.0.2' }], phase: 'Running', n: 3 }, metadata: { labels: { 'a.b/c': 'd' } } };
  const table: [string, unknown[]][] = [
    ['.status.phase', ['Running']], ['{.status.phase}', ['Running']], ['.status.nope', []],
    [".status.conditions[?(@.type=='Ready')].status", ['True']], ['.status.conditions[?(@.type=="Paused")].status', ['False']],
    [".status.conditions[?(@.type=='Missing')].status", []], ['.status.conditions[?(@.status)].type', ['Paused', 'Ready']],
    ['.status.interfaces[0].ipAddress', ['10.0.0.1']], ['.status.interfaces[-1].ipAddress', ['10.0.0.2']], ['.status.interfaces[*].ipAddress', ['10.0.0.1', '10.0.0.2']],
    [".metadata.labels['a.b/c']", ['d']], ['.status.conditions[0:1].type', ['Paused']], ['..ipAddress', ['10.0.0.1', '10.0.0.2']],
    ['.status.conditions[?(@.type!="Ready")].type', ['Paused']],
  ];
  for (const [p, want] of table) assert.equal(evalJsonPath(parseJsonPath(p), obj), want, p);
});

test('ages print like kubectl (duration.HumanDuration)', () => {
  const s = 1000;
  const table: [number, string][] = [[-5 * s, '<invalid>'], [-1500, '0s'], [0, '0s'], [59 * s, '59s'], [119 * s, '119s'], [120 * s, '2m'], [125 * s, '2m5s'], [600 * s, '10m'],
    [179 * 60 * s, '179m'], [3 * 3600 * s, '3h'], [3 * 3600 * s + 60 * s, '3h1m'], [8 * 3600 * s, '8h'], [47 * 3600 * s, '47h'], [50 * 3600 * s, '2d2h'], [8 * 86400 * s, '8d'],
    [800 * 86400 * s, '2y70d'], [9 * 365 * 86400 * s, '9y']];
  for (const [ms, want] of table) assert.is(humanDuration(ms), want, String(ms));
});

test('structural schema: pruning, defaults and validation messages', () => {
  const schema: Schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object', required: ['a'],
        properties: {
          a: { type: 'string', enum: ['x', 'y'] }, n: { type: 'integer', minimum: 1, maximum: 3 }, s: { type: 'string', minLength: 2, maxLength: 3, pattern: '^[a-z]+$' },
          l: { type: 'array', maxItems: 1, minItems: 1, items: { type: 'string' }, 'x-kubernetes-list-type': 'set' }, q: { 'x-kubernetes-int-or-string': true },
          d: { type: 'string', default: 'dflt' }, free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, m: { type: 'object', additionalProperties: { type: 'integer' } },
          nul: { type: 'string', nullable: true }, notnul: { type: 'string' },
        },
      },
    },
  };
  const { compiled, errors } = compileSchema(schema, 'x');
  assert.equal(errors, []);
  const obj = { apiVersion: 'v', kind: 'K', metadata: { name: 'n', extra: 1 }, spec: { a: 'x', gone: 1, free: { kept: { deep: 1 } }, m: { k: 1 }, nul: null, notnul: null }, junk: true };
  prune(obj, schema, true);
  applyDefaults(obj, schema);
  assert.equal(obj, { apiVersion: 'v', kind: 'K', metadata: { name: 'n', extra: 1 }, spec: { a: 'x', free: { kept: { deep: 1 } }, m: { k: 1 }, nul: null, d: 'dflt' } } as unknown);
  assert.equal(validate(obj, compiled, undefined), []);
  const bad = { spec: { n: 0, s: 'TOOLONG', l: ['a', 'a'], q: true, m: { k: 'x' } } };
  const msgs = validate(bad, compiled, undefined).map((e) => `${e.field}: ${fieldErrorMessage(e)}`);
  assert.equal(msgs, [
    'spec.a: Required value',
    'spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1',
    'spec.s: Too long: may not be more than 3 bytes',
    "spec.s: Invalid value: \"TOOLONG\": spec.s in body should match '^[a-z]+$'",
    'spec.l: Too many: 2: must have at most 1 items',
    'spec.l[1]: Duplicate value: "a"',
    'spec.q: Invalid value: "boolean": spec.q in body must be of type integer,string: "boolean"',
    'spec.m.k: Invalid value: "string": spec.m.k in body must be of type integer: "string"',
  ], 'no rules, no note that rules were not checked');
});

test('watch selector transitions', () => {
  const f = { namespace: 'ns', labels: parseLabelSelector('app=a'), fields: [], fieldGetter: () => '' };
  const o = (app: string, ns = 'ns') => ({ metadata: { namespace: ns, labels: { app } } });
  const table: [string, string, unknown, string | undefined][] = [
    ['ADDED', 'a', undefined, 'ADDED'], ['ADDED', 'b', undefined, undefined], ['MODIFIED', 'a', o('a'), 'MODIFIED'], ['MODIFIED', 'b', o('a'), 'DELETED'],
    ['MODIFIED', 'a', o('b'), 'ADDED'], ['MODIFIED', 'b', o('b'), undefined], ['DELETED', 'a', o('a'), 'DELETED'], ['DELETED', 'b', o('b'), undefined],
  ];
  for (const [type, app, prev, want] of table)
    assert.is(watchDecision(f, { type: type as 'ADDED', resource: '/pods', rv: 1, obj: o(app), prev: prev as never }), want, `${type} ${app}`);
  assert.is(watchDecision(f, { type: 'ADDED', resource: '/pods', rv: 1, obj: o('a', 'other'), prev: undefined }), undefined);
});

test.run();
