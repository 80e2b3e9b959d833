// The incoming side of a live migration (KubeVirt's live-migration-target with QMP): the target
// QEMU gets the identical device argv plus `-incoming defer`, the capabilities that must match the
// source (postcopy-ram, multifd, from the VMI's migration configuration), and `migrate-incoming`
// on the pod's migration socket, where the handler's proxy delivers the source's stream (or, for a
// direct migration, on the pod's address with QEMU's TLS: the source QEMU connects itself). When
// QEMU reports the incoming migration completed, the domain's migration metadata gets its end
// timestamp (the handler's cue that the guest runs here). A target QEMU that exits while still
// waiting (rc 1: the source cancelled or died) is a failed migration, not a crash.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { isVmiPaused } from '../../src/api/vmi-conditions.ts';
import { errorMessage, onQmpEvents, type QmpConnection, type QmpEventStream } from '../supervise/qmp-connection.ts';
import { directMigrationUri, incomingMigrationSetup, incomingSettings, migrationTlsSetup, MIGRATION_TLS_AUTHZ_ID, MIGRATION_TLS_CREDS_ID } from './options.ts';
import type { DirectMigration } from '../../src/api/migration.ts';
import { incomingCompleted, nowTimestamp } from '../domain/migration-metadata.ts';
import type { MigrationDomainHost } from './source.ts';
import { MigrationError } from './migration-error.ts';
import { shortUnixPath } from '../../src/proto/unix-path.ts';
import { migrationAccelerator, multifdChannels } from './accelerator.ts';

/**
 * The argv of a migration target: the source's argv plus `-incoming defer`, without `-S` so the
 * guest runs the moment the incoming migration completes (libvirt would `cont` it instead). Pure.
 * `paused` keeps `-S` (a block migration: the NBD exports must go before the guest runs, or the
 * disk device cannot take back its exclusive write permission).
 */
export function incomingArgv(argv: readonly string[], paused = false): string[] {
  const out = paused ? [...argv] : argv.filter((a) => a !== '-S');
  if (paused && !out.includes('-S')) out.push('-S');
  return out.includes('-incoming') ? out : [...out, '-incoming', 'defer'];
}

/**
 * A direct migration's target: QEMU's TLS from `tlsDir` (the server's credentials the node agent
 * wrote, the authz of the one source it accepts) and the migration parameters naming them; a
 * previous migration's objects go first. Before listenForMigration and a block migration's NBD server.
 */
export async function prepareTargetTls(qmp: QmpConnection, direct: { readonly migration: DirectMigration; readonly tlsDir: string }): Promise<void> {
  for (const id of [MIGRATION_TLS_CREDS_ID, MIGRATION_TLS_AUTHZ_ID]) await qmp.execute('object-del', { id }).catch(() => undefined);
  for (const step of migrationTlsSetup('server', direct.migration, direct.tlsDir)) {
    try {
      await qmp.execute(step.execute, step.arguments);
    } catch (err) {
      throw new MigrationError(`SyncMigrationTarget: ${step.execute} failed: ${errorMessage(err)}`, { cause: err });
    }
  }
}

/**
 * Prepares the paused target QEMU: capabilities, then `migrate-incoming unix:<socketPath>` — or, for
 * a direct migration (its TLS prepared by prepareTargetTls), `migrate-incoming tcp:<pod address>:<port>`.
 * Afterwards the source can connect.
 */
export async function listenForMigration(qmp: QmpConnection, vmi: VirtualMachineInstance, socketPath: string, direct?: { readonly migration: DirectMigration; readonly tlsDir: string }): Promise<void> {
  // Multifd only on KVM (accelerator.ts): the source decides the same from its own QEMU.
  const settings = incomingSettings(vmi);
  const accelerator = await migrationAccelerator(qmp, 'SyncMigrationTarget');
  for (const step of incomingMigrationSetup({ ...settings, parallelMigrationThreads: multifdChannels(settings.parallelMigrationThreads, accelerator) })) {
    try {
      await qmp.execute(step.execute, step.arguments);
    } catch (err) {
      throw new MigrationError(`SyncMigrationTarget: ${step.execute} failed: ${errorMessage(err)}`, { cause: err });
    }
  }
  if (direct) {
    const uri = directMigrationUri(direct.migration);
    try {
      await qmp.execute('migrate-incoming', { uri });
    } catch (err) {
      throw new MigrationError(`SyncMigrationTarget: migrate-incoming on ${uri} failed: ${errorMessage(err)}`, { cause: err });
    }
    return;
  }
  mkdirSync(dirname(socketPath), { recursive: true });
  rmSync(socketPath, { force: true });
  // QEMU has bound the socket once migrate-incoming returns: a short link is needed only until then.
  const short = shortUnixPath(socketPath);
  try {
    await qmp.execute('migrate-incoming', { uri: `unix:${short.path}` });
  } catch (err) {
    throw new MigrationError(`SyncMigrationTarget: migrate-incoming on ${socketPath} failed: ${errorMessage(err)}`, { cause: err });
  } finally {
    short.release();
  }
}

/**
 * How the target lets the migrated guest run: `on-arrival`, a guest that arrived stopped is continued
 * as the migration completes (resumeMigratedGuest); `after-exports`, a block migration's target (started
 * with -S) continues once its NBD exports went (block.ts resumeAfterBlockMigration); `none`, its user
 * paused the VMI (its Paused condition), and it stays paused on the target as it was on the source.
 */
export type ArrivedGuestResume = 'on-arrival' | 'after-exports' | 'none';

export function arrivedGuestResume(vmi: VirtualMachineInstance, blockMigration: boolean): ArrivedGuestResume {
  if (isVmiPaused(vmi)) return 'none';
  return blockMigration ? 'after-exports' : 'on-arrival';
}

/**
 * The incoming migration completed with the guest stopped (QEMU keeps the source's run state: a guest
 * stopped for the copy under TCG, accelerator.ts, or by a migration's Paused mode): `cont`, as libvirt's
 * Finish step resumes a migrated domain.
 */
export async function resumeMigratedGuest(qmp: Pick<QmpConnection, 'execute'>, log: MigrationDomainHost['log']): Promise<void> {
  const st = await qmp.execute('query-status') as { status?: string } | undefined;
  if (st?.status !== 'paused') return;
  await qmp.execute('cont');
  log.info('the guest arrived stopped: it runs again here');
}

/**
 * Records the incoming migration's completion in the metadata, from a MIGRATION subscription of its
 * own; with `resume` a guest that arrived stopped runs first (resumeMigratedGuest).
 */
export function watchIncomingMigration(qmp: QmpConnection, host: MigrationDomainHost, onDone: (ok: boolean) => void, resume = false): QmpEventStream {
  const sub: QmpEventStream = onQmpEvents(qmp, ['MIGRATION'], (ev) => {
    const status = ev.data?.status;
    if (status === 'completed') {
      sub.close();
      void (async () => {
        // Before the metadata says so: whoever reads it finds the guest running here.
        if (resume) await resumeMigratedGuest(qmp, host.log).catch((err: unknown) => host.log.error({ err: errorMessage(err) }, 'resuming the migrated guest failed'));
        host.log.info('incoming migration completed: the guest runs here');
        host.setMigration(incomingCompleted(host.getMigration(), nowTimestamp()));
        onDone(true);
      })();
    } else if (status === 'failed') {
      sub.close();
      host.log.warn('incoming migration failed');
      onDone(false);
    }
  }, host.log);
  return sub;
}
