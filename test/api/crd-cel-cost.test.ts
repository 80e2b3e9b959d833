// The CRDs' CEL rules within kube-apiserver's cost budgets on every server qvirt supports: the
// static estimate (src/apiserver/cel-cost.ts, a port of kube-apiserver's and cel-go's) checked on
// rules whose cost a real kube-apiserver v1.36.2 reported, then every rule of every generated CRD
// held to the per-rule and per-CRD limits under each estimator from MIN_KUBERNETES on and a
// pessimistic one (as old servers estimate: a filter()/map() result unbounded), with every list,
// map and string a rule's cost depends on bounded by the schema. And every CRD field known to
// MIN_KUBERNETES. test/cluster/crds.test.ts compares the port with the live server rule by rule.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { customResourceDefinitions } from '../../src/api/schema/crds.ts';
import {
  CostModels,
  crdRuleCosts,
  estimateRuleCost,
  maxCardinality,
  schemaDeclType,
  StaticEstimatedCostLimit,
  StaticEstimatedCRDCostLimit,
  UNBOUNDED,
  type CostModel,
  type JSONSchemaProps,
} from '../../src/apiserver/cel-cost.ts';
import { CRD_FIELDS_SINCE, MIN_KUBERNETES } from '../../src/deploy/kubernetes-versions.ts';

type S = Record<string, unknown>;
const str = (o: S = {}): S => ({ type: 'string', ...o });
const named = (name: S, list: S = { maxItems: 256 }): S => ({ type: 'array', ...list, items: { type: 'object', required: ['name'], properties: { name: str(name) } } });
const UNIQUE = 'self.all(x, self.exists_one(y, y.name == x.name))';
const OLD_BOOT_ORDER =
  '(has(self.disks) ? self.disks.filter(d, has(d.bootOrder)).map(d, d.bootOrder) : []).all(o, ' +
  '(has(self.disks) ? self.disks.filter(d, has(d.bootOrder) && d.bootOrder == o).size() : 0) + ' +
  '(has(self.interfaces) ? self.interfaces.filter(i, has(i.bootOrder) && i.bootOrder == o).size() : 0) == 1)';
const devices: S = {
  type: 'object',
  properties: Object.fromEntries(['disks', 'interfaces'].map((k) => [k, { type: 'array', maxItems: 256, items: { type: 'object', properties: { name: str({ maxLength: 63 }), bootOrder: { type: 'integer' } } } }])),
};

const cost = (node: S, rule: string, model: CostModel = CostModels.kube136) => estimateRuleCost(rule, schemaDeclType(node as JSONSchemaProps, model)!, model);

test('rule costs as kube-apiserver v1.36.2 reported them (each rule alone, read back from its over-budget factor)', () => {
  // [what, schema node, rule, cost reported by kube-apiserver v1.36.2]
  const table: [string, S, string, number][] = [
    ['unique names, 256 × 253 chars (1012 bytes: maxLength × 4)', named({ maxLength: 253 }), UNIQUE, 7_079_425],
    ['unique names, 256 × 63 chars', named({ maxLength: 63 }), UNIQUE, 2_098_690],
    ['a string enum bounds a comparison', { type: 'object', properties: { bus: str({ enum: ['virtio', 'sata'] }) } }, "!has(self.bus) || self.bus != 'virtio'", 5],
    ['a literal bounds a comparison with an unbounded string', { type: 'object', properties: { a: str() } }, "self.a == 'abc'", 3],
    ['the shorter side bounds a comparison', { type: 'object', properties: { a: str(), b: str({ maxLength: 10 }) } }, 'self.a == self.b', 8],
    ['filter() then size()', { type: 'array', maxItems: 256, items: { type: 'object', properties: { pod: { type: 'object' } } } }, 'self.filter(n, has(n.pod)).size() <= 1', 3598],
    ['iterating a map() result (sized as its list since cel-go 0.20)', { type: 'array', maxItems: 16, items: { type: 'object', properties: { o: { type: 'integer' } } } }, 'self.map(x, x.o).all(o, o > 0)', 317],
    ['in a list', { type: 'object', properties: { v: { type: 'array', maxItems: 64, items: str({ maxLength: 63 }) }, k: str({ maxLength: 63 }) } }, 'self.k in self.v', 68],
    ['a map\'s keys and values', { type: 'object', additionalProperties: str({ maxLength: 63 }), maxProperties: 64 }, "self.all(k, self[k] != '' && k.startsWith('a'))", 514],
    ['matches()', { type: 'object', properties: { a: str({ maxLength: 100 }) } }, "self.a.matches('^[a-z]+$')", 84],
    ['a ternary\'s size', { type: 'object', properties: { a: { type: 'array', maxItems: 8, items: { type: 'integer' } } } }, 'size(has(self.a) ? self.a : []) <= 3', 13],
    ['string concatenation', { type: 'object', properties: { a: str({ maxLength: 10 }), b: str({ maxLength: 20 }) } }, "self.a + self.b == 'xy'", 17],
    ['the former boot-order rule (first half)', devices, OLD_BOOT_ORDER, 2_244_378],
  ];
  for (const [what, node, rule, reported] of table) {
    const est = cost(node, rule);
    // The server's factor is printed to 6 decimals: its cost is known to within a unit or two.
    assert.ok(Math.abs(est.cost - reported) <= 1, `${what}: estimated ${est.cost}, kube-apiserver ${reported}`);
  }
});

test('unbounded: no maxLength, no maxItems, a filter()/map() result under the old estimators', () => {
  const noLength = cost(named({}), UNIQUE);
  assert.ok(noLength.cost > 100 * StaticEstimatedCostLimit, `${noLength.cost}`); // the server: "more than 100x"
  assert.equal(noLength.unbounded.map((u) => u.what), ['self.@items.name']);
  const noItems = cost(named({ maxLength: 63 }, {}), UNIQUE);
  assert.ok(noItems.cost > 100 * StaticEstimatedCostLimit, `${noItems.cost}`);
  assert.ok(noItems.unbounded.some((u) => u.what === 'self'), JSON.stringify(noItems.unbounded));
  const old = cost(devices, OLD_BOOT_ORDER, CostModels.pessimistic);
  assert.is(old.cost, UNBOUNDED);
  assert.ok(old.unbounded.some((u) => u.what === 'the result of map()'), JSON.stringify(old.unbounded));
  assert.ok(cost(devices, OLD_BOOT_ORDER, CostModels.kube132).cost < StaticEstimatedCostLimit);
});

test('cardinality: the bounds above a rule, else as many nodes as fit in a request', () => {
  const rule = { rule: 'self.a == 1', message: 'm' };
  const item = { type: 'object', properties: { a: { type: 'integer' } }, 'x-kubernetes-validations': [rule] };
  const schema = (outer: S, inner: S): JSONSchemaProps => ({ type: 'object', properties: { l: { type: 'array', ...outer, items: { type: 'object', properties: { m: { type: 'array', ...inner, items: item } } } } } });
  const one = (s: JSONSchemaProps) => crdRuleCosts(s, CostModels.kube136).rules[0]!;
  assert.is(one(schema({ maxItems: 4 }, { maxItems: 8 })).cardinality, 32);
  assert.is(one(schema({ maxItems: 4 }, {})).cardinality, maxCardinality(2));
  assert.not.ok(one(schema({}, { maxItems: 8 })).cardinalityBounded);
  assert.is(one(schema({ maxItems: 4 }, { maxItems: 8 })).field, 'openAPIV3Schema.properties[l].items.properties[m].items.x-kubernetes-validations[0].rule');
});

test('every rule of every CRD within both limits, under every supported estimator and the pessimistic one', () => {
  for (const crd of customResourceDefinitions()) {
    const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
    for (const model of Object.values(CostModels)) {
      const { rules, total } = crdRuleCosts(schema, model);
      // Rules where qvirt's schema has them; the migration, the preset, KubeVirt's instancetype.kubevirt.io kinds, MigrationPolicy and VirtualMachinePool carry none (as KubeVirt's).
      assert.ok(rules.length > 0 || crd.spec.names.kind === 'VirtualMachineInstanceMigration' || crd.spec.names.kind === 'VirtualMachineInstancePreset' || crd.spec.group === 'instancetype.kubevirt.io' || crd.spec.group === 'migrations.kubevirt.io' || crd.spec.group === 'pool.kubevirt.io', crd.metadata.name);
      for (const r of rules) {
        const where = `${crd.metadata.name} ${r.field} (${model.name}): ${r.rule}`;
        assert.ok(r.total <= StaticEstimatedCostLimit, `${where}: cost ${r.cost} × cardinality ${r.cardinality} = ${r.total} > ${StaticEstimatedCostLimit}`);
        assert.ok(r.cardinalityBounded, `${where}: under a list or map without maxItems/maxProperties`);
        assert.equal(r.unbounded, [], `${where}: its cost depends on sizes the schema does not bound`);
      }
      assert.ok(total <= StaticEstimatedCRDCostLimit, `${crd.metadata.name} (${model.name}): total ${total} > ${StaticEstimatedCRDCostLimit}`);
    }
  }
});

test('the costliest rules: name matching of 256 interfaces and networks, under 75% of the limit', () => {
  const vmi = customResourceDefinitions().find((c) => c.spec.names.kind === 'VirtualMachineInstance')!;
  const { rules, total } = crdRuleCosts(vmi.spec.versions[0]!.schema.openAPIV3Schema, CostModels.pessimistic);
  const top = [...rules].sort((a, b) => b.total - a.total).slice(0, 4);
  for (const r of top) {
    assert.match(r.rule, /name == /);
    assert.ok(r.total < 0.75 * StaticEstimatedCostLimit, `${r.field}: ${r.total}`);
  }
  assert.ok(total < 0.5 * StaticEstimatedCRDCostLimit, `${total}`);
});

test(`every CRD field is known to Kubernetes ${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor}, the oldest supported`, () => {
  const used = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) { v.forEach(walk); return; }
    if (typeof v !== 'object' || v === null) return;
    for (const [k, x] of Object.entries(v)) {
      if (k.startsWith('x-kubernetes-')) used.add(k);
      if (k === 'x-kubernetes-validations') for (const r of x as S[]) for (const f of Object.keys(r)) if (f !== 'rule' && f !== 'message') used.add(`x-kubernetes-validations[].${f}`);
      if (k === 'properties' && typeof x === 'object' && x) Object.values(x).forEach(walk);
      else walk(x);
    }
  };
  for (const crd of customResourceDefinitions()) {
    walk(crd.spec.versions[0]!.schema.openAPIV3Schema);
    if ('selectableFields' in crd.spec.versions[0]!) used.add('selectableFields');
  }
  assert.ok(used.has('x-kubernetes-validations[].reason') && used.has('x-kubernetes-validations[].fieldPath'), [...used].join(', '));
  const OLD = new Set(['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type']);
  for (const f of used) {
    if (OLD.has(f)) continue; // apiextensions.k8s.io/v1 itself (1.16)
    const since = CRD_FIELDS_SINCE[f];
    assert.ok(since !== undefined, `${f}: when did Kubernetes start accepting it? (add it to CRD_FIELDS_SINCE)`);
    assert.ok(MIN_KUBERNETES.major === 1 && since <= MIN_KUBERNETES.minor, `${f} needs 1.${since}, newer than MIN_KUBERNETES`);
  }
});

test.run();
