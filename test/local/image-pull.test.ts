// The local mode pulls container-disk and kernel-boot images as kubelet pulls them, from a real
// registry the test starts on loopback (Debian's docker-registry, TLS with the test's CA given
// through the local mode's certs.d, htpasswd basic auth): the test guest pushed as a kernel-boot
// image (kernel and initrd at paths of its own) and a qcow2 as a container disk, a VMI naming both
// with an imagePullSecret boots from what was pulled; a wrong password ends in kubelet's Failed /
// ErrImagePull naming the image and the 401, ImagePullBackOff, nothing in the store; the Secret
// fixed, the next pull after the back-off succeeds. Then pulls without the local mode: a two-layer
// image, bad references, a registry whose CA is not given, and token auth (a token server).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { pullImage, pullVmiImages } from '../../src/local/image-pull.ts';
import { credentialsFor } from '../../src/local/registry-auth.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { buildOciLayout } from '../lib/oci-image.ts';
import { startRegistry, type TestRegistry } from '../lib/registry.ts';
import { tempDir } from '../lib/tmp.ts';

const t = tempDir('qip');
const store = new ImageStore(join(t.path, 'store'));
const log = componentLogger('image-pull-test', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' });
let reg: TestRegistry | undefined;
let local: LocalMode | undefined;
const digests: Record<string, string> = {};
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ev extends KubeObject { reason?: string; message?: string; type?: string; involvedObject?: { name?: string; kind?: string } }
interface PodObj extends KubeObject { status?: { phase?: string; initContainerStatuses?: Cs[]; containerStatuses?: Cs[] } }
interface Cs { name: string; image: string; imageID: string; state: { waiting?: { reason: string; message?: string }; running?: unknown; terminated?: unknown } }
interface Vmi extends KubeObject { status?: { phase?: string; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } }

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await f(); if (v) return v; } catch (err) { last = err; }
    await sleep(250);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

const L = () => local!;
const R = () => reg!;
const guestRef = () => `${R().host}/qvirt/testguest:v1`;
const diskRef = (tag = 'v1') => `${R().host}/qvirt/testdisk:${tag}`;

async function launcherPod(vmiName: string): Promise<PodObj | undefined> {
  const vmi = await L().client.get<Vmi>(Resources.virtualMachineInstances, 'default', vmiName);
  return (await L().client.list<PodObj>(Resources.pods, { namespace: 'default', labelSelector: `kubevirt.io/created-by=${vmi.metadata!.uid}` })).items[0];
}
const eventsOf = async (podName: string) => (await L().client.list<Ev>(Resources.events, { namespace: 'default' })).items.filter((e) => e.involvedObject?.name === podName);
const allStatuses = (p: PodObj) => [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];

async function dockerConfigSecret(name: string, password: string): Promise<void> {
  const cfg = { auths: { [R().host]: { auth: Buffer.from(`${R().user}:${password}`).toString('base64') } } };
  const obj = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(cfg)).toString('base64') } };
  try { await L().client.create(Resources.secrets, obj); } catch {
    const cur = await L().client.get<KubeObject>(Resources.secrets, 'default', name);
    await L().client.update(Resources.secrets, { ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata!.resourceVersion! } });
  }
}

const vmiObject = (name: string, secret: string, disk: string) => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' },
  spec: {
    terminationGracePeriodSeconds: 0,
    domain: {
      firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0 qvirt.ga=0', container: { image: guestRef(), imagePullSecret: secret, kernelPath: '/opt/qvirt/kernel/vmlinux', initrdPath: '/opt/qvirt/initrd.img' } } },
      devices: { disks: [{ name: 'data', serial: 'pulled', disk: { bus: 'virtio' } }] },
      resources: { requests: { memory: '128Mi' } },
    },
    volumes: [{ name: 'data', containerDisk: { image: disk, imagePullSecret: secret } }],
  },
});

test.before(async () => {
  const guest = await ensureGuest();
  reg = await startRegistry(join(t.path, 'registry'));
  const qcow = join(t.path, 'data.qcow2');
  execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', qcow, '40M']);
  const gl = join(t.path, 'guest-layout');
  digests.guest = (await buildOciLayout(gl, [[{ path: '/opt/qvirt/kernel/vmlinux', src: guest.kernel }, { path: '/opt/qvirt/initrd.img', src: guest.initrd }]], 'v1')).manifestDigest;
  const dl = join(t.path, 'disk-layout');
  digests.disk = (await buildOciLayout(dl, [[{ path: '/disk/data.qcow2', src: qcow }]], 'v1')).manifestDigest;
  await reg.push(`oci:${gl}:v1`, 'qvirt/testguest:v1');
  await reg.push(`oci:${dl}:v1`, 'qvirt/testdisk:v1');
  await reg.push(`oci:${dl}:v1`, 'qvirt/testdisk:v2');
  // The registry's CA through the local mode's certs.d (DATA-DIR/certs.d/HOST:PORT/ca.crt by default).
  local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log, registries: { certsDir: reg.certsDir } });
});

test.after(async () => {
  await local?.stop().catch(() => undefined);
  await reg?.stop();
  t.cleanup();
});

test('a VMI whose images are not in the store: pulled with its imagePullSecret over TLS, booted from them', async () => {
  await dockerConfigSecret('regcred', R().password);
  await L().client.create(Resources.virtualMachineInstances, vmiObject('pulled', 'regcred', diskRef()));
  const vmi = await waitFor('VMI pulled Running', async () => { const v = await L().client.get<Vmi>(Resources.virtualMachineInstances, 'default', 'pulled'); return v.status?.phase === 'Running' && v; }, 120_000);
  const pod = (await launcherPod('pulled'))!;
  // The guest booted from the pulled kernel and initrd and sees the pulled container disk (40 MiB).
  const serial = await waitFor('the guest console showing the pulled disk', async () => {
    // Not execFileSync: the API server runs in this process.
    const out = (await run('kubectl', ['--kubeconfig', L().kubeconfig, 'logs', pod.metadata!.name!, '-c', 'guest-console-log'], { timeout: 30_000 })).stdout;
    return /QVIRT-DISK .*serial=pulled/.test(out) && out;
  }, 120_000);
  assert.match(serial, /QVIRT-GUEST-BOOTED/);
  assert.match(serial, /QVIRT-DISK name=vd\w+ serial=pulled size=81920 /);
  // kubelet's events for the pulls.
  const evs = await eventsOf(pod.metadata!.name!);
  for (const ref of [guestRef(), diskRef()]) {
    assert.ok(evs.some((e) => e.reason === 'Pulling' && e.message === `Pulling image "${ref}"`), `Pulling ${ref}: ${JSON.stringify(evs.map((e) => [e.reason, e.message]))}`);
    assert.ok(evs.some((e) => e.reason === 'Pulled' && new RegExp(`^Successfully pulled image "${ref.replace(/[.]/g, '\\.')}" in [0-9.]+s \\([0-9.]+s including waiting\\)\\. Image size: \\d+ bytes\\.$`).test(e.message ?? '')), `Pulled ${ref}`);
  }
  // The store holds them under the registry's manifest digests; the pod's imageIDs pin them.
  assert.is(`sha256:${(await store.get(guestRef()))!.digest}`, digests.guest);
  assert.is(`sha256:${(await store.get(diskRef()))!.digest}`, digests.disk);
  const ids = allStatuses((await launcherPod('pulled'))!).filter((s) => s.image === diskRef() || s.image === guestRef()).map((s) => s.imageID);
  assert.ok(ids.includes(`${R().host}/qvirt/testdisk@${digests.disk}`), JSON.stringify(ids));
  await L().client.delete(Resources.virtualMachineInstances, 'default', vmi.metadata!.name!);
});

test('a registry refusing the credentials: Failed / ErrImagePull naming the image and the 401, back-off, nothing stored; fixed, the retry pulls', async () => {
  await dockerConfigSecret('badcred', 'wrong-password');
  await L().client.create(Resources.virtualMachineInstances, vmiObject('refused', 'badcred', diskRef('v2')));
  const failed = await waitFor('a Failed event for the pull', async () => {
    const pod = await launcherPod('refused');
    if (!pod) return undefined;
    const evs = await eventsOf(pod.metadata!.name!);
    return evs.some((e) => e.reason === 'Failed' && e.message === 'Error: ErrImagePull') && evs.find((e) => e.reason === 'Failed' && e.message?.startsWith('Failed to pull image'));
  }, 60_000);
  assert.is(failed.type, 'Warning');
  assert.match(failed.message!, /^Failed to pull image "localhost:\d+\/qvirt\/test(guest:v1|disk:v2)": image "[^"]+": 401 Unauthorized: the registry refused the credentials of imagePullSecret "badcred"/);
  // The container waits with ErrImagePull, then ImagePullBackOff; the VMI says why it does not start.
  const waiting = await waitFor('ImagePullBackOff', async () => {
    const st = allStatuses((await launcherPod('refused'))!).find((s) => s.state.waiting?.reason === 'ImagePullBackOff');
    return st?.state.waiting;
  }, 30_000);
  assert.match(waiting.message!, /Back-off pulling image "localhost:\d+\/qvirt\/.*401 Unauthorized/);
  const cond = await waitFor('VMI condition naming the pull', async () => {
    const v = await L().client.get<Vmi>(Resources.virtualMachineInstances, 'default', 'refused');
    return v.status?.conditions?.find((c) => c.type === 'Synchronized' && c.status === 'False' && /ErrImagePull|ImagePullBackOff/.test(c.reason ?? ''));
  }, 30_000);
  assert.ok(cond);
  assert.is(await store.get(diskRef('v2')), undefined, 'nothing stored for the refused image');
  assert.equal(readdirSync(store.root).filter((n) => n.includes('.importing-')), [], 'no partial image');
  assert.equal(existsSync(join(store.root, '.tmp')) ? readdirSync(join(store.root, '.tmp')) : [], [], 'no scratch');
  // The Secret fixed: the pull after the back-off (10 s) succeeds.
  await dockerConfigSecret('badcred', R().password);
  await waitFor('the retried pull', async () => (await store.get(diskRef('v2'))) !== undefined, 60_000);
  const pod = (await launcherPod('refused'))!;
  await waitFor('the container disk served', async () => allStatuses((await launcherPod('refused'))!).some((s) => s.image === diskRef('v2') && s.state.running), 30_000);
  const evs = await eventsOf(pod.metadata!.name!);
  assert.ok(evs.some((e) => e.reason === 'BackOff' && e.message === `Back-off pulling image "${diskRef('v2')}"`) || evs.some((e) => e.reason === 'BackOff'), 'BackOff event');
  await L().client.delete(Resources.virtualMachineInstances, 'default', 'refused');
});

test('imagePullPolicy Never and the image absent: ErrImageNeverPull, in kubelet\'s words, nothing pulled', async () => {
  const vmi = vmiObject('never', 'regcred', diskRef('v9')) as ReturnType<typeof vmiObject> & { spec: { volumes: Array<{ containerDisk: Record<string, unknown> }> } };
  vmi.spec.volumes[0]!.containerDisk.imagePullPolicy = 'Never';
  await L().client.create(Resources.virtualMachineInstances, vmi);
  const message = `Container image "${diskRef('v9')}" is not present with pull policy of Never`;
  const waiting = await waitFor('ErrImageNeverPull', async () => {
    const pod = await launcherPod('never');
    return pod && allStatuses(pod).find((s) => s.state.waiting?.reason === 'ErrImageNeverPull')?.state.waiting;
  }, 60_000);
  assert.is(waiting.message, message);
  const pod = (await launcherPod('never'))!;
  const evs = await waitFor('the ErrImageNeverPull event', async () => { const e = await eventsOf(pod.metadata!.name!); return e.some((x) => x.reason === 'ErrImageNeverPull') && e; }, 10_000);
  assert.equal(evs.filter((e) => e.reason === 'ErrImageNeverPull').map((e) => [e.type, e.message]), [['Warning', message]]);
  assert.not.ok(evs.some((e) => e.reason === 'Pulling' && e.message?.includes(':v9')), 'never pulled');
  await L().client.delete(Resources.virtualMachineInstances, 'default', 'never');
});

test('pullImage directly: a two-layer image with whiteouts, a missing image, a wrong digest, no CA', async () => {
  const direct = new ImageStore(join(t.path, 'direct-store'));
  const layout = join(t.path, 'two-layers');
  const { manifestDigest } = await buildOciLayout(layout, [
    [{ path: '/disk/old.qcow2', data: 'old' }, { path: '/etc/keep', data: 'k' }],
    [{ path: '/disk/old.qcow2', whiteout: true }, { path: '/disk/new.qcow2', data: 'QFI' }],
  ], 'v1');
  await R().push(`oci:${layout}:v1`, 'qvirt/layers:v1');
  const credentials = [{ key: R().host, secret: 'regcred', username: R().user, password: R().password }];
  const registries = { certsDir: R().certsDir };
  const info = await pullImage(direct, `${R().host}/qvirt/layers:v1`, { credentials, registries });
  assert.is(`sha256:${info.digest}`, manifestDigest, "the registry's manifest digest");
  assert.equal(readdirSync(join(info.rootfs, 'disk')), ['new.qcow2'], 'the whiteout applied');
  assert.is(await direct.containerDiskFile(`${R().host}/qvirt/layers:v1`), join(info.rootfs, 'disk/new.qcow2'));
  const fails = (ref: string, o: Parameters<typeof pullImage>[2], re: RegExp) => pullImage(direct, ref, o).then(() => assert.unreachable(ref), (err: Error) => assert.match(err.message, re));
  await fails(`${R().host}/qvirt/nothing:v1`, { credentials, registries }, /^image "localhost:\d+\/qvirt\/nothing:v1": not found in its registry: .*manifest unknown/);
  await fails(`${R().host}/qvirt/layers@sha256:${'0'.repeat(64)}`, { credentials, registries }, /^image "localhost:\d+\/qvirt\/layers@sha256:0{64}": not found in its registry/);
  await fails(`${R().host}/qvirt/layers:v1`, { credentials }, /^image "localhost:\d+\/qvirt\/layers:v1": .*x509: certificate signed by unknown authority/);
  assert.equal((await direct.list()).map((i) => i.ref), [`${R().host}/qvirt/layers:v1`], 'the failures stored nothing');
});

test('qvirt run pulls what a VMI needs as its pull policies say, with skopeo\'s own credentials', async () => {
  const runStore = new ImageStore(join(t.path, 'run-store'));
  const spec = {
    volumes: [{ name: 'data', containerDisk: { image: diskRef(), imagePullPolicy: 'IfNotPresent' } }, { name: 'gone', containerDisk: { image: `${R().host}/qvirt/absent:v1`, imagePullPolicy: 'Never' } }],
    domain: { firmware: { kernelBoot: { container: { image: guestRef() } } } },
  };
  const events: string[] = [];
  const event = (type: string, reason: string, message: string) => { events.push(`${type} ${reason} ${message}`); };
  const registries = { certsDir: R().certsDir };
  // No credentials: the registry says 401, named with the field.
  await pullVmiImages({ volumes: spec.volumes.slice(0, 1) }, runStore, { registries, event }).then(() => assert.unreachable(), (err: Error) => {
    assert.match(err.message, /^spec\.volumes\[0\]\.containerDisk\.image: image "localhost:\d+\/qvirt\/testdisk:v1": 401 Unauthorized: the registry refused anonymous access/);
  });
  // `skopeo login`'s file (REGISTRY_AUTH_FILE here): both images pulled, then Never for the absent one refused.
  const authFile = join(t.path, 'auth.json');
  writeFileSync(authFile, JSON.stringify({ auths: { [R().host]: { auth: Buffer.from(`${R().user}:${R().password}`).toString('base64') } } }), { mode: 0o600 });
  process.env.REGISTRY_AUTH_FILE = authFile;
  try {
    await pullVmiImages({ ...spec, volumes: spec.volumes.slice(0, 1) }, runStore, { registries, event });
    await pullVmiImages(spec, runStore, { registries, event }).then(() => assert.unreachable(), (err: Error) => {
      assert.is(err.message, `spec.volumes[1].containerDisk.image: Container image "${R().host}/qvirt/absent:v1" is not present with pull policy of Never`);
    });
  } finally {
    delete process.env.REGISTRY_AUTH_FILE;
  }
  assert.ok(await runStore.get(diskRef()));
  assert.ok(await runStore.get(guestRef()));
  // `qvirt image pull` the same way, from the command line.
  const cliStore = join(t.path, 'cli-pull-store');
  const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
  const pulled = await run(qvirt, ['image', 'pull', '--image-store', cliStore, '--registry-certs-dir', R().certsDir, diskRef()], { env: { ...process.env, REGISTRY_AUTH_FILE: authFile } });
  assert.match(pulled.stdout, new RegExp(`^pulled ${diskRef().replace(/[.]/g, '\\.')} \\(0\\.2 MiB, ${digests.disk!.replace(':', ':')}\\) in [0-9.]+s into `));
  const refused = await run(qvirt, ['image', 'pull', '--image-store', cliStore, diskRef('v2')]).then(() => undefined, (e: { code: number; stderr: string }) => e);
  assert.is(refused?.code, 1);
  assert.match(refused!.stderr, /^error: image "localhost:\d+\/qvirt\/testdisk:v2": .*x509: certificate signed by unknown authority/);
  assert.ok(events.some((e) => e.startsWith(`Normal Pulled Successfully pulled image "${diskRef()}" in `)), events.join('\n'));
  assert.ok(events.includes(`Normal Pulling Pulling image "${guestRef()}"`));
});

test('token auth (a registry behind a token server, as Docker Hub and quay.io are): the Secret\'s credentials get the token', async () => {
  const tokenReg = await startRegistry(join(t.path, 'token-registry'), { auth: 'token' });
  try {
    const layout = join(t.path, 'token-layout');
    const { manifestDigest } = await buildOciLayout(layout, [[{ path: '/disk/t.qcow2', data: 'QFI' }]], 'v1');
    await tokenReg.push(`oci:${layout}:v1`, 'qvirt/tokened:v1');
    const direct = new ImageStore(join(t.path, 'token-store'));
    const ref = `${tokenReg.host}/qvirt/tokened:v1`;
    const before = tokenReg.tokensIssued();
    const [cred] = credentialsFor(ref, [{ name: 'tokencred', type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [`https://${tokenReg.host}`]: { username: tokenReg.user, password: tokenReg.password } } })).toString('base64') } }]);
    const info = await pullImage(direct, ref, { credentials: [cred!], registries: { certsDir: tokenReg.certsDir } });
    assert.is(`sha256:${info.digest}`, manifestDigest);
    assert.ok(tokenReg.tokensIssued() > before, 'the pull went through the token server');
    await pullImage(direct, `${tokenReg.host}/qvirt/tokened:v2`, { credentials: [{ ...cred!, password: 'wrong' }], registries: { certsDir: tokenReg.certsDir } }).then(
      () => assert.unreachable('pulled with a wrong password'),
      (err: Error) => assert.match(err.message, /^image "localhost:\d+\/qvirt\/tokened:v2": 401 Unauthorized: the registry refused the credentials of imagePullSecret "tokencred" .*unable to retrieve auth token/),
    );
  } finally {
    await tokenReg.stop();
  }
});

test.run();
