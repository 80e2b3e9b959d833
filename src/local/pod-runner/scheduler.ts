// The local mode has no kube-scheduler: the pod runner binds a pending, unassigned pod to its node
// when the pod's nodeSelector and required node affinity match the node (the predicates a one-node
// cluster needs; taints, resources and preferred affinity are not considered).
import type { NodeSelectorRequirement, NodeSelectorTerm, PodSpec } from './pod.ts';

export interface NodeFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
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
