// The failure recap test/run.ts prints at the end of a run (test/lib/uvu-failures.ts), from uvu's
// own output as it prints it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { uvuFailures } from '../lib/uvu-failures.ts';

const uvuOutput = [
  '{"level":"warn","msg":"noise"}',
  '• ✘ ✘ ✘   (1 / 4)',
  '',
  '   FAIL  "fails with assert"',
  '    the guest never powered off itself  (ok)',
  '',
  '    at assert (file:///work/main/node_modules/uvu/assert/index.mjs:33:8)',
  '    at Module.ok (file:///work/main/node_modules/uvu/assert/index.mjs:37:2)',
  '    at Object.handler (file:///work/main/test/x.test.ts:4:42)',
  '    at Number.runner (file:///work/main/node_modules/uvu/dist/index.mjs:78:16)',
  '',
  '',
  '   FAIL  "fails with throw"',
  '    timed out waiting for vmh Failed: x',
  '{"level":"warn","msg":"a log line between"}',
  '',
  '    at Object.handler (file:///work/main/test/x.test.ts:5:46)',
  '',
  '',
  '   FAIL  suite  "equal"',
  '    Expected values to be deeply equal:  (equal)',
  '',
  '        ··{',
  '        Actual:',
  '        --··"a":·1',
  '        Expected:',
  '        ++··"a":·2',
  '        ··}',
  '    at assert (file:///work/main/node_modules/uvu/assert/index.mjs:33:8)',
  '',
  '',
  '  Total:     4',
  '  Passed:    1',
].join('\n');

test('each FAIL block: title, message, the first frame outside node_modules', () => {
  assert.equal(uvuFailures(uvuOutput), [
    'FAIL "fails with assert"\n  the guest never powered off itself  (ok)\n  at Object.handler (file:///work/main/test/x.test.ts:4:42)',
    'FAIL "fails with throw"\n  timed out waiting for vmh Failed: x\n  at Object.handler (file:///work/main/test/x.test.ts:5:46)',
    'FAIL suite  "equal"\n  Expected values to be deeply equal:  (equal)\n  ··{\n  Actual:\n  --··"a":·1\n  Expected:\n  ++··"a":·2\n  ··}',
  ]);
});

test('colours are stripped; nothing failed: nothing to repeat', () => {
  assert.equal(uvuFailures('\x1b[31m   FAIL \x1b[39m "x"\n    boom\n'), ['FAIL "x"\n  boom']);
  assert.equal(uvuFailures('• • •   (3 / 3)\n\n  Total:     3\n  Passed:    3\n'), []);
  assert.equal(uvuFailures(''), []);
});

test('a long message is clipped, and at most 8 of its lines kept', () => {
  const long = 'x'.repeat(1000);
  const [one] = uvuFailures(`   FAIL  "long"\n    ${long}\n`);
  assert.ok(one!.length < 450, String(one!.length));
  const many = uvuFailures(`   FAIL  "many"\n${Array.from({ length: 20 }, (_, i) => `    line ${i}`).join('\n')}\n`);
  assert.is(many[0]!.split('\n').length, 9);
});

test.run();
