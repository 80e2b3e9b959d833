// The bare QEMU → QEMU baselines of bench/migration.bench.ts and bench/block-migration.bench.ts: the
// two waits both drive by hand, as the launcher's source and target do them.
import { onQmpEvents, type QmpConnection } from '../launcher/supervise/qmp-connection.ts';
import { resumeMigratedGuest } from '../launcher/migration/target.ts';
import type { MigrationDomainHost } from '../launcher/migration/source.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What `query-migrate` says of a completed migration. */
export interface CompletedMigration { readonly status?: string; readonly 'total-time'?: number; readonly downtime?: number }

/**
 * Subscribes at once (before `migrate`) to the target's MIGRATION events; the promise settles when the
 * incoming migration completed, and then, when the guest arrived stopped, after the launcher's resume
 * (resumeMigratedGuest). Subscribe before the source starts: the event may come before a late subscriber.
 */
export function targetCompleted(qmp: QmpConnection, log: MigrationDomainHost['log'], resume: boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    const sub = onQmpEvents(qmp, ['MIGRATION'], (ev) => {
      if (ev.data?.status !== 'completed') return;
      sub.close();
      resolve(resume ? resumeMigratedGuest(qmp, log) : undefined);
    }, log);
  });
}

/** Polls the source's `query-migrate` every 20 ms until it completed (with its total time); throws on failed/cancelled. */
export async function sourceCompleted(qmp: Pick<QmpConnection, 'execute'>, what: string): Promise<CompletedMigration> {
  for (;;) {
    const info = await qmp.execute('query-migrate') as CompletedMigration;
    if (info.status === 'completed' && (info['total-time'] ?? 0) > 0) return info;
    if (info.status === 'failed' || info.status === 'cancelled') throw new Error(`${what} migration ${info.status}`);
    await sleep(20);
  }
}
