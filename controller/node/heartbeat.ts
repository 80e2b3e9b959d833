// The node controller (pkg/virt-controller/watch/node/node.go): a node whose agent stopped
// heartbeating (annotation `kubevirt.io/heartbeat` older than 5 minutes) or that no longer exists is
// unresponsive: it is marked `kubevirt.io/schedulable=false` (event NodeUnresponsive), and the VMIs
// it was running whose launcher pods are gone are failed with reason NodeUnresponsive. Checked
// again every minute while the node exists.
import { Annotation, ConditionReason, EventReason, Kind, Label, VMIPhase } from '../../src/api/constants.ts';
import { EventMessages, NODE_HEARTBEAT_TIMEOUT_MS, NODE_RECHECK_INTERVAL_MS } from '../constants.ts';
import { controllerOf } from '../pod-state.ts';
import type { Node, Pod } from '../pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

export class HeartbeatParseError extends Error {
  override name = 'HeartbeatParseError';
  constructor(node: string, value: string) {
    super(`node ${node}: annotation ${Annotation.Heartbeat} ${JSON.stringify(value)} is not an RFC 3339 time`);
  }
}

/**
 * `isNodeUnresponsive`: a missing node is unresponsive; a node without the heartbeat annotation is
 * not (the agent never ran there); otherwise the heartbeat must be newer than `timeoutMs`.
 * Throws HeartbeatParseError for an unreadable timestamp (KubeVirt then leaves the node alone).
 */
export function isNodeUnresponsive(node: Node | undefined, now: Date, timeoutMs: number = NODE_HEARTBEAT_TIMEOUT_MS): boolean {
  if (!node) return true;
  const raw = node.metadata?.annotations?.[Annotation.Heartbeat];
  if (raw === undefined) return false;
  const t = Date.parse(raw.replace(/^"|"$/g, ''));
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw.replace(/^"/, '')) || Number.isNaN(t)) throw new HeartbeatParseError(node.metadata?.name ?? '', raw);
  return t < now.getTime() - timeoutMs;
}

/** Pods on the node that still hold a VMI: controlled by a VMI, not finished, not all containers terminated. */
export function alivePodsOfVMIs(pods: readonly Pod[]): Pod[] {
  return pods.filter((pod) => {
    if (controllerOf(pod.metadata)?.kind !== Kind.VirtualMachineInstance) return false;
    const statuses = pod.status?.containerStatuses ?? [];
    const allTerminated = statuses.length > 0 && statuses.every((s) => s.state?.terminated !== undefined);
    const phase = pod.status?.phase;
    return !allTerminated && phase !== 'Failed' && phase !== 'Succeeded';
  });
}

export interface NodeCheckInputs {
  readonly nodeName: string;
  readonly node: Node | undefined;
  /** VMIs labelled `kubevirt.io/nodeName=<node>`. */
  readonly vmisOnNode: readonly VirtualMachineInstance[];
  /** Pods with `spec.nodeName=<node>`. */
  readonly podsOnNode: readonly Pod[];
  readonly now: Date;
  readonly heartbeatTimeoutMs?: number;
}

export interface NodeDecision {
  readonly unresponsive: boolean;
  /** Patch the node's label `kubevirt.io/schedulable` to "false" (strategic merge) and record an event. */
  readonly markUnschedulable: boolean;
  readonly nodeEvent?: { readonly type: 'Normal'; readonly reason: string; readonly message: string };
  /** VMIs to patch to `status.phase=Failed, status.reason=NodeUnresponsive` (with an event each). */
  readonly failVMIs: readonly VirtualMachineInstance[];
  /** Look again after this long (only while the node exists). */
  readonly requeueAfterMs?: number;
}

/** The node controller's `execute` for one node. */
export function checkNode(inputs: NodeCheckInputs): NodeDecision {
  const { node, now } = inputs;
  const requeue = node ? { requeueAfterMs: NODE_RECHECK_INTERVAL_MS } : {};
  const unresponsive = isNodeUnresponsive(node, now, inputs.heartbeatTimeoutMs);
  if (!unresponsive) return { unresponsive, markUnschedulable: false, failVMIs: [], ...requeue };
  const schedulable = node?.metadata?.labels?.[Label.NodeSchedulable] === 'true';
  const active = inputs.vmisOnNode.filter((v) => v.status?.phase === VMIPhase.Running || v.status?.phase === VMIPhase.Scheduled);
  const withPods = new Set(alivePodsOfVMIs(inputs.podsOnNode).map((p) => `${p.metadata?.namespace ?? ''}/${controllerOf(p.metadata)?.uid ?? ''}`));
  const failVMIs = active.filter((v) => !withPods.has(`${v.metadata?.namespace ?? ''}/${v.metadata?.uid ?? ''}`));
  return {
    unresponsive,
    markUnschedulable: schedulable,
    ...(schedulable ? { nodeEvent: { type: 'Normal' as const, reason: EventReason.NodeUnresponsive, message: EventMessages.nodeUnresponsive } } : {}),
    failVMIs,
    ...requeue,
  };
}

/** The JSON patch that fails a VMI stranded on an unresponsive node. */
export function failVMIPatch(): { op: 'replace' | 'add'; path: string; value: string }[] {
  return [
    { op: 'replace', path: '/status/phase', value: VMIPhase.Failed },
    { op: 'add', path: '/status/reason', value: ConditionReason.NodeUnresponsive },
  ];
}

/** The event recorded on each failed VMI. */
export function vmiNodeUnresponsiveMessage(vmi: VirtualMachineInstance): string {
  return `virt-handler on node ${vmi.status?.nodeName ?? ''} is not responsive, marking VMI as failed`;
}
