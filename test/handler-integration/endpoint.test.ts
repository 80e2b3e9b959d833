// The handler's subresource endpoint end to end: the embedded API server over HTTPS (TokenReview,
// SubjectAccessReview, the published client CA), a handler with a real launcher and QEMU booting
// the test guest, and real HTTPS requests made the way the CLI makes them — endpoint and CA found
// on the Node, the user's own token or client certificate.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request, type RequestOptions } from 'node:https';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { importTestGuest, markers } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { ImageStoreContainerDisks } from '../../src/local/image-store-container-disks.ts';
import { tempDir } from '../lib/tmp.ts';
import { Resources } from '../../src/kube/resource.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { HANDLER_CA_ANNOTATION, HANDLER_ENDPOINT_ANNOTATION } from '../../src/api/constants.ts';
import { HandlerController } from '../../handler/controller.ts';
import { startEndpoint, type Endpoint } from '../../handler/endpoint/server.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { NODE, createVmiWithLauncher, log, startCluster, waitFor, type TestLauncher } from './lib.ts';
import { within } from '../lib/within.ts';

const work = tempDir('qhe');
const podsDir = join(work.path, 'pods');
const stateDir = join(work.path, 'state');
const store = new ImageStore(join(work.path, 'store'));
const VIEWER = 'viewer-token-0123456789';
let cluster: Awaited<ReturnType<typeof startCluster>>;
let handler: HandlerController;
let endpoint: Endpoint;
let launcher: TestLauncher | undefined;
const audit: Array<Record<string, unknown>> = [];
const auditLog = componentLogger('virt-handler', {
  level: 'info',
  destination: new Writable({ write(chunk: Buffer, _e, cb) { for (const l of chunk.toString().split('\n')) if (l.trim()) audit.push(JSON.parse(l) as Record<string, unknown>); cb(); } }),
});

/** Where the CLI finds the endpoint: the Node's annotations. */
let base = '';
let ca = '';

interface Reply { code: number; body: Record<string, unknown> }
function call(method: string, sub: string, o: { token?: string; cert?: boolean; body?: unknown; vmi?: string } = {}): Promise<Reply> {
  const url = new URL(`${base}/v1/namespaces/default/virtualmachineinstances/${o.vmi ?? 'vme'}/${sub}`);
  const opts: RequestOptions = { method, ca, headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), 'content-type': 'application/json' } };
  if (o.cert) { opts.cert = cluster.api.pki!.adminCert; opts.key = cluster.api.pki!.adminKey; }
  return new Promise((resolve, reject) => {
    const req = request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(o.body === undefined ? undefined : JSON.stringify(o.body));
  });
}

/** Opens a console / vnc stream; resolves with the status line and, on 101, the socket. */
function upgrade(sub: string, token: string): Promise<{ code: number; socket?: TLSSocket; body?: string }> {
  const url = new URL(`${base}/v1/namespaces/default/virtualmachineinstances/vme/${sub}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca, headers: { authorization: `Bearer ${token}`, connection: 'Upgrade', upgrade: 'plain.kubevirt.io' } });
    req.on('upgrade', (res, socket, head) => {
      // Bytes that came in the same read as the 101 (the VNC server's greeting, on a loaded host)
      // are handed over apart from the socket: put them back in front of the stream.
      if (head.length) socket.unshift(head);
      resolve({ code: res.statusCode ?? 0, socket: socket as TLSSocket });
    });
    req.on('response', (res) => { const c: Buffer[] = []; res.on('data', (d: Buffer) => c.push(d)); res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(c).toString() })); });
    req.on('error', reject);
    req.end();
  });
}

function readUntil(socket: TLSSocket, pred: (text: string) => boolean, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => { socket.off('data', on); reject(new Error(`stream: timed out; got ${JSON.stringify(text.slice(-200))}`)); }, timeoutMs);
    const on = (d: Buffer) => { text += d.toString('latin1'); if (pred(text)) { clearTimeout(timer); socket.off('data', on); resolve(text); } };
    socket.on('data', on);
  });
}

const getVmi = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name);
const cond = (vmi: VirtualMachineInstance, type: string) => vmi.status?.conditions?.find((c) => c.type === type);

test.before(async () => {
  await importTestGuest(store);
  cluster = await startCluster({
    tls: true, dataDir: join(work.path, 'api'),
    users: [{ token: VIEWER, user: { name: 'viewer', groups: ['viewers'] } }],
    // A minimal RBAC stand-in: the viewer may read and attach (get), never change (update).
    authorize: (r) => (r.user === 'viewer' && r.resourceAttributes?.verb !== 'get' ? { allowed: false, reason: 'viewers may only get' } : { allowed: true, reason: 'allowed' }),
  });
  handler = new HandlerController({ client: cluster.client, nodeName: NODE, podsDir, stateDir, log, containerDiskSource: new ImageStoreContainerDisks(store), recorder: new EventRecorder(cluster.client, 'virt-handler', { host: NODE, log }) });
  await handler.start();
  endpoint = await startEndpoint({ controller: handler, client: cluster.client, nodeName: NODE, listen: '127.0.0.1:0', stateDir, log: auditLog });
});

test.after(async () => {
  try {
    await endpoint?.close();
    await handler?.stop().catch(() => undefined);
    await launcher?.stop();
    await cluster?.close();
  } finally {
    work.cleanup();
  }
});

test('the Node advertises the endpoint and its CA; the CA survives a restart', async () => {
  const node = await cluster.client.get(Resources.nodes, undefined, NODE);
  base = node.metadata?.annotations?.[HANDLER_ENDPOINT_ANNOTATION] ?? '';
  ca = Buffer.from(node.metadata?.annotations?.[HANDLER_CA_ANNOTATION] ?? '', 'base64').toString();
  assert.is(base, `https://127.0.0.1:${endpoint.port}`);
  assert.is(ca, endpoint.caCert);
  const again = await startEndpoint({ controller: handler, client: cluster.client, nodeName: NODE, listen: '127.0.0.1:0', stateDir, log });
  try {
    assert.is(again.caCert, endpoint.caCert, 'same CA across restarts');
  } finally {
    await again.close();
  }
  // A port in use: the error names the address and the flag.
  const err = await startEndpoint({ controller: handler, client: cluster.client, nodeName: NODE, listen: `127.0.0.1:${endpoint.port}`, stateDir, log }).catch((e: unknown) => e);
  assert.instance(err, Error);
  assert.match((err as Error).message, `cannot listen on 127.0.0.1:${endpoint.port} (--listen)`);
  // The last one to start advertises itself: put the first one back.
  await cluster.client.patch(Resources.nodes, undefined, NODE, { metadata: { annotations: { [HANDLER_ENDPOINT_ANNOTATION]: base } } }, 'strategic');
});

test('401 without or with bad credentials, 404 for a VMI not on this node', async () => {
  const none = await call('PUT', 'pause');
  assert.is(none.code, 401);
  assert.match(String(none.body.message), 'Unauthorized');
  assert.is((await call('PUT', 'pause', { token: 'not-a-token' })).code, 401);
  // qmp reads a body: an anonymous caller is refused before it is read (not 400 for a bad one, nor 413 for 100 KiB)
  assert.is((await call('POST', 'qmp', { body: { arguments: {} } })).code, 401);
  assert.is((await call('POST', 'qmp', { token: 'not-a-token', body: { execute: 'x'.repeat(100 * 1024) } })).code, 401);
  const missing = await call('PUT', 'pause', { token: cluster.api.token!, vmi: 'nosuch' });
  assert.is(missing.code, 404);
  assert.match(String(missing.body.message), 'default/nosuch is not running on node node01');
  assert.is((await call('GET', 'pause', { token: cluster.api.token! })).code, 405);
  assert.is((await call('PUT', 'frobnicate', { token: cluster.api.token! })).code, 404);
});

test('a VMI runs; pause/unpause by token: 403 for the viewer, 200 and 409 for the admin', async () => {
  const l = await createVmiWithLauncher(cluster.client, podsDir, 'vme', work.path);
  launcher = l.launcher;
  await waitFor('VMI Running', async () => (await getVmi('vme')).status?.phase === 'Running', 90_000);
  const denied = await call('PUT', 'pause', { token: VIEWER });
  assert.is(denied.code, 403);
  assert.match(String(denied.body.message), 'user "viewer" cannot update virtualmachineinstances/pause');
  assert.match(String(denied.body.message), 'viewers may only get');
  const paused = await call('PUT', 'pause', { token: cluster.api.token! });
  assert.equal(paused, { code: 200, body: {} });
  await waitFor('Paused condition', async () => cond(await getVmi('vme'), 'Paused')?.reason === 'PausedByUser');
  await waitFor('domain paused in the handler', () => handler.launcherOf('default', 'vme')?.domain?.Status.Status === 'Paused');
  const again = await call('PUT', 'pause', { token: cluster.api.token! });
  assert.is(again.code, 409);
  assert.match(String(again.body.message), 'already paused');
  assert.is((await call('PUT', 'unpause', { token: cluster.api.token! })).code, 200);
  await waitFor('Paused condition gone', async () => cond(await getVmi('vme'), 'Paused') === undefined);
});

test('/metrics: get on the non-resource URL by SubjectAccessReview (403 for the viewer), the running VMI\'s stats for the admin, read-only', async () => {
  const get = (o: { token?: string; cert?: boolean; method?: string }) => new Promise<{ code: number; type: string; body: string }>((resolve, reject) => {
    const opts: RequestOptions = { method: o.method ?? 'GET', ca, headers: o.token ? { authorization: `Bearer ${o.token}` } : {} };
    if (o.cert) { opts.cert = cluster.api.pki!.adminCert; opts.key = cluster.api.pki!.adminKey; }
    const req = request(new URL('/metrics', base), opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
  assert.is((await get({})).code, 401);
  const denied = await get({ token: VIEWER });
  assert.is(denied.code, 403);
  assert.match(denied.body, 'user \\"viewer\\" cannot get the non-resource URL /metrics');
  assert.is((await get({ token: cluster.api.token!, method: 'POST' })).code, 405);
  for (const who of [{ token: cluster.api.token! }, { cert: true }]) {
    const ok = await get(who);
    assert.is(ok.code, 200, ok.body);
    assert.is(ok.type, 'text/plain; version=0.0.4; charset=utf-8');
    assert.not.match(ok.body, /^kubevirt_vmi_info/m, 'kubevirt_vmi_info is virt-controller\'s, as in KubeVirt');
    assert.match(ok.body, /^kubevirt_vmi_vcpu_seconds_total\{node="node01",namespace="default",name="vme",[^}]*id="0",state="running"\} \d/m);
    assert.match(ok.body, /^kubevirt_workqueue_depth\{name="virt-handler-vm"\} \d+$/m);
  }
});

test('vnc: the RFB handshake through the upgrade; console: bytes both ways; one session of each per VMI', async () => {
  const vnc = await upgrade('vnc', VIEWER);
  assert.is(vnc.code, 101);
  const hello = await readUntil(vnc.socket!, (t) => t.length >= 12, 10_000);
  assert.is(hello.slice(0, 12), 'RFB 003.008\n');
  // One VNC session per VMI: a client that asks to preserve the active one is refused...
  const preserved = await upgrade('vnc?preserveSession=true', VIEWER);
  assert.is(preserved.code, 503);
  assert.match(preserved.body ?? '', 'Active VNC connection');
  // ...any other takes it over, and the first one is closed.
  const firstClosed = new Promise<void>((r) => vnc.socket!.once('close', () => r()));
  const vnc2 = await upgrade('vnc', VIEWER);
  assert.is(vnc2.code, 101);
  await within(firstClosed, 30_000, 'the first VNC session to be closed by the takeover');
  assert.is((await readUntil(vnc2.socket!, (t) => t.length >= 12, 10_000)).slice(0, 12), 'RFB 003.008\n');
  vnc2.socket!.destroy();

  await waitFor('guest shell ready', () => launcher!.serialLog().includes(markers.ready), 120_000);
  const con = await upgrade('console', VIEWER);
  assert.is(con.code, 101);
  const seen = readUntil(con.socket!, (t) => t.includes('QVIRT-ECHO-42'), 30_000);
  con.socket!.write('echo QVIRT-ECHO-$((6*7))\n');
  assert.match(await seen, 'QVIRT-ECHO-42');
  // A second console client takes the serial port over; the first is disconnected.
  const conClosed = new Promise<void>((r) => con.socket!.once('close', () => r()));
  const con2 = await upgrade('console', VIEWER);
  assert.is(con2.code, 101);
  await within(conClosed, 30_000, 'the first console session to be closed by the takeover');
  const seen2 = readUntil(con2.socket!, (t) => t.includes('QVIRT-ECHO-43'), 30_000);
  con2.socket!.write('echo QVIRT-ECHO-$((6*7+1))\n');
  assert.match(await seen2, 'QVIRT-ECHO-43');
  con2.socket!.destroy();

  const noUpgrade = await call('GET', 'vnc', { token: VIEWER });
  assert.is(noUpgrade.code, 400);
  assert.match(String(noUpgrade.body.message), 'Upgrade: plain.kubevirt.io');
  const unauth = await upgrade('vnc', 'not-a-token');
  assert.is(unauth.code, 401);
});

test('portforward: the viewer may attach (verb get, as KubeVirt\'s roles grant it); a VMI without interfaces says so; bad parameters are named', async () => {
  const none = await upgrade('portforward/22', VIEWER);
  assert.is(none.code, 400, none.body);
  assert.match(none.body ?? '', 'VMI default/vme: no network interfaces are present');
  const badPort = await upgrade('portforward/0/udp', VIEWER);
  assert.is(badPort.code, 400);
  assert.match(String((JSON.parse(badPort.body ?? '{}') as { message?: string }).message), 'portforward/0/udp: port "0" is not a port number (1..65535)');
  assert.is((await upgrade('portforward/22', 'not-a-token')).code, 401);
  const noUpgrade = await call('GET', 'portforward/22', { token: VIEWER });
  assert.is(noUpgrade.code, 400);
  assert.match(String(noUpgrade.body.message), 'portforward/22 is a byte stream');
});

test('qmp: read-only allowed, unsafe refused without the flag and without qmp-unsafe, QMP errors as QMP said them, audited', async () => {
  const status = await call('POST', 'qmp', { token: VIEWER, body: { execute: 'query-status' } });
  assert.is(status.code, 200);
  assert.is((status.body.return as { status: string }).status, 'running');
  const noFlag = await call('POST', 'qmp', { token: cluster.api.token!, body: { execute: 'stop' } });
  assert.is(noFlag.code, 403);
  assert.match(String(noFlag.body.message), 'set unsafe');
  const viewerUnsafe = await call('POST', 'qmp', { token: VIEWER, body: { execute: 'stop', unsafe: true } });
  assert.is(viewerUnsafe.code, 403);
  assert.match(String(viewerUnsafe.body.message), 'virtualmachineinstances/qmp-unsafe');
  const qmpError = await call('POST', 'qmp', { token: cluster.api.token!, body: { execute: 'device_del', arguments: { id: 'no-such-device' }, unsafe: true } });
  assert.is(qmpError.code, 200);
  assert.is((qmpError.body.error as { class: string }).class, 'DeviceNotFound');
  // HMP through human-monitor-command: a single `info` line is read-only (no qmp-unsafe needed), the rest is not.
  const hmpInfo = await call('POST', 'qmp', { token: VIEWER, body: { execute: 'human-monitor-command', arguments: { 'command-line': 'info status' } } });
  assert.is(hmpInfo.code, 200, JSON.stringify(hmpInfo.body));
  assert.is(hmpInfo.body.return, 'VM status: running\r\n');
  const hmpStop = await call('POST', 'qmp', { token: VIEWER, body: { execute: 'human-monitor-command', arguments: { 'command-line': 'stop' } } });
  assert.is(hmpStop.code, 403);
  assert.match(String(hmpStop.body.message), "HMP 'stop' is not an `info` command");
  const bad = await call('POST', 'qmp', { token: cluster.api.token!, body: { arguments: {} } });
  assert.is(bad.code, 400);
  assert.match(String(bad.body.message), 'execute');
  const lines = audit.filter((l) => l.msg === 'qmp call');
  assert.ok(lines.some((l) => l.user === 'viewer' && l.command === 'query-status' && l.unsafe === false && l.outcome === 'ok' && l.name === 'vme' && l.namespace === 'default'), JSON.stringify(lines));
  assert.ok(lines.some((l) => l.user === 'system:admin' && l.command === 'stop' && l.outcome === 'refused'));
  assert.ok(lines.some((l) => l.user === 'system:admin' && l.command === 'device_del' && l.unsafe === true && l.outcome === 'qmp-error'));
  assert.ok(lines.some((l) => l.user === 'viewer' && l.command === 'human-monitor-command' && l.outcome === 'ok'));
  assert.ok(lines.some((l) => l.user === 'viewer' && l.command === 'human-monitor-command' && l.outcome === 'refused'));
});

test('client certificate (the admin kubeconfig\'s) + guest agent info in KubeVirt\'s shape', async () => {
  await waitFor('AgentConnected', async () => cond(await getVmi('vme'), 'AgentConnected')?.status === 'True', 120_000);
  const info = await call('GET', 'guestosinfo', { cert: true });
  assert.is(info.code, 200, JSON.stringify(info.body));
  assert.ok(typeof (info.body.os as { id?: string } | undefined)?.id === 'string' || typeof info.body.hostname === 'string', JSON.stringify(info.body));
  const fs = await call('GET', 'filesystemlist', { cert: true });
  assert.is(fs.code, 200, JSON.stringify(fs.body));
  assert.ok(Array.isArray(fs.body.items), JSON.stringify(fs.body));
  assert.ok(audit.some((l) => l.msg === 'subresource request' && l.user === 'qvirt-admin' && l.subresource === 'guestosinfo'));
  const users = await call('GET', 'userlist', { token: VIEWER });
  assert.is(users.code, 200, JSON.stringify(users.body));
  assert.ok(Array.isArray(users.body.items), JSON.stringify(users.body));
});

test('freeze (unfreezeTimeout checked) / unfreeze and reset by token; the viewer may not reset', async () => {
  const bad = await call('PUT', 'freeze', { token: cluster.api.token!, body: { unfreezeTimeout: 'soon' } });
  assert.is(bad.code, 400);
  assert.match(String(bad.body.message), 'unfreezeTimeout');
  const frozen = await call('PUT', 'freeze', { token: cluster.api.token!, body: { unfreezeTimeout: '5m' } });
  assert.is(frozen.code, 200, JSON.stringify(frozen.body));
  await waitFor('fsFreezeStatus frozen', async () => (await getVmi('vme')).status?.fsFreezeStatus === 'frozen', 30_000);
  assert.is((await call('PUT', 'unfreeze', { token: cluster.api.token! })).code, 200);
  await waitFor('fsFreezeStatus gone', async () => (await getVmi('vme')).status?.fsFreezeStatus === undefined, 30_000);
  const booted = () => launcher!.serialLog().split(markers.booted).length - 1;
  const before = booted();
  assert.is((await call('PUT', 'reset', { token: VIEWER })).code, 403);
  assert.is((await call('PUT', 'reset', { token: cluster.api.token! })).code, 200);
  await waitFor('the guest boots again after reset', () => booted() > before, 120_000);
});

test.run();
