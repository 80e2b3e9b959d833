import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { phaseFromDomain, type VmiView, type LauncherState } from '../../handler/phase-from-domain.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { Domain } from '../../src/api/domain/domain.ts';

const dom = (status: string, reason: string, acpi = true, gracePeriodSeconds?: number): Domain => decodeDomain({
  Spec: { Features: acpi ? { ACPI: {} } : null, Metadata: { KubeVirt: { GracePeriod: gracePeriodSeconds !== undefined ? { DeletionGracePeriodSeconds: gracePeriodSeconds } : null } } },
  Status: { Status: status, Reason: reason },
});
const vmi = (phase: string, extra: Partial<VmiView> = {}): VmiView => ({ phase, ...extra });

type Row = [string, Domain | undefined, VmiView, LauncherState, string, number?];
const rows: Row[] = [
  // no domain yet
  ['scheduled, launcher initializing → keep, requeue 1s', undefined, vmi('Scheduled'), 'initializing', 'Scheduled', 1000],
  ['running, launcher gone unresponsive → Failed', undefined, vmi('Running'), 'unresponsive', 'Failed'],
  ['migration target, launcher unresponsive → WaitingForSync', undefined, vmi('Scheduled', { isMigrationTarget: true }), 'unresponsive', 'WaitingForSync'],
  ['migration target whose migration failed → keep', undefined, vmi('Running', { isMigrationTarget: true, migrationFailed: true }), 'unresponsive', 'Running'],
  ['scheduled, launcher answers, no domain yet → keep', undefined, vmi('Scheduled'), 'responsive', 'Scheduled'],
  ['pending without domain → Scheduled', undefined, vmi('Pending'), 'responsive', 'Scheduled'],
  ['final stays final', undefined, vmi('Succeeded'), 'responsive', 'Succeeded'],
  // domain stopped
  ['crashed', dom('Crashed', 'Crashed'), vmi('Running'), 'responsive', 'Failed'],
  ['guest panicked', dom('Shutoff', 'Panicked'), vmi('Running'), 'responsive', 'Failed'],
  ['destroyed with ACPI and a grace period → Failed', dom('Shutoff', 'Destroyed', true), vmi('Running', { terminationGracePeriodSeconds: 30 }), 'responsive', 'Failed'],
  ['destroyed with grace 0 → Succeeded', dom('Shutoff', 'Destroyed', true), vmi('Running', { terminationGracePeriodSeconds: 0 }), 'responsive', 'Succeeded'],
  ['destroyed, no VMI grace but domain grace + ACPI → Failed', dom('Shutoff', 'Destroyed', true, 30), vmi('Running'), 'responsive', 'Failed'],
  ['destroyed without ACPI → Succeeded', dom('Shutoff', 'Destroyed', false), vmi('Running', { terminationGracePeriodSeconds: 30 }), 'responsive', 'Succeeded'],
  ['destroyed after failed post-copy → Failed', dom('Shutoff', 'Destroyed', false), vmi('Running', { migrationFailed: true, migrationMode: 'PostCopy' }), 'responsive', 'Failed'],
  ['guest shut down → Succeeded', dom('Shutoff', 'Shutdown'), vmi('Running'), 'responsive', 'Succeeded'],
  ['saved → Succeeded', dom('Shutoff', 'Saved'), vmi('Running'), 'responsive', 'Succeeded'],
  ['migrated away → unchanged', dom('Shutoff', 'Migrated'), vmi('Running'), 'responsive', 'Running'],
  ['shutoff with unknown reason → unchanged', dom('Shutoff', 'Unknown'), vmi('Scheduled'), 'responsive', 'Scheduled'],
  // domain alive
  ['paused by user → Running', dom('Paused', 'User'), vmi('Running'), 'responsive', 'Running'],
  ['paused on IO error → Running', dom('Paused', 'IOError'), vmi('Running'), 'responsive', 'Running'],
  ['paused, post-copy failed → Failed', dom('Paused', 'PostcopyFailed'), vmi('Running'), 'responsive', 'Failed'],
  ['running', dom('Running', 'Unknown'), vmi('Scheduled'), 'responsive', 'Running'],
  ['blocked', dom('Blocked', 'Unknown'), vmi('Scheduled'), 'responsive', 'Running'],
  ['pm suspended', dom('PMSuspended', 'Unknown'), vmi('Running'), 'responsive', 'Running'],
  ['shutting down → unchanged', dom('ShuttingDown', 'Unknown'), vmi('Running'), 'responsive', 'Running'],
  ['no state → unchanged', dom('NoState', 'Unknown'), vmi('Scheduled'), 'responsive', 'Scheduled'],
];

for (const [title, d, v, l, want, requeue] of rows) {
  test(title, () => {
    const got = phaseFromDomain(d, v, l);
    assert.is(got.phase, want);
    assert.is(got.requeueAfterMs, requeue);
  });
}

test.run();
