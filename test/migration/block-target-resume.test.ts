// A block migration's target once the disks are in (launcher/migration/block.ts
// resumeAfterBlockMigration): on MIGRATION completed (or post-copy active) the NBD exports go, then
// `cont` — unless its user paused the VMI, when the exports go and the guest stays paused. Against a
// fake QMP connection that records the commands it is sent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resumeAfterBlockMigration, targetExportTeardown, type MigratedDisk } from '../../launcher/migration/block.ts';
import type { QmpConnection, QmpEventMessage, QmpEventStream } from '../../launcher/supervise/qmp-connection.ts';
import { componentLogger } from '../../src/log/logger.ts';

const log = componentLogger('test', { level: 'silent' });
const DISK: MigratedDisk = { name: 'rootdisk', node: 'libvirt-1-format' };

/** A QMP connection whose event streams yield `events`, and which records every command. */
function fakeQmp(events: QmpEventMessage[]): { qmp: QmpConnection; sent: string[] } {
  const sent: string[] = [];
  const qmp = {
    execute: async (cmd: string) => { sent.push(cmd); return {}; },
    subscribe: (): QmpEventStream => {
      let closed = false;
      return {
        close: () => { closed = true; },
        async *[Symbol.asyncIterator]() { for (const ev of events) { if (closed) return; yield ev; } },
      };
    },
    close: () => undefined,
  } as unknown as QmpConnection;
  return { qmp, sent };
}

const migration = (status: string): QmpEventMessage => ({ event: 'MIGRATION', data: { status }, timestamp: { seconds: 0, microseconds: 0 } }) as QmpEventMessage;
const settle = () => new Promise((r) => setTimeout(r, 20));
const teardown = targetExportTeardown([DISK]).map((s) => s.execute);

const cases: Array<[string, string[], boolean, string[]]> = [
  ['completed: the exports go, then cont', ['setup', 'active', 'completed'], true, [...teardown, 'cont']],
  ['post-copy active: the same, once', ['active', 'postcopy-active', 'completed'], true, [...teardown, 'cont']],
  ['completed, the VMI paused by its user: the exports go, no cont', ['active', 'completed'], false, teardown],
  ['failed: nothing (the source continues its guest)', ['active', 'failed'], true, []],
];
for (const [name, statuses, resume, want] of cases) {
  test(name, async () => {
    const { qmp, sent } = fakeQmp(statuses.map(migration));
    resumeAfterBlockMigration(qmp, [DISK], log, resume);
    await settle();
    assert.equal(sent, want);
  });
}

test.run();
