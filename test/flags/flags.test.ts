import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseFlags, parseDuration, usage, UsageError } from '../../src/flags/flags.ts';

const specs = {
  name: { type: 'string', help: 'the name' },
  uid: { type: 'string', help: 'the uid', default: 'none' },
  'grace-period-seconds': { type: 'number', help: 'grace', default: 30 },
  'allow-emulation': { type: 'boolean', help: 'tcg' },
  'qemu-timeout': { type: 'duration', help: 'timeout', default: '3m' },
  volume: { type: 'strings', help: 'volumes', short: 'v' },
} as const;

const cases: Array<[string, string[], Record<string, unknown>, string[]]> = [
  ['defaults', [], { name: undefined, uid: 'none', 'grace-period-seconds': 30, 'allow-emulation': false, 'qemu-timeout': 180, volume: [] }, []],
  ['space separated', ['--name', 'vm1', '--grace-period-seconds', '45'], { name: 'vm1', 'grace-period-seconds': 45 }, []],
  ['equals form', ['--name=vm1', '--allow-emulation=true'], { name: 'vm1', 'allow-emulation': true }, []],
  ['boolean bare', ['--allow-emulation'], { 'allow-emulation': true }, []],
  ['boolean false', ['--allow-emulation=false'], { 'allow-emulation': false }, []],
  ['duration go style', ['--qemu-timeout', '245s'], { 'qemu-timeout': 245 }, []],
  ['duration compound', ['--qemu-timeout=1h30m'], { 'qemu-timeout': 5400 }, []],
  ['repeated strings + short', ['-v', 'a', '--volume', 'b'], { volume: ['a', 'b'] }, []],
  ['positional args kept in order', ['run', '--name', 'x', 'file.yaml'], { name: 'x' }, ['run', 'file.yaml']],
  ['double dash ends flags', ['--name', 'x', '--', '--not-a-flag'], { name: 'x' }, ['--not-a-flag']],
];

for (const [title, argv, want, args] of cases) {
  test(`parseFlags: ${title}`, () => {
    const r = parseFlags(specs, argv);
    for (const [k, v] of Object.entries(want)) assert.equal((r.flags as Record<string, unknown>)[k], v, k);
    assert.equal(r.args, args);
  });
}

const bad: Array<[string, string[], RegExp]> = [
  ['unknown flag', ['--nope'], /unknown flag --nope/],
  ['unknown short', ['-x'], /unknown flag -x/],
  ['missing value', ['--name'], /--name needs a value/],
  ['not a number', ['--grace-period-seconds', 'soon'], /--grace-period-seconds: "soon" is not a number/],
  ['bad boolean', ['--allow-emulation=yes'], /expected true or false/],
  ['bad duration', ['--qemu-timeout', '5 minutes'], /--qemu-timeout: "5 minutes" is not a duration/],
];
for (const [title, argv, re] of bad) {
  test(`parseFlags rejects: ${title}`, () => {
    try {
      parseFlags(specs, argv);
      assert.unreachable('should have thrown');
    } catch (err) {
      assert.instance(err, UsageError);
      assert.match((err as Error).message, re);
    }
  });
}

test('parseDuration units', () => {
  assert.is(parseDuration('500ms', 'x'), 0.5);
  assert.is(parseDuration('2m', 'x'), 120);
  assert.is(parseDuration('10', 'x'), 10);
});

test('help flag is reported, usage lists every flag with its default', () => {
  assert.is(parseFlags(specs, ['--help']).help, true);
  const text = usage('qvirt x', 'summary', specs);
  for (const name of Object.keys(specs)) assert.ok(text.includes(`--${name}`), name);
  assert.ok(text.includes('(default 30)'));
  assert.ok(text.includes('(default 3m)'));
});

test.run();
