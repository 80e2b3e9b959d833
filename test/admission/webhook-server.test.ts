// virt-api's validating webhooks served over HTTPS as kube-apiserver calls them: AdmissionReview v1
// JSON POSTed on virt-api's paths, the server's certificate verified against its CA, the review's
// response checked (uid echoed, allowed, status code/reason/message/causes, warnings); bad reviews
// get a 400 naming the field; the certificate is replaced while serving.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:https';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { ensureCaFiles, ensureCertFiles } from '../../src/pki/cert-files.ts';
import { startWebhookServer, type WebhookServer } from '../../src/admission/webhook-server.ts';
import { parseAdmissionReview } from '../../src/admission/admission-review.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('webhook-test', { level: 'warn' });
const tmp = tempDir('qwhs');
let server: WebhookServer;
let ca: string;

function serving(dir: string, cn: string): { key: string; cert: string; ca: string } {
  const ca = ensureCaFiles(dir, `${cn}-ca`);
  const tls = ensureCertFiles(dir, 'tls', { commonName: cn }, { usages: ['serverAuth'], hosts: ['localhost', '127.0.0.1'] });
  return { key: tls.keyPem, cert: tls.certPem, ca: ca.certPem };
}

test.before(async () => {
  const pki = serving(join(tmp.path, 'a'), 'virt-api');
  ca = pki.ca;
  server = await startWebhookServer({ host: '127.0.0.1', port: 0, key: pki.key, cert: pki.cert, config: () => defaultClusterConfig(), log });
});
test.after(async () => {
  await server?.close();
  tmp.cleanup();
});

function post(path: string, body: unknown, o: { ca?: string; contentType?: string } = {}): Promise<{ code: number; text: string; json?: Record<string, unknown>; peer?: X509Certificate }> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'POST', agent: false, ca: o.ca ?? ca, servername: 'localhost', headers: { 'Content-Type': o.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(text) } }, (res) => {
      const peer = (res.socket as import('node:tls').TLSSocket).getPeerX509Certificate();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const out = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown> | undefined;
        try { json = JSON.parse(out) as Record<string, unknown>; } catch { json = undefined; }
        resolve({ code: res.statusCode ?? 0, text: out, ...(json ? { json } : {}), ...(peer ? { peer } : {}) });
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

const spec = () => ({ domain: { devices: { disks: [{ name: 'd', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '64Mi' } } }, volumes: [{ name: 'd', containerDisk: { image: 'x' } }] });
// As kube-apiserver sends it (admission.k8s.io/v1, trimmed of nothing it sends for a create).
function review(uid: string, operation: 'CREATE' | 'UPDATE', resource: string, kind: string, object: unknown, oldObject: unknown = null, username = 'alice') {
  return {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid, kind: { group: 'kubevirt.io', version: 'v1', kind }, resource: { group: 'kubevirt.io', version: 'v1', resource },
      requestKind: { group: 'kubevirt.io', version: 'v1', kind }, requestResource: { group: 'kubevirt.io', version: 'v1', resource },
      name: 'a', namespace: 'ns', operation,
      userInfo: { username, uid: 'u-1', groups: ['system:authenticated'] },
      object, oldObject, dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions' },
    },
  };
}
const vm = (s: object, run: object) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'a', namespace: 'ns' }, spec: { ...run, template: { spec: s } } });
const vmi = (s: object) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'a', namespace: 'ns' }, spec: s });

test('VM reviews: admitted, admitted with the spec.running warning, denied with KubeVirt\'s status; uid echoed', async () => {
  let r = await post('/virtualmachines-validate', review('uid-1', 'CREATE', 'virtualmachines', 'VirtualMachine', vm(spec(), { runStrategy: 'Halted' })));
  assert.is(r.code, 200);
  assert.equal(r.json, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'uid-1', allowed: true } });
  assert.is(r.peer?.subject, 'CN=virt-api');

  r = await post('/virtualmachines-validate', review('uid-2', 'UPDATE', 'virtualmachines', 'VirtualMachine', vm(spec(), { running: true }), vm(spec(), { running: false })));
  assert.equal(r.json?.response, { uid: 'uid-2', allowed: true, warnings: ['spec.running is deprecated, please use spec.runStrategy instead.'] });

  r = await post('/virtualmachines-validate', review('uid-3', 'CREATE', 'virtualmachines', 'VirtualMachine', vm(spec(), { running: false, runStrategy: 'Always' })));
  assert.equal(r.json?.response, {
    uid: 'uid-3', allowed: false,
    status: {
      code: 422, reason: 'Invalid',
      message: 'spec.running: Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead',
      details: { causes: [{ reason: 'FieldValueInvalid', message: 'Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead', field: 'spec.running' }] },
    },
  });
});

test('VMI create and update, VMIRS: the same admitters as the embedded server', async () => {
  let r = await post('/virtualmachineinstances-validate-create', review('c1', 'CREATE', 'virtualmachineinstances', 'VirtualMachineInstance', vmi({ ...spec(), volumes: [] })));
  assert.is((r.json?.response as { allowed: boolean }).allowed, false);
  assert.is((r.json?.response as { status: { message: string } }).status.message, "spec.domain.devices.disks[0].Name 'd' not found.");

  r = await post('/virtualmachineinstances-validate-update', review('u1', 'UPDATE', 'virtualmachineinstances', 'VirtualMachineInstance', vmi({ ...spec(), hostname: 'h' }), vmi(spec())));
  assert.equal((r.json?.response as { status: unknown }).status, { code: 422, reason: 'Invalid', message: 'spec: update of VMI object is restricted', details: { causes: [{ reason: 'FieldValueNotSupported', message: 'update of VMI object is restricted', field: 'spec' }] } });
  r = await post('/virtualmachineinstances-validate-update', review('u2', 'UPDATE', 'virtualmachineinstances', 'VirtualMachineInstance', vmi({ ...spec(), hostname: 'h' }), vmi(spec()), 'system:serviceaccount:kubevirt:kubevirt-controller'));
  assert.equal(r.json?.response, { uid: 'u2', allowed: true });

  const rs = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', metadata: { name: 'a', namespace: 'ns' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'c' } }, spec: spec() } } };
  r = await post('/virtualmachinereplicaset-validate', review('rs1', 'CREATE', 'virtualmachineinstancereplicasets', 'VirtualMachineInstanceReplicaSet', rs));
  assert.is((r.json?.response as { status: { message: string } }).status.message, 'spec.selector: selector does not match labels.');
});

test('bad reviews: 400 naming the field; wrong path 404; wrong content type 415; a misrouted review is an error response', async () => {
  const good = review('x', 'CREATE', 'virtualmachines', 'VirtualMachine', vm(spec(), { runStrategy: 'Halted' }));
  let r = await post('/virtualmachines-validate', { ...good, apiVersion: 'admission.k8s.io/v1beta1' });
  assert.is(r.code, 400);
  assert.is(r.text, 'virtualmachine-validator.kubevirt.io: apiVersion: must be admission.k8s.io/v1 (got "admission.k8s.io/v1beta1")');
  r = await post('/virtualmachines-validate', { ...good, request: { ...good.request, uid: undefined } });
  assert.is(r.code, 400);
  assert.is(r.text, 'virtualmachine-validator.kubevirt.io: request.uid: Required value');
  r = await post('/virtualmachines-validate', '{not json');
  assert.is(r.code, 400);
  assert.match(r.text, 'the request body is not JSON');
  r = await post('/virtualmachines-validate', good, { contentType: 'text/plain' });
  assert.is(r.code, 415);
  r = await post('/nope', good);
  assert.is(r.code, 404);
  r = await post('/virtualmachines-validate', review('mis', 'CREATE', 'virtualmachineinstances', 'VirtualMachineInstance', vmi(spec())));
  assert.equal(r.json?.response, { uid: 'mis', allowed: false, status: { code: 400, message: "expect resource to be 'virtualmachines'" } });
  assert.throws(() => parseAdmissionReview({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', operation: 'PATCH', resource: {} } }), /request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT \(got "PATCH"\)/);
});

test('the certificate is replaced while serving: new connections verify against the new CA', async () => {
  const next = serving(join(tmp.path, 'b'), 'virt-api-rotated');
  server.setCertificate(next.key, next.cert);
  const good = review('rot', 'CREATE', 'virtualmachines', 'VirtualMachine', vm(spec(), { runStrategy: 'Halted' }));
  const r = await post('/virtualmachines-validate', good, { ca: next.ca });
  assert.is(r.peer?.subject, 'CN=virt-api-rotated');
  assert.equal(r.json?.response, { uid: 'rot', allowed: true });
  await post('/virtualmachines-validate', good, { ca }).then(() => assert.unreachable('the old CA still verified'), (err: Error) => assert.match(err.message, /certificate/));
});

test('a port another replica holds: tried again until it is free, with no listener piling up per attempt (two replicas on one host network)', async () => {
  const pki = serving(join(tmp.path, 'b'), 'virt-api');
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  const first = await startWebhookServer({ host: '127.0.0.1', port: 0, key: pki.key, cert: pki.cert, config: () => defaultClusterConfig(), log });
  let second: WebhookServer | undefined;
  try {
    second = await startWebhookServer({ host: '127.0.0.1', port: first.port, key: pki.key, cert: pki.cert, config: () => defaultClusterConfig(), log: componentLogger('webhook-test', { level: 'error' }), listenRetryMs: 5 });
    // 40 attempts at 5 ms: four times the 10 listeners after which Node warns of a leak.
    await new Promise((r) => setTimeout(r, 300));
    await first.close();
    const served = () => new Promise<number>((resolve) => {
      const req = request({ host: '127.0.0.1', port: first.port, path: '/nope', method: 'POST', agent: false, ca: pki.ca, servername: 'localhost' }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      req.on('error', () => resolve(0));
      req.end('{}');
    });
    let code = 0;
    for (let i = 0; i < 100 && code !== 404; i++) { code = await served(); if (code !== 404) await new Promise((r) => setTimeout(r, 20)); }
    assert.is(code, 404, 'the second replica took the port once it was free');
    assert.equal(warnings.filter((w) => w === 'MaxListenersExceededWarning'), []);
  } finally {
    process.off('warning', onWarning);
    await second?.close();
    await first.close();
  }
});

test.run();
