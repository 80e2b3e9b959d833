// The VM's `status.stateChangeRequests` queue (pkg/virt-controller/watch/vm/vm.go): only the head
// request is ever acted upon; it is popped once its effect is visible. The start/stop/restart
// subresources append to the queue, the VM controller drains it.
import { START_REQUEST_DATA_PAUSED_KEY, START_REQUEST_DATA_PAUSED_TRUE, StateChangeRequestAction, VMIPhase } from '../../src/api/constants.ts';
import type { VirtualMachineInstance, VirtualMachineStateChangeRequest } from '../../src/api/types.ts';

type Requests = readonly VirtualMachineStateChangeRequest[] | undefined;

export function headRequest(requests: Requests): VirtualMachineStateChangeRequest | undefined {
  return requests?.[0];
}

/** The head request is `Start`. */
export function hasStartRequest(requests: Requests): boolean {
  return headRequest(requests)?.action === StateChangeRequestAction.Start;
}

/** The head request is `Start` with `data.paused = "true"` (`virtctl start --paused`). */
export function hasStartPausedRequest(requests: Requests): boolean {
  const head = headRequest(requests);
  return head?.action === StateChangeRequestAction.Start && head.data?.[START_REQUEST_DATA_PAUSED_KEY] === START_REQUEST_DATA_PAUSED_TRUE;
}

/** The head request is `Stop` aimed at this VMI (by UID). */
export function hasStopRequestForVMI(requests: Requests, vmi: VirtualMachineInstance): boolean {
  const head = headRequest(requests);
  return head?.action === StateChangeRequestAction.Stop && head.uid !== undefined && head.uid === vmi.metadata?.uid;
}

const isFinal = (vmi: VirtualMachineInstance) => vmi.status?.phase === VMIPhase.Succeeded || vmi.status?.phase === VMIPhase.Failed;

/**
 * Whether the head request has taken effect and is dropped (`isTrimFirstChangeRequestNeeded`):
 * - `Stop`: the VMI is gone, or the request names no UID (it could never be acted upon), or it
 *   names a different VMI (that one was stopped already);
 * - `Start`: a VMI exists that is neither being deleted nor final (it was started).
 */
export function shouldTrimHeadRequest(requests: Requests, vmi: VirtualMachineInstance | undefined): boolean {
  const head = headRequest(requests);
  if (!head) return false;
  switch (head.action) {
    case StateChangeRequestAction.Stop:
      if (!vmi) return true;
      if (head.uid === undefined) return true;
      return head.uid !== vmi.metadata?.uid;
    case StateChangeRequestAction.Start:
      return vmi !== undefined && vmi.metadata?.deletionTimestamp == null && !isFinal(vmi);
    default:
      return false;
  }
}

/** The queue after trimming: the same list, or the list without its head. */
export function trimStateChangeRequests(requests: Requests, vmi: VirtualMachineInstance | undefined): VirtualMachineStateChangeRequest[] {
  const list = [...(requests ?? [])];
  return shouldTrimHeadRequest(list, vmi) ? list.slice(1) : list;
}
