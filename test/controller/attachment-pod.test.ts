// Hotplug attachment pods, the VMI controller's pure part: which volumes a pod attaches, the pod as
// KubeVirt renders it, which pod to create and which to delete as volumes come and go, and the
// hotplug volumeStatus (attachPodName/UID, Pending/Bound → AttachedToNode) the controller writes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  activeAndOldPods,
  attachmentPodVMIKey,
  planAttachmentPods,
  podMatchesVolumes,
  readyVolumes,
  renderAttachmentPod,
  selinuxLevel,
  volumesToAttach,
  withAttachmentVolumeStatus,
  type HotplugVolume,
} from '../../controller/vmi/attachment-pod.ts';
import { renderConfigFromClusterConfig } from '../../controller/vmi/render-config.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import type { ClaimFacts } from '../../controller/vmi/pvc-lookup.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance, VolumeStatus } from '../../src/api/types.ts';
import { at, pod, vmi as vmiFixture } from './fixtures.ts';

const cfg = renderConfigFromClusterConfig(defaultClusterConfig(), 'qvirt/launcher:dev');
const launcher = (opts: Parameters<typeof pod>[0] = {}): Pod => {
  const p = pod({ uid: 'launcher-uid', ...opts });
  p.spec!.volumes = [{ name: 'rootdisk', persistentVolumeClaim: { claimName: 'root' } }, { name: 'hotplug-disks', emptyDir: {} }];
  p.spec!.tolerations = [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }, { key: 'dedicated', operator: 'Equal', value: 'vms', effect: 'NoSchedule' }];
  return p;
};

function vmi(hot: string[], status: VolumeStatus[] = [], phase: 'Running' | 'Succeeded' = 'Running'): VirtualMachineInstance {
  const v = vmiFixture(phase, { nodeName: 'node01' });
  v.spec.volumes = [
    { name: 'rootdisk', persistentVolumeClaim: { claimName: 'root' } },
    { name: 'ci', cloudInitNoCloud: { userData: '#cloud-config' } },
    ...hot.map((n) => (n.startsWith('dv') ? { name: n, dataVolume: { name: `c-${n}`, hotpluggable: true } } : { name: n, persistentVolumeClaim: { claimName: `c-${n}`, hotpluggable: true } })),
  ];
  v.status!.volumeStatus = status;
  return v;
}

const claim = (phase: string, extra: Partial<ClaimFacts> = {}): ClaimFacts => ({ volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], info: { claimName: 'x' }, uid: `uid-${phase}`, phase, ...extra });
const claims = (entries: Record<string, ClaimFacts>) => new Map(Object.entries(entries));
const bound = claims({ 'c-a': claim('Bound'), 'c-b': claim('Bound'), 'c-dv1': claim('Bound'), 'c-local': claim('Bound', { nodeLocal: true }), 'c-wait': claim('Pending'), 'c-blk': claim('Bound', { volumeMode: 'Block', uid: 'blk-uid' }) });
const hv = (...names: string[]): HotplugVolume[] => names.map((name) => ({ name, claimName: `c-${name}` }));

/** An attachment pod as the API server and the kubelet leave it. */
function apod(name: string, volumes: string[], opts: { phase?: 'Pending' | 'Running'; ready?: boolean; created?: number; deleting?: boolean } = {}): Pod {
  const p = renderAttachmentPod(vmi(volumes), launcher(), hv(...volumes), bound, cfg);
  p.metadata = { ...p.metadata, name, uid: `${name}-uid`, creationTimestamp: at(opts.created ?? -60) };
  if (opts.deleting) p.metadata.deletionTimestamp = at(-1);
  p.status = { phase: opts.phase ?? 'Running', containerStatuses: [{ name: 'hotplug-disk', ready: opts.ready ?? (opts.phase ?? 'Running') === 'Running', state: { running: {} } }] };
  return p;
}

test('volumesToAttach: PVC and DataVolume volumes the launcher pod does not have; readyVolumes: bound, not node-local', () => {
  const v = vmi(['a', 'dv1', 'local', 'wait']);
  assert.equal(volumesToAttach(v, launcher()), hv('a', 'dv1', 'local', 'wait'));
  assert.equal(readyVolumes(volumesToAttach(v, launcher()), bound), hv('a', 'dv1'));
  assert.equal(readyVolumes(hv('gone'), bound), [], 'a missing claim is not ready');
});

test('the attachment pod as KubeVirt renders it', () => {
  const v = vmi(['a', 'blk'], [{ name: 'a', target: '', phase: 'Bound', hotplugVolume: {} }]);
  v.metadata!.uid = 'vmi-uid';
  const p = renderAttachmentPod(v, launcher(), hv('a', 'blk'), bound, cfg);
  assert.is(p.metadata?.generateName, 'hp-volume-');
  assert.is(p.metadata?.namespace, 'default');
  assert.equal(p.metadata?.labels, { 'kubevirt.io': 'hotplug-disk' });
  assert.equal(p.metadata?.annotations, { 'kubevirt.io/owner-vmi-name': 'testvm', 'kubevirt.io/owner-vmi-uid': 'vmi-uid' });
  assert.equal(p.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'virt-launcher-testvm-abcde', uid: 'launcher-uid', controller: true, blockOwnerDeletion: true }]);
  const c = p.spec!.containers[0]!;
  assert.equal([c.name, c.image, c.command], ['hotplug-disk', 'qvirt/launcher:dev', ['/usr/bin/container-disk', '--copy-path', '/path/hp']]);
  assert.equal(c.resources, { requests: { cpu: '10m', memory: '2M' }, limits: { cpu: '100m', memory: '80M' } });
  assert.equal(c.securityContext, { allowPrivilegeEscalation: false, runAsNonRoot: true, runAsUser: 107, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'] }, seLinuxOptions: { level: 's0' } });
  assert.equal(c.volumeMounts, [{ name: 'hotplug-disks', mountPath: '/path', mountPropagation: 'HostToContainer' }, { name: 'a', mountPath: '/a' }]);
  assert.equal(c.volumeDevices, [{ name: 'blk', devicePath: '/path/blk/blk-uid' }]);
  assert.equal(p.spec?.volumes, [{ name: 'hotplug-disks', emptyDir: {} }, { name: 'a', persistentVolumeClaim: { claimName: 'c-a' } }, { name: 'blk', persistentVolumeClaim: { claimName: 'c-blk' } }]);
  assert.equal(p.spec?.affinity, { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node01'] }] }] } } });
  assert.equal(p.spec?.tolerations?.map((t) => t.key), ['dedicated', 'node.kubernetes.io/disk-pressure', 'node.kubernetes.io/memory-pressure', 'node.kubernetes.io/network-unavailable', 'node.kubernetes.io/pid-pressure', 'node.kubernetes.io/unschedulable'], 'the launcher pod\'s and KubeVirt\'s, sorted, the shared one once');
  assert.is(p.spec?.terminationGracePeriodSeconds, 0);
  assert.is(p.spec?.automountServiceAccountToken, false);
  // A volume the node already mounted keeps its claim in the pod but not in the container.
  const later = renderAttachmentPod(vmi(['a'], [{ name: 'a', target: 'sda', phase: 'Ready', hotplugVolume: {} }]), launcher(), hv('a'), bound, cfg);
  assert.equal(later.spec!.containers[0]!.volumeMounts?.map((m) => m.name), ['hotplug-disks']);
  assert.equal(later.spec?.volumes?.map((x) => x.name), ['hotplug-disks', 'a']);
  // supportContainerResources of type hotplug-disk replace the defaults.
  const tuned = renderAttachmentPod(v, launcher(), hv('a'), bound, { ...cfg, supportContainerResources: [{ type: 'hotplug-disk', resources: { limits: { memory: '100M' } } }], selinuxLauncherType: 'virt_launcher.process' });
  assert.equal(tuned.spec!.containers[0]!.resources?.limits, { cpu: '100m', memory: '100M' });
  assert.equal(tuned.spec!.containers[0]!.securityContext?.seLinuxOptions, { level: 's0', type: 'virt_launcher.process' });
});

test('selinuxLevel: the launcher\'s level, s0 without SELinux', () => {
  const v = vmi([]);
  assert.is(selinuxLevel(v), 's0');
  v.status!.selinuxContext = 'none';
  assert.is(selinuxLevel(v), 's0');
  v.status!.selinuxContext = 'system_u:system_r:container_t:s0:c123,c456';
  assert.is(selinuxLevel(v), 's0:c123,c456');
});

test('podMatchesVolumes / activeAndOldPods: the newest pod with exactly the ready volumes is current', () => {
  assert.ok(podMatchesVolumes(apod('p1', ['a', 'b']), hv('b', 'a')));
  assert.not.ok(podMatchesVolumes(apod('p1', ['a']), hv('a', 'b')));
  assert.not.ok(podMatchesVolumes(apod('p1', ['a']), [{ name: 'a', claimName: 'other' }]), 'same name, another claim');
  const { current, old } = activeAndOldPods(hv('a'), [apod('p2', ['a'], { created: -10 }), apod('p1', ['a'], { created: -50 }), apod('p0', ['b'], { created: -90 })]);
  assert.is(current?.metadata?.name, 'p2');
  assert.equal(old.map((p) => p.metadata?.name), ['p1', 'p0'], 'newest first');
});

const planRows: Array<{ name: string; vmi: VirtualMachineInstance; launcher?: Pod | undefined; pods: Pod[]; create?: string[]; delete: string[]; current?: string; waiting?: boolean }> = [
  { name: 'no hotplug volume, no pod: nothing', vmi: vmi([]), pods: [], delete: [] },
  { name: 'a ready volume and no pod: create one', vmi: vmi(['a']), pods: [], create: ['a'], delete: [] },
  { name: 'the pod matches: nothing', vmi: vmi(['a']), pods: [apod('p1', ['a'])], delete: [], current: 'p1' },
  { name: 'a volume added: a new pod with both; the old one runs on until its replacement runs', vmi: vmi(['a', 'b']), pods: [apod('p1', ['a'])], create: ['a', 'b'], delete: [] },
  { name: 'the replacement created, not running yet: the old one stays', vmi: vmi(['a', 'b']), pods: [apod('p1', ['a'], { created: -60 }), apod('p2', ['a', 'b'], { created: -5, phase: 'Pending' })], delete: [], current: 'p2' },
  { name: 'the replacement runs: the old one goes', vmi: vmi(['a', 'b']), pods: [apod('p1', ['a'], { created: -60 }), apod('p2', ['a', 'b'], { created: -5 })], delete: ['p1'], current: 'p2' },
  { name: 'an old pod still starting: no second new pod', vmi: vmi(['a', 'b']), pods: [apod('p1', ['a'], { phase: 'Pending' })], delete: ['p1'] },
  { name: 'the last volume removed: the pod goes', vmi: vmi([]), pods: [apod('p1', ['a'])], delete: ['p1'] },
  { name: 'a removed volume the node still has mounted (Detaching): its pod stays', vmi: vmi([], [{ name: 'a', target: 'sda', phase: 'Detaching', hotplugVolume: { attachPodName: 'p1' } }]), pods: [apod('p1', ['a'])], delete: [] },
  { name: 'a removed volume still Ready: its pod stays', vmi: vmi(['b'], [{ name: 'a', target: 'sda', phase: 'Ready', hotplugVolume: {} }]), pods: [apod('p1', ['a', 'b'], { created: -60 }), apod('p2', ['b'], { created: -5 })], delete: [], current: 'p2' },
  { name: 'a pod being deleted is not deleted again', vmi: vmi([]), pods: [apod('p1', ['a'], { deleting: true })], delete: [] },
  { name: 'a claim not bound yet: no pod for it, look again later', vmi: vmi(['wait']), pods: [], delete: [], waiting: true },
  { name: 'a local-path claim: no attachment pod at all', vmi: vmi(['local']), pods: [], delete: [] },
  { name: 'the launcher pod not ready yet: nothing', vmi: vmi(['a']), launcher: launcher({ compute: 'waiting' }), pods: [], delete: [] },
  { name: 'the launcher pod terminating: nothing (the pods go with it)', vmi: vmi(['a']), launcher: launcher({ deleting: true }), pods: [apod('p1', ['a'])], delete: [] },
  { name: 'the VMI finished: every attachment pod goes', vmi: vmi(['a'], [], 'Succeeded'), pods: [apod('p1', ['a'])], delete: ['p1'] },
];
for (const r of planRows) {
  test(`planAttachmentPods: ${r.name}`, () => {
    const l = 'launcher' in r ? r.launcher : launcher();
    const plan = planAttachmentPods(r.vmi, l, l ? [{ launcher: l, attachmentPods: r.pods }] : [], bound);
    assert.equal(plan.create?.map((v) => v.name), r.create);
    assert.equal(plan.delete, r.delete);
    assert.is(plan.current?.metadata?.name, r.current);
    assert.is(plan.waiting ?? false, r.waiting ?? false);
  });
}

test('planAttachmentPods: attachment pods of a launcher pod that finished are deleted (orphans)', () => {
  const gone = launcher({ uid: 'old-launcher', phase: 'Failed', compute: 'terminated-error', created: at(-900) });
  const now = launcher();
  const plan = planAttachmentPods(vmi(['a']), now, [{ launcher: gone, attachmentPods: [apod('p0', ['a'])] }, { launcher: now, attachmentPods: [apod('p1', ['a'])] }], bound);
  assert.equal(plan.delete, ['p0']);
  assert.is(plan.current?.metadata?.name, 'p1');
});

const statusRows: Array<{ name: string; vmi: VirtualMachineInstance; pods: Pod[]; want: Array<[string, string | undefined, string | undefined, string | undefined]>; events?: number }> = [
  { name: 'no pod yet, claim bound: Bound', vmi: vmi(['a']), pods: [], want: [['a', 'Bound', undefined, undefined]] },
  { name: 'claim pending: Pending', vmi: vmi(['wait']), pods: [], want: [['wait', 'Pending', undefined, undefined]] },
  { name: 'pod created, not ready: AttachedToNode, its name, no UID yet', vmi: vmi(['a'], [{ name: 'a', target: '', phase: 'Bound', hotplugVolume: {} }]), pods: [apod('p1', ['a'], { phase: 'Pending' })], want: [['a', 'AttachedToNode', 'p1', undefined]], events: 1 },
  { name: 'pod ready: its UID for the node agent', vmi: vmi(['a'], [{ name: 'a', target: '', phase: 'AttachedToNode', hotplugVolume: { attachPodName: 'p1' } }]), pods: [apod('p1', ['a'])], want: [['a', 'AttachedToNode', 'p1', 'p1-uid']] },
  { name: 'the node agent\'s phases stand', vmi: vmi(['a'], [{ name: 'a', target: 'sda', phase: 'Ready', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } }]), pods: [apod('p1', ['a'])], want: [['a', 'Ready', 'p1', 'p1-uid']] },
  { name: 'a replacement pod not ready yet: the UID goes until it is', vmi: vmi(['a', 'b'], [{ name: 'a', target: 'sda', phase: 'Ready', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } }]), pods: [apod('p1', ['a'], { created: -60 }), apod('p2', ['a', 'b'], { created: -5, phase: 'Pending' })], want: [['a', 'Ready', 'p2', undefined], ['b', 'AttachedToNode', 'p2', undefined]], events: 1 },
  { name: 'mounted by the node, pod gone: MountedToPod stands', vmi: vmi(['a'], [{ name: 'a', target: '', phase: 'MountedToPod', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } }]), pods: [], want: [['a', 'MountedToPod', 'p1', 'p1-uid']] },
  { name: 'a local-path volume is left to the node agent', vmi: vmi(['local'], [{ name: 'local', target: '', phase: 'MountedToPod', hotplugVolume: {} }]), pods: [], want: [['local', 'MountedToPod', undefined, undefined]] },
];
for (const r of statusRows) {
  test(`withAttachmentVolumeStatus: ${r.name}`, () => {
    const l = launcher();
    const plan = planAttachmentPods(r.vmi, l, [{ launcher: l, attachmentPods: r.pods }], bound);
    // A just-created pod: what the shell passes as current after the create.
    const withNew = plan.create ? { ...plan, current: r.pods.at(-1) } : plan;
    const got = withAttachmentVolumeStatus(r.vmi, l, withNew, bound);
    const list = got.volumeStatus ?? r.vmi.status?.volumeStatus ?? [];
    assert.equal(list.filter((s) => s.hotplugVolume).map((s) => [s.name, s.phase, s.hotplugVolume?.attachPodName, s.hotplugVolume?.attachPodUID]), r.want);
    assert.is(got.events.length, r.events ?? 0);
    if (got.events[0]) assert.match(got.events[0].message, /^Created hotplug attachment pod p\d, for volume [ab]$/);
  });
}

test('withAttachmentVolumeStatus: unchanged → undefined (no write)', () => {
  const v = vmi(['a'], [{ name: 'a', target: '', phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: 'Created hotplug attachment pod p1, for volume a', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } }]);
  const l = launcher();
  const plan = planAttachmentPods(v, l, [{ launcher: l, attachmentPods: [apod('p1', ['a'])] }], bound);
  assert.is(withAttachmentVolumeStatus(v, l, plan, bound).volumeStatus, undefined);
});

test('attachmentPodVMIKey: from the owner annotation of a hotplug-disk pod owned by a pod', () => {
  const v = vmi(['a']);
  const p = renderAttachmentPod(v, launcher(), hv('a'), bound, cfg);
  assert.is(attachmentPodVMIKey(p), 'default/testvm');
  assert.is(attachmentPodVMIKey(launcher()), undefined, 'a launcher pod is not one');
});

test.run();
