// The local mode has no kube-scheduler: the pod runner binds a pending, unassigned pod to its node
// when the pod's nodeSelector and required node affinity match the node (the predicates a one-node
// cluster needs; taints, resources and preferred affinity are not considered).
import { InvalidLabelSelectorError, labelSelectorMatches } from '../../api/label-selector.ts';
import type { NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm, PodSpec } from './pod.ts';

export interface NodeFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Cordoned (`spec.unschedulable`, `kubectl cordon` / `drain`). */
  readonly unschedulable?: boolean;
}

/** The taint kube-scheduler's NodeUnschedulable plugin checks a cordoned node's pods against. */
export const UNSCHEDULABLE_TAINT_KEY = 'node.kubernetes.io/unschedulable';

/** Whether the pod tolerates the cordon (a NoSchedule toleration of the key, or an Exists without key). */
function toleratesCordon(spec: PodSpec): boolean {
  return (spec.tolerations ?? []).some((t) => (t.effect === undefined || t.effect === '' || t.effect === 'NoSchedule')
    && (t.key === UNSCHEDULABLE_TAINT_KEY || ((t.key === undefined || t.key === '') && t.operator === 'Exists')));
}

/** One requirement of a node selector term (In, NotIn, Exists, DoesNotExist, Gt, Lt). */
export function requirementMatches(req: NodeSelectorRequirement, values: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(values, req.key);
  const v = values[req.key];
  switch (req.operator) {
    case 'In': return has && (req.values ?? []).includes(v!);
    case 'NotIn': return !has || !(req.values ?? []).includes(v!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || (req.values?.length ?? 0) !== 1) return false;
      const a = Number.parseInt(v!, 10);
      const b = Number.parseInt(req.values![0]!, 10);
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return req.operator === 'Gt' ? a > b : a < b;
    }
    default: return false;
  }
}

/** A term matches when all its expressions and fields match; an empty term matches nothing. */
export function termMatches(term: NodeSelectorTerm, node: NodeFacts): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return exprs.every((r) => requirementMatches(r, node.labels)) && fields.every((r) => requirementMatches(r, { 'metadata.name': node.name }));
}

/** Why the pod does not fit the node (kube-scheduler's wording), or undefined when it does. */
export function unschedulableReason(spec: PodSpec, node: NodeFacts): string | undefined {
  if (node.unschedulable && !toleratesCordon(spec)) {
    return '0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
  }
  const selOk = Object.entries(spec.nodeSelector ?? {}).every(([k, v]) => node.labels[k] === v);
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const affOk = !terms || terms.some((t) => termMatches(t, node));
  if (selOk && affOk) return undefined;
  return "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
}

/** Whether the local runner schedules this pod: unassigned and meant for the default scheduler. */
export function isOurToSchedule(spec: PodSpec): boolean {
  return !spec.nodeName && (spec.schedulerName === undefined || spec.schedulerName === '' || spec.schedulerName === 'default-scheduler');
}

/** A pod already on the node, as pod anti-affinity sees it. */
export interface PodOnNode {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

function affinityTermMatches(term: PodAffinityTerm, podNamespace: string, other: PodOnNode): boolean {
  const namespaces = term.namespaces?.length ? term.namespaces : [podNamespace];
  if (!namespaces.includes(other.namespace)) return false;
  try {
    return labelSelectorMatches(term.labelSelector, other.labels);
  } catch (err) {
    // A selector apimachinery refuses selects no pod.
    if (err instanceof InvalidLabelSelectorError) return false;
    throw err;
  }
}

/**
 * Required pod anti-affinity against the pods on this node (what keeps a migration target off its
 * source's node). Every topology key is the node itself here: one node is one topology domain.
 */
export function antiAffinityReason(spec: PodSpec, podNamespace: string, podsOnNode: readonly PodOnNode[]): string | undefined {
  const terms = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  const clash = terms.some((t) => podsOnNode.some((o) => affinityTermMatches(t, podNamespace, o)));
  return clash ? "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling." : undefined;
}
