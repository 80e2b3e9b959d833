// virt-controller's /metrics on a cluster: `qvirt controller --webhook-port`'s HTTPS server against a
// real API server (the embedded one, with RBAC decided by an authorizer here) and a leading
// ControllerManager — no token is 401, a user without `get` on the non-resource URL /metrics is 403
// with the reason, one with it reads KubeVirt's virt-controller metrics; POST is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:https';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import type { AccessRequest } from '../../src/apiserver/reviews.ts';
import { KubeClient, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { startControllerWebhooks, type ControllerWebhooks } from '../../src/admission/controller-webhooks.ts';
import { ControllerManager } from '../../controller/manager.ts';
import { ControllerMetrics, managerMetricsView, serveControllerMetrics, METRICS_PATH } from '../../controller/metrics/controller-metrics.ts';
import { EndpointAuth, AuthUnavailableError } from '../../handler/endpoint/auth.ts';
import { authorizedScrape } from '../../src/metrics/scrape-auth.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { applyCrdFiles } from '../../src/deploy/crds.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('controller-metrics-test', { level: 'warn' });
const tmp = tempDir('qcmet');
const PROMETHEUS_TOKEN = 'prometheus-token-0123456789';
const VIEWER_TOKEN = 'viewer-token-0123456789';
let api: ApiServer;
let client: KubeClient;
let manager: ControllerManager;
let webhooks: ControllerWebhooks;
let ca = '';

test.before(async () => {
  api = await startApiServer({
    dataDir: tmp.path, tls: true, log,
    users: [{ token: PROMETHEUS_TOKEN, user: { name: 'system:serviceaccount:monitoring:prometheus', groups: ['system:authenticated'] } }, { token: VIEWER_TOKEN, user: { name: 'viewer', groups: ['system:authenticated'] } }],
    // RBAC as a cluster would have it: only Prometheus' service account (and the admin) may get /metrics.
    authorize: (r: AccessRequest) => ({ allowed: r.nonResourceAttributes?.path !== '/metrics' || r.user !== 'viewer', reason: r.user === 'viewer' ? 'no RBAC rule grants it' : '' }),
  });
  client = KubeClient.fromFile(api.kubeconfigPath);
  await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubevirt' } });
  await applyCrdFiles(client);
  manager = new ControllerManager({ client, config: defaultClusterConfig(), log, leaderElect: false });
  const metrics = new ControllerMetrics(managerMetricsView(manager, () => defaultClusterConfig()));
  const serve = authorizedScrape(new EndpointAuth({ client, log, cacheMs: 0 }), (req, res) => serveControllerMetrics(metrics, req, res, METRICS_PATH), (err) => err instanceof AuthUnavailableError);
  webhooks = await startControllerWebhooks({ client, namespace: 'kubevirt', port: 0, host: '127.0.0.1', hosts: ['localhost'], config: () => defaultClusterConfig(), log, checkIntervalMs: 3600_000, subresources: false, metrics: serve });
  const secret = await client.get<KubeObject & { data: Record<string, string> }>(Resources.secrets, 'kubevirt', 'kubevirt-virt-controller-webhook-certs');
  ca = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
  await manager.start();
  await manager.leading;
});

test.after(async () => {
  await manager?.stop();
  await webhooks?.stop();
  await client?.close();
  await api?.stop();
  tmp.cleanup();
});

function get(token: string | undefined, method = 'GET'): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: webhooks.server.port, path: '/metrics', method, agent: false, ca, servername: 'localhost', headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let s = '';
      res.on('data', (c: Buffer) => { s += c.toString(); });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: s }));
    }).on('error', reject).end();
  });
}

test('no token: 401; a user RBAC does not let get /metrics: 403 naming them and the URL', async () => {
  const none = await get(undefined);
  assert.is(none.code, 401, none.body);
  const bad = await get('not-a-token');
  assert.is(bad.code, 401, bad.body);
  const viewer = await get(VIEWER_TOKEN);
  assert.equal([viewer.code, viewer.body.trim()], [403, 'user "viewer" cannot get the non-resource URL /metrics: no RBAC rule grants it']);
});

test('Prometheus\' service account reads virt-controller\'s metrics: leading, ready, the queues by KubeVirt\'s names; POST refused', async () => {
  const r = await get(PROMETHEUS_TOKEN);
  assert.is(r.code, 200, r.body);
  assert.match(r.body, /^kubevirt_virt_controller_leading_status 1$/m);
  assert.match(r.body, /^kubevirt_virt_controller_ready_status 1$/m);
  for (const q of ['vm', 'vmi', 'replicaset', 'migration', 'node', 'evacuation']) assert.match(r.body, new RegExp(`^kubevirt_workqueue_depth\\{name="virt-controller-${q}"\\} \\d+$`, 'm'));
  assert.match(r.body, /^kubevirt_rest_client_requests_total\{.*resource="virtualmachineinstances".*verb="WATCH".*\} \d+$/m);
  const post = await get(PROMETHEUS_TOKEN, 'POST');
  assert.is(post.code, 405, post.body);
});

test.run();
