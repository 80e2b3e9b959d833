// Whether a migration runs over multifd channels on this QEMU. KubeVirt asks for 8 (src/api/migration.ts,
// parallelMigrationThreads); qvirt grants them only where the guest runs on KVM.
//
// Under TCG (emulation, a node without usable KVM), QEMU 7.2's multifd migrations corrupted the guest:
// on a loaded 2-core host the target's guest oopsed ("kernel tried to execute NX-protected page", a
// stack-protector panic, a general protection fault on a poisoned list pointer) or hung right after a
// migration QEMU had reported completed, in 4 of 18 runs (3 of 12 with TLS, 1 of 6 without), against
// 0 of 18 single-stream runs beside them (test/migration/launcher-direct-migration.test.ts, 2026-11-27).
// A migration that loses the guest is worse than a slower one, so under TCG a migration is one stream.
// One stream is not immune: one such migration (the relay, no TLS) lost its guest the same way in a CI
// run with three test files on two cores. The target's guest then looks as if it got an older copy of
// some pages (a poisoned list pointer, a smashed stack); under TCG QEMU's softmmu, not KVM's dirty log,
// tracks the guest's writes, which is where the suspicion lies — not established. No migration setting
// of QEMU 7.2 avoids it; migrating a stopped guest would (not done: the downtime becomes the whole copy).
//
// Both ends decide from their own QEMU (`query-kvm`), so they agree on the channels; a pair on different
// accelerators could not migrate anyway (the CPU state differs).
import type { QmpConnection } from '../supervise/qmp-connection.ts';

export type Accelerator = 'kvm' | 'tcg';

/** The multifd channels for `requested` (undefined or 1: one stream) on a QEMU running on `accelerator`. */
export function multifdChannels(requested: number | undefined, accelerator: Accelerator): number | undefined {
  return accelerator === 'kvm' ? requested : undefined;
}

/** The accelerator a running QEMU uses (QMP `query-kvm`: enabled is KVM, anything else TCG). */
export async function runningAccelerator(qmp: Pick<QmpConnection, 'execute'>): Promise<Accelerator> {
  const r = await qmp.execute('query-kvm') as { enabled?: unknown } | undefined;
  return r?.enabled === true ? 'kvm' : 'tcg';
}
