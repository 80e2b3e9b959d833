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

/** A node's taints, as far as drains read them. */
export interface TaintedNode { readonly spec?: { readonly taints?: readonly { readonly key: string; readonly value?: string; readonly effect: string }[] } }

/** `nodeHasTaint` with `Taint.MatchTaint`: the drain taint's key with effect NoSchedule. */
export function nodeHasDrainTaint(node: TaintedNode, taintKey: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === taintKey && t.effect === 'NoSchedule');
}

/**
 * virt-api's evacuate/cancel (`EvacuateCancelHandler`): the node the VMI is evacuated from (or, not
 * marked, its node), and the refusal while that node carries the drain taint, which evacuates every
 * VMI on it whatever the mark says (`validateEvacuationNode`; the taint as `Taint.String()` prints it).
 */
export function evacuationNodeOf(vmi: VirtualMachineInstance): string {
  return vmi.status?.evacuationNodeName || vmi.status?.nodeName || '';
}
export function evacuateCancelRefusal(nodeName: string, node: TaintedNode, taintKey: string): string | undefined {
  return nodeHasDrainTaint(node, taintKey) ? `Node ${JSON.stringify(nodeName)} has NodeDrainTaintKey ${JSON.stringify(`${taintKey}:NoSchedule`)}` : undefined;
}

/** The JSON patch that cancels the evacuation: only if the VMI is still marked for `evacuationNodeName` (the caller's view), the mark removed. */
export function evacuateCancelPatch(evacuationNodeName: string): object[] {
  return [{ op: 'test', path: '/status/evacuationNodeName', value: evacuationNodeName }, { op: 'remove', path: '/status/evacuationNodeName' }];
}
