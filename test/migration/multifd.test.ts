// launcher/migration/multifd.ts: multifd channels only where the guest runs on KVM.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { multifdChannels, runningAccelerator, type Accelerator } from '../../launcher/migration/multifd.ts';

const cases: Array<[number | undefined, Accelerator, number | undefined]> = [
  [8, 'kvm', 8],
  [8, 'tcg', undefined],
  [undefined, 'kvm', undefined],
  [undefined, 'tcg', undefined],
  [1, 'kvm', 1],
  [1, 'tcg', undefined],
];
for (const [requested, accel, want] of cases) {
  test(`multifdChannels(${requested}, ${accel}) = ${want}`, () => {
    assert.is(multifdChannels(requested, accel), want);
  });
}

const answers: Array<[string, unknown, Accelerator]> = [
  ['KVM enabled', { enabled: true, present: true }, 'kvm'],
  ['KVM present, not enabled (TCG)', { enabled: false, present: true }, 'tcg'],
  ['no KVM', { enabled: false, present: false }, 'tcg'],
  ['an odd answer counts as TCG', { enabled: 'yes' }, 'tcg'],
  ['no answer counts as TCG', undefined, 'tcg'],
];
for (const [name, answer, want] of answers) {
  test(`runningAccelerator: ${name}`, async () => {
    const asked: string[] = [];
    const got = await runningAccelerator({ execute: async (cmd: string) => { asked.push(cmd); return answer; } });
    assert.is(got, want);
    assert.equal(asked, ['query-kvm']);
  });
}

test('runningAccelerator: a QMP failure is the caller\'s to report', async () => {
  let err: unknown;
  try { await runningAccelerator({ execute: async () => { throw new Error('QEMU closed the connection'); } }); } catch (e) { err = e; }
  assert.match(String(err), /QEMU closed the connection/);
});

test.run();
