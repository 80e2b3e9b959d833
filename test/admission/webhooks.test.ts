// virt-api's webhooks inside the embedded API server, through real clients: @kubernetes/client-node
// (qvirt's KubeClient and CoreV1Api's createNamespacedPodEviction) and the real kubectl's `drain`.
// VirtualMachineInstanceMigration creates are refused as KubeVirt refuses them; a launcher pod's
// eviction marks its VMI for evacuation and is refused with 429, which kubectl drain retries.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { execa } from 'execa';
import type { ApiServer } from '../../src/apiserver/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { refused, startAdmissionCluster, type AdmissionCluster } from './lib.ts';

let api: ApiServer;
let admin: KubeClient;
let controller: KubeClient;
const tmp = tempDir('qadm');

function adminConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(api.kubeconfigPath!);
  return kc;
}

let cluster: AdmissionCluster;
test.before(async () => {
  cluster = await startAdmissionCluster(tmp.path);
  ({ api, admin, controller } = cluster);
});
test.after(async () => {
  await cluster?.stop();
  tmp.cleanup();
});

function vmiObject(name: string, status: NonNullable<VirtualMachineInstance['status']>, strategy?: 'LiveMigrate' | 'None'): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default' },
    spec: { domain: { devices: {}, resources: { requests: { memory: '64Mi' } } }, ...(strategy ? { evictionStrategy: strategy } : {}) },
    status,
  } as VirtualMachineInstance;
}
const migration = (vmiName: string | undefined, extra: Partial<VirtualMachineInstanceMigration['spec']> = {}): VirtualMachineInstanceMigration =>
  ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { generateName: 'mig-', namespace: 'default' }, spec: { ...(vmiName ? { vmiName } : {}), ...extra } } as VirtualMachineInstanceMigration);

/** The refusal: the Status code and message the server sent. */
const WH = 'admission webhook "migration-create-validator.kubevirt.io" denied the request';
const liveMigratable = (status: 'True' | 'False', reason?: string, message?: string) => [{ type: 'LiveMigratable' as const, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) }];

test('migration creates: missing VMI, final VMI, LiveMigratable=False, in flight, priority — refused with KubeVirt\'s messages', async () => {
  let e = await refused(admin.create(Resources.virtualMachineInstanceMigrations, migration('nope')));
  assert.is(e.code, 400);
  assert.is(e.message, `${WH}: the VMI "default/nope" does not exist`);
  // A server-side apply that would create it is admitted the same way.
  e = await refused(admin.request('PATCH', '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstancemigrations/applied', {
    query: { fieldManager: 'test' }, contentType: 'application/apply-patch+yaml', body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'applied' }, spec: { vmiName: 'nope' } } }));
  assert.is(e.message, `${WH}: the VMI "default/nope" does not exist`);

  await admin.create(Resources.virtualMachineInstances, vmiObject('done', { phase: 'Succeeded' }));
  e = await refused(admin.create(Resources.virtualMachineInstanceMigrations, migration('done')));
  assert.is(e.message, `${WH}: Cannot migrate VMI in finalized state.`);

  const why = 'cannot migrate VMI: PVC disk is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)';
  await admin.create(Resources.virtualMachineInstances, vmiObject('local-disk', { phase: 'Running', nodeName: 'n1', conditions: liveMigratable('False', 'DisksNotLiveMigratable', why) }));
  e = await refused(admin.create(Resources.virtualMachineInstanceMigrations, migration('local-disk')));
  assert.is(e.code, 400);
  assert.is(e.message, `${WH}: Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: ${why}`);
  assert.is((await admin.list(Resources.virtualMachineInstanceMigrations, { namespace: 'default' })).items.length, 0, 'nothing was stored');

  await admin.create(Resources.virtualMachineInstances, vmiObject('ok', { phase: 'Running', nodeName: 'n1', conditions: liveMigratable('True') }));
  const first = await admin.create(Resources.virtualMachineInstanceMigrations, migration('ok'));
  e = await refused(admin.create(Resources.virtualMachineInstanceMigrations, migration('ok')));
  assert.is(e.message, `${WH}: in-flight migration detected. Active migration job (${first.metadata?.uid}) is currently already in progress for VMI ok.`);
  // A dry run is admitted the same way.
  e = await refused(admin.create(Resources.virtualMachineInstanceMigrations, migration('ok'), { dryRun: true }));
  assert.is(e.code, 400);
  await admin.patch(Resources.virtualMachineInstanceMigrations, 'default', first.metadata!.name!, { status: { phase: 'Succeeded' } }, 'merge', 'status');
  await admin.create(Resources.virtualMachineInstanceMigrations, migration('ok'), { dryRun: true });

  e = await refused(admin.create(Resources.virtualMachineInstanceMigrations, migration('ok', { priority: 'system-critical' })));
  assert.is(e.code, 422);
  assert.is(e.message, `${WH}: Migration priority queue, only virt-controller is allowed to set priority field`);
  const byController = await controller.create(Resources.virtualMachineInstanceMigrations, migration('ok', { priority: 'system-critical' }));
  assert.is(byController.spec.priority, 'system-critical');
});

test('pods/eviction: a LiveMigrate launcher pod marks its VMI and is refused with 429; other pods are evicted', async () => {
  const core = adminConfig().makeApiClient(CoreV1Api);
  await admin.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
  await admin.create(Resources.virtualMachineInstances, vmiObject('mover', { phase: 'Running', nodeName: 'n1', conditions: liveMigratable('True') }, 'LiveMigrate'));
  const vmi = await admin.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'mover');
  const launcher = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'virt-launcher-mover-abcde', namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' }, annotations: { 'kubevirt.io/domain': 'mover' },
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'mover', uid: vmi.metadata!.uid!, controller: true, blockOwnerDeletion: true }] },
    spec: { nodeName: 'n1', containers: [{ name: 'compute', image: 'qvirt/launcher' }] },
  };
  await admin.create(Resources.pods, launcher);
  await admin.patch(Resources.pods, 'default', launcher.metadata.name, { status: { phase: 'Running' } }, 'merge', 'status');

  // A dry run refuses the same way and marks nothing.
  let e = await core.createNamespacedPodEviction({ name: launcher.metadata.name, namespace: 'default', body: { metadata: { name: launcher.metadata.name, namespace: 'default' }, deleteOptions: { dryRun: ['All'] } } }).then(() => undefined, (err: { code?: number; body?: string }) => err);
  assert.is(e?.code, 429);
  assert.is((await admin.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'mover')).status?.evacuationNodeName, undefined);

  e = await core.createNamespacedPodEviction({ name: launcher.metadata.name, namespace: 'default', body: { metadata: { name: launcher.metadata.name, namespace: 'default' } } }).then(() => undefined, (err: { code?: number; body?: string }) => err);
  assert.is(e?.code, 429);
  const status = JSON.parse(e!.body!) as { message: string; code: number };
  assert.is(status.message, 'admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: Eviction triggered evacuation of VMI "default/mover"');
  assert.is((await admin.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'mover')).status?.evacuationNodeName, 'n1');
  assert.ok(await admin.get(Resources.pods, 'default', launcher.metadata.name), 'the launcher pod stays');

  // kubectl drain finds eviction support in discovery, cordons the node and retries the 429.
  const home = tempDir('qadh');
  try {
    const r = await execa('kubectl', ['drain', 'n1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=7s'], { env: { KUBECONFIG: api.kubeconfigPath!, HOME: home.path }, reject: false, timeout: 60_000 });
    const out = r.stdout + r.stderr;
    assert.is.not(r.exitCode, 0, out);
    assert.match(out, 'node/n1 cordoned');
    assert.match(out, `error when evicting pods/"${launcher.metadata.name}" -n "default" (will retry after 5s): admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: Evacuation in progress: Eviction triggered evacuation of VMI "default/mover"`);
    assert.is((await admin.get<{ metadata?: object; spec?: { unschedulable?: boolean } }>(Resources.nodes, undefined, 'n1')).spec?.unschedulable, true);
  } finally { home.cleanup(); }

  // Any other pod is evicted: deleted with the eviction's delete options.
  await admin.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } });
  await core.createNamespacedPodEviction({ name: 'plain', namespace: 'default', body: { metadata: { name: 'plain', namespace: 'default' }, deleteOptions: { gracePeriodSeconds: 0 } } });
  assert.is((await admin.list(Resources.pods, { namespace: 'default', fieldSelector: 'metadata.name=plain' })).items.length, 0);
  e = await core.createNamespacedPodEviction({ name: 'none', namespace: 'default', body: { metadata: { name: 'none', namespace: 'default' } } }).then(() => undefined, (err: { code?: number }) => err);
  assert.is(e?.code, 404);
});

test('the cluster-wide eviction strategy comes from the KubeVirt CR', async () => {
  const core = adminConfig().makeApiClient(CoreV1Api);
  await admin.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubevirt' } });
  await admin.create(Resources.kubeVirts, { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { configuration: { evictionStrategy: 'LiveMigrate' } } });
  await admin.create(Resources.virtualMachineInstances, vmiObject('cluster-default', { phase: 'Running', nodeName: 'n2', conditions: liveMigratable('True') }));
  await admin.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'virt-launcher-cluster-default-x', namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' }, annotations: { 'kubevirt.io/domain': 'cluster-default' } }, spec: { nodeName: 'n2', containers: [{ name: 'compute', image: 'qvirt/launcher' }] } });
  const e = await core.createNamespacedPodEviction({ name: 'virt-launcher-cluster-default-x', namespace: 'default', body: { metadata: { name: 'virt-launcher-cluster-default-x', namespace: 'default' } } }).then(() => undefined, (err: { code?: number }) => err);
  assert.is(e?.code, 429);
  assert.is((await admin.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'cluster-default')).status?.evacuationNodeName, 'n2');
});

test.run();
