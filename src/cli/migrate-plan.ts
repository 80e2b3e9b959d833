// What `qvirt migrate` / `qvirt migrate-cancel` decide, pure: virt-api's migrate subresource checks
// (pkg/virt-api/rest/subresource.go MigrateVMRequestHandler) and the migration it creates; which
// migration virtctl's migrate-cancel deletes; the progress line `--watch` prints.
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/types.ts';
import type { MigrationProgress } from '../api/migration.ts';
import { isFinalMigrationPhase } from '../api/constants.ts';
import { vmiCondition } from '../api/vmi-conditions.ts';

export type MigratePlan =
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'create'; readonly migration: VirtualMachineInstanceMigration };

/** virt-api's migrate: the VM must run, its VMI be Running and live-migratable. */
export function planMigrate(vm: VirtualMachine | undefined, vmi: VirtualMachineInstance | undefined, namespace: string, name: string, addedNodeSelector?: Record<string, string>): MigratePlan {
  if (!vm) return { kind: 'refused', message: `virtualmachine.kubevirt.io "${name}" not found` };
  if (!vmi || vmi.status?.phase !== 'Running') return { kind: 'refused', message: 'VM is not running' };
  const cond = vmiCondition(vmi, 'LiveMigratable');
  if (cond && cond.status === 'False') return { kind: 'refused', message: `Cannot migrate VMI, Reason: ${cond.reason ?? ''}, Message: ${cond.message ?? ''}` };
  return {
    kind: 'create',
    migration: {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceMigration',
      metadata: { generateName: 'kubevirt-migrate-vm-', namespace },
      spec: { vmiName: name, ...(addedNodeSelector && Object.keys(addedNodeSelector).length ? { addedNodeSelector } : {}) },
    } as VirtualMachineInstanceMigration,
  };
}

/** virtctl migrate-cancel: the VMI's migration that has not finished (newest first), if any. */
export function cancellableMigration(migrations: readonly VirtualMachineInstanceMigration[], vmiName: string): VirtualMachineInstanceMigration | undefined {
  return migrations
    .filter((m) => m.spec.vmiName === vmiName && !isFinalMigrationPhase(m.status?.phase) && !m.metadata?.deletionTimestamp)
    .sort((a, b) => (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? ''))[0];
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

/** One progress line: phase, a bar of the share sent (sent / (sent + remaining)), and the numbers. */
export function progressLine(phase: string, p: MigrationProgress | undefined, width = 30): string {
  if (!p) return `${phase.padEnd(15)} ${'-'.repeat(width)}`;
  const denom = p.transferred + p.remaining;
  const share = denom > 0 ? Math.min(1, p.transferred / denom) : 0;
  const filled = Math.round(share * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  return `${phase.padEnd(15)} ${bar} ${(share * 100).toFixed(0).padStart(3)}%  sent ${mib(p.transferred)}, remaining ${mib(p.remaining)}, dirty rate ${mib(p.dirtyRate)}/s, ${mib(p.throughput)}/s`;
}
