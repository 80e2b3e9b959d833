// Live migration of the launcher's domain (KubeVirt's LibvirtDomainManager MigrateVMI,
// PrepareMigrationTarget, CancelVMIMigration, FinalizeVirtualMachineMigration): the glue between
// the domain manager and the migration's two sides — a target QEMU started to receive
// (target.ts, block.ts's exports), the outgoing migration (source.ts) with its progress for the
// domain's stats. The domain manager knows this only as its LiveMigrationJob.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { DomainManager, IncomingMigration, LiveMigrationJob } from '../supervise/domain-manager.ts';
import type { PreparedLaunch } from '../supervise/prepared-launch.ts';
import type { QmpConnection } from '../supervise/qmp-connection.ts';
import { SourceMigration, MigrationError, type MigrationDomainHost } from './source.ts';
import { arrivedGuestResume, incomingArgv, listenForMigration, prepareTargetTls, watchIncomingMigration } from './target.ts';
import { migrationDataSizeGiB, type MigrationOptions } from './options.ts';
import type { DirectMigration } from '../../src/api/migration.ts';
import { domainJobInfo } from '../domain/migration-metadata.ts';
import { blockMigrationEndpoint, migratedDisks, resumeAfterBlockMigration, startBlockExports, type MigratedDisk } from './block.ts';

export class DomainMigration implements LiveMigrationJob {
  private readonly manager: DomainManager;
  private readonly log: Logger;
  private source: SourceMigration | undefined;

  constructor(manager: DomainManager, log: Logger) {
    this.manager = manager;
    this.log = log;
    manager.useMigration(this);
  }

  /** The outgoing migration, while one exists (progress for stats and tests). */
  get outgoing(): SourceMigration | undefined {
    return this.source;
  }

  get outgoingRunning(): boolean {
    return this.source?.isRunning === true;
  }

  jobInfo(): Record<string, unknown> | undefined {
    const m = this.source;
    return m?.isRunning ? domainJobInfo(m.lastInfo, m.diskProgress) : undefined;
  }

  close(): void {
    this.source?.close();
  }

  private host(): MigrationDomainHost {
    const manager = this.manager;
    return {
      log: this.log,
      runningQemu: () => manager.runningQemu(),
      applyInput: (input) => manager.applyInput(input),
      getMigration: () => manager.migrationMetadata,
      setMigration: (m) => manager.setMigrationMetadata(m),
    };
  }

  /**
   * SyncMigrationTarget: start this VMI's QEMU as a migration target listening on `socketPath`, or
   * for a direct migration on its address and port with QEMU's TLS from `direct.tlsDir`. A target
   * that is already defined and alive is left alone.
   */
  syncMigrationTarget(vmi: VirtualMachineInstance, socketPath: string, blockSocketPath?: string, direct?: { migration: DirectMigration; tlsDir: string }): Promise<void> {
    return this.manager.startMigrationTarget(vmi, this.incoming(vmi, socketPath, blockSocketPath, direct));
  }

  private incoming(vmi: VirtualMachineInstance, socketPath: string, blockSocketPath: string | undefined, direct: { migration: DirectMigration; tlsDir: string } | undefined): IncomingMigration {
    // Block migration: the source mirrors the local disks into NBD exports of this QEMU's disks.
    let blockDisks: MigratedDisk[] = [];
    return {
      argv: (plan: PreparedLaunch) => {
        blockDisks = blockSocketPath ? migratedDisks(vmi, plan.devices ?? []) : [];
        return incomingArgv(plan.argv, blockDisks.length > 0);
      },
      receive: async (qmp: QmpConnection, received: (ok: boolean) => void) => {
        const resume = arrivedGuestResume(vmi, blockDisks.length > 0);
        watchIncomingMigration(qmp, this.host(), received, resume === 'on-arrival');
        // A direct migration's TLS objects first: a direct block migration's NBD server uses them too.
        if (direct) await prepareTargetTls(qmp, direct);
        if (blockDisks.length > 0) {
          const nbd = blockMigrationEndpoint(direct?.migration, blockSocketPath!, 'server');
          if (!nbd) throw new MigrationError('SyncMigrationTarget: a direct block migration needs the NBD port (DirectMigration.BlockPort)');
          // With the disks copied the guest may run here (it waits, -S, for the exports to go).
          resumeAfterBlockMigration(qmp, blockDisks, this.log, resume === 'after-exports');
          await startBlockExports(qmp, blockDisks, nbd, this.log);
        }
        await listenForMigration(qmp, vmi, socketPath, direct);
        this.log.info(direct ? { address: direct.migration.Address, port: direct.migration.Port, tls: direct.migration.TLS } : { socket: socketPath }, 'migration target listening');
      },
    };
  }

  /**
   * MigrateVirtualMachine: start migrating to the unix socket `socketPath` (or, options.direct, to
   * the target QEMU itself with the TLS credentials in `tlsDir`); resolves once the migration runs.
   */
  migrate(vmi: VirtualMachineInstance, socketPath: string, options: MigrationOptions, sampleMs?: number, blockSocketPath?: string, tlsDir?: string): Promise<void> {
    return this.manager.exclusive('MigrateVirtualMachine', async () => {
      if (this.source?.isRunning) {
        this.log.info('MigrateVirtualMachine: the migration is already running');
        return;
      }
      const disks = blockSocketPath ? migratedDisks(vmi, this.manager.planDevices()) : [];
      const nbd = disks.length > 0 ? blockMigrationEndpoint(options.direct, blockSocketPath!, 'client') : undefined;
      if (disks.length > 0 && !nbd) throw new MigrationError('MigrateVirtualMachine: a direct block migration needs the target\'s NBD port (MigrationOptions.DirectMigration.BlockPort)');
      this.source = await SourceMigration.start(this.host(), {
        migrationUid: vmi.status?.migrationState?.migrationUid ?? '',
        socketPath,
        options,
        dataSizeGiB: migrationDataSizeGiB(vmi),
        block: nbd ? { disks, endpoint: nbd, dataSizeGiB: (diskBytes) => migrationDataSizeGiB(vmi, diskBytes) } : undefined,
        tlsDir,
        ...(sampleMs !== undefined ? { sampleMs } : {}),
      });
    });
  }

  /** CancelVirtualMachineMigration: abort the running outgoing migration. */
  async cancelMigration(): Promise<void> {
    const m = this.source;
    if (!m || !m.isRunning) throw new MigrationError('CancelVirtualMachineMigration: no migration of this domain is running');
    await m.cancel();
  }

  /** FinalizeVirtualMachineMigration (target): the guest agent sets the guest's clock. */
  finalizeMigration(): Promise<void> {
    return this.manager.guestAgent.setTimeAfterMigration();
  }
}
