// The Cmd service's migration RPCs over the domain manager: SyncMigrationTarget (listen on the
// pod's migration socket), MigrateVirtualMachine (to the pod's migration socket, which the handler
// forwards to the target node), CancelVirtualMachineMigration, FinalizeVirtualMachineMigration.
// Both ends find the socket by KubeVirt's naming rule (src/api/migration.ts).
import type { Logger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { BLOCK_MIGRATION_PORT, migrationSocketPath } from '../../src/api/migration.ts';
import type { MigrationRequest, Response, VMI } from '../../src/proto/cmd.ts';
import type { DomainManager } from '../supervise/domain-manager.ts';
import { parseMigrationOptions } from './options.ts';

type WithVmi = (rpc: string, fn: (vmi: VirtualMachineInstance) => Promise<void>) => (req: { vmi: VMI | null }) => Promise<Response>;

export function migrationHandlers(deps: { manager: DomainManager; log: Logger; shareDir: string; withVmi: WithVmi }) {
  const { manager, shareDir, withVmi } = deps;
  const socketFor = (vmi: VirtualMachineInstance) => migrationSocketPath(shareDir, vmi.metadata?.uid ?? manager.vmiRef.uid);
  // Block migration (KubeVirt's port 49153 proxy): the disks' NBD stream, beside the migration
  // stream; used only when the VMI has disks to copy (migratedDisks decides).
  const blockSocketFor = (vmi: VirtualMachineInstance) => migrationSocketPath(shareDir, vmi.metadata?.uid ?? manager.vmiRef.uid, BLOCK_MIGRATION_PORT);
  return {
    SyncMigrationTarget: withVmi('SyncMigrationTarget', (vmi) => manager.syncMigrationTarget(vmi, socketFor(vmi), blockSocketFor(vmi))),
    MigrateVirtualMachine: (req: MigrationRequest) => withVmi('MigrateVirtualMachine', async (vmi) => {
      const options = parseMigrationOptions(req.options);
      await manager.migrate(vmi, socketFor(vmi), options, undefined, blockSocketFor(vmi));
    })(req),
    CancelVirtualMachineMigration: withVmi('CancelVirtualMachineMigration', () => manager.cancelMigration()),
    FinalizeVirtualMachineMigration: withVmi('FinalizeVirtualMachineMigration', () => manager.finalizeMigration()),
  };
}
