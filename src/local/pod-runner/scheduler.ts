// The local mode has no kube-scheduler: the pod runner binds a pending, unassigned pod to its node
// when the pod's nodeSelector and required node affinity match the node, the node is not cordoned,
// its extended resources (device plugins' GPUs, host devices, KubeVirt's kvm/tun) have room, and no
// required pod anti-affinity clashes (the predicates a one-node cluster needs; taints other than the
// cordon, cpu and memory, and preferred affinity are not considered).
import { InvalidLabelSelectorError, labelSelectorMatches } from '../../api/label-selector.ts';
import { QuantityError, quantityValue } from '../../api/quantity.ts';
import type { Container, NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm, PodSpec, ResourceList } from './pod.ts';

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

/**
 * An extended resource (kube's IsExtendedResourceName): a name with a domain outside kubernetes.io
 * (`nvidia.com/GP102GL_Tesla_P40`, `devices.kubevirt.io/kvm`), not a `requests.` quota name.
 */
export function isExtendedResource(name: string): boolean {
  const slash = name.indexOf('/');
  if (slash <= 0 || name.startsWith('requests.')) return false;
  const domain = name.slice(0, slash);
  return domain !== 'kubernetes.io' && !domain.endsWith('.kubernetes.io');
}

function amount(v: string | number | undefined): bigint {
  if (v === undefined) return 0n;
  try { return quantityValue(v); } catch (err) { if (err instanceof QuantityError) return 0n; throw err; }
}

/** A container's request of each extended resource (its limit where it has no request: they must be equal). */
function containerRequests(c: Container): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const list of [c.resources?.limits, c.resources?.requests] as (ResourceList | undefined)[]) {
    for (const [k, v] of Object.entries(list ?? {})) if (isExtendedResource(k)) out.set(k, amount(v));
  }
  return out;
}

/**
 * What a pod requests of each extended resource, as kube-scheduler counts it: the app containers and
 * native sidecars together, or an init container with the sidecars started before it, whichever is more.
 */
export function podExtendedRequests(spec: PodSpec): Map<string, bigint> {
  const add = (into: Map<string, bigint>, from: Map<string, bigint>) => { for (const [k, v] of from) into.set(k, (into.get(k) ?? 0n) + v); };
  const total = new Map<string, bigint>();
  for (const c of spec.containers) add(total, containerRequests(c));
  const sidecars = new Map<string, bigint>();
  for (const c of spec.initContainers ?? []) {
    const r = containerRequests(c);
    if (c.restartPolicy === 'Always') { add(sidecars, r); add(total, r); continue; }
    const during = new Map(sidecars);
    add(during, r);
    for (const [k, v] of during) if (v > (total.get(k) ?? 0n)) total.set(k, v);
  }
  return total;
}

/**
 * kube-scheduler's NodeResourcesFit for extended resources: what the pod requests beyond what the node
 * allocates less what its other pods hold (a resource the node does not have at all is 0 allocatable).
 */
export function insufficientResourcesReason(spec: PodSpec, allocatable: Readonly<ResourceList>, podsOnNode: readonly PodSpec[]): string | undefined {
  const want = podExtendedRequests(spec);
  const held = podsOnNode.map(podExtendedRequests);
  const short: string[] = [];
  for (const [name, n] of want) {
    if (n === 0n) continue;
    const used = held.reduce((a, r) => a + (r.get(name) ?? 0n), 0n);
    if (used + n > amount(allocatable[name])) short.push(name);
  }
  if (short.length === 0) return undefined;
  return `0/1 nodes are available: ${short.sort().map((n) => `1 Insufficient ${n}`).join(', ')}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.`;
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
