// The descheduler's view of a launcher pod (virt-controller's watch/descheduler, called from the VMI
// controller's sync): while an eviction has marked the VMI for evacuation (`status.evacuationNodeName`),
// its ready launcher pod carries `descheduler.alpha.kubernetes.io/eviction-in-progress`, so the
// descheduler counts the pod as being evicted and does not evict it again; once the mark goes (the
// VMI migrated away, or `virtctl evacuate-cancel`), the annotation goes too. Pods created before the
// launcher pod carried `request-evict-only` get that as well. Pure: the JSON patch, or none.
import { Annotation } from '../../src/api/constants.ts';
import { isMarkedForEviction } from '../../src/api/eviction.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { Pod } from '../pod.ts';
import { isPodReady } from '../pod-state.ts';
import { isTempPod } from './phase.ts';
import { escapeJsonPointer } from '../../src/kube/json-pointer.ts';
import type { JsonPatchOp } from '../shell.ts';

const at = (key: string) => `/metadata/annotations/${escapeJsonPointer(key)}`;

/** `SyncPodAnnotations` of `request-evict-only`, then `MarkEvictionInProgress` / `MarkEvictionCompleted`. */
export function deschedulerAnnotationsPatch(vmi: VirtualMachineInstance, pod: Pod): JsonPatchOp[] {
  if (isTempPod(pod) || !isPodReady(pod)) return [];
  const annotations = pod.metadata?.annotations;
  const ops: JsonPatchOp[] = [];
  if (!annotations) ops.push({ op: 'add', path: '/metadata/annotations', value: {} });
  if (annotations?.[Annotation.RequestEvictOnly] === undefined) ops.push({ op: 'add', path: at(Annotation.RequestEvictOnly), value: '' });
  const inProgress = annotations?.[Annotation.EvictionInProgress];
  const marked = isMarkedForEviction(vmi);
  if (marked && inProgress === undefined) ops.push({ op: 'add', path: at(Annotation.EvictionInProgress), value: 'true' });
  if (!marked && inProgress !== undefined) ops.push({ op: 'test', path: at(Annotation.EvictionInProgress), value: inProgress }, { op: 'remove', path: at(Annotation.EvictionInProgress) });
  return ops;
}
