import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  canMigrateVMI,
  finalizedMigrationsToCollect,
  findRunningMigrations,
  handoffVMI,
  migrationStatusUpdate,
  migrationSyncAction,
  pendingTargetPodTimeout,
  throttleTargetPodCreation,
  type MigrationStatusInputs,
  type ThrottleInputs,
} from '../../controller/migration/phase.ts';
import { renderMigrationTargetPod, hostModelSelectors, selinuxLevel, MigrationTargetPodError } from '../../controller/migration/target-pod.ts';
import { DEFAULT_RENDER_CONFIG } from '../../controller/vmi/render-config.ts';
import { NOW, at, cond, pod, vmi } from './fixtures.ts';
import { goldenVMIs } from './golden-vmis.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationPhase } from '../../src/api/types.ts';

function vmim(phase: VirtualMachineInstanceMigrationPhase | undefined, extra: { uid?: string; deleting?: boolean; name?: string; created?: string; conditions?: NonNullable<VirtualMachineInstanceMigration['status']>['conditions'] } = {}): VirtualMachineInstanceMigration {
  const m: VirtualMachineInstanceMigration = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: { name: extra.name ?? 'migration-job', namespace: 'default', uid: extra.uid ?? 'mig-uid', finalizers: ['kubevirt.io/migrationJobFinalize'], creationTimestamp: extra.created ?? at(-100), labels: { 'kubevirt.io/vmi-name': 'testvm' } },
    spec: { vmiName: 'testvm' },
    status: {},
  };
  if (phase !== undefined) m.status!.phase = phase;
  if (extra.deleting) m.metadata!.deletionTimestamp = at(-1);
  if (extra.conditions) m.status!.conditions = extra.conditions;
  return m;
}

type MigState = NonNullable<VirtualMachineInstance['status']>['migrationState'];
const running = (mig: MigState = undefined, conditions?: NonNullable<VirtualMachineInstance['status']>['conditions']) =>
  vmi('Running', { nodeName: 'node01', ...(mig ? { migration: mig } : {}), ...(conditions ? { conditions } : {}) });
const target = (o: Parameters<typeof pod>[0] = {}): Pod => pod({ name: 'virt-launcher-testvm-target', uid: 'target-uid', nodeName: 'node02', ...o });
const ins = (m: VirtualMachineInstanceMigration, v: VirtualMachineInstance | undefined, p: Pod | undefined, extra: Partial<MigrationStatusInputs> = {}): MigrationStatusInputs => ({ migration: m, vmi: v, targetPod: p, migrations: [m], now: NOW, ...extra });
const phaseAfter = (i: MigrationStatusInputs) => migrationStatusUpdate(i).migration.status?.phase;

// --- the phase walk -------------------------------------------------------------------------------
test('phase walk: "" → Pending → Scheduling → Scheduled → PreparingTarget → TargetReady → Running → Succeeded', () => {
  const ours = { migrationUid: 'mig-uid', targetNode: 'node02', sourceNode: 'node01' };
  assert.is(phaseAfter(ins(vmim(undefined), running(), undefined)), 'Pending');
  assert.is(phaseAfter(ins(vmim('Pending'), running(), undefined)), 'Pending', 'no target pod yet');
  assert.is(phaseAfter(ins(vmim('Pending'), running(), target({ phase: 'Pending', compute: 'waiting' }))), 'Scheduling');
  assert.is(phaseAfter(ins(vmim('Scheduling'), running(), target({ phase: 'Pending', compute: 'waiting' }))), 'Scheduling');
  assert.is(phaseAfter(ins(vmim('Scheduling'), running(), target())), 'Scheduled');
  assert.is(phaseAfter(ins(vmim('Scheduled'), running(), target())), 'Scheduled', 'not handed off yet');
  assert.is(phaseAfter(ins(vmim('Scheduled'), running(ours), target())), 'PreparingTarget');
  assert.is(phaseAfter(ins(vmim('PreparingTarget'), running(ours), target())), 'PreparingTarget');
  assert.is(phaseAfter(ins(vmim('PreparingTarget'), running({ ...ours, targetNodeAddress: '10.0.0.2' }), target())), 'TargetReady');
  assert.is(phaseAfter(ins(vmim('TargetReady'), running({ ...ours, targetNodeAddress: '10.0.0.2' }), target())), 'TargetReady');
  // finished before the source wrote its start: it ran all the same
  assert.is(phaseAfter(ins(vmim('TargetReady'), running({ ...ours, targetNodeAddress: '10.0.0.2', completed: true }), target())), 'Running');
  assert.is(phaseAfter(ins(vmim('TargetReady'), running({ ...ours, startTimestamp: at(-5) }), target())), 'Running');
  assert.is(phaseAfter(ins(vmim('Running'), running({ ...ours, startTimestamp: at(-5) }), target())), 'Running');
  const done = migrationStatusUpdate(ins(vmim('Running'), running({ ...ours, startTimestamp: at(-5), endTimestamp: at(-1), completed: true }), target()));
  assert.is(done.migration.status?.phase, 'Succeeded');
  assert.equal(done.events, [{ type: 'Normal', reason: 'SuccessfulMigration', message: 'Source node reported migration succeeded' }]);
  assert.ok(done.migration.status?.phaseTransitionTimestamps?.some((t) => t.phase === 'Succeeded' && t.phaseTransitionTimestamp === at(0)));
});
test('Running → Succeeded waits for hotplug CPU/memory and MigrationRequired conditions to clear', () => {
  const state = { migrationUid: 'mig-uid', targetNode: 'node02', startTimestamp: at(-5), completed: true };
  assert.is(phaseAfter(ins(vmim('Running'), running(state, [cond('HotVCPUChange', 'False')]), target())), 'Running');
  assert.is(phaseAfter(ins(vmim('Running'), running(state, [cond('HotMemoryChange', 'True')]), target())), 'Running');
  assert.is(phaseAfter(ins(vmim('Running'), running(state, [cond('MigrationRequired', 'True')]), target())), 'Running');
  assert.is(phaseAfter(ins(vmim('Running'), running(state, [cond('HotMemoryChange', 'False')]), target())), 'Succeeded');
});
test('"" → Failed when another unfinished migration owns the VMI; allowed when that one is final', () => {
  const other = vmim('Running', { uid: 'other', name: 'other' });
  const v = running({ migrationUid: 'other' });
  const u = migrationStatusUpdate(ins(vmim(undefined), v, undefined, { migrations: [vmim(undefined), other] }));
  assert.is(u.migration.status?.phase, 'Failed');
  assert.match(u.events[0]!.message, /another migration job is in progress/);
  assert.is(phaseAfter(ins(vmim(undefined), v, undefined, { migrations: [vmim('Succeeded', { uid: 'other' })] })), 'Pending');
  assert.ok(canMigrateVMI(vmim(undefined), running({ migrationUid: 'gone' }), []));
});
test('Pending with a quota error records migrationRejectedByResourceQuota; Scheduling clears it', () => {
  const u = migrationStatusUpdate(ins(vmim('Pending'), running(), undefined, { syncError: new Error('pods "x" is forbidden: exceeded quota: q') }));
  assert.equal(u.migration.status?.conditions, [{ type: 'migrationRejectedByResourceQuota', status: 'True', lastProbeTime: at(0) }]);
  const s = migrationStatusUpdate(ins(vmim('Scheduling', { conditions: u.migration.status?.conditions }), running(), target({ phase: 'Pending', compute: 'waiting' })));
  assert.is(s.migration.status?.conditions, undefined);
});

// --- failure checks ---------------------------------------------------------------------------------
type FRow = [string, VirtualMachineInstanceMigration, VirtualMachineInstance | undefined, Pod | undefined, RegExp, boolean?];
const handed = { migrationUid: 'mig-uid', targetNode: 'node02' };
const frows: FRow[] = [
  ['VMI gone', vmim('Scheduling'), undefined, target(), /vmi does not exist/],
  ['VMI final (shut down during migration)', vmim('Running'), vmi('Succeeded'), target(), /vmi shutdown during migration/],
  ['VMIM deleted before handoff → abort condition + Failed', vmim('Scheduled', { deleting: true }), running(), target(), /being canceled/, true],
  ['target pod finished', vmim('Scheduling'), running(), target({ phase: 'Failed', compute: 'terminated-error' }), /target pod shutdown/],
  ['target pod removed after creation', vmim('Scheduled'), running(), undefined, /target pod was removed/],
  ['migration state cleared after handoff', vmim('PreparingTarget'), running(), target(), /state was cleared/],
  ['migration state taken over', vmim('TargetReady'), running({ migrationUid: 'other', targetNode: 'node03' }), target(), /taken over by another migration/],
  ['source reported failure', vmim('Running'), running({ ...handed, failed: true }), target(), /source node reported migration failed/],
];
for (const [name, m, v, p, msg, abort] of frows) {
  test(`failure check: ${name}`, () => {
    const u = migrationStatusUpdate(ins(m, v, p));
    assert.is(u.migration.status?.phase, 'Failed');
    assert.is(u.events[0]?.reason, 'FailedMigration');
    assert.match(u.events[0]!.message, msg);
    assert.is(u.migration.status?.conditions?.some((c) => c.type === 'migrationAbortRequested') ?? false, abort ?? false);
  });
}
test('VMIM deleted after handoff: only the abort condition (the node agents cancel)', () => {
  const u = migrationStatusUpdate(ins(vmim('Running', { deleting: true }), running({ ...handed, startTimestamp: at(-3) }), target()));
  assert.is(u.migration.status?.phase, 'Running');
  assert.equal(u.migration.status?.conditions, [{ type: 'migrationAbortRequested', status: 'True', lastProbeTime: at(0) }]);
});
test('final migration: copies the VMI migration state and drops the finalizer', () => {
  const state = { ...handed, completed: true, sourcePod: 'virt-launcher-testvm-abcde' };
  const u = migrationStatusUpdate(ins(vmim('Succeeded'), running(state), undefined));
  assert.equal(u.migration.status?.migrationState, state);
  assert.is(u.migration.metadata?.finalizers, undefined);
  assert.is(u.events.length, 0);
});
test('Pending records the source pod name', () => {
  assert.is(migrationStatusUpdate(ins(vmim('Pending'), running(), undefined, { sourcePodName: 'virt-launcher-testvm-abcde' })).migration.status?.migrationState?.sourcePod, 'virt-launcher-testvm-abcde');
});

// --- throttling ---------------------------------------------------------------------------------------
const vmiOn = (node: string, uid: string) => vmi('Running', { nodeName: node, uid });
const runningOn = (...nodes: string[]) => nodes.map((n, i) => ({ migration: vmim('Running', { uid: `r${i}` }), vmi: vmiOn(n, `v${i}`) }));
const t = (o: Partial<ThrottleInputs> = {}): ThrottleInputs => ({ pendingPodCreations: 0, vmiActivePods: 1, runningMigrations: [], ...o });
test('throttle: create when under the limits', () => {
  assert.equal(throttleTargetPodCreation(vmim('Pending'), running(), t({ runningMigrations: runningOn('node05', 'node01') })), { type: 'create-target-pod' });
});
test('throttle: in-flight creations or a second VMI pod → wait 1s', () => {
  assert.is((throttleTargetPodCreation(vmim('Pending'), running(), t({ pendingPodCreations: 1 })) as { afterMs: number }).afterMs, 1000);
  assert.is((throttleTargetPodCreation(vmim('Pending'), running(), t({ vmiActivePods: 2 })) as { afterMs: number }).afterMs, 1000);
});
test('throttle: parallelMigrationsPerCluster (5) and parallelOutboundMigrationsPerNode (2), delay by priority', () => {
  const five = runningOn('a', 'b', 'c', 'd', 'e');
  const d = throttleTargetPodCreation(vmim('Pending'), running(), t({ runningMigrations: five }));
  assert.equal([d.type, (d as { afterMs: number }).afterMs], ['wait', 5000]);
  const critical = vmim('Pending');
  critical.spec.priority = 'system-critical';
  assert.is((throttleTargetPodCreation(critical, running(), t({ runningMigrations: five })) as { afterMs: number }).afterMs, 1000);
  const user = vmim('Pending');
  user.spec.priority = 'user-triggered';
  const two = runningOn('node01', 'node01');
  const dn = throttleTargetPodCreation(user, running(), t({ runningMigrations: two }));
  assert.equal([dn.type, (dn as { afterMs: number }).afterMs], ['wait', 3000]);
  assert.match((dn as { reason: string }).reason, /outbound/);
  assert.is(throttleTargetPodCreation(vmim('Pending'), running(), t({ runningMigrations: two, parallelOutboundMigrationsPerNode: 3 })).type, 'create-target-pod');
  const fromSource = [{ migration: vmim('Running', { uid: 'x' }), vmi: vmi('Running', { nodeName: 'node09', migration: { sourceNode: 'node01' } }) }, ...runningOn('node01')];
  assert.is(throttleTargetPodCreation(vmim('Pending'), running(), t({ runningMigrations: fromSource })).type, 'wait', 'a VMI that left node01 still counts as outbound');
});
test('running migrations: Running ones, and unfinished ones that have a target pod', () => {
  const ms = [vmim('Running', { uid: 'a' }), vmim('Scheduling', { uid: 'b' }), vmim('Pending', { uid: 'c' }), vmim('Succeeded', { uid: 'd' })];
  const r = findRunningMigrations(ms, () => running(), (m) => m.metadata?.uid === 'b' || m.metadata?.uid === 'd');
  assert.equal(r.map((x) => x.migration.metadata?.uid), ['a', 'b']);
});

// --- pending target pod timeouts --------------------------------------------------------------------
const unsched = (created: string) => target({ phase: 'Pending', compute: 'absent', created, conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] });
test('pending timeouts: unschedulable 5 min, any pending 15 min, recheck in between, annotations override', () => {
  assert.equal(pendingTargetPodTimeout(vmim('Scheduling'), unsched(at(-60)), NOW), { type: 'recheck', afterMs: 240_000, unschedulable: true });
  assert.equal(pendingTargetPodTimeout(vmim('Scheduling'), unsched(at(-300)), NOW).type, 'delete-target-pod');
  assert.match((pendingTargetPodTimeout(vmim('Scheduling'), unsched(at(-300)), NOW) as { message: string }).message, /^unschedulable pod default\/virt-launcher-testvm-target timeout period exceeded$/);
  const pendingOnly = target({ phase: 'Pending', compute: 'waiting', created: at(-600) });
  assert.equal(pendingTargetPodTimeout(vmim('Scheduling'), pendingOnly, NOW), { type: 'recheck', afterMs: 300_000, unschedulable: false });
  const old = target({ phase: 'Pending', compute: 'waiting', created: at(-900) });
  assert.match((pendingTargetPodTimeout(vmim('Scheduling'), old, NOW) as { message: string }).message, /^pending pod .* timeout period exceeded$/);
  const custom = vmim('Scheduling');
  custom.metadata!.annotations = { 'kubevirt.io/migrationUnschedulablePodTimeoutSeconds': '30', 'kubevirt.io/migrationPendingPodTimeoutSeconds': 'soon' };
  assert.is(pendingTargetPodTimeout(custom, unsched(at(-31)), NOW).type, 'delete-target-pod');
  assert.equal(pendingTargetPodTimeout(vmim('Scheduling'), target(), NOW), { type: 'none' }, 'running pods are not timed out');
});

// --- sync actions ---------------------------------------------------------------------------------------
const sync = (m: VirtualMachineInstanceMigration, v: VirtualMachineInstance | undefined, p: Pod | undefined, extra: Partial<Parameters<typeof migrationSyncAction>[0]> = {}) =>
  migrationSyncAction({ migration: m, vmi: v, targetPod: p, sourcePod: pod(), migrations: [m], throttle: t(), now: NOW, ...extra });
test('sync: Pending without target pod → create (if the VMI runs); throttled → wait', () => {
  assert.equal(sync(vmim('Pending'), running(), undefined), { type: 'create-target-pod' });
  assert.equal(sync(vmim('Pending'), vmi('Scheduled', { nodeName: 'node01' }), undefined), { type: 'none' });
  assert.is(sync(vmim('Pending'), running(), undefined, { throttle: t({ pendingPodCreations: 2 }) }).type, 'wait');
  assert.equal(sync(vmim('Pending'), running(), undefined, { sourcePod: undefined }), { type: 'none' });
});
test('sync: canceled before handoff → delete the target pod', () => {
  const a = sync(vmim('Scheduling', { deleting: true }), running(), target({ phase: 'Pending', compute: 'waiting' }));
  assert.equal(a, { type: 'delete-target-pod', message: 'migration canceled and pod default/virt-launcher-testvm-target is deleted' });
});
test('sync: Scheduled with a ready target pod → hand off (migrationState + target node label)', () => {
  const a = sync(vmim('Scheduled'), running(), target());
  assert.is(a.type, 'handoff');
  const v = (a as { vmi: VirtualMachineInstance }).vmi;
  assert.equal(v.status?.migrationState, { migrationUid: 'mig-uid', targetNode: 'node02', sourceNode: 'node01', targetPod: 'virt-launcher-testvm-target' });
  assert.is(v.metadata?.labels?.['kubevirt.io/migrationTargetNodeName'], 'node02');
  assert.is(handoffVMI(vmim('Scheduled'), v, target()), undefined, 'idempotent');
});
test('sync: target pod gone before the migration started → mark failed on the VMI', () => {
  const a = sync(vmim('PreparingTarget'), running(handed), undefined);
  assert.equal(a, { type: 'mark-failed-on-vmi', migrationState: { ...handed, failed: true, completed: true, endTimestamp: at(0), startTimestamp: at(0), failureReason: 'Target pod is down' } });
  assert.equal(sync(vmim('PreparingTarget'), running({ ...handed, startTimestamp: at(-1) }), undefined), { type: 'none' });
  assert.is(sync(vmim('Failed'), running(handed), undefined).type, 'mark-failed-on-vmi');
});
test('sync: deleted while Running → abortRequested on the VMI', () => {
  const a = sync(vmim('Running', { deleting: true }), running({ ...handed, startTimestamp: at(-1) }), target());
  assert.equal(a, { type: 'abort-on-vmi', migrationState: { ...handed, startTimestamp: at(-1), abortRequested: true } });
});
test('sync: nothing for a deleted VMI or a completed migration; error when another migration holds the VMI', () => {
  assert.equal(sync(vmim('Running'), undefined, target()), { type: 'none' });
  assert.equal(sync(vmim('Running'), running({ ...handed, completed: true }), target()), { type: 'none' });
  const other = vmim('Running', { uid: 'other' });
  assert.is(sync(vmim('Pending'), running({ migrationUid: 'other' }), undefined, { migrations: [other] }).type, 'error');
});

// --- garbage collection -------------------------------------------------------------------------------------
test('GC keeps the 5 newest finalized migrations of a VMI, deleting defunct pods with the older ones', () => {
  const ms: VirtualMachineInstanceMigration[] = [];
  for (let i = 0; i < 8; i++) {
    const m = vmim(i % 2 ? 'Succeeded' : 'Failed', { uid: `m${i}`, name: `m${i}`, created: at(-1000 + i * 10) });
    m.status!.migrationState = i % 2 ? { completed: true, sourcePod: `src${i}` } : { failed: true, targetPod: `tgt${i}` };
    ms.push(m);
  }
  ms.push(vmim('Running', { uid: 'live', name: 'live', created: at(-2000) }));
  ms.push(vmim('Failed', { uid: 'del', name: 'del', deleting: true, created: at(-3000) }));
  const gc = finalizedMigrationsToCollect([...ms].reverse());
  assert.equal(gc.delete, [{ migration: 'm0', pod: 'tgt0' }, { migration: 'm1', pod: 'src1' }, { migration: 'm2', pod: 'tgt2' }]);
  assert.equal(finalizedMigrationsToCollect(ms.slice(0, 5)).delete, []);
});

// --- target pod ------------------------------------------------------------------------------------------------
const cfg = { ...DEFAULT_RENDER_CONFIG, launcherImage: 'quay.io/qvirt/qvirt:v0.1.0' };
function sourcePodFor(v: VirtualMachineInstance): Pod {
  const p = pod({ nodeName: 'node01', others: [{ name: 'volumecontainerdisk', ready: true, imageID: 'registry:5000/kubevirt/cirros-container-disk-demo@sha256:abc123', state: { running: {} } }] });
  p.metadata!.ownerReferences![0]!.uid = v.metadata!.uid!;
  return p;
}
test('target pod: pinned container-disk digest, migration label/annotation, anti-affinity, added node selector, host-model and vendor, SELinux level', () => {
  const v = structuredClone(goldenVMIs['ephemeral']!);
  v.status = { ...v.status, phase: 'Running', nodeName: 'node01', selinuxContext: 'system_u:system_r:container_t:s0:c1,c2' };
  const m = vmim('Pending');
  m.spec.addedNodeSelector = { 'example.com/pool': 'fast', 'kubevirt.io/schedulable': 'false' };
  const nodeLabels = { 'host-model-cpu.node.kubevirt.io/EPYC-Rome': 'true', 'host-model-required-features.node.kubevirt.io/x2apic': 'true', 'cpu-vendor.node.kubevirt.io/AMD': 'true' };
  const p = renderMigrationTargetPod(v, m, sourcePodFor(v), cfg, { sourceNodeLabels: nodeLabels, randomInt: () => 0 });
  assert.is(p.spec!.containers[1]!.image, 'registry:5000/kubevirt/cirros-container-disk-demo@sha256:abc123');
  assert.is(p.spec!.initContainers!.find((c) => c.name === 'volumecontainerdisk-init')?.image, 'registry:5000/kubevirt/cirros-container-disk-demo@sha256:abc123');
  assert.is(p.metadata!.labels!['kubevirt.io/migrationJobUID'], 'mig-uid');
  assert.is(p.metadata!.annotations!['kubevirt.io/migrationJobName'], 'migration-job');
  assert.equal(p.spec!.affinity!.podAntiAffinity, { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'kubevirt.io/created-by': v.metadata!.uid! } }, topologyKey: 'kubernetes.io/hostname' }] });
  assert.is(p.spec!.nodeSelector!['example.com/pool'], 'fast');
  assert.is(p.spec!.nodeSelector!['kubevirt.io/schedulable'], 'true', 'template selectors win over addedNodeSelector');
  assert.is(p.spec!.nodeSelector!['cpu-model-migration.node.kubevirt.io/EPYC-Rome'], 'true');
  assert.is(p.spec!.nodeSelector!['cpu-feature.node.kubevirt.io/x2apic'], 'true');
  assert.is(p.spec!.nodeSelector!['cpu-vendor.node.kubevirt.io/AMD'], 'true');
  assert.equal(p.spec!.securityContext!.seLinuxOptions, { level: 's0:c1,c2' });
});
test('target pod: errors name the migration (no digest, no host-model label, no SELinux context)', () => {
  const v = structuredClone(goldenVMIs['ephemeral']!);
  v.status = { ...v.status, phase: 'Running', nodeName: 'node01', selinuxContext: 'none' };
  const m = vmim('Pending');
  const noDigest = sourcePodFor(v);
  noDigest.status!.containerStatuses![1]!.imageID = '';
  assert.throws(() => renderMigrationTargetPod(v, m, noDigest, cfg, { sourceNodeLabels: {} }), (e: unknown) => e instanceof MigrationTargetPodError && /default\/migration-job/.test((e as Error).message) && /digest/.test((e as Error).message));
  assert.throws(() => renderMigrationTargetPod(v, m, sourcePodFor(v), cfg, { sourceNodeLabels: {} }), (e: unknown) => e instanceof MigrationTargetPodError && /host cpu model/.test((e as Error).message));
  const named = structuredClone(v);
  named.spec.domain.cpu = { cores: 1, model: 'Haswell' };
  const p = renderMigrationTargetPod(named, m, sourcePodFor(named), cfg, { sourceNodeLabels: {} });
  assert.is(p.spec!.securityContext!.seLinuxOptions, undefined, 'selinuxContext "none"');
  const unlabelled = structuredClone(named);
  delete unlabelled.status!.selinuxContext;
  assert.throws(() => renderMigrationTargetPod(unlabelled, m, sourcePodFor(unlabelled), cfg, { sourceNodeLabels: {} }), (e: unknown) => /SELinux context not set/.test((e as Error).message));
  assert.ok(renderMigrationTargetPod(unlabelled, m, sourcePodFor(unlabelled), cfg, { sourceNodeLabels: {}, matchSELinuxLevel: false }));
});
test('host-model selectors and SELinux level parsing', () => {
  assert.is(hostModelSelectors({}), undefined);
  assert.equal(hostModelSelectors({ 'host-model-cpu.node.kubevirt.io/Skylake': 'true' }), { 'cpu-model-migration.node.kubevirt.io/Skylake': 'true' });
  assert.is(selinuxLevel('system_u:system_r:container_t:s0:c1,c2'), 's0:c1,c2');
  assert.is(selinuxLevel('unconfined'), undefined);
});

test.run();
