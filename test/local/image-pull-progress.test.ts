// A pull while it runs, from a real registry (Debian's docker-registry, TLS and basic auth, as in
// image-pull.test.ts) behind a slow link (test/lib/throttle-proxy.ts): a container disk of
// incompressible bytes takes seconds to arrive. `qvirt image pull` prints the bytes of the
// manifest's total at each quarter (no terminal: plain lines); a registry DataVolume's
// status.progress climbs as CDI's percentage; the launcher pod waiting on the pull says in its
// ContainerCreating message how much has arrived. A pull cancelled — its DataVolume or VMI deleted,
// the pod runner or the whole local mode stopping — leaves no skopeo, nothing in the store's
// scratch area, no partial image.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { ImageStore } from '../../src/local/image-store.ts';
import { ImageManager } from '../../src/local/pod-runner/image-manager.ts';
import type { Pod } from '../../src/local/pod-runner/pod.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import type { DataVolume } from '../../src/api/cdi/types.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { buildOciLayout } from '../lib/oci-image.ts';
import { startRegistry, type TestRegistry } from '../lib/registry.ts';
import { startThrottleProxy, type ThrottleProxy } from '../lib/throttle-proxy.ts';
import { tempDir } from '../lib/tmp.ts';
import { entriesUnder } from '../lib/walk.ts';

const t = tempDir('qipp');
const store = new ImageStore(join(t.path, 'store'));
const log = componentLogger('image-pull-progress-test', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' });
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DISK_BYTES = 24 * 1024 * 1024;
/** ~8 s for the disk layer. */
const RATE = 3 * 1024 * 1024;
let reg: TestRegistry | undefined;
let proxy: ThrottleProxy | undefined;
let local: LocalMode | undefined;
let authFile = '';

interface Cs { name: string; state: { waiting?: { reason: string; message?: string } } }
interface PodObj extends KubeObject { status?: { initContainerStatuses?: Cs[]; containerStatuses?: Cs[] } }

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms: number, every = 100): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await f(); if (v) return v; } catch (err) { last = err; }
    await sleep(every);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

const L = () => local!;
const slowHost = () => `localhost:${proxy!.port}`;
const slowRef = (tag: string) => `${slowHost()}/qvirt/bigdisk:${tag}`;
/** skopeo processes pulling from the slow registry (read from /proc: nothing is signalled). */
const skopeoPulls = () => execFileSync('ps', ['-eo', 'pid=,args=']).toString().split('\n').filter((l) => /\bskopeo\b/.test(l) && l.includes(slowHost()));
const scratch = () => (existsSync(join(store.root, '.tmp')) ? readdirSync(join(store.root, '.tmp')) : []);
const partial = () => entriesUnder(store.root).map((e) => relative(store.root, e.path)).filter((n) => n.includes('.importing-'));

test.before(async () => {
  reg = await startRegistry(join(t.path, 'registry'));
  proxy = await startThrottleProxy(reg.port, RATE);
  // The slow registry is the same one on another port: its own certs.d entry.
  execFileSync('mkdir', ['-p', join(reg.certsDir, slowHost())]);
  execFileSync('cp', [reg.caFile, join(reg.certsDir, slowHost(), 'ca.crt')]);
  writeFileSync(join(t.path, 'big.raw'), randomBytes(DISK_BYTES));
  const layout = join(t.path, 'big-layout');
  await buildOciLayout(layout, [[{ path: '/disk/big.raw', src: join(t.path, 'big.raw') }]], 'v1');
  for (const tag of ['cli', 'dv', 'dvcancel', 'vmi', 'runner', 'stop']) await reg.push(`oci:${layout}:v1`, `qvirt/bigdisk:${tag}`);
  authFile = join(t.path, 'auth.json');
  const auth = Buffer.from(`${reg.user}:${reg.password}`).toString('base64');
  writeFileSync(authFile, JSON.stringify({ auths: { [slowHost()]: { auth }, [reg.host]: { auth } } }), { mode: 0o600 });
  local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log, podNetwork: false, registries: { certsDir: reg.certsDir } });
});

test.after(async () => {
  await local?.stop().catch(() => undefined);
  await proxy?.close();
  await reg?.stop();
  t.cleanup();
});

test('qvirt image pull: the bytes of the manifest\'s total at each quarter while a slow registry sends them', async () => {
  const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
  const r = await run(qvirt, ['image', 'pull', '--image-store', join(t.path, 'cli-store'), '--registry-certs-dir', reg!.certsDir, slowRef('cli')], { env: { ...process.env, REGISTRY_AUTH_FILE: authFile }, timeout: 120_000 });
  assert.match(r.stdout, `pulled ${slowRef('cli')}`);
  const lines = r.stderr.trim().split('\n');
  const pcts = lines.map((l) => /^(\d+)% ([0-9.]+) MiB \/ ([0-9.]+) MiB$/.exec(l)).filter((m) => m !== null);
  assert.equal(pcts.length, lines.length, `plain progress lines only: ${r.stderr}`);
  assert.ok(pcts.length >= 3, `several quarters seen: ${r.stderr}`);
  assert.is(pcts.at(-1)![1], '100');
  // The total is the manifest's (the layer is the incompressible disk, gzip'd: a little more than it).
  const total = Number(pcts.at(-1)![3]);
  assert.ok(total >= 24 && total < 25, `total ${total} MiB`);
  assert.ok(pcts.some((m) => Number(m[1]) > 0 && Number(m[1]) < 100), 'a part of it while it ran');
});

test('a registry DataVolume: status.progress climbs as CDI\'s percentage while the image is pulled', async () => {
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'slow-auth', namespace: 'default' }, stringData: { accessKeyId: reg!.user, secretKey: reg!.password } };
  await L().client.create(Resources.secrets, secret);
  const dv = { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'slow-dv', namespace: 'default' }, spec: { source: { registry: { url: `docker://${slowRef('dv')}`, secretRef: 'slow-auth' } }, storage: { resources: { requests: { storage: '64Mi' } } } } };
  await L().client.create(Resources.dataVolumes, dv);
  const seen = new Set<string>();
  const done = await waitFor('DataVolume slow-dv Succeeded', async () => {
    const d = await L().client.get<DataVolume & KubeObject>(Resources.dataVolumes, 'default', 'slow-dv');
    if (d.status?.progress) seen.add(d.status.progress);
    if (d.status?.phase === 'Failed') throw new Error(`Failed: ${JSON.stringify(d.status)}`);
    return d.status?.phase === 'Succeeded' && d;
  }, 120_000, 200);
  assert.is(done.status?.progress, '100.0%');
  const partials = [...seen].filter((p) => /^\d+\.\d\d%$/.test(p) && p !== '100.00%' && p !== '0.00%');
  assert.ok(partials.length >= 2, `progress while it pulled: ${[...seen].join(', ')}`);
  await L().client.delete(Resources.dataVolumes, 'default', 'slow-dv');

  // Deleted mid-pull: the pull is cancelled with the import, nothing left of it.
  await L().client.create(Resources.dataVolumes, { ...dv, metadata: { name: 'slow-dv-gone', namespace: 'default' }, spec: { ...dv.spec, source: { registry: { url: `docker://${slowRef('dvcancel')}`, secretRef: 'slow-auth' } } } });
  await waitFor('slow-dv-gone part-way', async () => {
    const d = await L().client.get<DataVolume & KubeObject>(Resources.dataVolumes, 'default', 'slow-dv-gone');
    return /^\d+\.\d\d%$/.test(d.status?.progress ?? '') && d.status?.progress !== '0.00%';
  }, 60_000, 200);
  assert.ok(skopeoPulls().length > 0, 'skopeo pulls for the DataVolume');
  await L().client.delete(Resources.dataVolumes, 'default', 'slow-dv-gone');
  await waitFor('the DataVolume\'s pull cancelled', async () => skopeoPulls().length === 0 && scratch().length === 0 && partial().length === 0, 20_000);
  assert.is(await store.get(slowRef('dvcancel')), undefined, 'no image stored');
});

/** A VMI whose container disk comes from the slow registry; resolves to its pod's ContainerCreating message once bytes have arrived. */
async function vmiPulling(name: string, tag: string): Promise<string> {
  const cfg = { auths: { [slowHost()]: { auth: Buffer.from(`${reg!.user}:${reg!.password}`).toString('base64') } } };
  await L().client.create(Resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-cred`, namespace: 'default' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(cfg)).toString('base64') } });
  await L().client.create(Resources.virtualMachineInstances, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' },
    spec: {
      terminationGracePeriodSeconds: 0,
      domain: { devices: { disks: [{ name: 'data', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
      volumes: [{ name: 'data', containerDisk: { image: slowRef(tag), imagePullSecret: `${name}-cred` } }],
    },
  });
  return waitFor('the pod\'s pull progress', async () => {
    const pods = (await L().client.list<PodObj>(Resources.pods, { namespace: 'default' })).items;
    for (const p of pods) {
      for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
        const m = s.state.waiting?.reason === 'ContainerCreating' ? s.state.waiting.message : undefined;
        if (m && / MiB of [0-9.]+ MiB \(\d+%\)$/.test(m) && !m.includes(' 0.0 MiB of')) return m;
      }
    }
    return undefined;
  }, 60_000, 250);
}

test('a VMI deleted while its container disk is pulled: the pod said how far it was; the pull is cancelled, nothing left', async () => {
  // The pod shows the pull under way, with bytes of the total.
  const message = await vmiPulling('slow', 'vmi');
  assert.match(message, `Pulling image "${slowRef('vmi')}": `);
  assert.ok(skopeoPulls().length > 0, 'skopeo pulls while the pod waits');
  assert.ok(scratch().length > 0, 'the pull\'s scratch directory exists meanwhile');
  await L().client.delete(Resources.virtualMachineInstances, 'default', 'slow');
  await waitFor('the pull cancelled', async () => skopeoPulls().length === 0 && scratch().length === 0 && partial().length === 0, 20_000);
  assert.is(await store.get(slowRef('vmi')), undefined, 'no image stored');
  // And it stays so (the pull did not go on in the background).
  await sleep(2000);
  assert.equal(skopeoPulls(), []);
  assert.equal(scratch(), []);
  assert.equal(partial(), []);
});

test('the pod runner\'s image manager stopping mid-pull (a kubelet restart): the pull is cancelled and waited for', async () => {
  const cfg = { auths: { [slowHost()]: { auth: Buffer.from(`${reg!.user}:${reg!.password}`).toString('base64') } } };
  await L().client.create(Resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'runner-cred', namespace: 'default' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(cfg)).toString('base64') } });
  const images = new ImageManager({ client: L().client, store, log, registries: { certsDir: reg!.certsDir }, event: () => undefined, wake: () => undefined });
  const container = { name: 'disk', image: slowRef('runner'), imagePullPolicy: 'IfNotPresent' };
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner-pod', namespace: 'default', uid: 'runner-pod-uid' }, spec: { imagePullSecrets: [{ name: 'runner-cred' }], containers: [container] } as Pod['spec'] };
  const first = await images.ensure(pod, container, slowRef('runner'));
  assert.is(first.ok, false);
  await waitFor('bytes arriving', async () => {
    const r = await images.ensure(pod, container, slowRef('runner'));
    return !r.ok && / MiB of /.test(r.state.kind === 'waiting' ? r.state.message ?? '' : '') && !/ 0\.0 MiB of/.test(r.state.kind === 'waiting' ? r.state.message ?? '' : '');
  }, 60_000, 250);
  assert.ok(skopeoPulls().length > 0, 'skopeo pulls');
  await images.stop();
  assert.equal(skopeoPulls(), [], 'no skopeo once stop() returned');
  assert.equal(scratch(), []);
  assert.equal(partial(), []);
  assert.is(await store.get(slowRef('runner')), undefined, 'no image stored');
});

test('a pull cancelled because its pod went, then the image manager stopping: stop() waits for that pull\'s cleanup too', async () => {
  const images = new ImageManager({ client: L().client, store, log, registries: { certsDir: reg!.certsDir }, event: () => undefined, wake: () => undefined });
  const container = { name: 'disk', image: slowRef('forgotten'), imagePullPolicy: 'IfNotPresent' };
  // Its own pull secret (a scratch directory for the auth file, as the failure once left behind).
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gone-pod', namespace: 'default', uid: 'gone-pod-uid' }, spec: { imagePullSecrets: [{ name: 'runner-cred' }], containers: [container] } as Pod['spec'] };
  assert.is((await images.ensure(pod, container, slowRef('forgotten'))).ok, false);
  await waitFor('skopeo pulling', async () => skopeoPulls().length > 0, 30_000, 100);
  images.forget('gone-pod-uid');
  await images.stop();
  assert.equal(skopeoPulls(), [], 'no skopeo once stop() returned');
  assert.equal(scratch(), [], 'no scratch directory once stop() returned');
  assert.equal(partial(), []);
  // A sync that comes after stop() starts no pull.
  const after = await images.ensure(pod, container, slowRef('forgotten'));
  assert.equal([after.ok, !after.ok && after.state.kind === 'waiting' ? after.state.message : ''], [false, 'the pod runner is stopping']);
  assert.equal(skopeoPulls(), []);
});

test('the local mode stopping mid-pull: the pull is cancelled, no skopeo outlives it, nothing left', async () => {
  await vmiPulling('slow-stop', 'stop');
  assert.ok(skopeoPulls().length > 0, 'skopeo pulls');
  const l = local!;
  local = undefined;
  await l.stop();
  assert.equal(skopeoPulls(), [], 'no skopeo once stop() returned');
  assert.equal(scratch(), []);
  assert.equal(partial(), []);
  assert.is(await store.get(slowRef('stop')), undefined, 'no image stored');
});

test.run();
