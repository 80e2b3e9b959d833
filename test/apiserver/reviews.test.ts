// TokenReview and SubjectAccessReview against the embedded API server over HTTPS, posted with the
// admin kubeconfig's client certificate through KubeClient; plus the published client CA.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { CLIENT_CA_CONFIGMAP } from '../../src/kube/extension-apiserver-authentication.ts';
import { subjectAccessReview, tokenReview } from '../../src/apiserver/reviews.ts';
import { KubeClient, KubeApiError, loadKubeConfig } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { tempDir } from '../lib/tmp.ts';
import { log } from './lib.ts';

const tmp = tempDir('qrv');
let api: ApiServer;
let client: KubeClient;

test.before(async () => {
  api = await startApiServer({
    dataDir: tmp.path, log,
    users: [{ token: 'viewer-token', user: { name: 'viewer', groups: ['viewers'] } }],
    authorize: (r) => (r.user === 'viewer' && r.resourceAttributes?.verb !== 'get'
      ? { allowed: false, reason: 'viewers may only get' }
      : { allowed: true, reason: 'test authorizer: allowed' }),
  });
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
});
test.after(async () => {
  await client?.close();
  await api?.stop();
  tmp.cleanup();
});

type Review = { status: Record<string, unknown> };
const post = (path: string, body: unknown) => client.request<Review>('POST', path, { body });

test('TokenReview: the admin token is system:admin, another user\'s token is that user, an unknown token is not authenticated', async () => {
  const admin = await post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: api.token } });
  assert.equal(admin.status, { authenticated: true, user: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] } });
  const viewer = await post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'viewer-token' } });
  assert.equal(viewer.status.user, { username: 'viewer', groups: ['viewers', 'system:authenticated'] });
  const nobody = await post('/apis/authentication.k8s.io/v1/tokenreviews', { kind: 'TokenReview', spec: { token: 'guess' } });
  assert.is(nobody.status.authenticated, false);
});

test('SubjectAccessReview: the authorizer answers; a bad spec is a 400 naming the field', async () => {
  const sar = (user: string, verb: string) => post('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
    spec: { user, groups: ['system:authenticated'], resourceAttributes: { namespace: 'default', verb, group: 'subresources.kubevirt.io', resource: 'virtualmachineinstances', subresource: 'vnc', name: 'vm' } },
  });
  assert.equal((await sar('viewer', 'get')).status, { allowed: true, reason: 'test authorizer: allowed' });
  assert.equal((await sar('viewer', 'update')).status, { allowed: false, denied: true, reason: 'viewers may only get' });
  const err = await post('/apis/authorization.k8s.io/v1/subjectaccessreviews', { kind: 'SubjectAccessReview', spec: { user: 'x' } }).catch((e: unknown) => e);
  assert.instance(err, KubeApiError);
  assert.is((err as KubeApiError).code, 400);
  assert.match((err as KubeApiError).message, 'spec.resourceAttributes');
});

test('reviews need credentials: 401 without them', async () => {
  const code = await new Promise<number>((resolve, reject) => {
    const req = httpsRequest(`${api.url}/apis/authentication.k8s.io/v1/tokenreviews`, { method: 'POST', ca: api.pki!.caCert, headers: { 'content-type': 'application/json' } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('error', reject);
    req.end(JSON.stringify({ kind: 'TokenReview', spec: { token: api.token } }));
  });
  assert.is(code, 401);
});

test('without an authorizer every authenticated user is allowed, and the reason says why', () => {
  const r = subjectAccessReview({ spec: { user: 'anyone', resourceAttributes: { verb: 'delete', resource: 'pods' } } }, () => ({ allowed: true, reason: 'x' }));
  assert.equal(r.status, { allowed: true, reason: 'x' });
  const t = tokenReview({ spec: { token: 't', audiences: ['a'] } }, () => undefined);
  assert.equal(t.status, { authenticated: false, error: 'the token is not known to this API server' });
  assert.throws(() => tokenReview({ spec: {} }, () => undefined), /spec\.token/);
  assert.throws(() => subjectAccessReview({ spec: { resourceAttributes: {} } }, () => ({ allowed: true, reason: '' })), /spec\.user/);
});

test('the client CA is published in kube-system/extension-apiserver-authentication', async () => {
  const cm = await client.get<{ metadata?: object; data?: Record<string, string> }>(Resources.configMaps, CLIENT_CA_CONFIGMAP.namespace, CLIENT_CA_CONFIGMAP.name);
  const pem = cm.data?.[CLIENT_CA_CONFIGMAP.key] ?? '';
  assert.is(pem, api.pki!.caCert);
  assert.ok(new X509Certificate(api.pki!.adminCert).verify(new X509Certificate(pem).publicKey), 'the admin client certificate is signed by the published CA');
});

test.run();
