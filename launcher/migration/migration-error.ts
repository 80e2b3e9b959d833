// A live migration step that failed: its message names the command server's verb
// (MigrateVirtualMachine, SyncMigrationTarget, CancelVirtualMachineMigration) and the reason.
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

/**
 * Why QEMU failed a migration, for the migration's failure reason: QEMU's `error-desc` when it gives
 * one. QEMU 7.2 gives none where the target refused the stream over the return path ("RP: Sibling
 * indicated error 1") or closed the stream without a word (a target that failed to load it and
 * exited): then the last lines QEMU wrote to stderr since the migration began, if it wrote any
 * (`stderrSince`, its timestamps already gone: stderrReason). Pure.
 */
export function migrationFailureReason(errorDesc: string | undefined, stderrSince: string): string {
  if (errorDesc?.trim()) return errorDesc.trim();
  const lines = stderrSince.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.length > 0 ? `QEMU reported the migration failed: ${lines.slice(-3).join('; ')}` : 'QEMU reported the migration failed without a reason (the target\'s launcher log may have one)';
}
