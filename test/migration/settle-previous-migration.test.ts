// A new migration waits for QEMU to end the previous one (launcher/migration/source.ts
// settlePreviousMigration): a failed migration is reported on QEMU's `failed` event while QEMU 7.2
// may still be tearing its multifd channels down, and the next `migrate-set-capabilities` then
// failed with "There's a migration process in progress" (seen in test/faults/migration.test.ts after
// a target launcher was killed mid-migration). Against a QMP stand-in that answers query-migrate
// from a script.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MigrationError, qemuMigrationSettled, settlePreviousMigration } from '../../launcher/migration/source.ts';
import { componentLogger } from '../../src/log/logger.ts';

const log = componentLogger('launcher', { level: 'silent' });

test('which of QEMU\'s migration states let a new migration start', () => {
  for (const st of [undefined, 'none', 'completed', 'failed', 'cancelled']) assert.ok(qemuMigrationSettled(st), String(st));
  for (const st of ['setup', 'active', 'postcopy-active', 'postcopy-paused', 'pre-switchover', 'device', 'wait-unplug', 'cancelling']) assert.not.ok(qemuMigrationSettled(st), st);
});

/**
 * A QMP stand-in: query-migrate answers the statuses in turn (the last one repeats); a cancel switches to
 * `afterCancel`. A status ending in `+yank` still has QEMU's migration yank instance (query-yank lists it).
 */
function fakeQmp(statuses: (string | undefined)[], afterCancel?: (string | undefined)[]) {
  const calls: string[] = [];
  let script = statuses;
  let i = 0;
  let current: string | undefined;
  return {
    calls,
    async execute(cmd: string): Promise<unknown> {
      calls.push(cmd);
      if (cmd === 'migrate_cancel' && afterCancel) { script = afterCancel; i = 0; }
      if (cmd === 'query-yank') return current?.endsWith('+yank') ? [{ type: 'chardev', id: 'charserial0' }, { type: 'migration' }] : [{ type: 'chardev', id: 'charserial0' }];
      if (cmd !== 'query-migrate') return {};
      current = script[Math.min(i++, script.length - 1)];
      const st = current?.replace(/\+yank$/, '');
      return st === undefined ? {} : { status: st };
    },
  };
}

const Q = ['query-migrate', 'query-yank'];
const cases: [string, (string | undefined)[], (string | undefined)[] | undefined, string[] | 'throws'][] = [
  ['no migration ever: at once', [undefined], undefined, Q],
  ['the last one completed: at once', ['completed'], undefined, Q],
  ['the last one still failing in QEMU: waits until it has', ['active', 'active', 'failed'], undefined, ['query-migrate', 'query-migrate', ...Q]],
  // Seen after a target launcher SIGKILL: `migrate` failed at once with "duplicate yank instance".
  ['failed, but its channels not yet cleaned up: waits for the yank instance to go', ['failed+yank', 'failed+yank', 'failed'], undefined, [...Q, ...Q, ...Q]],
  ['stuck: cancelled and yanked, then it ends', ['active'], ['cancelling', 'cancelled'], ['query-migrate', 'query-migrate', 'migrate_cancel', 'yank', 'query-migrate', ...Q]],
  ['stuck with its channels: yanked, then they go', ['failed+yank'], ['cancelled+yank', 'cancelled'], [...Q, ...Q, 'migrate_cancel', 'yank', ...Q, ...Q]],
  ['stuck even after the yank: refused', ['active'], ['cancelling'], 'throws'],
];
for (const [name, statuses, afterCancel, want] of cases) {
  test(`settlePreviousMigration: ${name}`, async () => {
    const qmp = fakeQmp(statuses, afterCancel);
    if (want === 'throws') {
      try {
        await settlePreviousMigration(qmp, log, 30, 10);
        assert.unreachable('a migration QEMU never ends must refuse the new one');
      } catch (err) {
        assert.instance(err, MigrationError);
        assert.match((err as Error).message, /QEMU still runs a previous migration \(status cancelling\)/);
        assert.ok(qmp.calls.includes('migrate_cancel') && qmp.calls.includes('yank'), qmp.calls.join(' '));
      }
      return;
    }
    await settlePreviousMigration(qmp, log, want.includes('migrate_cancel') ? 15 : 5_000, 10);
    if (want.includes('migrate_cancel')) {
      assert.equal(qmp.calls.slice(qmp.calls.indexOf('migrate_cancel')), want.slice(want.indexOf('migrate_cancel')));
    } else {
      assert.equal(qmp.calls, want);
    }
  });
}

test.run();
