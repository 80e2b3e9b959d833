// The real kubectl (Debian's kubernetes-client) against the server over HTTPS with the generated
// PKI and admin kubeconfig: discovery, apply (client-side: create/configure/unchanged, and
// --server-side), get with server-side printing, patch, scale, delete --wait; plus token and
// client-certificate authentication and a refused anonymous request.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { request } from 'node:https';
import { execa } from 'execa';
import { Watch } from '@kubernetes/client-node';
import { eventually, startTestServer, type TestServer } from './lib.ts';
import { GROUP, gadget, gadgetCrd } from './fixtures.ts';

let s: TestServer;
let home: string;

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const r = await execa('kubectl', args, { env: { KUBECONFIG: s.api.kubeconfigPath!, HOME: home }, reject: false, timeout: 30_000 });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode ?? -1 };
}
async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  assert.is(r.exitCode, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}
const file = (name: string, obj: unknown): string => {
  const p = join(s.dir, name);
  writeFileSync(p, JSON.stringify(obj, null, 2));
  return p;
};
const columns = (out: string): string[] => out.split('\n')[0]!.trim().split(/\s{2,}/);

test.before(async () => {
  s = await startTestServer({ tls: true });
  home = join(s.dir, 'home');
});
test.after(async () => { await s.close(); });

test('kubectl reaches the HTTPS server with the admin kubeconfig (client certificate) and discovers resources', async () => {
  const v = JSON.parse(await ok('version', '-o', 'json')) as { serverVersion: { major: string; minor: string } };
  assert.is(v.serverVersion.major, '1');
  const res = await ok('api-resources', '--no-headers');
  assert.match(res, /^pods\s+po\s+v1\s+true\s+Pod$/m);
  assert.match(res, /^customresourcedefinitions\s+crd,crds\s+apiextensions.k8s.io\/v1\s+false\s+CustomResourceDefinition$/m);
});

test('kubectl discovers every group in two requests (aggregated discovery), and still finds each kind', async () => {
  // A cache directory of its own: nothing discovered yet.
  const r = await kubectl('get', 'pods,crds', '-A', '-v=6', '--cache-dir', join(s.dir, 'fresh-cache'));
  assert.is(r.exitCode, 0, r.stderr);
  const gets = [...r.stderr.matchAll(/"GET" url="https:\/\/[^/"]+(\/[^"?]*)/g), ...r.stderr.matchAll(/GET https:\/\/[^/ ]+(\/[^? ]*)/g)].map((m) => m[1]!);
  assert.ok(gets.includes('/api') && gets.includes('/apis'), gets.join(' '));
  const perGroup = gets.filter((p) => /^\/apis\/[^/]+\/[^/]+$/.test(p) || p === '/api/v1');
  assert.equal(perGroup, [], `legacy discovery requests: ${perGroup.join(' ')}`);
});

test('kubectl apply creates a CRD and custom resources; re-apply configures or leaves unchanged; get prints printer columns', async () => {
  assert.match(await ok('apply', '-f', file('crd.json', gadgetCrd())), /customresourcedefinition.apiextensions.k8s.io\/gadgets.test.qvirt.io created/);
  const g = file('g.json', gadget('kg', { mode: 'Always', replicas: 1 }));
  assert.match(await ok('apply', '-f', g), /gadget.test.qvirt.io\/kg created/);
  assert.match(await ok('apply', '-f', g), /gadget.test.qvirt.io\/kg unchanged/);
  assert.match(await ok('apply', '-f', file('g.json', gadget('kg', { mode: 'Always', replicas: 2 }))), /gadget.test.qvirt.io\/kg configured/);
  await ok('patch', 'gadget', 'kg', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { printableStatus: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }));
  const out = await ok('get', 'gadgets');
  assert.equal(columns(out), ['NAME', 'AGE', 'STATUS', 'READY', 'REPLICAS']);
  assert.match(out.split('\n')[1]!, /^kg\s+\d+s\s+Running\s+True\s+2$/);
  const wide = await ok('get', 'gd', 'kg', '-o', 'wide');
  assert.equal(columns(wide), ['NAME', 'AGE', 'STATUS', 'READY', 'REPLICAS', 'NODE']);
  const json = JSON.parse(await ok('get', 'gadget', 'kg', '-o', 'json')) as { spec: { replicas: number }; metadata: { annotations: Record<string, string> } };
  assert.is(json.spec.replicas, 2);
  assert.ok(json.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
  // Removing a field from the manifest removes it from the object (three-way merge).
  assert.match(await ok('apply', '-f', file('g.json', gadget('kg', { mode: 'Always' }))), /configured/);
  const after = JSON.parse(await ok('get', 'gadget', 'kg', '-o', 'json')) as { spec: { replicas?: number } };
  assert.is(after.spec.replicas, undefined);
});

test('kubectl apply reports schema violations as the server words them', async () => {
  const r = await kubectl('apply', '-f', file('bad.json', gadget('kbad', { mode: 'Sometimes' })));
  assert.is.not(r.exitCode, 0);
  assert.match(r.stderr, /The Gadget "kbad" is invalid: [\s\S]*spec.mode: Unsupported value: "Sometimes": supported values: "Always", "Halted", "Manual"/);
  const noCrd = await kubectl('apply', '-f', file('pool.json', { apiVersion: 'pool.kubevirt.io/v1beta1', kind: 'VirtualMachinePool', metadata: { name: 'p' }, spec: {} }));
  assert.match(noCrd.stderr, /no matches for kind "VirtualMachinePool" in version "pool.kubevirt.io\/v1beta1"\s+ensure CRDs are installed first/);
  const unknown = await kubectl('apply', '-f', file('unk.json', gadget('kunk', { mode: 'Always', nope: 1 })));
  assert.is.not(unknown.exitCode, 0);
  assert.match(unknown.stderr, /unknown field "spec.nope"/);
});

test('kubectl apply --server-side, scale, and delete (waiting for the object to go)', async () => {
  assert.match(await ok('apply', '--server-side', '-f', file('ssa.json', gadget('kssa', { mode: 'Manual', replicas: 1 }))), /gadget.test.qvirt.io\/kssa serverside-applied/);
  assert.match(await ok('apply', '--server-side', '-f', file('ssa.json', gadget('kssa', { mode: 'Manual', replicas: 3 }))), /serverside-applied/);
  assert.match(await ok('scale', 'gadget', 'kssa', '--replicas=4'), /scaled/);
  assert.is(await ok('get', 'gadget', 'kssa', '-o', 'jsonpath={.spec.replicas}'), '4');
  assert.match(await ok('delete', 'gadget', 'kssa'), /gadget.test.qvirt.io "kssa" deleted/);
  const r = await kubectl('get', 'gadget', 'kssa');
  assert.match(r.stderr, new RegExp(`Error from server \\(NotFound\\): gadgets.${GROUP.replace(/\./g, '\\.')} "kssa" not found`));
});

test('kubectl get pods prints NAME READY STATUS RESTARTS AGE; apply on a pod uses strategic merge', async () => {
  const manifest = (tag: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'kp', labels: { app: 'k' } }, spec: { containers: [{ name: 'c', image: `img:${tag}`, env: [{ name: 'A', value: '1' }] }] } });
  assert.match(await ok('apply', '-f', file('pod.json', manifest('1'))), /pod\/kp created/);
  await ok('patch', 'pod', 'kp', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, restartCount: 2, image: 'img:1', imageID: '', state: { running: {} } }] } }));
  const out = await ok('get', 'pods');
  assert.equal(columns(out), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
  assert.match(out.split('\n')[1]!, /^kp\s+1\/1\s+Running\s+2\s+\d+s$/);
  assert.match(await ok('apply', '-f', file('pod.json', manifest('2'))), /pod\/kp configured/);
  assert.is(await ok('get', 'pod', 'kp', '-o', 'jsonpath={.spec.containers[0].image}'), 'img:2');
  assert.match(await ok('get', 'pods', '-l', 'app=k', '-o', 'name'), /^pod\/kp$/);
  assert.match(await ok('delete', 'pod', 'kp', '--wait=true'), /pod "kp" deleted/);
  const ns = await ok('get', 'namespaces');
  assert.equal(columns(ns), ['NAME', 'STATUS', 'AGE']);
});

test('kubectl create namespace|configmap|secret|serviceaccount (protobuf request bodies)', async () => {
  assert.match(await ok('create', 'namespace', 'kc'), /namespace\/kc created/);
  assert.match(await ok('create', 'configmap', 'cm', '-n', 'kc', '--from-literal=a=b', '--from-literal=empty='), /configmap\/cm created/);
  assert.match(await ok('create', 'secret', 'generic', 'sec', '-n', 'kc', '--from-literal=password=hunter2'), /secret\/sec created/);
  assert.match(await ok('create', 'serviceaccount', 'sa', '-n', 'kc'), /serviceaccount\/sa created/);
  const cm = JSON.parse(await ok('get', 'configmap', 'cm', '-n', 'kc', '-o', 'json')) as { data: Record<string, string>; metadata: Record<string, unknown> };
  assert.equal(cm.data, { a: 'b', empty: '' });
  assert.is(cm.metadata.generateName, undefined);
  const sec = JSON.parse(await ok('get', 'secret', 'sec', '-n', 'kc', '-o', 'json')) as { data: Record<string, string>; type: string };
  assert.is(Buffer.from(sec.data.password!, 'base64').toString(), 'hunter2');
  assert.is(sec.type, 'Opaque');
  const ns = JSON.parse(await ok('get', 'namespace', 'kc', '-o', 'json')) as { status: { phase: string } };
  assert.is(ns.status.phase, 'Active');
  assert.match(await ok('delete', 'namespace', 'kc'), /namespace "kc" deleted/);
  const gone = await kubectl('get', 'namespace', 'kc');
  assert.match(gone.stderr, /namespaces "kc" not found/);
});

test('bearer token and client-certificate authentication; anonymous requests are 401', async () => {
  const ca = s.api.pki!.caCert;
  const get = (headers: Record<string, string>, cert?: { cert: string; key: string }) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${s.api.url}/api/v1/namespaces`, { headers, agent: new Agent({ ca, ...(cert ?? {}) }) }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
  const anon = await get({});
  assert.is(anon.status, 401);
  assert.is((JSON.parse(anon.body) as { reason: string }).reason, 'Unauthorized');
  assert.is((await get({ Authorization: 'Bearer wrong' })).status, 401);
  assert.is((await get({ Authorization: `Bearer ${s.api.token!}` })).status, 200);
  assert.is((await get({}, { cert: s.api.pki!.adminCert, key: s.api.pki!.adminKey })).status, 200);
  // client-node through the kubeconfig (client certificate) works too, watches included.
  const list = await s.core.listNamespace();
  assert.ok(list.items.length >= 2);
  const seen: string[] = [];
  const ctl = await new Watch(s.kc).watch('/api/v1/namespaces', { resourceVersion: list.metadata!.resourceVersion! }, (type, obj: { metadata: { name: string } }) => seen.push(`${type} ${obj.metadata.name}`), () => {});
  await s.core.createNamespace({ body: { metadata: { name: 'tls-watch' } } });
  await eventually(() => seen.includes('ADDED tls-watch'), 3000, 'watch event over TLS');
  ctl.abort();
  const healthz = await get({});
  assert.is(healthz.status, 401);
});

test.run();
