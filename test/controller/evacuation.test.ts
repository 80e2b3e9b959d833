// The evacuation controller's decision: which VMIs leave a node now, and the migrations it creates.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import type { EvictionStrategy, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { evacuationCandidates, evacuationMigration, isMigrating } from '../../controller/evacuation/candidates.ts';
import { evacuateCancelPatch, evacuateCancelRefusal, evacuationNodeOf, nodeHasDrainTaint } from '../../src/api/eviction.ts';
import type { Node } from '../../controller/pod.ts';

const NOW = new Date('2026-01-01T00:00:10Z');
const config = defaultClusterConfig();
const node = (taints: { key: string; effect: string; value?: string }[] = []): Node => ({ metadata: { name: 'n1' }, spec: { taints } });

function vmi(name: string, o: { strategy?: EvictionStrategy; migratable?: 'True' | 'False'; evacuation?: string; node?: string; phase?: string; deleting?: boolean; migration?: { start?: string; end?: string }; annotations?: Record<string, string> } = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}), ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: { domain: { devices: {} }, evictionStrategy: o.strategy ?? 'LiveMigrate' },
    status: {
      phase: (o.phase ?? 'Running') as 'Running', nodeName: o.node ?? 'n1',
      conditions: [{ type: 'LiveMigratable', status: o.migratable ?? 'True' }],
      ...(o.evacuation ? { evacuationNodeName: o.evacuation } : {}),
      ...(o.migration ? { migrationState: { ...(o.migration.start ? { startTimestamp: o.migration.start } : {}), ...(o.migration.end ? { endTimestamp: o.migration.end } : {}) } } : {}),
    },
  } as VirtualMachineInstance;
}
const mig = (vmiName: string, phase?: string, ns = 'ns'): VirtualMachineInstanceMigration => ({ metadata: { name: `m-${vmiName}`, namespace: ns }, spec: { vmiName }, ...(phase ? { status: { phase } } : {}) } as VirtualMachineInstanceMigration);

const names = (vs: readonly VirtualMachineInstance[]) => vs.map((v) => v.metadata?.name);

test('drain taint: key and NoSchedule effect, any value', () => {
  assert.ok(nodeHasDrainTaint(node([{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }]), 'kubevirt.io/drain'));
  assert.ok(nodeHasDrainTaint(node([{ key: 'kubevirt.io/drain', effect: 'NoSchedule', value: 'draining' }]), 'kubevirt.io/drain'));
  assert.not.ok(nodeHasDrainTaint(node([{ key: 'kubevirt.io/drain', effect: 'NoExecute' }]), 'kubevirt.io/drain'));
  assert.not.ok(nodeHasDrainTaint(node([{ key: 'other', effect: 'NoSchedule' }]), 'kubevirt.io/drain'));
  assert.not.ok(nodeHasDrainTaint(node(), 'kubevirt.io/drain'));
});

test('evacuate/cancel: the node it is evacuated from (else its node), refused under the drain taint, a test-guarded removal', () => {
  assert.is(evacuationNodeOf(vmi('a', { evacuation: 'n0', node: 'n1' })), 'n0');
  assert.is(evacuationNodeOf(vmi('a', { node: 'n1' })), 'n1');
  assert.is(evacuateCancelRefusal('n1', node([{ key: 'kubevirt.io/drain', effect: 'NoSchedule', value: 'x' }]), 'kubevirt.io/drain'), 'Node "n1" has NodeDrainTaintKey "kubevirt.io/drain:NoSchedule"');
  assert.is(evacuateCancelRefusal('n1', node([{ key: 'kubevirt.io/drain', effect: 'NoExecute' }]), 'kubevirt.io/drain'), undefined);
  assert.equal(evacuateCancelPatch('n1'), [{ op: 'test', path: '/status/evacuationNodeName', value: 'n1' }, { op: 'remove', path: '/status/evacuationNodeName' }]);
});

test('isMigrating: started and not ended by now', () => {
  assert.not.ok(isMigrating(vmi('a'), NOW));
  assert.ok(isMigrating(vmi('a', { migration: { start: '2026-01-01T00:00:05Z' } }), NOW));
  assert.not.ok(isMigrating(vmi('a', { migration: { start: '2026-01-01T00:00:05Z', end: '2026-01-01T00:00:08Z' } }), NOW));
  assert.not.ok(isMigrating(vmi('a', { migration: { start: '2026-01-01T00:00:20Z' } }), NOW));
});

test('which VMIs are evacuated, and which wait', () => {
  const taint = [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }];
  const rows: { name: string; taints?: typeof taint; vmis: VirtualMachineInstance[]; migrations?: VirtualMachineInstanceMigration[]; pods?: Record<string, number>; cluster?: EvictionStrategy; migrate: string[]; notMigratable?: string[] }[] = [
    { name: 'no taint, no mark: nothing', vmis: [vmi('a'), vmi('b')], migrate: [] },
    { name: 'tainted: every VMI that wants to move', taints: taint, vmis: [vmi('a'), vmi('b'), vmi('none', { strategy: 'None' }), vmi('ext', { strategy: 'External' })], migrate: ['a', 'b'] },
    { name: 'tainted: the cluster strategy counts', taints: taint, cluster: 'LiveMigrate', vmis: [{ ...vmi('c'), spec: { domain: { devices: {} } } } as VirtualMachineInstance], migrate: ['c'] },
    { name: 'marked by an eviction', vmis: [vmi('a', { evacuation: 'n1' }), vmi('b')], migrate: ['a'] },
    { name: 'marked, but already moved off', vmis: [vmi('a', { evacuation: 'n0' })], migrate: [] },
    { name: 'marked, but migrating now', vmis: [vmi('a', { evacuation: 'n1', migration: { start: '2026-01-01T00:00:01Z' } })], migrate: [] },
    { name: 'marked, earlier migration ended', vmis: [vmi('a', { evacuation: 'n1', migration: { start: '2026-01-01T00:00:01Z', end: '2026-01-01T00:00:02Z' } })], migrate: ['a'] },
    { name: 'LiveMigrate but LiveMigratable=False: stays, reported', vmis: [vmi('a', { evacuation: 'n1', migratable: 'False' })], migrate: [], notMigratable: ['a'] },
    { name: 'LiveMigrateIfPossible, not migratable: left alone', vmis: [vmi('a', { evacuation: 'n1', migratable: 'False', strategy: 'LiveMigrateIfPossible' })], migrate: [] },
    { name: 'LiveMigrateIfPossible, migratable', vmis: [vmi('a', { evacuation: 'n1', strategy: 'LiveMigrateIfPossible' })], migrate: ['a'] },
    { name: 'an unfinished migration exists', taints: taint, vmis: [vmi('a'), vmi('b')], migrations: [mig('a', 'Scheduling'), mig('b', 'Succeeded')], migrate: ['b'] },
    { name: 'same name in another namespace does not count', taints: taint, vmis: [vmi('a')], migrations: [mig('a', 'Running', 'other')], migrate: ['a'] },
    { name: 'a second pod still active', taints: taint, vmis: [vmi('a'), vmi('b')], pods: { a: 2 }, migrate: ['b'] },
    { name: 'final or deleted VMIs stay', taints: taint, vmis: [vmi('a', { phase: 'Succeeded' }), vmi('b', { deleting: true }), vmi('c')], migrate: ['c'] },
    { name: 'all candidates at once (the migration controller throttles)', taints: taint, vmis: ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => vmi(n)), migrate: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] },
  ];
  for (const r of rows) {
    const d = evacuationCandidates({ node: node(r.taints), vmisOnNode: r.vmis, migrations: r.migrations ?? [], activePods: (v) => r.pods?.[v.metadata!.name!] ?? 1, config: { ...config, evictionStrategy: r.cluster ?? 'None' }, now: NOW });
    assert.equal(names(d.migrate), r.migrate, r.name);
    assert.equal(names(d.notMigratable), r.notMigratable ?? [], r.name);
  }
});

test('the evacuation migration as KubeVirt generates it', () => {
  assert.equal(evacuationMigration(vmi('a'), 'n1'), {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration',
    metadata: { generateName: 'kubevirt-evacuation-', namespace: 'ns', annotations: { 'kubevirt.io/evacuationMigration': 'n1' } },
    spec: { vmiName: 'a', priority: 'system-critical' },
  });
  assert.is(evacuationMigration(vmi('a', { annotations: { 'kubevirt.io/eviction-source': 'descheduler' } }), 'n1').spec.priority, 'system-maintenance');
});

test.run();
