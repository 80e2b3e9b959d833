// What the guest's accelerator changes about a live migration. On KVM a migration is KubeVirt's: the
// guest runs while its RAM is copied, over the multifd channels KubeVirt asks for (8, src/api/migration.ts
// parallelMigrationThreads). Under TCG (emulation, a node without usable KVM) it is one stream, and
// the guest is stopped for the copy.
//
// Why: under TCG, QEMU 7.2's live migrations handed over corrupted guests. On a loaded 2-core host the
// target's guest oopsed ("kernel tried to execute NX-protected page", a stack-protector panic, a general
// protection fault on a poisoned list pointer) or hung right after a migration QEMU had reported
// completed: with multifd in 4 of 18 runs (test/migration/launcher-direct-migration.test.ts, 2026-11-27),
// with one stream in 0 of 22 runs of ours but in one of each of four CI runs (relay, direct and block
// migrations). The target's guest looks as if it got an older copy of some pages. Under TCG the guest's
// writes are tracked by QEMU's softmmu, not by KVM's dirty log: a migration bitmap sync clears the dirty
// bits and then re-arms the vCPUs' TLB entries (tlb_reset_dirty, "a cross vCPU call") while the vCPU
// runs on; a store that passed its TLB check before the re-arm lands unrecorded after its page was
// sent. Preemption on a loaded host widens that window. No migration setting of QEMU 7.2 avoids it.
// A stopped guest writes nothing while its RAM is copied, so the one pass QEMU makes is exact: the
// source `stop`s the guest before `migrate` (the migration's mode is Paused, KubeVirt's name for a
// migration that paused its guest), `cont`s it again if the migration fails or is cancelled, and the
// target `cont`s it once the migration has completed (resumeMigratedGuest). The guest's downtime is the
// whole copy: for the small guests of an emulated node, a second or so.
//
// Both ends decide from their own QEMU (`query-kvm`), so they agree; a pair on different accelerators
// could not migrate anyway (the CPU state differs).
import { errorMessage, type QmpConnection } from '../supervise/qmp-connection.ts';
import { MigrationError } from './migration-error.ts';

export type Accelerator = 'kvm' | 'tcg';

/** The multifd channels for `requested` (undefined or 1: one stream) on a QEMU running on `accelerator`. */
export function multifdChannels(requested: number | undefined, accelerator: Accelerator): number | undefined {
  return accelerator === 'kvm' ? requested : undefined;
}

/** Whether the guest is stopped while its RAM is copied (under TCG: see above). */
export function copiesStoppedGuest(accelerator: Accelerator): boolean {
  return accelerator !== 'kvm';
}

/** The accelerator a running QEMU uses (QMP `query-kvm`: enabled is KVM, anything else TCG). */
export async function runningAccelerator(qmp: Pick<QmpConnection, 'execute'>): Promise<Accelerator> {
  const r = await qmp.execute('query-kvm') as { enabled?: unknown } | undefined;
  return r?.enabled === true ? 'kvm' : 'tcg';
}

/** runningAccelerator for a migration step: a failure is a MigrationError naming `verb`. */
export async function migrationAccelerator(qmp: Pick<QmpConnection, 'execute'>, verb: string): Promise<Accelerator> {
  try {
    return await runningAccelerator(qmp);
  } catch (err) {
    throw new MigrationError(`${verb}: query-kvm failed: ${errorMessage(err)}`, { cause: err });
  }
}
