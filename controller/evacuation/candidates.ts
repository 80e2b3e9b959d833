// The evacuation controller's decision (virt-controller's watch/drain/evacuation): which VMIs on a
// node to live-migrate away now, and the migration objects it creates for them. A node carrying
// the drain taint (`migrations.nodeDrainTaintKey`, default `kubevirt.io/drain`, effect NoSchedule)
// evacuates every VMI on it; otherwise only VMIs an eviction marked (`status.evacuationNodeName`
// still naming their node) and not migrating now. Of those, VMIs that want to move on eviction
// (effective strategy LiveMigrate, or LiveMigrateIfPossible and migratable) and are
// `LiveMigratable=True`, have no unfinished migration and exactly one active pod get a migration —
// all of them at once, as KubeVirt does since the migration priority queue: the migration
// controller starts them within `parallelMigrationsPerCluster` / `parallelOutboundMigrationsPerNode`,
// evacuations (system-critical) first.
import type { ClusterConfig } from '../../src/api/cluster-config.ts';
import { isMarkedForEviction, isMigratable, nodeHasDrainTaint, vmiMigratableOnEviction } from '../../src/api/eviction.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { MigrationPriority, API_VERSION, Annotation, Kind, isFinalMigrationPhase, isFinalVMIPhase } from '../../src/api/constants.ts';
import type { Node } from '../pod.ts';

/** `GenerateNewMigration`'s generateName. */
export const EVACUATION_MIGRATION_PREFIX = 'kubevirt-evacuation-';
export const EVICTION_SOURCE_DESCHEDULER = 'descheduler';

export interface EvacuationInput {
  readonly node: Node;
  /** VMIs whose `status.nodeName` is the node. */
  readonly vmisOnNode: readonly VirtualMachineInstance[];
  /** Every unfinished migration (any namespace). */
  readonly migrations: readonly VirtualMachineInstanceMigration[];
  /** Live (not finished, not terminating) pods of a VMI. */
  readonly activePods: (vmi: VirtualMachineInstance) => number;
  readonly config: Pick<ClusterConfig, 'evictionStrategy' | 'migrations'>;
  readonly now: Date;
}

export interface EvacuationDecision {
  /** VMIs to create a migration for now. */
  readonly migrate: readonly VirtualMachineInstance[];
  /** VMIs that want to move but are not `LiveMigratable=True` (they stay; drain waits on them). */
  readonly notMigratable: readonly VirtualMachineInstance[];
}

/** `migrationutils.IsMigrating`: a migration started and not (yet) ended. */
export function isMigrating(vmi: VirtualMachineInstance, now: Date): boolean {
  const ms = vmi.status?.migrationState;
  if (!ms) return false;
  const t = now.getTime();
  let running = false;
  if (ms.startTimestamp && Date.parse(ms.startTimestamp) <= t) running = true;
  if (ms.endTimestamp && Date.parse(ms.endTimestamp) <= t) running = false;
  return running;
}

/** `hasMigratedOnEviction`: the VMI left the node it was marked on. */
const hasMigratedOnEviction = (vmi: VirtualMachineInstance): boolean => vmi.status?.nodeName !== vmi.status?.evacuationNodeName;

/** `vmisToMigrate`: every VMI of a tainted node, else the marked ones still there and not migrating. */
export function vmisToEvacuate(node: Node, vmisOnNode: readonly VirtualMachineInstance[], taintKey: string, now: Date): VirtualMachineInstance[] {
  if (nodeHasDrainTaint(node, taintKey)) return [...vmisOnNode];
  return vmisOnNode.filter((v) => isMarkedForEviction(v) && !hasMigratedOnEviction(v) && !isMigrating(v, now));
}

/** `sync` + `filterRunningNonMigratingVMIs`. */
export function evacuationCandidates(i: EvacuationInput): EvacuationDecision {
  const toMove = vmisToEvacuate(i.node, i.vmisOnNode, i.config.migrations.nodeDrainTaintKey, i.now);
  const migrating = new Set(i.migrations.filter((m) => !isFinalMigrationPhase(m.status?.phase)).map((m) => `${m.metadata?.namespace}/${m.spec.vmiName}`));
  const migrate: VirtualMachineInstance[] = [];
  const notMigratable: VirtualMachineInstance[] = [];
  for (const vmi of toMove) {
    if (isFinalVMIPhase(vmi.status?.phase) || vmi.metadata?.deletionTimestamp != null) continue;
    if (!vmiMigratableOnEviction(i.config, vmi)) continue;
    if (!isMigratable(vmi)) { notMigratable.push(vmi); continue; }
    if (migrating.has(`${vmi.metadata?.namespace}/${vmi.metadata?.name}`)) continue;
    // Waiting for the target or source pod of an earlier migration to go.
    if (i.activePods(vmi) > 1) continue;
    migrate.push(vmi);
  }
  return { migrate, notMigratable };
}

/** `GenerateNewMigration`: system-critical, or system-maintenance for a descheduler's eviction. */
export function evacuationMigration(vmi: VirtualMachineInstance, nodeName: string): VirtualMachineInstanceMigration {
  const fromDescheduler = vmi.metadata?.annotations?.[Annotation.EvictionSource] === EVICTION_SOURCE_DESCHEDULER;
  return {
    apiVersion: API_VERSION,
    kind: Kind.VirtualMachineInstanceMigration,
    metadata: { generateName: EVACUATION_MIGRATION_PREFIX, namespace: vmi.metadata?.namespace ?? '', annotations: { [Annotation.EvacuationMigration]: nodeName } },
    spec: { vmiName: vmi.metadata?.name ?? '', priority: fromDescheduler ? MigrationPriority.SystemMaintenance : MigrationPriority.SystemCritical },
  } as VirtualMachineInstanceMigration;
}
