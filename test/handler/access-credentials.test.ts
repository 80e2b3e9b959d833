// The VMI condition AccessCredentialsSynchronized and its events, as virt-handler's
// updateAccessCredentialConditions writes them from the launcher's report (the domain's
// Spec.Metadata.KubeVirt.AccessCredential), through computeStatus and decodeDomain.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accessCredentialEvent, withAccessCredentialCondition } from '../../handler/access-credentials.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { AccessCredentialMetadata } from '../../src/api/domain/domain.ts';
import { computeStatus } from '../../handler/status.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceCondition } from '../../src/api/types.ts';

type Cond = VirtualMachineInstanceCondition;
const T0 = '2026-11-22T00:00:00Z';
const T1 = '2026-11-22T00:01:00Z';
const synced = (status: 'True' | 'False', message?: string, at = T0): Cond => ({ type: 'AccessCredentialsSynchronized', status, lastTransitionTime: at, ...(message ? { message } : {}) });
const paused: Cond = { type: 'Paused', status: 'True', reason: 'PausedByUser' };

const rows: Array<{ name: string; before: Cond[]; reported: AccessCredentialMetadata | undefined; want: Cond[] }> = [
  { name: 'no report: nothing added', before: [], reported: undefined, want: [] },
  { name: 'no report: the condition stays as it was', before: [synced('False', 'Guest agent is offline')], reported: undefined, want: [synced('False', 'Guest agent is offline')] },
  { name: 'success: True with no message and no reason', before: [paused], reported: { Succeeded: true, Message: '' }, want: [paused, synced('True', undefined, T1)] },
  { name: 'failure: False with the launcher\'s message', before: [], reported: { Succeeded: false, Message: 'Guest agent is offline' }, want: [synced('False', 'Guest agent is offline', T1)] },
  { name: 'unchanged: kept with its transition time', before: [synced('True')], reported: { Succeeded: true, Message: '' }, want: [synced('True')] },
  { name: 'failure → success: replaced, new transition time', before: [synced('False', 'Guest agent is offline')], reported: { Succeeded: true, Message: '' }, want: [synced('True', undefined, T1)] },
  {
    name: 'another failure message: replaced with a new transition time (KubeVirt removes and adds)',
    before: [synced('False', 'Guest agent is offline')],
    reported: { Succeeded: false, Message: 'Error encountered setting password for user [x]: no such user' },
    want: [synced('False', 'Error encountered setting password for user [x]: no such user', T1)],
  },
];
for (const r of rows) {
  test(`condition: ${r.name}`, () => {
    assert.equal(withAccessCredentialCondition(r.before, r.reported, T1), r.want);
  });
}

const events: Array<{ name: string; before: Cond[] | undefined; after: Cond[] | undefined; want: ReturnType<typeof accessCredentialEvent> }> = [
  { name: 'no condition: no event', before: [], after: [paused], want: undefined },
  { name: 'unchanged: no event', before: [synced('True')], after: [synced('True')], want: undefined },
  { name: 'first success', before: undefined, after: [synced('True')], want: { type: 'Normal', reason: 'AccessCredentialsSyncSuccess', message: 'Access credentials sync successful.' } },
  { name: 'success with a message', before: [], after: [synced('True', 'note')], want: { type: 'Normal', reason: 'AccessCredentialsSyncSuccess', message: 'Access credentials sync successful: note' } },
  { name: 'failure', before: [synced('True')], after: [synced('False', 'Guest agent is offline')], want: { type: 'Warning', reason: 'AccessCredentialsSyncFailed', message: 'Access credentials sync failed: Guest agent is offline' } },
  { name: 'a different failure', before: [synced('False', 'a')], after: [synced('False', 'b')], want: { type: 'Warning', reason: 'AccessCredentialsSyncFailed', message: 'Access credentials sync failed: b' } },
];
for (const r of events) {
  test(`event: ${r.name}`, () => {
    assert.equal(accessCredentialEvent(r.before, r.after), r.want);
  });
}

const vmi: VirtualMachineInstance = {
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'default', uid: 'u' },
  spec: { domain: { devices: {} } },
  status: { phase: 'Running', conditions: [synced('False', 'Guest agent is offline')] },
};
const domainJson = (ac: unknown) => JSON.stringify({
  ObjectMeta: { name: 'v', namespace: 'default' },
  Spec: { Metadata: { KubeVirt: { UID: 'u', AccessCredential: ac } } },
  Status: { Status: 'Running', Reason: 'Unknown' },
});

test('the launcher\'s domain report becomes the condition; a domain without one (null) leaves it; no domain leaves it', () => {
  const ok = computeStatus({ vmi, domain: decodeDomain(domainJson({ Succeeded: true, Message: '' })), phase: 'Running', now: T1 });
  assert.equal(ok.conditions?.find((c) => c.type === 'AccessCredentialsSynchronized'), synced('True', undefined, T1));
  const none = computeStatus({ vmi, domain: decodeDomain(domainJson(null)), phase: 'Running', now: T1 });
  assert.equal(none.conditions?.find((c) => c.type === 'AccessCredentialsSynchronized'), synced('False', 'Guest agent is offline'));
  const gone = computeStatus({ vmi, domain: undefined, phase: 'Failed', now: T1 });
  assert.equal(gone.conditions?.find((c) => c.type === 'AccessCredentialsSynchronized'), synced('False', 'Guest agent is offline'));
  assert.equal(decodeDomain(domainJson({ Succeeded: false, Message: 'm' })).Spec.Metadata.KubeVirt.AccessCredential, { Succeeded: false, Message: 'm' });
});

test.run();
