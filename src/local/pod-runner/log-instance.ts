// Which run of a container `GET /containerLogs` reads, from the container's state — kubelet's
// validateContainerLogStatus: the running or last terminated instance, the one before it with
// `previous`, the last terminated one while a restart waits, and kubelet's errors (HTTP 400) for
// a container with nothing to show yet. Instances are numbered by the restart count they ran as.
import { PodReasons } from './constants.ts';
import type { ContainerRuntime } from './status.ts';

export type LogInstance = { readonly ok: true; readonly instance: number } | { readonly ok: false; readonly message: string };

export function logInstance(podName: string, container: string, rt: ContainerRuntime | undefined, previous: boolean): LogInstance {
  const c = JSON.stringify(container);
  const p = JSON.stringify(podName);
  // Not created yet (the API server has already checked the name is the pod's).
  if (!rt) return { ok: false, message: `container ${c} in pod ${p} is waiting to start: ContainerCreating` };
  const last = rt.lastTerminated !== undefined;
  const st = rt.state;
  if (previous) {
    if (!last) return { ok: false, message: `previous terminated container ${c} in pod ${p} not found` };
    return { ok: true, instance: Math.max(0, rt.restartCount - 1) };
  }
  if (st.kind === 'running' || st.kind === 'terminated') return { ok: true, instance: rt.restartCount };
  if (last) return { ok: true, instance: Math.max(0, rt.restartCount - 1) };
  if (st.reason === PodReasons.ErrImagePull) return { ok: false, message: `container ${c} in pod ${p} is waiting to start: image can't be pulled` };
  if (st.reason === PodReasons.ImagePullBackOff) return { ok: false, message: `container ${c} in pod ${p} is waiting to start: trying and failing to pull image` };
  return { ok: false, message: `container ${c} in pod ${p} is waiting to start: ${st.reason}` };
}
