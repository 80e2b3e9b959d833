// The migration-create admitter and the launcher eviction interceptor as a real kube-apiserver calls
// them: AdmissionReview v1 POSTed over HTTPS to `qvirt controller --webhook-port`'s server on
// virt-api's paths, the webhook reading the VMI, migrations and pod through the real client from an
// API server (the embedded one, standing in for the cluster's), and the eviction's evacuation mark
// written there (not on a dry run).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:https';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { ensureCaFiles, ensureCertFiles } from '../../src/pki/cert-files.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { kubeVirtApiWebhooks, MIGRATION_CREATE_PATH, POD_EVICTION_PATH } from '../../src/admission/api-webhooks.ts';
import { isKubeVirtControllerServiceAccount } from '../../src/admission/kubevirt-webhooks.ts';
import { startWebhookServer, type WebhookServer } from '../../src/admission/webhook-server.ts';
import { webhookObjects } from '../../src/deploy/webhooks.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { applyCrdFiles } from '../../src/deploy/crds.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('api-webhooks-test', { level: 'warn' });
const tmp = tempDir('qawh');
let api: ApiServer;
let client: KubeClient;
let server: WebhookServer;
let ca: string;

test.before(async () => {
  api = await startApiServer({ dataDir: join(tmp.path, 'api'), tls: true, log });
  client = KubeClient.fromFile(api.kubeconfigPath!);
  await applyCrdFiles(client);
  const dir = join(tmp.path, 'pki');
  ca = ensureCaFiles(dir, 'webhook-ca').certPem;
  const serving = ensureCertFiles(dir, 'tls', { commonName: 'virt-controller-webhooks' }, { usages: ['serverAuth'], hosts: ['localhost'] });
  server = await startWebhookServer({
    host: '127.0.0.1', port: 0, key: serving.keyPem, cert: serving.certPem,
    config: () => defaultClusterConfig(), apiWebhooks: kubeVirtApiWebhooks({ client, isVirtController: isKubeVirtControllerServiceAccount }), log,
  });
});
test.after(async () => {
  await server?.close();
  await client?.close();
  await api?.stop();
  tmp.cleanup();
});

interface Response { uid: string; allowed: boolean; status?: { code: number; message: string; reason?: string } }
function post(path: string, body: unknown): Promise<{ code: number; response?: Response; text: string }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: server.port, path, method: 'POST', agent: false, ca, servername: 'localhost', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) } }, (res) => {
      let s = '';
      res.on('data', (c: Buffer) => { s += c.toString(); });
      res.on('end', () => {
        let response: Response | undefined;
        try { response = (JSON.parse(s) as { response: Response }).response; } catch { /* not a review */ }
        resolve({ code: res.statusCode ?? 0, text: s, ...(response ? { response } : {}) });
      });
    }).on('error', reject).end(text);
  });
}

let n = 0;
function review(o: { resource: { group: string; resource: string }; subResource?: string; name: string; operation?: string; object: unknown; dryRun?: boolean; username?: string }) {
  return {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: `u-${++n}`, resource: { ...o.resource, version: 'v1' }, ...(o.subResource ? { subResource: o.subResource } : {}),
      name: o.name, namespace: 'default', operation: o.operation ?? 'CREATE',
      userInfo: { username: o.username ?? 'alice', groups: ['system:authenticated'] }, object: o.object, oldObject: null, dryRun: o.dryRun ?? false,
    },
  };
}
const migrationReview = (vmiName: string, extra: Record<string, unknown> = {}, username?: string) => review({
  resource: { group: 'kubevirt.io', resource: 'virtualmachineinstancemigrations' }, name: '', ...(username ? { username } : {}),
  object: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { generateName: 'mig-', namespace: 'default' }, spec: { vmiName, ...extra } },
});
const evictionReview = (pod: string, o: { dryRun?: boolean } = {}) => review({
  resource: { group: '', resource: 'pods' }, subResource: 'eviction', name: pod, ...(o.dryRun ? { dryRun: true } : {}),
  object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: 'default' } },
});
const vmi = (name: string, status: NonNullable<VirtualMachineInstance['status']>, strategy?: string): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' },
  spec: { domain: { devices: {}, resources: { requests: { memory: '64Mi' } } }, ...(strategy ? { evictionStrategy: strategy } : {}) }, status,
} as VirtualMachineInstance);
const migratable = (s: 'True' | 'False', reason?: string, message?: string) => [{ type: 'LiveMigratable' as const, status: s, ...(reason ? { reason } : {}), ...(message ? { message } : {}) }];

test('migration create: admitted for a migratable VMI; refused for a missing, a non-migratable or an already migrating one, and a priority from a user', async () => {
  await client.create(Resources.virtualMachineInstances, vmi('ok', { phase: 'Running', nodeName: 'n1', conditions: migratable('True') }));
  await client.create(Resources.virtualMachineInstances, vmi('pinned', { phase: 'Running', nodeName: 'n1', conditions: migratable('False', 'InterfaceNotLiveMigratable', 'cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network') }));

  let r = await post(MIGRATION_CREATE_PATH, migrationReview('ok'));
  assert.is(r.code, 200, r.text);
  assert.is(r.response?.allowed, true);

  r = await post(MIGRATION_CREATE_PATH, migrationReview('nope'));
  assert.equal([r.response?.allowed, r.response?.status?.code, r.response?.status?.message], [false, 400, 'the VMI "default/nope" does not exist']);

  r = await post(MIGRATION_CREATE_PATH, migrationReview('pinned'));
  assert.equal([r.response?.allowed, r.response?.status?.message], [false, 'Cannot migrate VMI, Reason: InterfaceNotLiveMigratable, Message: cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network']);

  r = await post(MIGRATION_CREATE_PATH, migrationReview('ok', { priority: 'user' }));
  assert.equal([r.response?.allowed, r.response?.status?.code, r.response?.status?.message], [false, 422, 'Migration priority queue, only virt-controller is allowed to set priority field']);
  r = await post(MIGRATION_CREATE_PATH, migrationReview('ok', { priority: 'system-critical' }, 'system:serviceaccount:kubevirt:kubevirt-controller'));
  assert.is(r.response?.allowed, true, 'virt-controller may set the priority');

  // One in flight in the cluster: the next is refused, naming it.
  const inFlight = await client.create<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'first', namespace: 'default' }, spec: { vmiName: 'ok' } });
  r = await post(MIGRATION_CREATE_PATH, migrationReview('ok'));
  assert.equal([r.response?.allowed, r.response?.status?.message], [false, `in-flight migration detected. Active migration job (${inFlight.metadata?.uid ?? ''}) is currently already in progress for VMI ok.`]);

  // A review of something else on this path is an error response, not an admission.
  r = await post(MIGRATION_CREATE_PATH, evictionReview('virt-launcher-x'));
  assert.equal([r.response?.allowed, r.response?.status?.message], [false, "expect resource to be 'virtualmachineinstancemigrations'"]);
});

test('launcher eviction: a LiveMigrate launcher pod is refused with 429 and its VMI marked (not on a dry run); other pods pass', async () => {
  const v = await client.create(Resources.virtualMachineInstances, vmi('mover', { phase: 'Running', nodeName: 'n1', conditions: migratable('True') }, 'LiveMigrate'));
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'virt-launcher-mover-abcde', namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' }, annotations: { 'kubevirt.io/domain': 'mover' },
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'mover', uid: v.metadata!.uid!, controller: true }] },
    spec: { nodeName: 'n1', containers: [{ name: 'compute', image: 'qvirt/launcher' }] },
  };
  await client.create(Resources.pods, pod);
  await client.patch(Resources.pods, 'default', pod.metadata.name, { status: { phase: 'Running' } }, 'merge', 'status');
  const mark = async () => (await client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'mover')).status?.evacuationNodeName;

  let r = await post(POD_EVICTION_PATH, evictionReview(pod.metadata.name, { dryRun: true }));
  assert.equal([r.response?.allowed, r.response?.status?.code], [false, 429]);
  assert.is(await mark(), undefined, 'a dry run marks nothing');

  r = await post(POD_EVICTION_PATH, evictionReview(pod.metadata.name));
  assert.equal([r.response?.allowed, r.response?.status?.code, r.response?.status?.message], [false, 429, 'Eviction triggered evacuation of VMI "default/mover"']);
  assert.is(await mark(), 'n1');
  r = await post(POD_EVICTION_PATH, evictionReview(pod.metadata.name));
  assert.equal([r.response?.status?.code, r.response?.status?.message], [429, 'Evacuation in progress: Eviction triggered evacuation of VMI "default/mover"']);

  await client.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } });
  r = await post(POD_EVICTION_PATH, evictionReview('plain'));
  assert.is(r.response?.allowed, true);
  r = await post(POD_EVICTION_PATH, evictionReview('gone'));
  assert.is(r.response?.allowed, true, 'no such pod: nothing to intercept');
});

test('the install registers both on virt-api\'s paths, the eviction one only for launcher pods', () => {
  const vwc = webhookObjects('kubevirt', 'kubevirt.io', 'virt-controller', {}).find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as { webhooks: Array<{ name: string; clientConfig: { service: { path: string } }; rules: Array<{ resources: string[]; operations: string[] }>; sideEffects: string; matchConditions?: Array<{ expression: string }> }> };
  const byName = new Map(vwc.webhooks.map((w) => [w.name, w]));
  const mig = byName.get('migration-create-validator.kubevirt.io');
  assert.equal([mig?.clientConfig.service.path, mig?.rules[0]?.resources, mig?.rules[0]?.operations], [MIGRATION_CREATE_PATH, ['virtualmachineinstancemigrations'], ['CREATE']]);
  const ev = byName.get('virt-launcher-eviction-interceptor.kubevirt.io');
  assert.equal([ev?.clientConfig.service.path, ev?.rules[0]?.resources, ev?.sideEffects, ev?.matchConditions?.[0]?.expression], [POD_EVICTION_PATH, ['pods/eviction'], 'NoneOnDryRun', 'object.metadata.name.startsWith("virt-launcher")']);
});

test.run();
