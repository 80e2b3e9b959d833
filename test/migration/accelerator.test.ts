// launcher/migration/accelerator.ts: multifd channels only where the guest runs on KVM.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copiesStoppedGuest, migrationAccelerator, multifdChannels, runningAccelerator, type Accelerator } from '../../launcher/migration/accelerator.ts';
import { MigrationError } from '../../launcher/migration/migration-error.ts';
import { arrivedGuestResume, resumeMigratedGuest, type ArrivedGuestResume } from '../../launcher/migration/target.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { componentLogger } from '../../src/log/logger.ts';

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


for (const [accel, want] of [['kvm', false], ['tcg', true]] as const) {
  test(`copiesStoppedGuest(${accel}) = ${want}`, () => {
    assert.is(copiesStoppedGuest(accel), want);
  });
}

test('migrationAccelerator: a QMP failure is a MigrationError naming the verb', async () => {
  let err: unknown;
  try { await migrationAccelerator({ execute: async () => { throw new Error('QEMU closed the connection'); } }, 'SyncMigrationTarget'); } catch (e) { err = e; }
  assert.instance(err, MigrationError);
  assert.is((err as Error).message, 'SyncMigrationTarget: query-kvm failed: QEMU closed the connection');
  assert.is(await migrationAccelerator({ execute: async () => ({ enabled: true }) }, 'MigrateVirtualMachine'), 'kvm');
});

const pausedCond = (status: string) => ({ type: 'Paused', status, reason: 'PausedByUser' });
const vmiWith = (conditions: object[]) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v' }, spec: { domain: { devices: {} } }, status: { conditions } }) as unknown as VirtualMachineInstance;
const resumeCases: Array<[string, VirtualMachineInstance, boolean, ArrivedGuestResume]> = [
  ['a running VMI', vmiWith([{ type: 'Ready', status: 'True' }]), false, 'on-arrival'],
  ['no status at all', { ...vmiWith([]), status: undefined } as unknown as VirtualMachineInstance, false, 'on-arrival'],
  ['paused by its user', vmiWith([pausedCond('True')]), false, 'none'],
  ['a Paused condition that is False', vmiWith([pausedCond('False')]), false, 'on-arrival'],
  ['a block migration: once its exports went', vmiWith([]), true, 'after-exports'],
  ['a block migration of a VMI its user paused: it stays paused', vmiWith([pausedCond('True')]), true, 'none'],
];
for (const [name, vmi, block, want] of resumeCases) {
  test(`arrivedGuestResume: ${name} → ${want}`, () => {
    assert.is(arrivedGuestResume(vmi, block), want);
  });
}

for (const [status, conts] of [['paused', true], ['running', false], ['inmigrate', false]] as const) {
  test(`resumeMigratedGuest: a guest that arrived ${status} ${conts ? 'is continued' : 'is left alone'}`, async () => {
    const asked: string[] = [];
    const qmp = { execute: async (cmd: string) => { asked.push(cmd); return cmd === 'query-status' ? { status, running: status === 'running' } : {}; } };
    await resumeMigratedGuest(qmp, componentLogger('test', { level: 'silent' }));
    assert.equal(asked, conts ? ['query-status', 'cont'] : ['query-status']);
  });
}

test.run();
