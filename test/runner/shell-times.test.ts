// test/lib/shell-times.ts: the children's CPU from a shell's `times`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { childrenCpuMs, machineBusy, parseProcStat } from '../lib/shell-times.ts';

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

const stat = (user: number, idle: number) => `cpu  ${user} 0 0 ${idle} 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\nintr 5\n`;
test('parseProcStat: busy is all but idle and iowait; cores from the cpuN lines', () => {
  assert.equal(parseProcStat('cpu  100 5 20 300 10 1 2 3 7 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0\n'), { busy: 131, total: 441, cores: 3 });
  assert.is(parseProcStat('intr 1 2 3\n'), undefined);
  assert.is(parseProcStat('cpu  a b c d\n'), undefined);
  assert.is(parseProcStat(''), undefined);
});

test('machineBusy: the fraction of all cores and the CPU-seconds between two readings', () => {
  assert.equal(machineBusy(parseProcStat(stat(100, 100)), parseProcStat(stat(250, 150))), { fraction: 0.75, busySeconds: 1.5, cores: 2 });
  assert.is(machineBusy(undefined, parseProcStat(stat(1, 1))), undefined);
  assert.is(machineBusy(parseProcStat(stat(5, 5)), parseProcStat(stat(5, 5))), undefined, 'no time passed');
});

test('parseProcStat reads this machine\'s /proc/stat', () => {
  const m = parseProcStat(readFileSync('/proc/stat', 'utf8'));
  assert.ok(m && m.cores >= 1 && m.total > m.busy && m.busy > 0, JSON.stringify(m));
});

test.run();
