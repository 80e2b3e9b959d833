/**
 * What a node drain means for a VMI (pkg/util/migrations and the VMI's own helpers): its effective
 * eviction strategy, whether it can and wants to be live-migrated off a drained node, and whether an
 * eviction already marked it for evacuation. Pure.
 */
import type { ClusterConfig } from './cluster-config.ts';
import { EvictionStrategy, VMIConditionType } from './constants.ts';
import type { EvictionStrategy as EvictionStrategyType, VirtualMachineInstance } from './types.ts';
import { hasVmiConditionWithStatus } from './vmi-conditions.ts';

/** `VMIEvictionStrategy`: the VMI's `spec.evictionStrategy`, else the cluster's (KubeVirt CR `spec.configuration.evictionStrategy`). */
export function vmiEvictionStrategy(config: Pick<ClusterConfig, 'evictionStrategy'>, vmi: VirtualMachineInstance): EvictionStrategyType {
  return vmi.spec.evictionStrategy ?? config.evictionStrategy;
}

/** `IsMigratable`: the `LiveMigratable` condition is True. */
export function isMigratable(vmi: VirtualMachineInstance): boolean {
  return hasVmiConditionWithStatus(vmi, VMIConditionType.LiveMigratable);
}

/** `IsMarkedForEviction`: an eviction asked to move it off `status.evacuationNodeName`. */
export function isMarkedForEviction(vmi: VirtualMachineInstance): boolean {
  return !!vmi.status?.evacuationNodeName;
}

/** `VMIMigratableOnEviction`: LiveMigrate always; LiveMigrateIfPossible when migratable; None and External never. */
export function vmiMigratableOnEviction(config: Pick<ClusterConfig, 'evictionStrategy'>, vmi: VirtualMachineInstance): boolean {
  const s = vmiEvictionStrategy(config, vmi);
  if (s === EvictionStrategy.LiveMigrate) return true;
  if (s === EvictionStrategy.LiveMigrateIfPossible) return isMigratable(vmi);
  return false;
}
