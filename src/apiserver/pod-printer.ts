// The READY, STATUS and RESTARTS cells of `kubectl get pods`, as kube-apiserver's printPod
// (pkg/printers/internalversion) computes them: native sidecars (init containers with
// restartPolicy Always) count in READY once started, `Init:N/M` / `Init:<reason>` only while a
// regular init container is still due, the last main container's waiting/terminated reason
// otherwise (`ContainerCreating`, `ErrImagePull`, `CrashLoopBackOff`, `Completed`, `Error`),
// `Running` (or `NotReady`) when a completed pod still has a running container, and `Terminating`
// for a pod being deleted that has not finished. Pure: the caller passes the pod as stored.

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** kubelet's reason for a pod of an unreachable node (kube-controller-manager's node lifecycle). */
export const NODE_UNREACHABLE_POD_REASON = 'NodeLost';

export interface PodPrintout {
  /** `ready/total` */
  readonly ready: string;
  readonly status: string;
  readonly restarts: number;
  /** The newest `lastState.terminated.finishedAt` counted in RESTARTS (for `N (5m ago)`). */
  readonly lastRestart: string | undefined;
  /** The row's Completed condition: set for Succeeded and Failed pods. */
  readonly completed?: { readonly reason: 'Succeeded' | 'Failed'; readonly message: string };
}

const isRestartable = (c: Obj | undefined): boolean => c?.restartPolicy === 'Always';

const conditionTrue = (st: Obj, type: string): boolean => objs(st.conditions).some((c) => c.type === type && c.status === 'True');

function later(a: string | undefined, b: unknown): string | undefined {
  const t = str(b);
  if (!t) return a;
  if (!a || Date.parse(t) > Date.parse(a)) return t;
  return a;
}

const lastFinished = (cs: Obj): unknown => obj(obj(cs.lastState).terminated).finishedAt;

export function printPod(pod: Obj): PodPrintout {
  const spec = obj(pod.spec);
  const st = obj(pod.status);
  const meta = obj(pod.metadata);
  const phase = str(st.phase);
  let reason = str(st.reason) || phase;
  for (const c of objs(st.conditions)) if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';

  const initSpecs = new Map<string, Obj>();
  let total = objs(spec.containers).length;
  const specInits = objs(spec.initContainers);
  for (const c of specInits) {
    initSpecs.set(str(c.name), c);
    if (isRestartable(c)) total++;
  }

  let ready = 0;
  let restarts = 0;
  let lastRestart: string | undefined;
  let sidecarRestarts = 0;
  let lastSidecarRestart: string | undefined;
  let initializing = false;
  const initStatuses = objs(st.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    const state = obj(c.state);
    const term = isObj(state.terminated) ? state.terminated : undefined;
    const wait = isObj(state.waiting) ? state.waiting : undefined;
    const restartable = isRestartable(initSpecs.get(str(c.name)));
    restarts += num(c.restartCount);
    lastRestart = later(lastRestart, lastFinished(c));
    if (restartable) {
      sidecarRestarts += num(c.restartCount);
      lastSidecarRestart = later(lastSidecarRestart, lastFinished(c));
    }
    if (term && num(term.exitCode) === 0) continue;
    if (restartable && c.started === true) {
      if (c.ready === true) ready++;
      continue;
    }
    if (term) {
      if (str(term.reason)) reason = `Init:${str(term.reason)}`;
      else if (num(term.signal) !== 0) reason = `Init:Signal:${num(term.signal)}`;
      else reason = `Init:ExitCode:${num(term.exitCode)}`;
    } else if (wait && str(wait.reason) && wait.reason !== 'PodInitializing') {
      reason = `Init:${str(wait.reason)}`;
    } else {
      reason = `Init:${i}/${specInits.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(st, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const cs = objs(st.containerStatuses);
    for (let i = cs.length - 1; i >= 0; i--) {
      const c = cs[i]!;
      const state = obj(c.state);
      const term = isObj(state.terminated) ? state.terminated : undefined;
      const wait = isObj(state.waiting) ? state.waiting : undefined;
      restarts += num(c.restartCount);
      lastRestart = later(lastRestart, lastFinished(c));
      if (wait && str(wait.reason)) reason = str(wait.reason);
      else if (term && str(term.reason)) reason = str(term.reason);
      else if (term) reason = num(term.signal) !== 0 ? `Signal:${num(term.signal)}` : `ExitCode:${num(term.exitCode)}`;
      else if (c.ready === true && isObj(state.running)) { hasRunning = true; ready++; }
    }
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(st, 'Ready') ? 'Running' : 'NotReady';
  }

  const terminal = phase === 'Succeeded' || phase === 'Failed';
  if (meta.deletionTimestamp && st.reason === NODE_UNREACHABLE_POD_REASON) reason = 'Unknown';
  else if (meta.deletionTimestamp && !terminal) reason = 'Terminating';

  return {
    ready: `${ready}/${total}`,
    status: reason,
    restarts,
    lastRestart: restarts !== 0 ? lastRestart : undefined,
    ...(phase === 'Succeeded' ? { completed: { reason: 'Succeeded' as const, message: 'The pod has completed successfully.' } } : {}),
    ...(phase === 'Failed' ? { completed: { reason: 'Failed' as const, message: 'The pod failed.' } } : {}),
  };
}
