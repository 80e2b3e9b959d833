// A live migration step that failed: its message names the command server's verb
// (MigrateVirtualMachine, SyncMigrationTarget, CancelVirtualMachineMigration) and the reason.
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}
