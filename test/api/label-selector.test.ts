// The one label-selector evaluator (src/api/label-selector.ts): metav1.LabelSelector as
// LabelSelectorAsSelector compiles it, the string form as kube-apiserver parses `labelSelector=`
// and as Selector.String() prints it, and matching.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidLabelSelectorError, labelSelectorAsSelector, labelSelectorMatches, parseLabelSelector, selectorMatches, selectorString } from '../../src/api/label-selector.ts';

test('label selectors: matchLabels and every operator', () => {
  const l = { a: '1', b: '2' };
  assert.ok(labelSelectorMatches({}, l));
  assert.ok(labelSelectorMatches({ matchLabels: { a: '1' } }, l));
  assert.not.ok(labelSelectorMatches({ matchLabels: { a: '2' } }, l));
  assert.ok(labelSelectorMatches({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '3'] }] }, l));
  assert.not.ok(labelSelectorMatches({ matchExpressions: [{ key: 'c', operator: 'In', values: ['1'] }] }, l));
  assert.ok(labelSelectorMatches({ matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['1'] }] }, l));
  assert.not.ok(labelSelectorMatches({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, l));
  assert.ok(labelSelectorMatches({ matchExpressions: [{ key: 'b', operator: 'Exists' }] }, l));
  assert.ok(labelSelectorMatches({ matchExpressions: [{ key: 'z', operator: 'DoesNotExist' }] }, l));
  assert.throws(() => labelSelectorMatches({ matchExpressions: [{ key: 'b', operator: 'Exists', values: ['x'] }] }, l), /values set must be empty/);
});

test('label selector: matching and the sorted String() form', () => {
  const sel = labelSelectorAsSelector({ matchLabels: { tier: 'web', app: 'x' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a'] }, { key: 'legacy', operator: 'DoesNotExist' }, { key: 'env', operator: 'NotIn', values: ['dev'] }, { key: 'owner', operator: 'Exists' }] });
  assert.is(selectorString(sel), 'app=x,env notin (dev),!legacy,owner,tier=web,zone in (a,b)');
  assert.ok(selectorMatches(sel, { app: 'x', tier: 'web', zone: 'a', owner: 'me' }));
  assert.not.ok(selectorMatches(sel, { app: 'x', tier: 'web', zone: 'a', owner: 'me', legacy: '1' }));
  assert.not.ok(selectorMatches(sel, { app: 'x', tier: 'web', zone: 'c', owner: 'me' }));
  assert.not.ok(selectorMatches(sel, { app: 'x', tier: 'web', zone: 'a', owner: 'me', env: 'dev' }));
  assert.not.ok(selectorMatches(labelSelectorAsSelector(undefined), {}), 'nil selector matches nothing');
  assert.ok(selectorMatches(labelSelectorAsSelector({}), { any: 'thing' }), 'empty selector matches everything');
  assert.throws(() => labelSelectorAsSelector({ matchExpressions: [{ key: 'a', operator: 'Near' as never }] }), (e: unknown) => e instanceof InvalidLabelSelectorError && /matchExpressions\[0\]/.test((e as Error).message));
  assert.is(selectorString(labelSelectorAsSelector({ matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'In', values: ['x', 'y'] }, { key: 'd', operator: 'DoesNotExist' }] })), 'a=b,c in (x,y),!d');
});

test('label selectors: the string form kube-apiserver parses', () => {
  const labels = { app: 'web', tier: 'front', 'kubevirt.io/domain': 'vm1' };
  const table: [string, boolean][] = [
    ['', true], ['app=web', true], ['app==web', true], ['app=db', false], ['app!=db', true], ['app!=web', false],
    ['missing!=x', true], ['app in (web,db)', true], ['app in (db)', false], ['app notin (db)', true], ['app notin (web)', false],
    ['missing notin (a)', true], ['tier', true], ['missing', false], ['!missing', true], ['!tier', false],
    ['app=web,tier=front', true], ['app=web,tier=back', false], ['kubevirt.io/domain=vm1', true], ['app in (web, db),!missing', true],
    ['app=', false], ['missing=', false],
  ];
  for (const [sel, want] of table) assert.is(selectorMatches(parseLabelSelector(sel), labels), want, sel);
  assert.ok(selectorMatches(parseLabelSelector('x='), { x: '' }));
  for (const bad of ['a b', 'a=b=c', '=b', 'a in b', 'a=' + 'x'.repeat(64)]) assert.throws(() => parseLabelSelector(bad), (e: unknown) => e instanceof InvalidLabelSelectorError, bad);
});

test('label selectors: the parsed string form prints back as Selector.String()', () => {
  assert.is(selectorString(parseLabelSelector('tier in (b,a),app==x,!legacy,owner,env!=dev')), 'app==x,env!=dev,!legacy,owner,tier in (a,b)');
});

test.run();
