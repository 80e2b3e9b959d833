// virt-api's subresource app behind the embedded API server (an in-process aggregated group), with
// no VM running: discovery as kube-apiserver lists an aggregated group; authorization of the
// caller's own identity by SubjectAccessReview (a viewer may read, not pause); the Status objects
// virt-api answers (404 for a missing VMI, 400 for a bad body, 409 for a VM that is not running,
// 405 and 501); a dry-run start that changes nothing; the websocket routes refusing before the
// upgrade with a Status virtctl can read; expand-spec and expand-vm-spec with instance types.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import https from 'node:https';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { SUBRESOURCE_GROUP } from '../../src/api/constants.ts';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { accessReviewAuthorizer } from '../../src/virt-api/access-review.ts';
import { subresourceApi } from '../../src/virt-api/subresource-api.ts';
import { SUBRESOURCE_VERSIONS, discoveredResources } from '../../src/virt-api/subresource-routes.ts';
import { applyCrdFiles } from '../../src/deploy/crds.ts';
import { tempDir } from '../lib/tmp.ts';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { INSTANCETYPE_EXAMPLES_DIR } from '../api/fixtures.ts';

const t = tempDir('qvsa');
let api!: ApiServer;
let client!: KubeClient;
const VIEWER = 'viewer-token-0123456789';

test.before(async () => {
  api = await startApiServer({
    dataDir: join(t.path, 'api'), port: 0, log: componentLogger('test', { level: 'error' }),
    users: [{ token: VIEWER, user: { name: 'viewer', groups: ['system:authenticated'] } }],
    // RBAC stand-in: the viewer may only get.
    authorize: (r) => (r.user === 'viewer' && r.resourceAttributes?.verb !== 'get' ? { allowed: false, reason: 'viewers only read' } : { allowed: true, reason: '' }),
  });
  client = new KubeClient(loadKubeConfig(api.kubeconfigPath!));
  await applyCrdFiles(client);
  const app = subresourceApi({ client, authorize: accessReviewAuthorizer(client), log: componentLogger('test', { level: 'error' }) });
  api.addAggregatedApi({ group: SUBRESOURCE_GROUP, versions: SUBRESOURCE_VERSIONS, resources: discoveredResources, handle: app.handle, upgrade: app.upgrade });
});
test.after(async () => { await client?.close(); await api?.stop(); t.cleanup(); });

interface Answer { code: number; body: any; headers: Record<string, unknown> }

function call(method: string, path: string, o: { token?: string; body?: string; upgrade?: boolean } = {}): Promise<Answer> {
  const url = new URL(path, api.url);
  const pki = api.pki!;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) { headers['Content-Type'] = 'application/json'; headers['Content-Length'] = String(Buffer.byteLength(o.body)); }
  if (o.upgrade) Object.assign(headers, { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': 'plain.kubevirt.io' });
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca: pki.caCert, ...(o.token ? {} : { cert: pki.adminCert, key: pki.adminKey }), agent: false }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers }));
    });
    req.on('upgrade', (res) => { res.socket?.destroy(); resolve({ code: 101, body: undefined, headers: res.headers }); });
    req.on('error', reject);
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

const G = `/apis/${SUBRESOURCE_GROUP}`;

test('discovery: /apis lists the group; its APIGroup, versions and resource list', async () => {
  const apis = await call('GET', '/apis');
  assert.ok(apis.body.groups.some((g: any) => g.name === SUBRESOURCE_GROUP && g.preferredVersion.groupVersion === `${SUBRESOURCE_GROUP}/v1`));
  const group = await call('GET', G);
  assert.equal([group.code, group.body.kind, group.body.name], [200, 'APIGroup', SUBRESOURCE_GROUP]);
  const list = await call('GET', `${G}/v1`);
  assert.is(list.body.kind, 'APIResourceList');
  assert.ok(list.body.resources.some((r: any) => r.name === 'virtualmachines/start'));
  const v = await call('GET', `${G}/v1alpha3/version`);
  assert.is(v.code, 200);
  assert.match(v.body.gitVersion, /^v\d+\.\d+\.\d+/);
});

test('the caller\'s identity is authorized: a viewer may get, not update', async () => {
  const r = await call('PUT', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/pause`, { token: VIEWER, body: '{}' });
  assert.is(r.code, 403);
  assert.equal([r.body.kind, r.body.reason], ['Status', 'Forbidden']);
  assert.is(r.body.message, 'User "viewer" cannot update resource "virtualmachineinstances/pause" in API group "subresources.kubevirt.io" ("vm1") in the namespace "default": viewers only read');
  const g = await call('GET', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/guestosinfo`, { token: VIEWER });
  assert.is(g.code, 404, 'allowed to ask; the VMI does not exist');
  assert.is(g.body.message, 'virtualmachineinstance.kubevirt.io "vm1" not found');
});

test('virt-api\'s Status answers', async () => {
  let r = await call('PUT', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/pause`, { body: '{}' });
  assert.equal([r.code, r.body.reason, r.body.message, r.body.details], [404, 'NotFound', 'virtualmachineinstance.kubevirt.io "vm1" not found', { name: 'vm1', group: 'kubevirt.io', kind: 'virtualmachineinstance' }]);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/start`, { body: '{"paused": "yes"}' });
  assert.equal([r.code, r.body.message], [400, 'Can not unmarshal Request body to struct, error: paused: must be true or false']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/start`, { body: '{not json' });
  assert.is(r.code, 400);
  assert.match(r.body.message, /^Can not unmarshal Request body to struct, error: /);
  r = await call('GET', `${G}/v1/namespaces/default/virtualmachines/vm1/start`);
  assert.is(r.code, 405);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/backup`, { body: '{}' });
  assert.equal([r.code, r.body.message], [501, 'virtualmachineinstances/backup is not supported by qvirt']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/memorydump`);
  assert.equal([r.code, r.body.message], [400, 'Request with no body']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/memorydump`, { body: '{"claimName": "c"}' });
  assert.equal([r.code, r.body.message], [404, 'virtualmachine.kubevirt.io "vm1" not found']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/removememorydump`, { body: '{}' });
  assert.equal([r.code, r.body.message], [404, 'virtualmachine.kubevirt.io "vm1" not found']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/addvolume`);
  assert.equal([r.code, r.body.message], [400, 'Request with no body, a new name is expected as the request body']);

  await client.create(Resources.virtualMachines, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm1', namespace: 'default' }, spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {}, memory: { guest: '64Mi' } } } } } } as never);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/stop`, { body: '{}' });
  assert.equal([r.code, r.body.message], [409, 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": VM is not running']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/memorydump`, { body: '{}' });
  assert.equal([r.code, r.body.message], [400, 'Memory dump requires claim name to be set']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/memorydump`, { body: '{"claimName": "c"}' });
  assert.equal([r.code, r.body.message], [404, 'virtualmachineinstance.kubevirt.io "vm1" not found']);
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/removememorydump`, { body: '{}' });
  assert.equal([r.code, r.body.message], [409, 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": can\'t remove memory dump association for vm vm1, no association found']);
  // A dry-run start is accepted and changes nothing.
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/start`, { body: '{"dryRun": ["All"]}' });
  assert.is(r.code, 202);
  assert.is((await client.get<any>(Resources.virtualMachines, 'default', 'vm1')).spec.runStrategy, 'Halted');
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/start`, { body: '{}' });
  assert.is(r.code, 202);
  assert.is((await client.get<any>(Resources.virtualMachines, 'default', 'vm1')).spec.runStrategy, 'Always');
  r = await call('PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/migrate`, { body: '{}' });
  assert.equal([r.code, r.body.message], [404, 'virtualmachineinstance.kubevirt.io "vm1" not found']);
});

test('websocket routes refuse before the upgrade, with a Status', async () => {
  let r = await call('GET', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/console`, { upgrade: true });
  assert.equal([r.code, r.body.message], [404, 'virtualmachineinstance.kubevirt.io "vm1" not found']);
  r = await call('GET', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/console`, { upgrade: true, token: VIEWER });
  assert.is(r.code, 404, 'get on console is a viewer\'s right; the VMI is missing');
  r = await call('GET', `${G}/v1/namespaces/default/virtualmachines/vm1/portforward/22`, { upgrade: true });
  assert.equal([r.code, r.body.message], [409, 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": VMI is not started']);
  r = await call('GET', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/usbredir`, { upgrade: true });
  assert.is(r.code, 501);
  r = await call('GET', `${G}/v1/namespaces/default/virtualmachineinstances/vm1/console`);
  assert.is(r.code, 400, 'a plain GET of a stream route');
  r = await call('GET', '/apis/kubevirt.io/v1/namespaces/default/virtualmachines', { upgrade: true });
  assert.is(r.code, 400, 'the embedded server upgrades only its aggregated groups');
});

test('expand-spec and expand-vm-spec: the instance type and preference expanded into the template as KubeVirt\'s expander does; its failures as virt-api answers them', async () => {
  const example = (f: string) => yaml.load(readFileSync(join(INSTANCETYPE_EXAMPLES_DIR, f), 'utf8')) as Record<string, any>;
  for (const f of ['csmall.yaml', 'clarge.yaml']) await client.create(Resources.virtualMachineInstancetypes, { ...example(f), metadata: { ...example(f).metadata, namespace: 'default' } } as never);
  await client.create(Resources.virtualMachinePreferences, { ...example('virtio.yaml'), metadata: { name: 'virtio', namespace: 'default' } } as never);
  const vm = example('vm-cirros-clarge-virtio.yaml');
  vm.metadata = { name: 'exp', namespace: 'default' };
  delete vm.spec.template.spec.domain.memory;
  await client.create(Resources.virtualMachines, vm as never);

  let r = await call('GET', `${G}/v1/namespaces/default/virtualmachines/exp/expand-spec`);
  assert.is(r.code, 200, JSON.stringify(r.body));
  const s = r.body.spec.template.spec;
  assert.equal([s.domain.cpu.sockets, s.domain.cpu.cores, s.domain.cpu.threads, s.domain.memory.guest], [4, 1, 1, '2Gi']);
  assert.equal(s.domain.devices.disks.map((d: any) => [d.name, d.disk.bus]), [['containerdisk', 'virtio'], ['cloudinitdisk', 'virtio']]);
  assert.equal(s.domain.devices.interfaces, [{ name: 'default', bridge: {}, model: 'virtio' }]);
  assert.equal([s.domain.machine.type, s.architecture], ['q35', 'amd64']);
  assert.equal([r.body.spec.instancetype, r.body.spec.preference], [undefined, undefined]);
  r = await call('GET', `${G}/v1/namespaces/default/virtualmachines/vm1/expand-spec`);
  assert.equal([r.code, r.body.metadata.name, r.body.spec.template.spec.domain.cpu], [200, 'vm1', undefined], 'a VM naming neither comes back as it is');

  const unchanged = example('vm-cirros-clarge-virtio.yaml');
  r = await call('PUT', `${G}/v1/namespaces/default/expand-vm-spec`, { body: JSON.stringify(unchanged) });
  assert.equal([r.code, r.body.reason, r.body.message], [400, 'BadRequest', 'VM field(s) spec.template.spec.domain.memory.guest conflicts with selected instance type']);
  delete unchanged.spec.template.spec.domain.memory;
  r = await call('PUT', `${G}/v1/namespaces/default/expand-vm-spec`, { body: JSON.stringify(unchanged) });
  assert.equal([r.code, r.body.metadata.namespace, r.body.spec.template.spec.domain.cpu.sockets], [200, 'default', 4]);
  r = await call('PUT', `${G}/v1/namespaces/default/expand-vm-spec`, { body: JSON.stringify({ ...unchanged, metadata: { name: 'x', namespace: 'other' } }) });
  assert.equal([r.code, r.body.message], [400, 'VM namespace must be empty or default']);
  r = await call('PUT', `${G}/v1/namespaces/default/expand-vm-spec`, { body: JSON.stringify({ ...unchanged, spec: { ...unchanged.spec, instancetype: { name: 'nope' } } }) });
  assert.equal([r.code, r.body.message], [400, 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nope" not found']);
  r = await call('PUT', `${G}/v1/namespaces/default/expand-vm-spec`);
  assert.equal([r.code, r.body.message], [400, 'empty request body']);
  r = await call('PUT', `${G}/v1/namespaces/default/expand-vm-spec`, { body: JSON.stringify({ kind: 'VirtualMachine', spec: { runStrategy: 7 } }) });
  assert.equal([r.code, r.body.message], [400, 'Object is not a valid VirtualMachine']);
  assert.ok(r.body.details.causes.some((c: any) => c.message.startsWith('spec.runStrategy')), JSON.stringify(r.body.details));

  await client.patch(Resources.virtualMachines, 'default', 'exp', { spec: { instancetype: { kind: 'VirtualMachineInstancetype', name: 'gone' } } }, 'merge');
  r = await call('GET', `${G}/v1/namespaces/default/virtualmachines/exp/expand-spec`);
  assert.equal([r.code, r.body.reason, r.body.message], [500, 'InternalError', 'Internal error occurred: virtualmachineinstancetypes.instancetype.kubevirt.io "gone" not found']);
});

test.run();
