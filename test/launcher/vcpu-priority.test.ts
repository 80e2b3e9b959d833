// The vCPU threads' nice value beside the launcher's, and the thread ids read from query-cpus-fast.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { vcpuNice, vcpuThreadIds, VCPU_NICE_OFFSET } from '../../launcher/supervise/vcpu-priority.ts';

test('vcpuNice: the launcher\'s nice + the offset, capped at 19, never above the launcher', () => {
  const cases: Array<[launcher: number, offset: number, want: number]> = [
    [0, VCPU_NICE_OFFSET, 5],
    [10, 5, 15], // a 100m launcher pod of the local pod runner (cpu-weight.ts)
    [16, 5, 19],
    [19, 5, 19],
    [-5, 5, 0], // a launcher above normal priority keeps its vCPUs at or below it
    [3, 0, 3],
  ];
  for (const [launcher, offset, want] of cases) assert.is(vcpuNice(launcher, offset), want, `launcher ${launcher} offset ${offset}`);
});

test('vcpuThreadIds: thread-id of each vCPU; anything else ignored', () => {
  assert.equal(vcpuThreadIds([{ 'cpu-index': 0, 'thread-id': 4321, target: 'x86_64' }, { 'cpu-index': 1, 'thread-id': 4322 }]), [4321, 4322]);
  assert.equal(vcpuThreadIds([{ 'cpu-index': 0 }, { 'thread-id': 'x' }, { 'thread-id': -1 }, { 'thread-id': 1.5 }, null, 7]), []);
  assert.equal(vcpuThreadIds(undefined), []);
  assert.equal(vcpuThreadIds({ 'thread-id': 1 }), []);
});

test.run();
