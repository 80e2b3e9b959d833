// The TYPE/NAME[/NAMESPACE] targets of port-forward, ssh and scp, read as virtctl v1.9.0 reads
// them (pkg/virtctl/portforward ParseTarget, pkg/virtctl/ssh ParseTarget), with its messages.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UsageError } from '../../src/flags/flags.ts';
import { dottedHint, parseSshTarget, parseTarget, resourceOf } from '../../src/cli/vm-target.ts';

const ok: Array<[string, ReturnType<typeof parseTarget>]> = [
  ['vmi/testvmi', { kind: 'vmi', name: 'testvmi' }],
  ['vm/testvm/mynamespace', { kind: 'vm', name: 'testvm', namespace: 'mynamespace' }],
  ['VMI/x', { kind: 'vmi', name: 'x' }],
  ['vmis/x', { kind: 'vmi', name: 'x' }],
  ['VirtualMachineInstances/x/ns', { kind: 'vmi', name: 'x', namespace: 'ns' }],
  ['virtualmachine/x', { kind: 'vm', name: 'x' }],
  ['vms/x', { kind: 'vm', name: 'x' }],
  // virtctl ≥ 1.7: a dot is part of the name (its --help still describes the old name.namespace form).
  ['vm/testvm.mynamespace', { kind: 'vm', name: 'testvm.mynamespace' }],
];
for (const [text, want] of ok) test(`parseTarget(${text})`, () => assert.equal(parseTarget(text), want));

const bad: Array<[string, RegExp]> = [
  ['', /^target cannot be empty/],
  ['vmi', /^target must contain type and name separated by '\/': "vmi" \(e\.g\. vmi\/NAME\)/],
  ['myvm', /^target must contain type and name separated by '\/': "myvm" \(e\.g\. vmi\/myvm\)/],
  ['vmi/a/b/c', /^target is not valid with more than two '\/'/],
  ['vmi/x/', /^namespace cannot be empty/],
  ['vmi/', /^name cannot be empty/],
  ['pod/x', /^unsupported resource type 'pod'/],
  ['/x', /^unsupported resource type ''/],
];
for (const [text, re] of bad) {
  test(`parseTarget(${JSON.stringify(text)}) refused`, () => {
    const err = (() => { try { parseTarget(text); } catch (e) { return e; } return undefined; })();
    assert.instance(err, UsageError);
    assert.match((err as Error).message, re);
  });
}

const ssh: Array<[string, ReturnType<typeof parseSshTarget> | RegExp]> = [
  ['vmi/testvmi', { target: { kind: 'vmi', name: 'testvmi' } }],
  ['jdoe@vmi/testvmi', { target: { kind: 'vmi', name: 'testvmi' }, username: 'jdoe' }],
  ['jdoe@vm/testvm/mynamespace', { target: { kind: 'vm', name: 'testvm', namespace: 'mynamespace' }, username: 'jdoe' }],
  ['@vmi/x', /^expected username before '@'/],
  ['jdoe@', /^expected target after '@'/],
  ['jdoe@vmi', /^target must contain type and name/],
];
for (const [text, want] of ssh) {
  test(`parseSshTarget(${text})`, () => {
    if (want instanceof RegExp) assert.throws(() => parseSshTarget(text), (e: Error) => e instanceof UsageError && want.test(e.message));
    else assert.equal(parseSshTarget(text), want);
  });
}

test('resourceOf and the hint for a dotted name', () => {
  assert.is(resourceOf('vm'), 'virtualmachines');
  assert.is(resourceOf('vmi'), 'virtualmachineinstances');
  assert.match(dottedHint({ kind: 'vm', name: 'testvm.mynamespace' }), /did you mean vm\/testvm\/mynamespace\?$/);
  assert.is(dottedHint({ kind: 'vm', name: 'testvm.mynamespace', namespace: 'other' }), '', 'a namespace given: the dot is the name\'s');
  assert.is(dottedHint({ kind: 'vmi', name: 'plain' }), '');
  assert.is(dottedHint({ kind: 'vmi', name: 'trailing.' }), '');
});

test.run();
