// PriorityClass (scheduling.k8s.io/v1) and kube-apiserver's Priority admission plugin: the system
// classes the API server creates at start, a class's value checked as the plugin checks it, and a
// new pod's `priorityClassName` resolved into `spec.priority` (a name that does not exist refuses
// the pod; no name takes the global default class, else 0). The local pod runner then orders its
// work by it, as the scheduler and kubelet's eviction order do on a node. Pure.
import { ApiError, StatusReasons } from './errors.ts';
import type { Obj } from './store.ts';

type Mutable = Record<string, unknown>;
const isObj = (v: unknown): v is Mutable => typeof v === 'object' && v !== null && !Array.isArray(v);

/** scheduling.SystemCriticalPriority and the two classes kube-apiserver's bootstrap creates. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
/** The highest value a user-defined class may have (scheduling.HighestUserDefinablePriority). */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<{ name: string; value: number; description: string }> = [
  { name: 'system-node-critical', value: SYSTEM_CRITICAL_PRIORITY + 1000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: SYSTEM_CRITICAL_PRIORITY, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

/** The PriorityClass object for one of the system classes. */
export function systemPriorityClass(c: { name: string; value: number; description: string }): Obj {
  return { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: c.name }, value: c.value, description: c.description, preemptionPolicy: 'PreemptLowerPriority' } as Obj;
}

export interface PriorityClassError { field: string; detail: string; value?: unknown }

/** Validation of a PriorityClass as kube-apiserver's (value bounds, reserved names, defaults). */
export function validatePriorityClass(pc: Mutable): PriorityClassError[] {
  const errs: PriorityClassError[] = [];
  const name = isObj(pc.metadata) ? String(pc.metadata.name ?? '') : '';
  const value = pc.value;
  if (typeof value !== 'number' || !Number.isInteger(value)) errs.push({ field: 'value', detail: 'must be an integer', value });
  const system = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  if (system) {
    if (value !== system.value) errs.push({ field: 'metadata.name', detail: `${name} is a system priority class and its value must be ${system.value}`, value: name });
  } else {
    if (name.startsWith('system-')) errs.push({ field: 'metadata.name', detail: 'priority class names with \'system-\' prefix are reserved', value: name });
    if (typeof value === 'number' && value > HIGHEST_USER_DEFINABLE_PRIORITY) errs.push({ field: 'value', detail: `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`, value });
  }
  const pp = pc.preemptionPolicy;
  if (pp !== undefined && pp !== 'PreemptLowerPriority' && pp !== 'Never') errs.push({ field: 'preemptionPolicy', detail: 'supported values: "Never", "PreemptLowerPriority"', value: pp });
  return errs;
}

/** Fills what kube-apiserver defaults on a PriorityClass. */
export function defaultPriorityClass(pc: Mutable): void {
  if (pc.preemptionPolicy === undefined) pc.preemptionPolicy = 'PreemptLowerPriority';
}

/**
 * The Priority admission plugin on a new pod: `spec.priority` (and `preemptionPolicy`) from its
 * class, or the global default's, or 0. Throws the plugin's Forbidden for an unknown class and for a
 * pod that sets a priority its class does not give.
 */
export function admitPodPriority(pod: Mutable, classes: readonly Obj[]): void {
  const spec = (isObj(pod.spec) ? pod.spec : (pod.spec = {})) as Mutable;
  const podName = isObj(pod.metadata) ? String(pod.metadata.name ?? '') : '';
  const forbidden = (why: string) => new ApiError(403, StatusReasons.Forbidden, `pods "${podName}" is forbidden: ${why}`, { name: podName, kind: 'pods' });
  const name = typeof spec.priorityClassName === 'string' && spec.priorityClassName !== '' ? spec.priorityClassName : undefined;
  let cls: Mutable | undefined;
  if (name) {
    cls = classes.find((c) => (c.metadata as Mutable | undefined)?.name === name) as Mutable | undefined;
    if (!cls) throw forbidden(`no PriorityClass with name ${name} was found`);
  } else {
    cls = classes.find((c) => (c as Mutable).globalDefault === true) as Mutable | undefined;
    if (cls) spec.priorityClassName = (cls.metadata as Mutable).name;
  }
  const value = typeof cls?.value === 'number' ? cls.value : 0;
  if (spec.priority !== undefined && spec.priority !== value) {
    throw forbidden(`the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`);
  }
  spec.priority = value;
  if (spec.preemptionPolicy === undefined) spec.preemptionPolicy = cls?.preemptionPolicy ?? 'PreemptLowerPriority';
}
