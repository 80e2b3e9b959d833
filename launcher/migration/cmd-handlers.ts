// The Cmd service's migration RPCs over the domain's live migration (domain-migration.ts): SyncMigrationTarget (listen on the
// pod's migration socket), MigrateVirtualMachine (to the pod's migration socket, which the handler
// forwards to the target node), CancelVirtualMachineMigration, FinalizeVirtualMachineMigration.
// Both ends find the socket by KubeVirt's naming rule (src/api/migration.ts).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { BLOCK_MIGRATION_PORT, migrationSocketPath } from '../../src/api/migration.ts';
import type { MigrationRequest, Response, VMI } from '../../src/proto/cmd.ts';
import type { DomainMigration } from './domain-migration.ts';
import { parseMigrationOptions } from './options.ts';

type WithVmi = (rpc: string, fn: (vmi: VirtualMachineInstance) => Promise<void>) => (req: { vmi: VMI | null }) => Promise<Response>;

export function migrationHandlers(deps: { migration: DomainMigration; uid: string; shareDir: string; withVmi: WithVmi }) {
  const { migration, uid, shareDir, withVmi } = deps;
  const socketFor = (vmi: VirtualMachineInstance) => migrationSocketPath(shareDir, vmi.metadata?.uid ?? uid);
  // Block migration (KubeVirt's port 49153 proxy): the disks' NBD stream, beside the migration
  // stream; used only when the VMI has disks to copy (migratedDisks decides).
  const blockSocketFor = (vmi: VirtualMachineInstance) => migrationSocketPath(shareDir, vmi.metadata?.uid ?? uid, BLOCK_MIGRATION_PORT);
  return {
    SyncMigrationTarget: withVmi('SyncMigrationTarget', (vmi) => migration.syncMigrationTarget(vmi, socketFor(vmi), blockSocketFor(vmi))),
    MigrateVirtualMachine: (req: MigrationRequest) => withVmi('MigrateVirtualMachine', async (vmi) => {
      const options = parseMigrationOptions(req.options);
      await migration.migrate(vmi, socketFor(vmi), options, undefined, blockSocketFor(vmi));
    })(req),
    CancelVirtualMachineMigration: withVmi('CancelVirtualMachineMigration', () => migration.cancelMigration()),
    FinalizeVirtualMachineMigration: withVmi('FinalizeVirtualMachineMigration', () => migration.finalizeMigration()),
  };
}
