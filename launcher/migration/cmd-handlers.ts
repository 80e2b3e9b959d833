// The Cmd service's migration RPCs over the domain's live migration (domain-migration.ts): SyncMigrationTarget (listen on the
// pod's migration socket), MigrateVirtualMachine (to the pod's migration socket, which the handler
// forwards to the target node), CancelVirtualMachineMigration, FinalizeVirtualMachineMigration.
// Both ends find the socket by KubeVirt's naming rule (src/api/migration.ts).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { BLOCK_MIGRATION_PORT, migrationSocketPath, migrationTlsDir } from '../../src/api/migration.ts';
import type { MigrationRequest, Response, VMI } from '../../src/proto/cmd.ts';
import type { DomainMigration } from './domain-migration.ts';
import { parseMigrationOptions, targetDirectMigration } from './options.ts';

type WithVmi = (rpc: string, fn: (vmi: VirtualMachineInstance) => Promise<void>) => (req: { vmi: VMI | null }) => Promise<Response>;

export function migrationHandlers(deps: { migration: DomainMigration; uid: string; shareDir: string; withVmi: WithVmi }) {
  const { migration, uid, shareDir, withVmi } = deps;
  const socketFor = (vmi: VirtualMachineInstance) => migrationSocketPath(shareDir, vmi.metadata?.uid ?? uid);
  // Block migration (KubeVirt's port 49153 proxy): the disks' NBD stream, beside the migration
  // stream; used only when the VMI has disks to copy (migratedDisks decides).
  const blockSocketFor = (vmi: VirtualMachineInstance) => migrationSocketPath(shareDir, vmi.metadata?.uid ?? uid, BLOCK_MIGRATION_PORT);
  // A direct migration's TLS credentials, written by the node agent (qvirt's options say it is one).
  const tlsDirFor = (vmi: VirtualMachineInstance) => migrationTlsDir(shareDir, vmi.metadata?.uid ?? uid);
  return {
    SyncMigrationTarget: withVmi('SyncMigrationTarget', async (vmi) => {
      const direct = targetDirectMigration(vmi);
      await migration.syncMigrationTarget(vmi, socketFor(vmi), blockSocketFor(vmi), direct ? { migration: direct, tlsDir: tlsDirFor(vmi) } : undefined);
    }),
    MigrateVirtualMachine: (req: MigrationRequest) => withVmi('MigrateVirtualMachine', async (vmi) => {
      const options = parseMigrationOptions(req.options);
      await migration.migrate(vmi, socketFor(vmi), options, undefined, blockSocketFor(vmi), tlsDirFor(vmi));
    })(req),
    CancelVirtualMachineMigration: withVmi('CancelVirtualMachineMigration', () => migration.cancelMigration()),
    FinalizeVirtualMachineMigration: withVmi('FinalizeVirtualMachineMigration', () => migration.finalizeMigration()),
  };
}
