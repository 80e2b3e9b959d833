// The happy path of a VM (kubevirt-model.md §16) walked through the pure decisions of the VM and
// VMI controllers, with src/api's real create-time defaulting standing in for the webhook and this
// test standing in for the API server, the scheduler/kubelet and the node agent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { syncRunStrategy } from '../../controller/vm/run-strategy.ts';
import { vmiForStart } from '../../controller/vm/vmi-from-vm.ts';
import { computeVMStatus } from '../../controller/vm/status.ts';
import { podAction, updateVMIStatus } from '../../controller/vmi/phase.ts';
import { renderLaunchManifest } from '../../controller/vmi/launcher-pod.ts';
import { renderConfigFromClusterConfig } from '../../controller/vmi/render-config.ts';
import { defaultNewVirtualMachine, defaultNewVirtualMachineInstance } from '../../src/api/defaults.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { NOW, vm as vmFixture } from './fixtures.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const config = defaultClusterConfig();
let clock = NOW.getTime();
const now = () => new Date(clock);
const tick = (s: number) => (clock += s * 1000);
const env = { config, now, randomUUID: () => '00000000-0000-4000-8000-000000000000' };
const cfg = renderConfigFromClusterConfig(config, 'quay.io/qvirt/qvirt:v0.1.0');
const launcherImage = cfg.launcherImage;

function vmStatus(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, expect: { start?: boolean; stop?: boolean } = {}) {
  return computeVMStatus(vm, vmi, { now: now(), vmiStartExpected: expect.start ?? false, vmiStopExpected: expect.stop ?? false, randomInt: () => 0 });
}
function vmiStatus(vmi: VirtualMachineInstance, pod: Pod | undefined) {
  return updateVMIStatus(vmi, { pod, ownedPods: pod ? [pod] : [], now: now(), launcherImage, hasOwnerVM: true });
}

test('VM runStrategy Always: start → Scheduling → Scheduled → Running/Ready → stop → Stopped', () => {
  let vm = defaultNewVirtualMachine(vmFixture({ runStrategy: 'Always' }), env);
  assert.is(vmStatus(vm, undefined).status.printableStatus, 'Stopped');

  // VM controller: no VMI → start
  const decision = syncRunStrategy(vm, undefined, now());
  assert.equal(decision.actions, [{ type: 'start', paused: false }]);
  assert.is(vmStatus(vm, undefined, { start: true }).status.printableStatus, 'Starting');
  // API server + webhook create the VMI
  let vmi = defaultNewVirtualMachineInstance(vmiForStart(vm), env);
  vmi.metadata!.uid = 'vmi-1';
  assert.is(vmi.status?.phase, 'Pending');
  assert.is(vmi.status?.runtimeUser, 107);
  vm = { ...vm, status: vmStatus(vm, vmi).status };
  assert.is(vm.status?.printableStatus, 'Starting');
  assert.is(vm.status?.runStrategy, 'Always');

  // VMI controller: create the launcher pod
  assert.equal(podAction(vmi, undefined, []), { type: 'create-pod' });
  const manifest = renderLaunchManifest(vmi, cfg, { randomInt: () => 0 });
  let pod: Pod = { ...structuredClone(manifest), metadata: { ...manifest.metadata, name: 'virt-launcher-testvm-q7x2c', uid: 'pod-1', creationTimestamp: now().toISOString() }, status: { phase: 'Pending' } };
  assert.is(pod.spec?.containers[0]?.resources?.requests?.['memory'], '346Mi');
  let u = vmiStatus(vmi, pod);
  assert.is(u.vmi.status?.phase, 'Scheduling');
  assert.is(u.write, 'update');
  vmi = u.vmi;

  // kubelet starts the pod; compute runs, not yet ready
  tick(5);
  pod = { ...pod, spec: { ...pod.spec!, nodeName: 'node01' }, status: { phase: 'Running', qosClass: 'Burstable', containerStatuses: [{ name: 'compute', ready: false, state: { running: {} } }, { name: 'volumecontainerdisk', ready: true, state: { running: {} } }] } };
  u = vmiStatus(vmi, pod);
  assert.is(u.vmi.status?.phase, 'Scheduled');
  assert.is(u.vmi.status?.nodeName, 'node01');
  assert.is(u.vmi.metadata?.labels?.['kubevirt.io/nodeName'], 'node01');
  assert.equal(u.podCondition?.type, 'kubevirt.io/virtual-machine-unpaused');
  vmi = u.vmi;
  assert.is(vmStatus(vm, vmi).status.printableStatus, 'Starting');

  // node agent: domain running → VMI Running; pod turns Ready once the gate is True
  tick(5);
  vmi = { ...vmi, status: { ...vmi.status, phase: 'Running', phaseTransitionTimestamps: [...(vmi.status?.phaseTransitionTimestamps ?? []), { phase: 'Running', phaseTransitionTimestamp: now().toISOString() }] } };
  pod = { ...pod, status: { ...pod.status!, conditions: [{ type: 'kubevirt.io/virtual-machine-unpaused', status: 'True' }, { type: 'Ready', status: 'True', lastTransitionTime: now().toISOString() }] } };
  u = vmiStatus(vmi, pod);
  assert.is(u.write, 'patch');
  assert.is(u.podCondition, undefined, 'gate already True');
  vmi = u.vmi;
  assert.is(vmi.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  vm = { ...vm, status: vmStatus(vm, vmi).status };
  assert.equal([vm.status?.printableStatus, vm.status?.ready, vm.status?.conditions?.find((c) => c.type === 'Ready')?.status], ['Running', true, 'True']);
  assert.is(syncRunStrategy(vm, vmi, now()).actions.length, 0);

  // virtctl stop: runStrategy Halted → delete the VMI
  vm = { ...vm, spec: { ...vm.spec, runStrategy: 'Halted' } };
  assert.equal(syncRunStrategy(vm, vmi, now()).actions, [{ type: 'delete-vmi', uid: 'vmi-1', vmiPhase: 'Running' }]);
  assert.is(vmStatus(vm, vmi, { stop: true }).status.printableStatus, 'Stopping');
  tick(1);
  vmi = { ...vmi, metadata: { ...vmi.metadata, deletionTimestamp: now().toISOString() } };
  assert.equal(podAction(vmi, pod, [pod]), { type: 'delete-pods', names: ['virt-launcher-testvm-q7x2c'] });
  assert.is(syncRunStrategy(vm, vmi, now()).actions.length, 0, 'already deleting');

  // guest shut down, pod gone: VMI final, finalizers released
  tick(10);
  vmi = { ...vmi, status: { ...vmi.status, phase: 'Succeeded' } };
  u = vmiStatus(vmi, undefined);
  assert.equal(u.vmi.metadata?.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
  const final = vmStatus(vm, u.vmi);
  assert.is(final.status.printableStatus, 'Stopped');
  assert.ok(final.removeVMIFinalizer);
  assert.is(final.status.startFailure, undefined, 'it ran: no crash loop');
  vm = { ...vm, status: vmStatus(vm, undefined).status };
  assert.equal([vm.status?.printableStatus, vm.status?.created, vm.status?.conditions?.find((c) => c.type === 'Ready')?.reason], ['Stopped', false, 'VMINotExists']);
});

test('VM whose VMI keeps failing before Running backs off: CrashLoopBackOff, requeue, then start again', () => {
  let vm = defaultNewVirtualMachine(vmFixture({ runStrategy: 'Always' }), env);
  const failing: VirtualMachineInstance = { ...defaultNewVirtualMachineInstance(vmiForStart(vm), env), metadata: { name: 'testvm', namespace: 'default', uid: 'try-1' } };
  failing.status = { ...failing.status, phase: 'Failed' };
  vm = { ...vm, status: vmStatus(vm, failing).status };
  assert.equal(vm.status?.startFailure?.consecutiveFailCount, 1);
  assert.equal(syncRunStrategy(vm, failing, now()).actions, [{ type: 'delete-vmi', uid: 'try-1', vmiPhase: 'Failed' }]);
  vm = { ...vm, status: vmStatus(vm, undefined).status };
  assert.is(vm.status?.printableStatus, 'CrashLoopBackOff');
  assert.equal(syncRunStrategy(vm, undefined, now()).actions, [{ type: 'requeue', afterMs: 10_000 }]);
  tick(10);
  assert.equal(syncRunStrategy(vm, undefined, now()).actions, [{ type: 'start', paused: false }]);
});

test.run();
