// The node agent's part of access credentials (virt-handler's updateAccessCredentialConditions):
// the launcher reports its last propagation through the guest agent in the domain's metadata
// (Spec.Metadata.KubeVirt.AccessCredential: Succeeded, Message); the VMI gets the condition
// AccessCredentialsSynchronized — True or False, with the launcher's message and no reason —
// replaced (a new lastTransitionTime) whenever status or message change, and an event each time:
// AccessCredentialsSyncSuccess "Access credentials sync successful." (with ": <message>" when
// there is one) or AccessCredentialsSyncFailed "Access credentials sync failed: <message>". A
// domain without the report leaves the condition as it is.
import { ConditionStatus, SyncEvent, VMIConditionType } from '../src/api/constants.ts';
import type { VirtualMachineInstanceCondition } from '../src/api/types.ts';
import type { AccessCredentialMetadata } from '../src/api/domain/domain.ts';

type Cond = VirtualMachineInstanceCondition;
const TYPE = VMIConditionType.AccessCredentialsSynchronized;

/** The conditions with AccessCredentialsSynchronized as the report says. */
export function withAccessCredentialCondition(conds: readonly Cond[], reported: AccessCredentialMetadata | null | undefined, now: string): Cond[] {
  if (!reported) return [...conds];
  const status = reported.Succeeded ? ConditionStatus.True : ConditionStatus.False;
  const old = conds.find((c) => c.type === TYPE);
  if (old && old.status === status && (old.message ?? '') === reported.Message) return [...conds];
  const next: Cond = { type: TYPE, status, lastTransitionTime: now, ...(reported.Message ? { message: reported.Message } : {}) };
  return [...conds.filter((c) => c.type !== TYPE), next];
}

/** The event for a condition that was (re)written between `before` and `after`, if any. */
export function accessCredentialEvent(before: readonly Cond[] | undefined, after: readonly Cond[] | undefined): { type: 'Normal' | 'Warning'; reason: string; message: string } | undefined {
  const a = after?.find((c) => c.type === TYPE);
  if (!a) return undefined;
  const b = before?.find((c) => c.type === TYPE);
  if (b && b.status === a.status && (b.message ?? '') === (a.message ?? '')) return undefined;
  const message = a.message ?? '';
  if (a.status === ConditionStatus.True) {
    return { type: 'Normal', reason: SyncEvent.AccessCredentialsSyncSuccess, message: message ? `Access credentials sync successful: ${message}` : 'Access credentials sync successful.' };
  }
  return { type: 'Warning', reason: SyncEvent.AccessCredentialsSyncFailed, message: `Access credentials sync failed: ${message}` };
}
