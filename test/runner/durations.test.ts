// test/run.ts's file order: longest first by recorded durations (test/lib/durations.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { longestFirst, parseDurations } from '../lib/durations.ts';

const known = new Map([['a.test.ts', 5], ['b.test.ts', 300], ['c.test.ts', 40], ['d.test.ts', 40]]);

const cases: Array<[string, string[], string[]]> = [
  ['longest first', ['a.test.ts', 'b.test.ts', 'c.test.ts'], ['b.test.ts', 'c.test.ts', 'a.test.ts']],
  ['ties keep path order', ['d.test.ts', 'c.test.ts'], ['c.test.ts', 'd.test.ts']],
  ['an unknown file counts as the median (40): before a, after b, beside c by path', ['a.test.ts', 'new.test.ts', 'b.test.ts', 'c.test.ts'], ['b.test.ts', 'c.test.ts', 'new.test.ts', 'a.test.ts']],
  ['nothing known: path order', ['z.test.ts', 'm.test.ts'], ['m.test.ts', 'z.test.ts']],
  ['no files', [], []],
];
for (const [name, files, want] of cases) {
  test(`longestFirst: ${name}`, () => {
    assert.equal(longestFirst(files, name.startsWith('nothing') ? new Map() : known), want);
  });
}

test('longestFirst keeps every file exactly once', () => {
  const files = ['x.test.ts', 'b.test.ts', 'a.test.ts', 'y.test.ts'];
  assert.equal(longestFirst(files, known).sort(), [...files].sort());
});

const parsed: Array<[string, string, Array<[string, number]>]> = [
  ['a record', '{"seconds":{"a.test.ts":1.5,"b.test.ts":0}}', [['a.test.ts', 1.5], ['b.test.ts', 0]]],
  ['bad entries left out', '{"seconds":{"a.test.ts":"9","b.test.ts":-1,"c.test.ts":null,"d.test.ts":2}}', [['d.test.ts', 2]]],
  ['not JSON', '{"seconds":', []],
  ['no seconds', '{"recorded":"x"}', []],
  ['null', 'null', []],
];
for (const [name, text, want] of parsed) {
  test(`parseDurations: ${name}`, () => {
    assert.equal([...parseDurations(text)], want);
  });
}

test('the committed record parses and names only test files', () => {
  const d = parseDurations(readFileSync(new URL('../durations.json', import.meta.url), 'utf8'));
  assert.ok(d.size > 100, `${d.size} files`);
  for (const f of d.keys()) assert.match(f, /^test\/.+\.test\.ts$/);
});

test.run();
