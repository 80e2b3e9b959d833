import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decide, type DecideVmi } from '../../handler/decide.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { Domain } from '../../src/api/domain/domain.ts';

const NOW = 1_000_000_000;
const vmi = (phase: string, o: Partial<DecideVmi> = {}): DecideVmi => ({ phase, deleting: false, ...o });
const dom = (status: string, reason = 'Unknown', o: { markedForGracefulShutdown?: boolean } = {}): Domain =>
  decodeDomain({ Spec: { Metadata: { KubeVirt: { GracePeriod: { DeletionGracePeriodSeconds: 30, MarkedForGracefulShutdown: o.markedForGracefulShutdown ?? false } } } }, Status: { Status: status, Reason: reason } });

const rows: Array<[string, DecideVmi | undefined, Domain | undefined, string | undefined, string]> = [
  ['launcher unreachable: nothing', vmi('Running'), dom('Unknown'), 'Running', 'none'],
  ['scheduled, no domain: sync', vmi('Scheduled'), undefined, 'Scheduled', 'update'],
  ['running domain running: sync', vmi('Running'), dom('Running', 'Unknown'), 'Running', 'update'],
  ['scheduled, domain running: phase differs, status only', vmi('Scheduled'), dom('Running'), 'Running', 'none'],
  ['paused domain: still running', vmi('Running'), dom('Paused', 'User'), 'Running', 'update'],
  ['VMI gone, domain alive: shutdown', undefined, dom('Running'), undefined, 'shutdown'],
  ['VMI gone, domain shut off: delete', undefined, dom('Shutoff', 'Shutdown'), undefined, 'delete'],
  ['VMI gone, no domain: delete (cleanup)', undefined, undefined, undefined, 'delete'],
  ['VMI deleting, alive: shutdown', vmi('Running', { deleting: true }), dom('Running'), 'Running', 'shutdown'],
  ['VMI deleting, stopped: delete', vmi('Running', { deleting: true }), dom('Shutoff', 'Shutdown'), 'Succeeded', 'delete'],
  ['graceful mark on running VMI: shutdown', vmi('Running'), dom('Running', 'Unknown', { markedForGracefulShutdown: true }), 'Running', 'shutdown'],
  ['graceful mark, VMI not Running: update', vmi('Scheduled'), dom('Running', 'Unknown', { markedForGracefulShutdown: true }), 'Scheduled', 'update'],
  ['final VMI, domain alive: delete', vmi('Failed'), dom('Running'), 'Running', 'delete'],
  ['final VMI, no domain: delete', vmi('Succeeded'), undefined, 'Succeeded', 'delete'],
  ['domain shut off under a running VMI: delete', vmi('Running'), dom('Shutoff', 'Shutdown'), 'Succeeded', 'delete'],
  ['domain crashed under a running VMI: delete', vmi('Running'), dom('Crashed', 'Crashed'), 'Failed', 'delete'],
  ['postcopy failed: force shutdown', vmi('Running'), dom('Paused', 'PostcopyFailed'), 'Failed', 'forceShutdown'],
  ['shutdown wins over force', undefined, dom('Paused', 'PostcopyFailed'), undefined, 'shutdown'],
];

for (const [name, v, d, p, want] of rows) {
  test(name, () => { assert.is(decide(v, d, p, NOW).action, want); });
}

test('Shutoff without a reason just after scheduling: requeue 5 s, not delete', () => {
  const r = decide(vmi('Scheduled', { scheduledAtMs: NOW - 10_000 }), dom('Shutoff', ''), 'Scheduled', NOW);
  assert.equal(r, { action: 'requeue', afterMs: 5000 });
  const r2 = decide(vmi('Scheduled', { scheduledAtMs: NOW - 10_000 }), dom('Shutoff', 'Unknown'), 'Scheduled', NOW);
  assert.equal(r2, { action: 'requeue', afterMs: 5000 });
});

test('Shutoff without a reason 5 min after scheduling: delete', () => {
  assert.is(decide(vmi('Scheduled', { scheduledAtMs: NOW - 300_000 }), dom('Shutoff', ''), 'Scheduled', NOW).action, 'delete');
});

test('Shutoff with a reason while scheduled: delete', () => {
  assert.is(decide(vmi('Scheduled', { scheduledAtMs: NOW - 1000 }), dom('Shutoff', 'Destroyed'), 'Succeeded', NOW).action, 'delete');
});

test.run();
