// Kubelet's decisions, as pure functions over the pod spec and what the runner knows about each
// container: which container to start next (init containers in order, native sidecars kept
// running, restart policy), the pod phase, the conditions (PodScheduled, Initialized,
// ContainersReady, Ready with readiness gates) and the QoS class — with kubelet's reasons and
// messages, so `kubectl describe` of a local pod reads like one on a cluster.
import type { Container, ContainerState, ContainerStatus, PodCondition, PodSpec, PodStatus, ResourceList } from './pod.ts';
import { PodReasons, SIDECAR_RESTART_POLICY } from './constants.ts';

/** What the runner knows about one container. Absent = not created yet. */
export type RuntimeState =
  | { readonly kind: 'waiting'; readonly reason: string; readonly message?: string }
  | { readonly kind: 'running'; readonly startedAt: string }
  | { readonly kind: 'terminated'; readonly exitCode: number; readonly signal?: number; readonly reason: string; readonly message?: string; readonly startedAt?: string; readonly finishedAt: string };

export interface ContainerRuntime {
  readonly state: RuntimeState;
  readonly restartCount: number;
  readonly lastTerminated?: Extract<RuntimeState, { kind: 'terminated' }>;
  readonly containerID?: string;
  /** `repo@sha256:<id>` of the image the container runs (container disks: from the image store). */
  readonly imageID?: string;
}

export type Runtimes = ReadonlyMap<string, ContainerRuntime>;

export const isSidecar = (c: Container): boolean => c.restartPolicy === SIDECAR_RESTART_POLICY;

const restartPolicyOf = (spec: PodSpec): string => spec.restartPolicy ?? 'Always';

/** Whether a terminated container of the pod is to be started again under its restart policy. */
export function shouldRestart(policy: string, exitCode: number): boolean {
  if (policy === 'Always') return true;
  if (policy === 'OnFailure') return exitCode !== 0;
  return false;
}

export interface PodPlan {
  /** Containers to start now (init containers one at a time, main containers together). */
  readonly start: readonly string[];
  /** Init containers finished (regular ones exited 0, sidecars started). */
  readonly initialized: boolean;
  readonly phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  /** Sidecars to stop because every main container has finished for good. */
  readonly stopSidecars: boolean;
}

/** Kubelet's next step for a pod (not being deleted) given its containers' states. */
export function planPod(spec: PodSpec, rt: Runtimes): PodPlan {
  const policy = restartPolicyOf(spec);
  const start: string[] = [];
  let initialized = true;
  let initFailed = false;
  // Every main container finished for good: the pod is done, and its native sidecars, stopped for
  // that, are not started again (kubelet restarts a sidecar only while the pod still runs).
  const finals = spec.containers.map((c) => rt.get(c.name)?.state);
  if (finals.length > 0 && finals.every((st) => st?.kind === 'terminated' && !shouldRestart(policy, st.exitCode))) {
    const failed = finals.some((st) => st?.kind === 'terminated' && st.exitCode !== 0);
    return { start: [], initialized: true, phase: failed ? 'Failed' : 'Succeeded', stopSidecars: true };
  }
  for (const c of spec.initContainers ?? []) {
    const r = rt.get(c.name);
    const st = r?.state;
    if (isSidecar(c)) {
      if (!st || (st.kind === 'terminated')) { start.push(c.name); initialized = false; break; }
      if (st.kind === 'waiting') { initialized = false; break; }
      continue; // running: the next init container may start
    }
    if (!st) { start.push(c.name); initialized = false; break; }
    if (st.kind === 'terminated' && st.exitCode === 0) continue;
    initialized = false;
    if (st.kind === 'terminated') {
      if (policy === 'Never') initFailed = true;
      else start.push(c.name);
    }
    break;
  }
  if (initFailed) return { start: [], initialized: false, phase: 'Failed', stopSidecars: true };
  if (!initialized) return { start, initialized, phase: 'Pending', stopSidecars: false };

  let running = 0;
  let finishedOk = 0;
  let finishedFailed = 0;
  let waiting = 0;
  for (const c of spec.containers) {
    const st = rt.get(c.name)?.state;
    if (!st) { start.push(c.name); waiting++; continue; }
    if (st.kind === 'running') running++;
    else if (st.kind === 'waiting') waiting++;
    else if (shouldRestart(policy, st.exitCode)) { start.push(c.name); running++; }
    else if (st.exitCode === 0) finishedOk++;
    else finishedFailed++;
  }
  const total = spec.containers.length;
  if (finishedOk + finishedFailed === total) {
    return { start: [], initialized, phase: finishedFailed > 0 ? 'Failed' : 'Succeeded', stopSidecars: true };
  }
  // A pod whose containers have all been created (some maybe already exited) is Running.
  const phase = running > 0 || (waiting === 0) ? 'Running' : 'Pending';
  return { start, initialized, phase, stopSidecars: false };
}

function wireState(s: RuntimeState | undefined, waitingReason: string): ContainerState {
  if (!s) return { waiting: { reason: waitingReason } };
  if (s.kind === 'waiting') return { waiting: { reason: s.reason, ...(s.message ? { message: s.message } : {}) } };
  if (s.kind === 'running') return { running: { startedAt: s.startedAt } };
  return { terminated: { exitCode: s.exitCode, ...(s.signal !== undefined ? { signal: s.signal } : {}), reason: s.reason, ...(s.message ? { message: s.message } : {}), startedAt: s.startedAt ?? null, finishedAt: s.finishedAt } };
}

function containerStatus(c: Container, r: ContainerRuntime | undefined, waitingReason: string): ContainerStatus {
  const st = r?.state;
  const running = st?.kind === 'running';
  return {
    name: c.name,
    image: c.image ?? '',
    imageID: r?.imageID ?? '',
    ...(r?.containerID ? { containerID: r.containerID } : {}),
    state: wireState(st, waitingReason),
    lastState: r?.lastTerminated ? wireState(r.lastTerminated, '') : {},
    // No probes are run locally: a running container is ready (documented in the README of the runner).
    ready: running,
    started: running,
    restartCount: r?.restartCount ?? 0,
  };
}

const names = (xs: readonly string[]) => `[${xs.join(' ')}]`;

function cond(type: string, ok: boolean, now: string, reason?: string, message?: string): PodCondition {
  return { type, status: ok ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: now, ...(!ok && reason ? { reason } : {}), ...(!ok && message ? { message } : {}) };
}

/**
 * The conditions kubelet owns, given the pod's current conditions (readiness-gate conditions set by
 * others, e.g. the VMI controller's `kubevirt.io/virtual-machine-unpaused`, are read, never written).
 * A condition keeps its lastTransitionTime while its status does not change.
 */
export function podConditions(spec: PodSpec, plan: PodPlan, rt: Runtimes, current: readonly PodCondition[], now: string): PodCondition[] {
  const completed = plan.phase === 'Succeeded' || plan.phase === 'Failed';
  const incompleteInit = (spec.initContainers ?? []).filter((c) => {
    const st = rt.get(c.name)?.state;
    return isSidecar(c) ? st?.kind !== 'running' : !(st?.kind === 'terminated' && st.exitCode === 0);
  }).map((c) => c.name);
  const unready = [...(spec.initContainers ?? []).filter(isSidecar), ...spec.containers].filter((c) => rt.get(c.name)?.state.kind !== 'running').map((c) => c.name);
  const containersReady = !completed && unready.length === 0;
  const gateProblems: string[] = [];
  for (const g of spec.readinessGates ?? []) {
    const c = current.find((x) => x.type === g.conditionType);
    if (!c) gateProblems.push(`corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`);
    else if (c.status !== 'True') gateProblems.push(`the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`);
  }
  const initialized = plan.initialized || (completed && incompleteInit.length === 0);
  const mine: PodCondition[] = [
    cond('PodReadyToStartContainers', true, now),
    cond('Initialized', initialized, now, PodReasons.ContainersNotInitialized, `containers with incomplete status: ${names(incompleteInit)}`),
    completed
      ? cond('Ready', false, now, PodReasons.PodCompleted)
      : !containersReady
        ? cond('Ready', false, now, PodReasons.ContainersNotReady, `containers with unready status: ${names(unready)}`)
        : gateProblems.length
          ? cond('Ready', false, now, PodReasons.ReadinessGatesNotReady, gateProblems.join(', '))
          : cond('Ready', true, now),
    completed ? cond('ContainersReady', false, now, PodReasons.PodCompleted) : cond('ContainersReady', containersReady, now, PodReasons.ContainersNotReady, `containers with unready status: ${names(unready)}`),
    cond('PodScheduled', true, now),
  ];
  const ownTypes = new Set(mine.map((c) => c.type));
  const out: PodCondition[] = [];
  for (const c of mine) {
    const prev = current.find((x) => x.type === c.type);
    out.push(prev && prev.status === c.status && prev.lastTransitionTime ? { ...c, lastTransitionTime: prev.lastTransitionTime } : c);
  }
  for (const c of current) if (!ownTypes.has(c.type)) out.push(c);
  return out;
}

// QoS -------------------------------------------------------------------------------------------

/** A Kubernetes quantity as a number (cpu in cores, memory in bytes); undefined when malformed. */
export function parseQuantity(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/.exec(q.trim());
  if (!m) return undefined;
  const mult: Record<string, number> = { '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
  return Number(m[1]) * mult[m[2] ?? '']!;
}

const QOS_RESOURCES = ['cpu', 'memory'] as const;

/** Kubernetes' QoS class: Guaranteed, Burstable or BestEffort (pkg/apis/core/helper/qos). */
export function qosClass(spec: PodSpec): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...(spec.initContainers ?? []), ...spec.containers];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req: ResourceList = c.resources?.requests ?? {};
    const lim: ResourceList = c.resources?.limits ?? {};
    for (const r of QOS_RESOURCES) {
      const rq = parseQuantity(req[r]);
      const lm = parseQuantity(lim[r]);
      if ((rq ?? 0) > 0 || (lm ?? 0) > 0) any = true;
      // A missing request defaults to the limit.
      if (lm === undefined || (rq !== undefined && rq !== lm)) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * The full status kubelet would write. `podIPs`: the pod's addresses, IPv4 first as kubelet lists
 * them on a dual-stack node (the node's address when the pod has no network of its own).
 */
export function podStatus(spec: PodSpec, rt: Runtimes, current: { conditions?: PodCondition[]; startTime?: string }, ip: string, now: string, podIPs: readonly string[] = [ip]): PodStatus {
  const podIP = podIPs[0] ?? ip;
  const plan = planPod(spec, rt);
  return {
    phase: plan.phase,
    conditions: podConditions(spec, plan, rt, current.conditions ?? [], now),
    hostIP: ip,
    hostIPs: [{ ip }],
    podIP,
    podIPs: (podIPs.length ? podIPs : [ip]).map((x) => ({ ip: x })),
    startTime: current.startTime ?? now,
    qosClass: qosClass(spec),
    ...((spec.initContainers?.length ?? 0) > 0 ? { initContainerStatuses: spec.initContainers!.map((c) => containerStatus(c, rt.get(c.name), PodReasons.PodInitializing)) } : {}),
    containerStatuses: spec.containers.map((c) => containerStatus(c, rt.get(c.name), plan.initialized ? PodReasons.ContainerCreating : PodReasons.PodInitializing)),
  };
}
