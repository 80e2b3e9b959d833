// The node agent's device plugins against a fake kubelet: a real gRPC Registration server on
// kubelet.sock in a temp device-plugins dir. The kubelet side then does what the real one does:
// dials the endpoint the plugin registered, streams ListAndWatch and calls Allocate. Device health
// follows the device node under the host root; a kubelet restart (its dir wiped) re-registers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { grpc, grpcJsService, listenUnix, shutdownServer, unixAddress } from '../../src/proto/grpc.ts';
import { devicePluginService, registrationService, DEVICE_PLUGIN_API_VERSION, type RegisterRequest, type ListAndWatchResponse, type AllocateResponse } from '../../src/proto/deviceplugin.ts';
import { GenericDevicePlugin, allocateResponse, deviceList } from '../../handler/device-plugins/generic-device.ts';
import { DevicePluginManager } from '../../handler/device-plugins/manager.ts';
import { devicePermissions, permanentHostDevices, pluginSocketName } from '../../handler/device-plugins/constants.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('test', { level: 'silent' });

/** A fake kubelet: records registrations on <dir>/kubelet.sock. */
async function fakeKubelet(dir: string) {
  const registrations: RegisterRequest[] = [];
  const waiters: (() => void)[] = [];
  const server = new grpc.Server();
  server.addService(grpcJsService(registrationService()).service, {
    Register: (call: grpc.ServerUnaryCall<RegisterRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      registrations.push(call.request);
      for (const w of waiters.splice(0)) w();
      cb(null, {});
    },
  });
  await listenUnix(server, join(dir, 'kubelet.sock'));
  return {
    registrations,
    async waitFor(n: number, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (registrations.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} registrations, got ${registrations.length}`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 200); });
      }
    },
    close: () => shutdownServer(server),
  };
}

type PluginClient = grpc.Client & {
  ListAndWatch(req: object): grpc.ClientReadableStream<ListAndWatchResponse>;
  Allocate(req: object, cb: (err: grpc.ServiceError | null, res: AllocateResponse) => void): void;
  GetDevicePluginOptions(req: object, cb: (err: grpc.ServiceError | null, res: unknown) => void): void;
};

function dialPlugin(dir: string, endpoint: string): PluginClient {
  const Ctor = grpcJsService(devicePluginService());
  return new Ctor(unixAddress(join(dir, endpoint)), grpc.credentials.createInsecure()) as unknown as PluginClient;
}

/** Collects ListAndWatch updates and lets the test wait for one matching a predicate. */
function watchDevices(client: PluginClient) {
  const updates: ListAndWatchResponse[] = [];
  const stream = client.ListAndWatch({});
  stream.on('data', (r: ListAndWatchResponse) => updates.push(r));
  stream.on('error', () => { /* cancelled at the end */ });
  return {
    updates,
    stream,
    async until(pred: (r: ListAndWatchResponse) => boolean, timeoutMs = 20_000): Promise<ListAndWatchResponse> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = updates.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`no matching ListAndWatch update in ${JSON.stringify(updates.map((u) => u.devices.length + ':' + (u.devices[0]?.health ?? '-')))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

test('device list, allocate response, permanent devices and permissions (pure)', () => {
  const l = deviceList('kvm', 3, 'Healthy');
  assert.equal(l, [{ ID: 'kvm0', health: 'Healthy' }, { ID: 'kvm1', health: 'Healthy' }, { ID: 'kvm2', health: 'Healthy' }]);
  const r = allocateResponse({ container_requests: [{ devices_ids: ['tun3'] }, { devices_ids: ['tun9'] }] }, '/dev/net/tun', 'rw');
  assert.is(r.container_responses.length, 2);
  assert.equal(r.container_responses[1]!.devices, [{ container_path: '/dev/net/tun', host_path: '/dev/net/tun', permissions: 'rw' }]);
  assert.equal(permanentHostDevices().map((d) => [d.name, d.path, d.preOpen]), [['kvm', '/dev/kvm', false], ['tun', '/dev/net/tun', true], ['vhost-net', '/dev/vhost-net', true]]);
  assert.is(devicePermissions(true), 'rwm');
  assert.is(devicePermissions(false), 'rw');
  assert.is(pluginSocketName('vhost-net'), 'kubevirt-vhost-net.sock');
});

test('a plugin registers with the kubelet, lists 1000 devices, allocates the node and follows its health', async () => {
  const dir = tempDir('qdp');
  const hostRoot = join(dir.path, 'root');
  mkdirSync(join(hostRoot, 'dev'), { recursive: true });
  writeFileSync(join(hostRoot, 'dev/kvm'), '');
  const kubelet = await fakeKubelet(dir.path);
  const plugin = new GenericDevicePlugin({ deviceName: 'kvm', devicePath: '/dev/kvm', maxDevices: 1000, permissions: 'rw', preOpen: false, pluginDir: dir.path, hostRoot, log });
  let client: PluginClient | undefined;
  try {
    await plugin.start();
    assert.equal(kubelet.registrations.map((r) => [r.version, r.endpoint, r.resource_name]), [[DEVICE_PLUGIN_API_VERSION, 'kubevirt-kvm.sock', 'devices.kubevirt.io/kvm']]);
    client = dialPlugin(dir.path, kubelet.registrations[0]!.endpoint);
    const opts = await new Promise<unknown>((res, rej) => client!.GetDevicePluginOptions({}, (e, r) => (e ? rej(e) : res(r))));
    assert.equal(opts, { pre_start_required: false, get_preferred_allocation_available: false });
    const w = watchDevices(client);
    const first = await w.until((r) => r.devices.length === 1000);
    assert.is(first.devices[0]!.ID, 'kvm0');
    assert.is(first.devices[999]!.ID, 'kvm999');
    assert.ok(first.devices.every((d) => d.health === 'Healthy'));

    const alloc = await new Promise<AllocateResponse>((res, rej) => client!.Allocate({ container_requests: [{ devices_ids: ['kvm7'] }] }, (e, r) => (e ? rej(e) : res(r))));
    assert.equal(alloc.container_responses.map((c) => c.devices), [[{ container_path: '/dev/kvm', host_path: '/dev/kvm', permissions: 'rw' }]]);

    rmSync(join(hostRoot, 'dev/kvm'));
    await w.until((r) => r.devices.length === 1000 && r.devices.every((d) => d.health === 'Unhealthy'));
    writeFileSync(join(hostRoot, 'dev/kvm'), '');
    const n = w.updates.length;
    await w.until((r) => w.updates.indexOf(r) >= n && r.devices[0]?.health === 'Healthy');

    await plugin.stop();
    // Stopping tells the kubelet "no devices" before the stream ends; the socket is gone.
    await w.until((r) => r.devices.length === 0);
    assert.not.ok(existsSync(plugin.socketPath));
    w.stream.cancel();
  } finally {
    client?.close();
    await plugin.stop();
    await kubelet.close();
    dir.cleanup();
  }
});

test('without a kubelet, start fails naming the resource and the socket, and leaves no plugin socket', async () => {
  const dir = tempDir('qdp');
  const plugin = new GenericDevicePlugin({ deviceName: 'tun', devicePath: '/dev/net/tun', maxDevices: 10, permissions: 'rw', preOpen: false, pluginDir: dir.path, hostRoot: dir.path, log, registerTimeoutMs: 1000 });
  try {
    const err = await plugin.start().then(() => undefined, (e: Error) => e);
    assert.ok(err, 'start must fail');
    assert.match(err!.message, /devices\.kubevirt\.io\/tun/);
    assert.match(err!.message, /kubelet\.sock/);
    assert.not.ok(existsSync(join(dir.path, 'kubevirt-tun.sock')));
  } finally {
    await plugin.stop();
    dir.cleanup();
  }
});

test('the manager registers kvm, tun and vhost-net, waits for a late kubelet, and re-registers after a kubelet restart', async () => {
  const dir = tempDir('qdp');
  const hostRoot = join(dir.path, 'root');
  mkdirSync(join(hostRoot, 'dev/net'), { recursive: true });
  for (const f of ['dev/kvm', 'dev/net/tun', 'dev/vhost-net']) writeFileSync(join(hostRoot, f), '');
  const m = new DevicePluginManager({ pluginDir: dir.path, hostRoot, log, maxDevices: 4, permissions: 'rwm', backoffMs: 100, maxBackoffMs: 400 });
  m.start();
  // The kubelet comes up after the handler: the plugins retry until it answers.
  await new Promise((r) => setTimeout(r, 300));
  assert.not.ok(m.initialized);
  const kubelet = await fakeKubelet(dir.path);
  try {
    await kubelet.waitFor(3);
    assert.equal(kubelet.registrations.map((r) => r.resource_name).sort(), ['devices.kubevirt.io/kvm', 'devices.kubevirt.io/tun', 'devices.kubevirt.io/vhost-net']);
    for (let i = 0; i < 100 && !m.initialized; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(m.initialized);
    // A restarted kubelet wipes the directory: the plugin notices its socket is gone and registers again.
    rmSync(join(dir.path, 'kubevirt-tun.sock'));
    await kubelet.waitFor(4);
    assert.is(kubelet.registrations[3]!.resource_name, 'devices.kubevirt.io/tun');
    for (let i = 0; i < 100 && !existsSync(join(dir.path, 'kubevirt-tun.sock')); i++) await new Promise((r) => setTimeout(r, 50));
    const client = dialPlugin(dir.path, 'kubevirt-tun.sock');
    const alloc = await new Promise<AllocateResponse>((res, rej) => client.Allocate({ container_requests: [{ devices_ids: ['tun1'] }] }, (e, r) => (e ? rej(e) : res(r))));
    client.close();
    assert.equal(alloc.container_responses[0]!.devices, [{ container_path: '/dev/net/tun', host_path: '/dev/net/tun', permissions: 'rwm' }]);
  } finally {
    await m.stop();
    await kubelet.close();
    assert.not.ok(existsSync(join(dir.path, 'kubevirt-kvm.sock')));
    dir.cleanup();
  }
});

test.run();
