// test/lib/shell-times.ts: the children's CPU from a shell's `times`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { childrenCpuMs } from '../lib/shell-times.ts';

const cases: Array<[string, string, number | undefined]> = [
  ['dash', '0m0.004000s 0m0.000000s\n1m2.500000s 0m3.250000s\n', 65_750],
  ['bash', '0m0.004s 0m0.001s\n0m1.250s 0m0.750s\n', 2000],
  ['nothing reaped', '0m0.000000s 0m0.000000s\n0m0.000000s 0m0.000000s\n', 0],
  ['empty (the shell was killed)', '', undefined],
  ['one line only', '0m0.004s 0m0.001s\n', undefined],
  ['garbage', 'a b\nc d\n', undefined],
  ['three fields', '0m0s 0m0s\n0m1s 0m1s 0m1s\n', undefined],
];
for (const [name, text, want] of cases) {
  test(`childrenCpuMs: ${name} → ${want}`, () => {
    assert.is(childrenCpuMs(text), want);
  });
}

test('childrenCpuMs reads this machine\'s /bin/sh: a child that spins ~300 ms of CPU', () => {
  // Spins until it has used 300 ms of CPU (not wall time: a loaded machine preempts it).
  const out = execFileSync('/bin/sh', ['-c', `"$0" -e 'while (process.cpuUsage().user < 300000);'; times`, process.execPath], { encoding: 'utf8' });
  const ms = childrenCpuMs(out);
  assert.ok(ms !== undefined && ms >= 300 && ms < 5000, `children CPU ${ms} ms from ${JSON.stringify(out)}`);
});

test.run();
