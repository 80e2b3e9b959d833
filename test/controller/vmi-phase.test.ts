import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nextPhase, podAction, readyConditionFromPod, unpausedPodCondition, updateVMIStatus, finalizerCanBeRemoved, checkFailure } from '../../controller/vmi/phase.ts';
import { isPodReady, isPodDownOrGoingDown, currentVMIPod, containerImageError, activePodCount } from '../../controller/pod-state.ts';
import { NOW, at, cond, pod, vmi, type PodOpts } from './fixtures.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

// --- IsPodReady semantics -----------------------------------------------------------------------
const readyRows: [string, PodOpts, boolean][] = [
  ['running pod, compute running (not ready) → ready for handover', {}, true],
  ['pod Pending', { phase: 'Pending' }, false],
  ['compute waiting', { compute: 'waiting' }, false],
  ['compute terminated', { compute: 'terminated-ok' }, false],
  ['pod being deleted', { deleting: true }, false],
  ['pod Succeeded', { phase: 'Succeeded' }, false],
  ['another container not ready', { others: [{ name: 'volumecontainerdisk', ready: false, state: { running: {} } }] }, false],
  ['another container ready', { others: [{ name: 'volumecontainerdisk', ready: true, state: { running: {} } }] }, true],
  ['istio-proxy running but unready is fine', { others: [{ name: 'istio-proxy', ready: false, state: { running: {} } }] }, true],
  ['istio-proxy not running', { others: [{ name: 'istio-proxy', ready: false, state: { waiting: {} } }] }, false],
];
for (const [name, opts, want] of readyRows) test(`IsPodReady: ${name}`, () => assert.is(isPodReady(pod(opts)), want));

test('IsPodDownOrGoingDown: finished, compute terminated, or deleting', () => {
  assert.ok(isPodDownOrGoingDown(pod({ phase: 'Failed' })));
  assert.ok(isPodDownOrGoingDown(pod({ compute: 'terminated-ok' })));
  assert.ok(isPodDownOrGoingDown(pod({ deleting: true })));
  assert.not.ok(isPodDownOrGoingDown(pod({ phase: 'Pending', compute: 'waiting' })));
});

// --- the phase machine --------------------------------------------------------------------------
const tempPod = (): Pod => {
  const p = pod({ phase: 'Pending', compute: 'waiting' });
  p.metadata!.annotations = { 'kubevirt.io/ephemeral-provisioning': 'true' };
  return p;
};
const dedicated = (v: VirtualMachineInstance) => ((v.spec.domain.cpu = { dedicatedCpuPlacement: true }), v);
type Row = [string, VirtualMachineInstance, Pod | undefined, string, string?];
const rows: Row[] = [
  ['Pending + launcher pod → Scheduling', vmi('Pending'), pod({ phase: 'Pending', compute: 'waiting' }), 'Scheduling'],
  ['"" + launcher pod → Scheduling', vmi(''), pod({ phase: 'Pending', compute: 'absent' }), 'Scheduling'],
  ['Pending, no pod → Pending', vmi('Pending'), undefined, 'Pending'],
  ['Pending, no pod, VMI deleting → Failed', vmi('Pending', { deleting: true }), undefined, 'Failed'],
  ['Pending, only a temp (WFFC) pod → Pending', vmi('Pending'), tempPod(), 'Pending'],
  ['Pending, migration target without target node label → WaitingForSync', vmi('Pending', { annotations: { 'kubevirt.io/create-migration-target': 'true' } }), undefined, 'WaitingForSync'],
  ['Scheduling, pod ready → Scheduled', vmi('Scheduling'), pod(), 'Scheduled'],
  ['Scheduling, pod not yet running → Scheduling', vmi('Scheduling'), pod({ phase: 'Pending', compute: 'waiting' }), 'Scheduling'],
  ['Scheduling, pod ready but VMI deleting → Scheduling', vmi('Scheduling', { deleting: true }), pod(), 'Scheduling'],
  ['Scheduling, pod failed → Failed', vmi('Scheduling'), pod({ phase: 'Failed', compute: 'terminated-error' }), 'Failed'],
  ['Scheduling, compute terminated → Failed', vmi('Scheduling'), pod({ compute: 'terminated-ok' }), 'Failed'],
  ['Scheduling, pod deleting → Failed', vmi('Scheduling'), pod({ deleting: true }), 'Failed'],
  ['Scheduling, pod missing → Failed', vmi('Scheduling'), undefined, 'Failed'],
  ['Scheduling, migration target, pod missing → WaitingForSync', vmi('Scheduling', { annotations: { 'kubevirt.io/create-migration-target': 'true' } }), undefined, 'WaitingForSync'],
  ['Scheduling, dedicated CPU, Burstable pod → stays, FailedGuaranteeResources', dedicated(vmi('Scheduling')), pod({ qosClass: 'Burstable' }), 'Scheduling', 'FailedGuaranteeResources'],
  ['Scheduling, dedicated CPU, Guaranteed pod → Scheduled', dedicated(vmi('Scheduling')), pod({ qosClass: 'Guaranteed' }), 'Scheduled'],
  ['Scheduled, pod present → Scheduled (handler drives it on)', vmi('Scheduled'), pod(), 'Scheduled'],
  ['Scheduled, pod missing → Failed', vmi('Scheduled'), undefined, 'Failed'],
  ['Scheduled, compute container exited non-zero (launcher killed before its socket) → Failed', vmi('Scheduled'), pod({ compute: 'terminated-error' }), 'Failed'],
  ['Scheduled, pod Failed → Failed', vmi('Scheduled'), pod({ phase: 'Failed', compute: 'terminated-error' }), 'Failed'],
  ['Scheduled, compute exited 0 → Scheduled (the handler reports how the domain ended)', vmi('Scheduled'), pod({ compute: 'terminated-ok' }), 'Scheduled'],
  ['Scheduled migration target, compute failed → Scheduled (targets: handled by the migration)', vmi('Scheduled', { annotations: { 'kubevirt.io/create-migration-target': 'true' } }), pod({ compute: 'terminated-error' }), 'Scheduled'],
  ['Running, pod present → Running', vmi('Running'), pod(), 'Running'],
  ['Running, pod missing → Failed', vmi('Running'), undefined, 'Failed'],
  ['Succeeded stays', vmi('Succeeded'), undefined, 'Succeeded'],
  ['Failed stays', vmi('Failed'), pod(), 'Failed'],
  ['WaitingForSync + pod → Scheduling', vmi('WaitingForSync'), pod(), 'Scheduling'],
  ['WaitingForSync, deleting → stays', vmi('WaitingForSync', { deleting: true }), pod(), 'WaitingForSync'],
];
for (const [name, theVMI, thePod, want, err] of rows) {
  test(`nextPhase: ${name}`, () => {
    const d = nextPhase(theVMI, { pod: thePod });
    assert.is(d.phase, want);
    assert.is(d.syncError?.reason, err);
  });
}
test('nextPhase: a failed DataVolume fails an unprocessed VMI', () => {
  assert.is(nextPhase(vmi('Pending'), { pod: undefined, hasFailedDataVolume: true }).phase, 'Failed');
});

// --- Ready condition from the pod ---------------------------------------------------------------
test('Ready from pod: PodNotExists / PodTerminating / GuestNotRunning / PodConditionMissing / copied', () => {
  assert.is(readyConditionFromPod('Pending', undefined, NOW).reason, 'PodNotExists');
  assert.is(readyConditionFromPod('Pending', undefined, NOW).message, 'virt-launcher pod has not yet been scheduled');
  assert.is(readyConditionFromPod('Pending', tempPod(), NOW).reason, 'PodNotExists');
  assert.is(readyConditionFromPod('Running', pod({ deleting: true }), NOW).reason, 'PodTerminating');
  assert.is(readyConditionFromPod('Scheduled', pod(), NOW).reason, 'GuestNotRunning');
  assert.is(readyConditionFromPod('Running', pod(), NOW).reason, 'PodConditionMissing');
  const r = readyConditionFromPod('Running', pod({ conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(-3) }] }), NOW);
  assert.equal(r, { type: 'Ready', status: 'True', lastTransitionTime: at(-3) });
  for (const c of [readyConditionFromPod('Pending', undefined, NOW)]) assert.is(c.status, 'False');
});

// --- readiness gate -----------------------------------------------------------------------------
test('readiness gate: set True/NotPaused when missing, flip to False/Paused when the VMI is paused, else leave', () => {
  const gate = (status: 'True' | 'False') => [{ type: 'kubevirt.io/virtual-machine-unpaused', status }];
  const running = vmi('Running');
  assert.equal(unpausedPodCondition(running, pod(), NOW), { type: 'kubevirt.io/virtual-machine-unpaused', status: 'True', reason: 'NotPaused', message: 'the virtual machine is not paused', lastProbeTime: at(0), lastTransitionTime: at(0) });
  assert.is(unpausedPodCondition(running, pod({ conditions: gate('True') }), NOW), undefined);
  assert.is(unpausedPodCondition(running, pod({ conditions: gate('False') }), NOW)?.status, 'True');
  const paused = vmi('Running', { conditions: [cond('Paused', 'True', 'PausedByUser')] });
  assert.equal(unpausedPodCondition(paused, pod({ conditions: gate('True') }), NOW)?.reason, 'Paused');
  assert.is(unpausedPodCondition(paused, pod({ conditions: gate('False') }), NOW), undefined);
  assert.is(unpausedPodCondition(paused, pod(), NOW), undefined);
});

// --- full status update ---------------------------------------------------------------------------
const inputs = (p: Pod | undefined, extra: Partial<Parameters<typeof updateVMIStatus>[1]> = {}) => ({ pod: p, ownedPods: p ? [p] : [], now: NOW, launcherImage: 'qvirt/launcher:dev', hasOwnerVM: true, ...extra });

test('update: Scheduling → Scheduled sets node label, nodeName, transport, qosClass, activePods; patched not updated', () => {
  const p = pod({ qosClass: 'Burstable', uid: 'p1', nodeName: 'node07' });
  p.metadata!.annotations = { 'kubevirt.io/migrationTransportUnix': 'true' };
  const u = updateVMIStatus(vmi('Scheduling'), inputs(p));
  assert.is(u.vmi.status?.phase, 'Scheduled');
  assert.is(u.vmi.metadata?.labels?.['kubevirt.io/nodeName'], 'node07');
  assert.is(u.vmi.status?.nodeName, 'node07');
  assert.is(u.vmi.status?.migrationTransport, 'Unix');
  assert.is(u.vmi.status?.qosClass, 'Burstable');
  assert.equal(u.vmi.status?.activePods, { p1: 'node07' });
  assert.is(u.vmi.status?.launcherContainerImageVersion, 'qvirt/launcher:dev');
  assert.is(u.write, 'update');
  assert.ok(u.vmi.status?.phaseTransitionTimestamps?.some((t) => t.phase === 'Scheduled' && t.phaseTransitionTimestamp === at(0)));
  assert.is(u.podCondition?.type, 'kubevirt.io/virtual-machine-unpaused');
});
test('update: image pull errors become the sync error → Synchronized=False ErrImagePull', () => {
  const p = pod({ phase: 'Pending', compute: 'absent', others: [{ name: 'volumecontainerdisk', ready: false, state: { waiting: { reason: 'ErrImagePull', message: 'pull failed' } } }] });
  const u = updateVMIStatus(vmi('Scheduling'), inputs(p));
  assert.is(u.syncError?.reason, 'ErrImagePull');
  assert.equal(u.vmi.status?.conditions?.find((c) => c.type === 'Synchronized'), { type: 'Synchronized', status: 'False', reason: 'ErrImagePull', message: 'pull failed', lastTransitionTime: at(0) });
});
test('update: PodScheduled=False Unschedulable is mirrored while Scheduling, removed once scheduled', () => {
  const p = pod({ phase: 'Pending', compute: 'absent', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes' }] });
  const u = updateVMIStatus(vmi('Scheduling'), inputs(p));
  assert.equal(u.vmi.status?.conditions?.find((c) => c.type === 'PodScheduled'), { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes' });
  const later = updateVMIStatus(u.vmi, inputs(pod({ phase: 'Pending', compute: 'waiting' })));
  assert.is(later.vmi.status?.conditions?.find((c) => c.type === 'PodScheduled'), undefined);
});
test('update: Running VMI is patched (node agent owns it), outdated launcher image is labelled', () => {
  const p = pod();
  p.spec!.containers[0]!.image = 'qvirt/launcher:old';
  const u = updateVMIStatus(vmi('Running'), inputs(p));
  assert.is(u.write, 'patch');
  assert.is(u.vmi.metadata?.labels?.['kubevirt.io/outdatedLauncherImage'], '');
});
test('update: final VMI without pods loses its finalizers (VM controller finalizer only when the VM is gone)', () => {
  const f = ['kubevirt.io/foregroundDeleteVirtualMachine', 'kubevirt.io/virtualMachineControllerFinalize'];
  const withVM = updateVMIStatus(vmi('Succeeded', { finalizers: f }), inputs(undefined));
  assert.equal(withVM.vmi.metadata?.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
  const orphan = updateVMIStatus(vmi('Succeeded', { finalizers: f }), inputs(undefined, { hasOwnerVM: false }));
  assert.is(orphan.vmi.metadata?.finalizers, undefined);
  const podLeft = updateVMIStatus(vmi('Failed', { finalizers: f }), inputs(pod({ phase: 'Failed', compute: 'terminated-error' })));
  assert.equal(podLeft.vmi.metadata?.finalizers, f, 'a pod is still there: keep');
  assert.ok(finalizerCanBeRemoved(vmi('Failed'), []));
  assert.not.ok(finalizerCanBeRemoved(vmi('Running'), []));
});
test('update: the deprecated finalizer is migrated to the qualified one', () => {
  const u = updateVMIStatus(vmi('Pending', { finalizers: ['foregroundDeleteVirtualMachine'] }), inputs(undefined));
  assert.equal(u.vmi.metadata?.finalizers, ['kubevirt.io/foregroundDeleteVirtualMachine']);
});
test('update: missing PVC while Pending → PodScheduled=False Unschedulable with the error', () => {
  const u = updateVMIStatus(vmi('Pending'), inputs(undefined, { syncError: { reason: 'FailedPvcNotFound', message: "didn't find PVC disk1" } }));
  assert.equal(u.vmi.status?.conditions?.find((c) => c.type === 'PodScheduled'), { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: "didn't find PVC disk1" });
  assert.is(u.vmi.status?.conditions?.find((c) => c.type === 'Synchronized')?.reason, 'FailedPvcNotFound');
});
test('update: EvictionRequested follows status.evacuationNodeName', () => {
  const v = vmi('Running');
  v.status!.evacuationNodeName = 'node01';
  const u = updateVMIStatus(v, inputs(pod()));
  assert.is(u.vmi.status?.conditions?.find((c) => c.type === 'EvictionRequested')?.status, 'True');
  delete u.vmi.status!.evacuationNodeName;
  assert.is(updateVMIStatus(u.vmi, inputs(pod())).vmi.status?.conditions?.find((c) => c.type === 'EvictionRequested'), undefined);
});
test('update: input VMI is not modified', () => {
  const v = vmi('Scheduling');
  const before = JSON.stringify(v);
  updateVMIStatus(v, inputs(pod()));
  assert.is(JSON.stringify(v), before);
});
test('CheckFailure: keeps an identical Synchronized condition, replaces a different one, removes on success', () => {
  const c1 = checkFailure([], { reason: 'FailedCreate', message: 'a' }, NOW);
  assert.is(checkFailure(c1, { reason: 'FailedCreate', message: 'b' }, new Date(NOW.getTime() + 5000))[0]?.message, 'a');
  assert.is(checkFailure(c1, { reason: 'ErrImagePull', message: 'b' }, NOW)[0]?.reason, 'ErrImagePull');
  assert.equal(checkFailure(c1, undefined, NOW), []);
});

// --- pod actions and current pod ------------------------------------------------------------------
test('pod action: create for an unprocessed VMI without pod; none while a migration is active; delete on VMI deletion', () => {
  assert.equal(podAction(vmi('Pending'), undefined, []), { type: 'create-pod' });
  assert.equal(podAction(vmi('Pending'), undefined, [], true), { type: 'none' });
  assert.equal(podAction(vmi('Scheduling'), undefined, []), { type: 'none' }, 'never recreate a pod after the first');
  const live = pod({ name: 'a' });
  const terminating = pod({ name: 'b', deleting: true });
  const finishedTerminating = pod({ name: 'c', deleting: true, phase: 'Succeeded', compute: 'terminated-ok' });
  assert.equal(podAction(vmi('Running', { deleting: true }), live, [live, terminating, finishedTerminating]), { type: 'delete-pods', names: ['a', 'c'] });
  assert.equal(podAction(vmi('Failed'), undefined, []), { type: 'none' });
});
test('current pod: newest controlled pod on the VMI node; any node while unscheduled', () => {
  const old = pod({ name: 'old', created: at(-500), nodeName: 'n1' });
  const newer = pod({ name: 'new', created: at(-100), nodeName: 'n2' });
  const foreign = pod({ name: 'foreign', created: at(-10), ownerUID: 'other' });
  assert.is(currentVMIPod('vmi-uid', undefined, [old, newer, foreign])?.metadata?.name, 'new');
  assert.is(currentVMIPod('vmi-uid', 'n1', [old, newer, foreign])?.metadata?.name, 'old');
  assert.is(currentVMIPod('vmi-uid', 'n3', [old, newer]), undefined);
  assert.is(activePodCount('vmi-uid', [old, newer, pod({ phase: 'Succeeded' }), foreign]), 2);
  assert.is(containerImageError(pod()), undefined);
});

test.run();
