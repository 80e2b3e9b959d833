// `qvirt controller --webhook-port` against a real API server (the embedded one, through the real
// client): the certificate Secret made on first start and shared by a second replica, the
// ValidatingWebhookConfiguration's caBundle set (and set again after a re-apply drops it), the
// served certificate verified with that bundle while AdmissionReviews are answered, and a renewal
// by one replica picked up by the other.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { X509Certificate } from 'node:crypto';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { KubeClient, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { startControllerWebhooks, WEBHOOK_CONFIGURATION, WEBHOOK_SECRET, type ControllerWebhooks } from '../../src/admission/controller-webhooks.ts';
import { webhookObjects } from '../../src/deploy/webhooks.ts';
import { resourceOf } from '../../src/cli/install.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('webhooks-test', { level: 'warn' });
const NS = 'kubevirt';
const tmp = tempDir('qcwh');
let api: ApiServer;
let client: KubeClient;
const started: ControllerWebhooks[] = [];

type VWC = KubeObject & { webhooks: { name: string; clientConfig: { caBundle?: string; service: { path: string } } }[] };
type Secret = KubeObject & { data: Record<string, string> };

async function applyObjects(): Promise<void> {
  for (const o of webhookObjects(NS, 'kubevirt.io', 'virt-controller', {})) {
    const r = resourceOf(o);
    try { await client.delete(r, o.metadata?.namespace, o.metadata!.name!); } catch { /* not there yet */ }
    await client.create(r, o);
  }
}

test.before(async () => {
  api = await startApiServer({ dataDir: tmp.path, tls: true, log });
  client = KubeClient.fromFile(api.kubeconfigPath);
  await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await applyObjects();
});
test.after(async () => {
  for (const w of started) await w.stop();
  await client?.close();
  await api?.stop();
  tmp.cleanup();
});

const start = async (hosts: string[]) => {
  const w = await startControllerWebhooks({ client, namespace: NS, port: 0, host: '127.0.0.1', hosts, config: () => defaultClusterConfig(), log, checkIntervalMs: 3600_000 });
  started.push(w);
  return w;
};

function post(port: number, ca: string, body: unknown): Promise<{ json: { response: Record<string, unknown> }; peer: X509Certificate }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/virtualmachines-validate', method: 'POST', agent: false, ca, servername: 'localhost', headers: { 'Content-Type': 'application/json' } }, (res) => {
      const peer = (res.socket as TLSSocket).getPeerX509Certificate()!;
      let s = '';
      res.on('data', (c: Buffer) => { s += c.toString(); });
      res.on('end', () => resolve({ json: JSON.parse(s) as { response: Record<string, unknown> }, peer }));
    }).on('error', reject).end(text);
  });
}

const badVM = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'a', namespace: 'default' }, spec: { running: false, runStrategy: 'Always', template: { spec: { domain: { devices: {} } } } } };
const review = (uid: string) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid, kind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' }, resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachines' }, namespace: 'default', name: 'a', operation: 'CREATE', userInfo: { username: 'alice', groups: [] }, object: badVM, oldObject: null, dryRun: false } });
const bundleOf = async () => {
  const vwc = await client.get<VWC>(Resources.validatingWebhookConfigurations, undefined, WEBHOOK_CONFIGURATION);
  const bundles = [...new Set(vwc.webhooks.map((w) => w.clientConfig.caBundle))];
  assert.is(bundles.length, 1, 'every webhook has the same bundle');
  return bundles[0] ? Buffer.from(bundles[0], 'base64').toString('utf8') : undefined;
};

test('first replica: Secret made, caBundle set, reviews answered over TLS verified with the bundle; a second replica shares it', async () => {
  const a = await start(['localhost']);
  const secret = await client.get<Secret>(Resources.secrets, NS, WEBHOOK_SECRET);
  assert.equal(Object.keys(secret.data).sort(), ['ca-bundle.crt', 'ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
  const bundle = await bundleOf();
  assert.is(bundle, Buffer.from(secret.data['ca-bundle.crt']!, 'base64').toString('utf8'));
  const r = await post(a.server.port, bundle!, review('r1'));
  assert.is(r.json.response.uid, 'r1');
  assert.is(r.json.response.allowed, false);
  assert.is((r.json.response.status as { code: number }).code, 422);

  const b = await start(['localhost']);
  assert.is((await client.get<Secret>(Resources.secrets, NS, WEBHOOK_SECRET)).metadata?.resourceVersion, secret.metadata?.resourceVersion, 'the second replica reuses the Secret');
  const rb = await post(b.server.port, bundle!, review('r2'));
  assert.is(rb.peer.fingerprint256, r.peer.fingerprint256, 'both serve the same certificate');
});

test('a renewal by one replica is served by the other at its next check; a re-applied configuration gets its caBundle back', async () => {
  const [a] = started;
  const c = await start(['localhost', '127.0.0.1']); // a new name: the serving certificate is renewed
  const bundle = (await bundleOf())!;
  await a!.check();
  const r = await post(a!.server.port, bundle, review('r3'));
  assert.match(r.peer.subjectAltName ?? '', 'IP Address:127.0.0.1');
  assert.is((await post(c.server.port, bundle, review('r4'))).peer.fingerprint256, r.peer.fingerprint256);

  await applyObjects();
  assert.is(await bundleOf(), undefined, 're-applied without caBundle');
  await a!.check();
  assert.is(await bundleOf(), bundle);
});

test.run();
