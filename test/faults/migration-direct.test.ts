// The migration fault suite (migration.test.ts) with the guest migrated QEMU → QEMU over QEMU's own TLS
// (qvirt.io/migration-transport: direct) instead of the node agents' relay: the same five faults, the same
// guarantees — the migration final, one QEMU, the claim's data, nothing left behind. A SIGKILL of the whole
// local mode does not stop a direct migration (no node agent is in its data path): it completes, and the
// restarted node agents take the guest over on the target.
process.env['QVIRT_FAULT_MIGRATION_TRANSPORT'] = 'direct';
await import('./migration.test.ts');
