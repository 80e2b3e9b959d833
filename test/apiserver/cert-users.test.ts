// Client-certificate users over keep-alive HTTPS connections: each request is its own connection's
// certificate's user (CN the name, O the groups), however many requests a connection carries and
// however connections of different users interleave (the server remembers a connection's user).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'node:https';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import type { AdmissionAttributes } from '../../src/kube/admission.ts';
import { tempDir } from '../lib/tmp.ts';
import { log } from './lib.ts';

const tmp = tempDir('qcu');
let api: ApiServer;
const seen: Array<{ name: string; user: string | undefined; groups: readonly string[] | undefined }> = [];

test.before(async () => {
  api = await startApiServer({
    dataDir: tmp.path, log,
    admission: [{
      name: 'record-user.test', matches: (a) => a.resource === 'configmaps',
      admit: (a: AdmissionAttributes) => { seen.push({ name: a.name, user: a.user?.name, groups: a.user?.groups }); return undefined; },
    }],
  });
});
test.after(async () => { await api?.stop(); tmp.cleanup(); });

function create(agent: Agent, name: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const req = request(`${api.url}/api/v1/namespaces/default/configmaps`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('interleaved keep-alive connections of two certificate users: every request is its own user', async () => {
  const pki = api.pki!;
  const admin = new Agent({ keepAlive: true, maxSockets: 1, ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey });
  const kubelet = new Agent({ keepAlive: true, maxSockets: 1, ca: pki.caCert, cert: pki.kubeletClientCert, key: pki.kubeletClientKey });
  try {
    for (let i = 0; i < 3; i++) {
      assert.is(await create(admin, `admin-${i}`), 201);
      assert.is(await create(kubelet, `kubelet-${i}`), 201);
    }
  } finally {
    admin.destroy();
    kubelet.destroy();
  }
  assert.is(seen.length, 6);
  for (const s of seen) {
    const want = s.name.startsWith('admin-') ? 'qvirt-admin' : 'kube-apiserver-kubelet-client';
    assert.is(s.user, want, s.name);
    assert.equal(s.groups, ['system:masters', 'system:authenticated'], s.name);
  }
});

test.run();
