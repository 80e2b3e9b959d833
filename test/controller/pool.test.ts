// The VirtualMachinePool controller's decisions (KubeVirt's watch/pool/pool.go) and virt-api's pool
// admitter, as tables: names and indexes, the indexed VM spec, scale plans and scale-in order,
// outdated VMs and VMIs, maxUnavailable, status.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  claimPoolVMs,
  indexFromName,
  indexVMSpec,
  isOutdatedVM,
  isOutdatedVMI,
  maxUnavailable,
  newVMNames,
  planPoolScale,
  planProactiveUpdate,
  poolStatus,
  poolVM,
  unusedRevisions,
  updatedPoolVM,
} from '../../controller/pool/decisions.ts';
import { admitVMPool } from '../../src/admission/vmpool-admitter.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import type { VirtualMachinePool, VirtualMachinePoolSpec } from '../../src/api/pool/types.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const NOW = new Date('2026-01-01T00:00:00Z');

function pool(spec: Partial<VirtualMachinePoolSpec> = {}, extra: { generation?: number; uid?: string } = {}): VirtualMachinePool {
  return {
    apiVersion: 'pool.kubevirt.io/v1beta1',
    kind: 'VirtualMachinePool',
    metadata: { name: 'web', namespace: 'default', uid: extra.uid ?? 'pool-uid', generation: extra.generation ?? 1 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      virtualMachineTemplate: {
        metadata: { labels: { app: 'web' }, annotations: { note: 'x' } },
        spec: {
          runStrategy: 'Always',
          dataVolumeTemplates: [{ metadata: { name: 'rootdisk' }, spec: { storage: { resources: { requests: { storage: '1Gi' } } } } } as never],
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              domain: { devices: {}, resources: { requests: { memory: '64Mi' } } },
              volumes: [
                { name: 'root', dataVolume: { name: 'rootdisk' } },
                { name: 'claim', persistentVolumeClaim: { claimName: 'rootdisk' } },
                { name: 'shared', persistentVolumeClaim: { claimName: 'shared-data' } },
                { name: 'cm', configMap: { name: 'settings' } },
                { name: 'sec', secret: { secretName: 'creds' } },
                { name: 'ci', cloudInitNoCloud: { secretRef: { name: 'userdata' } } },
              ],
            },
          },
        },
      },
      ...spec,
    },
  };
}

function vm(name: string, o: { owner?: string | null; labels?: Record<string, string>; deleting?: boolean; created?: string; ready?: boolean; revision?: string; finalizers?: string[] } = {}): VirtualMachine {
  const labels = { app: 'web', ...(o.revision ? { 'kubevirt.io/vm-pool-revision-name': o.revision } : {}), ...(o.labels ?? {}) };
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name, namespace: 'default', uid: `${name}-uid`, labels,
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      ...(o.owner === null ? {} : { ownerReferences: [{ apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool', name: 'web', uid: o.owner ?? 'pool-uid', controller: true, blockOwnerDeletion: true }] }),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
    },
    spec: { template: { metadata: { labels: { app: 'web' } }, spec: { domain: { devices: {} } } } },
    ...(o.ready ? { status: { conditions: [{ type: 'Ready', status: 'True' }] } } : {}),
  } as VirtualMachine;
}

const fixed = () => 0;
const names = (l: readonly VirtualMachine[]) => l.map((v) => v.metadata?.name);

test('names: <pool>-<index>, the lowest free indexes first; the index is what follows the last dash', () => {
  assert.equal(newVMNames(3, 'web', () => false), ['web-0', 'web-1', 'web-2']);
  const taken = new Set(['web-0', 'web-2']);
  assert.equal(newVMNames(3, 'web', (n) => taken.has(n)), ['web-1', 'web-3', 'web-4']);
  assert.is(indexFromName('my-pool-12'), 12);
  assert.ok(Number.isNaN(indexFromName('my-pool')));
});

test('indexVMSpec: dataVolumeTemplates and the claims naming them get -<index>; other claims, ConfigMaps and Secrets keep their names', () => {
  const s = indexVMSpec(pool().spec, 4);
  assert.is(s.dataVolumeTemplates![0]!.metadata!.name, 'rootdisk-4');
  const v = s.template.spec!.volumes!;
  assert.equal([v[0]!.dataVolume!.name, v[1]!.persistentVolumeClaim!.claimName, v[2]!.persistentVolumeClaim!.claimName, v[3]!.configMap!.name, v[4]!.secret!.secretName, v[5]!.cloudInitNoCloud!.secretRef!.name],
    ['rootdisk-4', 'rootdisk-4', 'shared-data', 'settings', 'creds', 'userdata']);
  assert.is(pool().spec.virtualMachineTemplate.spec.dataVolumeTemplates![0]!.metadata!.name, 'rootdisk', 'the pool is not changed');
});

test('indexVMSpec with nameGeneration: ConfigMap, Secret and cloud-init secret refs get -<index> too', () => {
  const v = indexVMSpec(pool({ nameGeneration: { appendIndexToConfigMapRefs: true, appendIndexToSecretRefs: true } }).spec, 2).template.spec!.volumes!;
  assert.equal([v[3]!.configMap!.name, v[4]!.secret!.secretName, v[5]!.cloudInitNoCloud!.secretRef!.name], ['settings-2', 'creds-2', 'userdata-2']);
});

test('poolVM: template labels and annotations, the revision label on the VM and its template, finalizer, controller reference', () => {
  const v = poolVM(pool(), 'web-1', 'web-1');
  assert.equal(v.metadata?.labels, { app: 'web', 'kubevirt.io/vm-pool-revision-name': 'web-1' });
  assert.equal(v.metadata?.annotations, { note: 'x' });
  assert.is(v.spec.template.metadata?.labels?.['kubevirt.io/vm-pool-revision-name'], 'web-1');
  assert.equal(v.metadata?.finalizers, ['pool.kubevirt.io/finalizer']);
  assert.equal(v.metadata?.ownerReferences, [{ apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool', name: 'web', uid: 'pool-uid', controller: true, blockOwnerDeletion: true }]);
  assert.is(v.spec.dataVolumeTemplates![0]!.metadata!.name, 'rootdisk-1');
});

test('updatedPoolVM keeps the firmware UUID and serial the VM was given', () => {
  const old = poolVM(pool(), 'web-0', 'web-1');
  old.spec.template.spec!.domain.firmware = { uuid: 'u-1', serial: 's-1' };
  const p = pool({}, { generation: 2 });
  p.spec.virtualMachineTemplate.spec.template.spec!.domain.resources = { requests: { memory: '128Mi' } };
  const next = updatedPoolVM(p, old, 'web-2');
  assert.equal(next.spec.template.spec!.domain.firmware, { uuid: 'u-1', serial: 's-1' });
  assert.is(next.spec.template.spec!.domain.resources?.requests?.memory, '128Mi');
  assert.is(next.metadata?.labels?.['kubevirt.io/vm-pool-revision-name'], 'web-2');
  assert.equal(next.metadata?.finalizers, ['pool.kubevirt.io/finalizer'], 'finalizers and owner references stay');
});

test('claim: owned+matching kept, owned+not matching released, matching orphans adopted, others ignored', () => {
  const c = claimPoolVMs(pool(), [vm('web-0'), vm('web-1', { labels: { app: 'other' } }), vm('stray', { owner: null }), vm('theirs', { owner: 'x' })]);
  assert.equal([names(c.claimed), names(c.adopt), names(c.release)], [['web-0', 'stray'], ['stray'], ['web-1']]);
});

const SCALE_CASES: [string, Partial<VirtualMachinePoolSpec>, VirtualMachine[], { create?: string[]; delete?: string[]; release?: string[] }][] = [
  ['up from nothing', {}, [], { create: ['web-0', 'web-1', 'web-2'] }],
  ['up into the gap', { replicas: 3 }, [vm('web-0'), vm('web-2')], { create: ['web-1'] }],
  ['down by the default policy (Random, here its first pick)', { replicas: 1 }, [vm('web-0'), vm('web-1'), vm('web-2')], { delete: ['web-1', 'web-2'] }],
  ['down, DescendingOrder: highest index first', { replicas: 1, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'DescendingOrder' } } } }, [vm('web-1'), vm('web-10'), vm('web-2')], { delete: ['web-10', 'web-2'] }],
  ['down, AscendingOrder', { replicas: 2, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder' } } } }, [vm('web-3'), vm('web-1'), vm('web-2')], { delete: ['web-1'] }],
  ['down, Newest', { replicas: 2, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'Newest' } } } }, [vm('web-0', { created: '2026-01-01T00:00:03Z' }), vm('web-1', { created: '2026-01-01T00:00:09Z' }), vm('web-2', { created: '2026-01-01T00:00:01Z' })], { delete: ['web-1'] }],
  ['down, Oldest', { replicas: 2, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'Oldest' } } } }, [vm('web-0', { created: '2026-01-01T00:00:03Z' }), vm('web-1', { created: '2026-01-01T00:00:09Z' }), vm('web-2', { created: '2026-01-01T00:00:01Z' })], { delete: ['web-2'] }],
  ['down, a deleting VM counts against the excess', { replicas: 1, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder' } } } }, [vm('web-0', { deleting: true }), vm('web-1'), vm('web-2')], { delete: ['web-1'] }],
  ['down, narrowed by the selectors', { replicas: 1, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder', selectors: { labelSelector: { matchLabels: { app: 'web' } } } } } } }, [vm('web-0'), vm('web-1'), vm('web-2')], { delete: ['web-0', 'web-1'] }],
  ['down with an opportunistic scale-in: nothing deleted', { replicas: 1, scaleInStrategy: { opportunistic: {} } }, [vm('web-0'), vm('web-1')], {}],
  ['down with an unmanaged scale-in: nothing deleted', { replicas: 1, scaleInStrategy: { unmanaged: {} } }, [vm('web-0'), vm('web-1')], {}],
  ['steady: deleting VMs lose the pool finalizer', { replicas: 2 }, [vm('web-0', { deleting: true, finalizers: ['pool.kubevirt.io/finalizer'] }), vm('web-1')], { release: ['web-0'] }],
  ['replicas unset means 1', { replicas: undefined as never }, [], { create: ['web-0'] }],
];

for (const [name, spec, vms, want] of SCALE_CASES) {
  test(`planPoolScale: ${name}`, () => {
    const p = pool(spec);
    if (spec.replicas === undefined && 'replicas' in spec) delete p.spec.replicas;
    const taken = new Set(vms.map((v) => v.metadata!.name!));
    const plan = planPoolScale(p, vms, { exists: (n) => taken.has(n), rnd: fixed });
    assert.equal({ create: plan.create, delete: names(plan.delete), release: names(plan.release) }, { create: want.create ?? [], delete: want.delete ?? [], release: want.release ?? [] });
  });
}

test('planPoolScale: at most the burst at once', () => {
  assert.is(planPoolScale(pool({ replicas: 300 }), [], { exists: () => false, rnd: fixed }).create.length, 250);
});

test('maxUnavailable: 100% by default, percentages of the replicas rounded down, at least 1', () => {
  assert.equal([maxUnavailable(pool()), maxUnavailable(pool({ maxUnavailable: '50%', replicas: 5 })), maxUnavailable(pool({ maxUnavailable: '10%', replicas: 3 })), maxUnavailable(pool({ maxUnavailable: 2 }))], [3, 2, 1, 2]);
});

const specV1 = pool().spec;
const specV2: VirtualMachinePoolSpec = structuredClone(specV1);
specV2.virtualMachineTemplate.spec.template.spec!.domain.resources = { requests: { memory: '128Mi' } };
const specV3: VirtualMachinePoolSpec = structuredClone(specV1);
specV3.replicas = 7;
const specV4: VirtualMachinePoolSpec = structuredClone(specV1);
specV4.virtualMachineTemplate.spec.dataVolumeTemplates = [];
const revisions: Record<string, VirtualMachinePoolSpec> = { 'web-1': specV1, 'web-2': specV2, 'web-3': specV3, 'web-4': specV4 };
const lookup = (n: string) => revisions[n];

test('isOutdatedVM: no revision label, a missing revision or another template', () => {
  assert.ok(isOutdatedVM(pool(), vm('web-0'), lookup));
  assert.ok(isOutdatedVM(pool(), vm('web-0', { revision: 'web-9' }), lookup));
  assert.not.ok(isOutdatedVM(pool(), vm('web-0', { revision: 'web-1' }), lookup));
  assert.not.ok(isOutdatedVM(pool({ replicas: 7 }), vm('web-0', { revision: 'web-1' }), lookup), 'replicas are not the template');
  assert.ok(isOutdatedVM({ ...pool(), spec: specV2 }, vm('web-0', { revision: 'web-1' }), lookup));
});

const vmi = (revision?: string, ready = true): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
  metadata: { name: 'web-0', namespace: 'default', ...(revision ? { labels: { 'kubevirt.io/vm-pool-revision-name': revision } } : {}) },
  spec: { domain: { devices: {} } },
  status: { phase: 'Running', conditions: ready ? [{ type: 'Ready', status: 'True' }] : [] },
} as VirtualMachineInstance);

const VMI_CASES: [string, string | undefined, string | undefined, string][] = [
  ['the VM has no revision yet', undefined, 'web-1', 'no-update'],
  ['the VMI has no revision', 'web-2', undefined, 'restart'],
  ['same revision', 'web-2', 'web-2', 'no-update'],
  ['another VMI template', 'web-2', 'web-1', 'restart'],
  ['the same VMI template under another revision', 'web-3', 'web-1', 'label-patch'],
  ['other dataVolumeTemplates', 'web-4', 'web-1', 'vm-delete'],
  ['the VM revision is not there yet', 'web-9', 'web-1', 'no-update'],
  ['the VMI revision is gone', 'web-2', 'web-8', 'restart'],
];
for (const [name, vmRev, vmiRev, want] of VMI_CASES) {
  test(`isOutdatedVMI: ${name}`, () => assert.is(isOutdatedVMI(vm('web-0', vmRev ? { revision: vmRev } : {}), vmi(vmiRev), lookup), want));
}

test('planProactiveUpdate: at most maxUnavailable VMIs restarted at once, the rest delayed', () => {
  const p = pool({ maxUnavailable: 1, updateStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder' } } } });
  const vms = [vm('web-1', { revision: 'web-2', ready: true }), vm('web-0', { revision: 'web-2', ready: true })];
  const r = planProactiveUpdate(p, vms, () => vmi('web-1'), lookup, fixed);
  assert.equal(r.updates.map((u) => [u.vm.metadata?.name, u.type]), [['web-0', 'restart']]);
  assert.ok(r.delayed);
  const all = planProactiveUpdate(pool(), vms, () => vmi('web-1'), lookup, fixed);
  assert.is(all.updates.length, 2);
  assert.not.ok(all.delayed);
});

test('unusedRevisions: those no VM or VMI of the pool names', () => {
  assert.equal(unusedRevisions(['web-1', 'web-2', 'web-3'], [vm('web-0', { revision: 'web-3' })], () => vmi('web-2')), ['web-1']);
});

test('poolStatus: replicas, readyReplicas from the VMs\' Ready condition, labelSelector; paused and failure conditions with their events', () => {
  const vms = [vm('web-0', { ready: true }), vm('web-1')];
  const s = poolStatus(pool(), vms, undefined, NOW);
  assert.equal(s.status, { labelSelector: 'app=web', replicas: 2, readyReplicas: 1 });
  assert.ok(s.changed);
  assert.not.ok(poolStatus({ ...pool(), status: s.status }, vms, undefined, NOW).changed);
  const paused = poolStatus(pool({ paused: true }), vms, { reason: 'FailedScaleOut', message: 'error during scale out: boom' }, NOW);
  assert.equal(paused.status.conditions?.map((c) => [c.type, c.reason, c.message]), [['ReplicaFailure', 'FailedScaleOut', 'error during scale out: boom'], ['ReplicaPaused', 'SuccessfulPaused', 'Pool controller is paused']]);
  assert.equal(paused.events.map((e) => e.reason), ['FailedScaleOut', 'SuccessfulPaused']);
  const resumed = poolStatus({ ...pool(), status: paused.status }, vms, undefined, NOW);
  assert.is(resumed.status.conditions, undefined);
  assert.equal(resumed.events.map((e) => [e.reason, e.message]), [['SuccessfulResume', 'Pool is unpaused']]);
});

const cfg = defaultClusterConfig();
const raw = (spec: Partial<VirtualMachinePoolSpec>) => JSON.parse(JSON.stringify(pool(spec))) as unknown;
const ADMIT_CASES: [string, unknown, string | undefined, unknown?][] = [
  ['a valid pool', raw({}), undefined],
  ['a selector the template labels do not match', raw({ selector: { matchLabels: { app: 'db' } } }), 'spec.selector: selector does not match labels.'],
  ['an invalid selector: a cause naming it, not a crash', raw({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] } }), "spec.selector: values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"],
  ['maxUnavailable without %', raw({ maxUnavailable: '50' }), 'maxUnavailable percentage must end with %'],
  ['maxUnavailable 0%', raw({ maxUnavailable: '0%' }), 'maxUnavailable percentage value 0 must be between 1 and 100'],
  ['maxUnavailable 0', raw({ maxUnavailable: 0 }), 'maxUnavailable must be greater than 0'],
  ['two update strategies', raw({ updateStrategy: { opportunistic: {}, proactive: {} } }), 'spec.updateStrategy: only one strategy can be configured at a time: but found opportunistic, proactive strategies'],
  ['two scale-in strategies', raw({ scaleInStrategy: { unmanaged: {}, proactive: {} } }), 'spec.scaleInStrategy: only one strategy can be configured at a time: but found unmanaged, proactive strategies'],
  ['a template the VM admitter refuses', (() => { const p = pool(); p.spec.virtualMachineTemplate.spec.template.spec!.domain.devices = { disks: [{ name: 'nope' }] }; return JSON.parse(JSON.stringify(p)) as unknown; })(), 'spec.virtualMachineTemplate.spec.template.spec.domain.devices.disks[0].name'],
  ['the selector changed on update', raw({ selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'app', operator: 'Exists' }] } }), 'spec.selector: selector is immutable after creation.', raw({})],
];
for (const [name, obj, want, old] of ADMIT_CASES) {
  test(`admitVMPool: ${name}`, () => {
    const r = admitVMPool(obj, { config: cfg, fromKubeVirtServiceAccount: false, ...(old ? { oldObject: old } : {}) });
    if (want === undefined) assert.ok(r === undefined || !('code' in r), JSON.stringify(r));
    else assert.ok(r && 'message' in r && JSON.stringify(r).includes(want), `${JSON.stringify(r)} should say ${want}`);
  });
}

test.run();
