// virt-api's migration-create admitter and virt-launcher eviction interceptor as pure decisions:
// one row per branch of KubeVirt's Admit, with KubeVirt's messages and codes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultClusterConfig, mergeClusterConfig } from '../../src/api/cluster-config.ts';
import type { EvictionStrategy, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { admitMigrationCreate } from '../../src/admission/migration-create-admitter.ts';
import { launcherEvictionDecision, markForEvacuationPatch, type EvictedPod } from '../../src/admission/pod-eviction-admitter.ts';
import { vmiMigratableOnEviction, vmiEvictionStrategy } from '../../src/api/eviction.ts';

const migratable = (status: 'True' | 'False', reason?: string, message?: string) => ({ type: 'LiveMigratable' as const, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) });

function vmi(o: { phase?: string; cond?: ReturnType<typeof migratable>; strategy?: EvictionStrategy; node?: string; evacuation?: string; annotations?: Record<string, string> } = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: 'vm1', namespace: 'ns', uid: 'vmi-uid', ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: { domain: { devices: {} }, ...(o.strategy ? { evictionStrategy: o.strategy } : {}) },
    status: { phase: (o.phase ?? 'Running') as 'Running', nodeName: o.node ?? 'n1', ...(o.cond ? { conditions: [o.cond] } : {}), ...(o.evacuation ? { evacuationNodeName: o.evacuation } : {}) },
  } as VirtualMachineInstance;
}

function vmim(spec: VirtualMachineInstanceMigration['spec'], o: { name?: string; uid?: string; phase?: string; label?: string } = {}): VirtualMachineInstanceMigration {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration',
    metadata: { name: o.name ?? 'm', namespace: 'ns', ...(o.uid ? { uid: o.uid } : {}), ...(o.label ? { labels: { 'kubevirt.io/vmi-name': o.label } } : {}) },
    spec,
    ...(o.phase ? { status: { phase: o.phase as 'Running' } } : {}),
  } as VirtualMachineInstanceMigration;
}

const config = defaultClusterConfig();

test('migration create admitter: every refusal, in KubeVirt\'s order, and the admitted cases', () => {
  const rows: { name: string; m: VirtualMachineInstanceMigration; vmi?: VirtualMachineInstance; others?: VirtualMachineInstanceMigration[]; controller?: boolean; gates?: string[]; want?: { code: number; message: string; field?: string } }[] = [
    { name: 'vmiName missing', m: vmim({}), vmi: vmi(), want: { code: 422, message: 'vmiName is missing', field: 'spec.vmiName' } },
    { name: 'priority from a user', m: vmim({ vmiName: 'vm1', priority: 'system-critical' }), vmi: vmi(), want: { code: 422, message: 'Migration priority queue, only virt-controller is allowed to set priority field', field: 'spec.migrationPriority' } },
    { name: 'priority from virt-controller', m: vmim({ vmiName: 'vm1', priority: 'system-critical' }), vmi: vmi({ cond: migratable('True') }), controller: true },
    { name: 'no such VMI', m: vmim({ vmiName: 'nope' }), want: { code: 400, message: 'the VMI "ns/nope" does not exist' } },
    { name: 'VMI succeeded', m: vmim({ vmiName: 'vm1' }), vmi: vmi({ phase: 'Succeeded' }), want: { code: 400, message: 'Cannot migrate VMI in finalized state.' } },
    { name: 'VMI failed', m: vmim({ vmiName: 'vm1' }), vmi: vmi({ phase: 'Failed' }), want: { code: 400, message: 'Cannot migrate VMI in finalized state.' } },
    { name: 'LiveMigratable=False', m: vmim({ vmiName: 'vm1' }), vmi: vmi({ cond: migratable('False', 'DisksNotLiveMigratable', 'cannot migrate VMI: PVC data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)') }),
      want: { code: 400, message: 'Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: PVC data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)' } },
    { name: 'LiveMigratable=False for an interface', m: vmim({ vmiName: 'vm1' }), vmi: vmi({ cond: migratable('False', 'InterfaceNotLiveMigratable', 'cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network') }),
      want: { code: 400, message: 'Cannot migrate VMI, Reason: InterfaceNotLiveMigratable, Message: cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network' } },
    { name: 'LiveMigratable=True', m: vmim({ vmiName: 'vm1' }), vmi: vmi({ cond: migratable('True') }) },
    { name: 'no condition yet', m: vmim({ vmiName: 'vm1' }), vmi: vmi() },
    { name: 'in-flight migration (labelled)', m: vmim({ vmiName: 'vm1' }), vmi: vmi(), others: [vmim({ vmiName: 'vm1' }, { name: 'a', uid: 'u-a', phase: 'Running', label: 'vm1' })],
      want: { code: 400, message: 'in-flight migration detected. Active migration job (u-a) is currently already in progress for VMI vm1.' } },
    { name: 'in-flight migration (just created, no label yet)', m: vmim({ vmiName: 'vm1' }), vmi: vmi(), others: [vmim({ vmiName: 'vm1' }, { name: 'b', uid: 'u-b' })],
      want: { code: 400, message: 'in-flight migration detected. Active migration job (u-b) is currently already in progress for VMI vm1.' } },
    { name: 'finished migrations and other VMIs do not conflict', m: vmim({ vmiName: 'vm1' }), vmi: vmi(),
      others: [vmim({ vmiName: 'vm1' }, { uid: 'x', phase: 'Succeeded', label: 'vm1' }), vmim({ vmiName: 'vm1' }, { uid: 'y', phase: 'Failed', label: 'vm1' }), vmim({ vmiName: 'vm2' }, { uid: 'z', phase: 'Running', label: 'vm2' })] },
    { name: 'decentralized without the gate', m: vmim({ vmiName: 'vm1', receive: { migrationID: 'a' } }), vmi: vmi(), want: { code: 422, message: 'DecentralizedLiveMigration feature gate is not enabled in kubevirt resource' } },
    { name: 'decentralized: mismatched ids', m: vmim({ vmiName: 'vm1', sendTo: { migrationID: 'a', connectURL: 'u' }, receive: { migrationID: 'b' } }), vmi: vmi(), gates: ['DecentralizedLiveMigration'],
      want: { code: 422, message: 'sendTo migrationID a does not match receive migrationID b' } },
    { name: 'decentralized: non-migratable disks are fine', m: vmim({ vmiName: 'vm1', receive: { migrationID: 'a' } }), vmi: vmi({ cond: migratable('False', 'DisksNotLiveMigratable', 'x') }), gates: ['DecentralizedLiveMigration'] },
  ];
  for (const r of rows) {
    const cfg = r.gates ? mergeClusterConfig({ developerConfiguration: { featureGates: r.gates } }) : config;
    const d = admitMigrationCreate({ migration: r.m, vmi: r.vmi, migrations: r.others ?? [], fromVirtController: r.controller ?? false, config: cfg });
    if (!r.want) { assert.is(d, undefined, `${r.name}: ${d?.message}`); continue; }
    assert.ok(d, `${r.name}: admitted`);
    assert.is(d!.code, r.want.code, r.name);
    assert.is(d!.message, r.want.message, r.name);
    if (r.want.field) assert.is(d!.causes?.[0]?.field, r.want.field, r.name);
  }
});

const launcherPod = (o: { node?: string; phase?: string; app?: string; domain?: string | null } = {}): EvictedPod => ({
  metadata: { name: 'virt-launcher-vm1-abcde', namespace: 'ns', labels: { 'kubevirt.io': o.app ?? 'virt-launcher' }, annotations: o.domain === null ? {} : { 'kubevirt.io/domain': o.domain ?? 'vm1' } },
  spec: { nodeName: o.node ?? 'n1' },
  status: { phase: o.phase ?? 'Running' },
});

test('eviction interceptor: which evictions pass, which are refused, which mark the VMI', () => {
  const liveMigrate = (extra: Parameters<typeof vmi>[0] = {}) => vmi({ strategy: 'LiveMigrate', cond: migratable('True'), ...extra });
  const rows: { name: string; pod?: EvictedPod; vmi?: VirtualMachineInstance; cluster?: EvictionStrategy; ann?: Record<string, string>; want: ReturnType<typeof launcherEvictionDecision> }[] = [
    { name: 'no pod', want: { type: 'allow' } },
    { name: 'not a launcher', pod: launcherPod({ app: 'other' }), vmi: liveMigrate(), want: { type: 'allow' } },
    { name: 'completed launcher', pod: launcherPod({ phase: 'Succeeded' }), vmi: liveMigrate(), want: { type: 'allow' } },
    { name: 'failed launcher', pod: launcherPod({ phase: 'Failed' }), vmi: liveMigrate(), want: { type: 'allow' } },
    { name: 'no domain annotation', pod: launcherPod({ domain: null }), vmi: liveMigrate(), want: { type: 'allow' } },
    { name: 'VMI gone', pod: launcherPod(), want: { type: 'deny', message: 'kubevirt failed getting the vmi: virtualmachineinstances.kubevirt.io "vm1" not found' } },
    { name: 'strategy None (cluster default)', pod: launcherPod(), vmi: vmi({ cond: migratable('True') }), want: { type: 'allow' } },
    { name: 'LiveMigrate, migratable', pod: launcherPod(), vmi: liveMigrate(), want: { type: 'mark', nodeName: 'n1', fromDescheduler: false, message: 'Eviction triggered evacuation of VMI "ns/vm1"' } },
    { name: 'LiveMigrate from the cluster config', pod: launcherPod(), vmi: vmi({ cond: migratable('True') }), cluster: 'LiveMigrate', want: { type: 'mark', nodeName: 'n1', fromDescheduler: false, message: 'Eviction triggered evacuation of VMI "ns/vm1"' } },
    { name: 'VMI None overrides the cluster', pod: launcherPod(), vmi: vmi({ strategy: 'None', cond: migratable('True') }), cluster: 'LiveMigrate', want: { type: 'allow' } },
    { name: 'LiveMigrate, not migratable', pod: launcherPod(), vmi: liveMigrate({ cond: migratable('False', 'DisksNotLiveMigratable') }), want: { type: 'deny', message: 'VMI vm1 is configured with an eviction strategy but is not live-migratable' } },
    { name: 'LiveMigrateIfPossible, not migratable', pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrateIfPossible', cond: migratable('False') }), want: { type: 'allow' } },
    { name: 'LiveMigrateIfPossible, migratable', pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrateIfPossible', cond: migratable('True') }), want: { type: 'mark', nodeName: 'n1', fromDescheduler: false, message: 'Eviction triggered evacuation of VMI "ns/vm1"' } },
    { name: 'External, not migratable', pod: launcherPod(), vmi: vmi({ strategy: 'External' }), want: { type: 'mark', nodeName: 'n1', fromDescheduler: false, message: 'Eviction triggered evacuation of VMI "ns/vm1"' } },
    { name: 'already marked', pod: launcherPod(), vmi: liveMigrate({ evacuation: 'n1' }), want: { type: 'deny', message: 'Evacuation in progress: Eviction triggered evacuation of VMI "ns/vm1"' } },
    { name: 'the pod of another node (a target, or the old source)', pod: launcherPod({ node: 'n2' }), vmi: liveMigrate(), want: { type: 'deny', message: 'Eviction request for target Pod' } },
    { name: 'descheduler eviction', pod: launcherPod(), vmi: liveMigrate(), ann: { 'requested-by': 'sigs.k8s.io/descheduler' }, want: { type: 'mark', nodeName: 'n1', fromDescheduler: true, message: 'Eviction triggered evacuation of VMI "ns/vm1"' } },
  ];
  for (const r of rows) {
    const d = launcherEvictionDecision({ pod: r.pod, vmi: r.vmi, evictionAnnotations: r.ann, config: { evictionStrategy: r.cluster ?? 'None' } });
    assert.equal(d, r.want, r.name);
  }
});

test('the evacuation mark: evacuationNodeName, plus the descheduler as eviction source', () => {
  assert.equal(markForEvacuationPatch(vmi(), 'n1', false), [{ op: 'add', path: '/status/evacuationNodeName', value: 'n1' }]);
  assert.equal(markForEvacuationPatch(vmi(), 'n1', true)[1], { op: 'add', path: '/metadata/annotations', value: { 'kubevirt.io/eviction-source': 'descheduler' } });
  assert.equal(markForEvacuationPatch(vmi({ annotations: { a: 'b' } }), 'n1', true)[1], { op: 'add', path: '/metadata/annotations/kubevirt.io~1eviction-source', value: 'descheduler' });
});

test('effective eviction strategy and migratability on eviction', () => {
  const rows: { spec?: EvictionStrategy; cluster: EvictionStrategy; cond?: 'True' | 'False'; strategy: EvictionStrategy; migrates: boolean }[] = [
    { cluster: 'None', strategy: 'None', migrates: false },
    { cluster: 'LiveMigrate', strategy: 'LiveMigrate', migrates: true },
    { spec: 'None', cluster: 'LiveMigrate', strategy: 'None', migrates: false },
    { spec: 'LiveMigrate', cluster: 'None', cond: 'False', strategy: 'LiveMigrate', migrates: true },
    { spec: 'LiveMigrateIfPossible', cluster: 'None', cond: 'True', strategy: 'LiveMigrateIfPossible', migrates: true },
    { spec: 'LiveMigrateIfPossible', cluster: 'None', cond: 'False', strategy: 'LiveMigrateIfPossible', migrates: false },
    { spec: 'External', cluster: 'None', cond: 'True', strategy: 'External', migrates: false },
  ];
  for (const r of rows) {
    const v = vmi({ ...(r.spec ? { strategy: r.spec } : {}), ...(r.cond ? { cond: migratable(r.cond) } : {}) });
    assert.is(vmiEvictionStrategy({ evictionStrategy: r.cluster }, v), r.strategy, JSON.stringify(r));
    assert.is(vmiMigratableOnEviction({ evictionStrategy: r.cluster }, v), r.migrates, JSON.stringify(r));
  }
});

test.run();
