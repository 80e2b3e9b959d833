// DataVolumes in the local mode against an HTTP(S) server the test starts on loopback: the test
// guest's initramfs made into a disk image (a marker line first), served as qcow2 over HTTPS with
// basic auth and a CA from a ConfigMap, as raw .gz and .xz over HTTP, and cut short mid-transfer.
// Each import ends Succeeded with the raw bytes in the claim's disk.img at CDI's size; a blank DV
// has CDI's size (filesystem overhead); a clone copies; the truncated and the missing ones end
// Failed naming the URL with no disk.img and no temporary file left; a VM with dataVolumeTemplates
// is Provisioning while its import runs, then Running, and its guest reads the imported disk.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request as httpsRequest } from 'node:https';
import { ensureGuest } from '../../src/local/guest/guest.ts';
import { importTestGuest, TEST_GUEST_IMAGE } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';
import { startImageServer, type ImageServer } from '../lib/image-server.ts';
import { virtctlPath } from '../lib/virtctl.ts';
import { startRegistry } from '../lib/registry.ts';
import { buildOciLayout } from '../lib/oci-image.ts';
import { LOCAL_PATH_ANNOTATION } from '../../src/kube/local-path.ts';
import type { DataVolume } from '../../src/api/cdi/types.ts';
import { requiredSpace, usableSpace } from '../../controller/datavolume/decisions.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const t = tempDir('qdv');
const store = new ImageStore(join(t.path, 'store'));
const files = join(t.path, 'files');
const log = componentLogger('dv-test', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' });
let local: LocalMode | undefined;
let server: ImageServer | undefined;
const MARKER = `QVIRT-DV-CONTENT-${Math.random().toString(36).slice(2, 10)}`;
const RAW_SIZE = 24 * 1024 * 1024;
let rawHash = '';

type Dv = DataVolume & KubeObject;
interface Pvc extends KubeObject { spec?: { resources?: { requests?: { storage?: string } } }; status?: { phase?: string } }
interface Vm extends KubeObject { status?: { printableStatus?: string } }
interface Vmi extends KubeObject { status?: { phase?: string } }

const L = () => local!;
const kubectl = async (...args: string[]) => (await promisify(execFile)('kubectl', ['--kubeconfig', L().kubeconfig, ...args], { timeout: 60_000 })).stdout;
const apply = async (name: string, yaml: string) => { const f = join(t.path, `${name}.yaml`); writeFileSync(f, yaml); return kubectl('apply', '-f', f); };
const getDv = (name: string) => L().client.get<Dv>(Resources.dataVolumes, 'default', name).catch(() => undefined);
const getPvc = (name: string) => L().client.get<Pvc>(Resources.persistentVolumeClaims, 'default', name);

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await f(); if (v) return v; } catch (err) { last = err; }
    await sleep(200);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
const phase = (name: string, want: string, ms = 60_000) => waitFor(`DataVolume ${name} ${want}`, async () => {
  const dv = await getDv(name);
  if (dv?.status?.phase === 'Failed' && want !== 'Failed') throw new Error(`DataVolume ${name} Failed: ${JSON.stringify(dv.status)}`);
  return dv?.status?.phase === want && dv;
}, ms);
const claimDir = async (name: string) => (await getPvc(name)).metadata!.annotations![LOCAL_PATH_ANNOTATION]!;
const sha = (path: string, bytes: number) => { const b = readFileSync(path).subarray(0, bytes); return createHash('sha256').update(b).digest('hex'); };

const dvYaml = (name: string, source: string, storage = '64Mi', kind: 'storage' | 'pvc' = 'storage') => `
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: ${name}
spec:
  source:
${source}
  ${kind}:
    ${kind === 'pvc' ? 'accessModes: [ReadWriteOnce]\n    ' : ''}resources:
      requests:
        storage: ${storage}
`;

test.before(async () => {
  execFileSync('mkdir', ['-p', files]);
  // The disk: a marker line, then the test guest's initramfs, zero-padded to 24 MiB.
  const guest = await ensureGuest();
  const raw = Buffer.alloc(RAW_SIZE);
  Buffer.from(`${MARKER}\n`).copy(raw, 0);
  readFileSync(guest.initrd).copy(raw, 4096, 0, Math.min(statSync(guest.initrd).size, RAW_SIZE - 4096));
  writeFileSync(join(files, 'guest.raw'), raw);
  rawHash = createHash('sha256').update(raw).digest('hex');
  execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', join(files, 'guest.raw'), join(files, 'guest.qcow2')]);
  execFileSync('sh', ['-c', `gzip -1 -c guest.raw > guest.raw.gz && xz -0 -T2 -c guest.raw > guest.raw.xz && printf 'this is not a disk image\\n' > notes.txt`], { cwd: files });
  server = await startImageServer(files, { user: 'alice', password: 's3cret' });
  await importTestGuest(store);
  local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log, podNetwork: false });
});

test.after(async () => {
  await local?.stop();
  await server?.close();
  t.cleanup();
});

test('http(s) imports: qcow2 over HTTPS (certConfigMap CA, secretRef basic auth), raw .gz and .xz; blank and clone at CDI sizes; truncated and 404 fail cleanly', async () => {
  const s = server!;
  await apply('auth', `
apiVersion: v1
kind: Secret
metadata: {name: image-auth}
stringData: {accessKeyId: alice, secretKey: s3cret}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: image-ca}
data:
  ca.pem: |
${s.caPem.trim().split('\n').map((l) => `    ${l}`).join('\n')}
`);
  await apply('dvs', [
    dvYaml('dv-qcow2', `    http:\n      url: ${s.httpsUrl}/auth/guest.qcow2\n      certConfigMap: image-ca\n      secretRef: image-auth`),
    dvYaml('dv-gz', `    http:\n      url: ${s.httpUrl}/guest.raw.gz`),
    dvYaml('dv-xz', `    http:\n      url: ${s.httpUrl}/guest.raw.xz`),
    dvYaml('dv-blank', '    blank: {}', '1Gi'),
    dvYaml('dv-blank-pvc', '    blank: {}', '1Gi', 'pvc'),
    dvYaml('dv-cut', `    http:\n      url: ${s.httpUrl}/cut/guest.raw`),
    dvYaml('dv-404', `    http:\n      url: ${s.httpUrl}/missing.qcow2`),
    dvYaml('dv-notdisk', `    http:\n      url: ${s.httpUrl}/notes.txt`),
  ].join('---\n'));

  // Imports: the raw bytes in disk.img, grown to the usable size of the claim.
  const target = usableSpace(0.06, requiredSpace(0.06, 64 * 1024 * 1024));
  assert.is(target, 64 * 1024 * 1024, 'spec.storage: the image gets the size asked for');
  for (const name of ['dv-qcow2', 'dv-gz', 'dv-xz']) {
    const dv = await phase(name, 'Succeeded');
    assert.is(dv.status?.progress, '100.0%');
    assert.is(dv.status?.claimName, name);
    const conds = Object.fromEntries((dv.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
    assert.equal(conds, { Bound: 'True/Bound', Ready: 'True/', Running: 'False/Completed' }, name);
    const pvc = await getPvc(name);
    assert.is(pvc.spec?.resources?.requests?.storage, String(requiredSpace(0.06, 64 * 1024 * 1024)), `${name}: claim inflated by the filesystem overhead`);
    assert.is(pvc.metadata?.ownerReferences?.[0]?.kind, 'DataVolume');
    const disk = join(await claimDir(name), 'disk.img');
    assert.is(statSync(disk).size, target, `${name}: disk.img size`);
    assert.is(sha(disk, RAW_SIZE), rawHash, `${name}: disk.img holds the image's bytes`);
  }
  assert.ok(s.requests.some((p) => p === '/auth/guest.qcow2'));

  // Blank: qemu-img create of CDI's usable size of the claim.
  await phase('dv-blank', 'Succeeded');
  assert.is(statSync(join(await claimDir('dv-blank'), 'disk.img')).size, 1024 ** 3, 'spec.storage 1Gi: a 1 GiB image in a claim inflated by 6 %');
  assert.is((await getPvc('dv-blank')).spec?.resources?.requests?.storage, String(Math.ceil(1024 ** 3 * 1.06)));
  await phase('dv-blank-pvc', 'Succeeded');
  assert.is(statSync(join(await claimDir('dv-blank-pvc'), 'disk.img')).size, 966 * 1024 * 1024, 'spec.pvc 1Gi: the overhead comes out of the image (1 GiB / 1.06, whole MiB: 966 MiB)');

  // A clone of the qcow2 import.
  await apply('clone', dvYaml('dv-clone', '    pvc:\n      namespace: default\n      name: dv-qcow2', '64Mi'));
  await phase('dv-clone', 'Succeeded');
  assert.is(sha(join(await claimDir('dv-clone'), 'disk.img'), RAW_SIZE), rawHash);

  // Failures: permanent ones at once, the cut transfer after its retries; nothing half-written.
  const f404 = await phase('dv-404', 'Failed', 30_000);
  const run404 = f404.status?.conditions?.find((c) => c.type === 'Running');
  assert.is(run404?.reason, 'Error');
  assert.match(run404?.message ?? '', `${s.httpUrl}/missing.qcow2: expected status code 200, got 404`);
  const notDisk = await phase('dv-notdisk', 'Failed', 30_000);
  assert.match(notDisk.status?.conditions?.find((c) => c.type === 'Running')?.message ?? '', /notes\.txt: not a disk image/);
  const cut = await phase('dv-cut', 'Failed', 60_000);
  const runCut = cut.status?.conditions?.find((c) => c.type === 'Running');
  assert.match(runCut?.message ?? '', `Unable to transfer source data from ${s.httpUrl}/cut/guest.raw`);
  assert.match(runCut?.message ?? '', `of ${RAW_SIZE} bytes`);
  assert.is(cut.status?.restartCount, 3, 'retried three times');
  for (const name of ['dv-404', 'dv-notdisk', 'dv-cut']) {
    const dir = await claimDir(name);
    assert.equal(readdirSync(dir), [], `${name}: nothing left in the claim`);
  }
  const table = await kubectl('get', 'dv');
  assert.match(table, /NAME\s+PHASE\s+PROGRESS\s+RESTARTS\s+AGE/);
  assert.match(table, /dv-qcow2\s+Succeeded\s+100\.0%/);
  assert.match(table, /dv-cut\s+Failed\s+\S+\s+3/);
});

test('registry source: a container disk pulled from a registry with TLS (certConfigMap) and basic auth (secretRef); a missing image fails naming it', async () => {
  const reg = await startRegistry(join(t.path, 'registry'));
  try {
    const layout = join(t.path, 'dv-layout');
    await buildOciLayout(layout, [[{ path: '/disk/guest.qcow2', src: join(files, 'guest.qcow2') }]], 'v1');
    await reg.push(`oci:${layout}:v1`, 'qvirt/dvdisk:v1');
    await apply('reg', `
apiVersion: v1
kind: Secret
metadata: {name: reg-auth}
stringData: {accessKeyId: ${reg.user}, secretKey: ${reg.password}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: reg-ca}
data:
  ca.crt: |
${readFileSync(reg.caFile, 'utf8').trim().split('\n').map((l) => `    ${l}`).join('\n')}
---
${dvYaml('dv-reg', `    registry:\n      url: docker://${reg.host}/qvirt/dvdisk:v1\n      certConfigMap: reg-ca\n      secretRef: reg-auth`)}---
${dvYaml('dv-reg-missing', `    registry:\n      url: docker://${reg.host}/qvirt/nothing:v1\n      certConfigMap: reg-ca\n      secretRef: reg-auth`)}`);
    await phase('dv-reg', 'Succeeded', 90_000);
    assert.is(sha(join(await claimDir('dv-reg'), 'disk.img'), RAW_SIZE), rawHash, 'the pulled qcow2, converted to raw');
    const missing = await phase('dv-reg-missing', 'Failed', 90_000);
    const msg = missing.status?.conditions?.find((c) => c.type === 'Running')?.message ?? '';
    assert.match(msg, `Unable to pull docker://${reg.host}/qvirt/nothing:v1`);
    assert.match(msg, /not found/);
  } finally {
    await reg.stop();
  }
});

test('qvirt image-upload dv: DataVolume created, UploadReady, token, the file through the upload proxy with progress, Succeeded', async () => {
  const qvirt = join(import.meta.dirname, '../../bin/qvirt');
  const run = (...args: string[]) => promisify(execFile)(qvirt, ['image-upload', ...args, '--kubeconfig', L().kubeconfig], { timeout: 120_000 });
  const r = await run('dv', 'up-dv', '--size', '64Mi', '--image-path', join(files, 'guest.qcow2'));
  assert.match(r.stdout, 'DataVolume default/up-dv created');
  assert.match(r.stdout, /Uploading data to https:\/\/127\.0\.0\.1:\d+/);
  assert.match(r.stdout, 'Processing completed successfully');
  assert.match(r.stderr, '100%', 'a progress bar on stderr');
  const dv = (await getDv('up-dv'))!;
  assert.is(dv.status?.phase, 'Succeeded');
  assert.is(dv.spec.source?.upload !== undefined, true);
  assert.is(sha(join(await claimDir('up-dv'), 'disk.img'), RAW_SIZE), rawHash, 'the uploaded qcow2, converted to raw');
  // Again into the finished DV: refused, nothing changed; a missing file named.
  const again = await run('dv', 'up-dv', '--no-create', '--image-path', join(files, 'guest.raw.gz')).then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
  assert.match(again, 'DataVolume default/up-dv already successfully imported/cloned/updated');
  const missing = await run('dv', 'up-2', '--size', '64Mi', '--image-path', join(files, 'nope.img')).then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
  assert.match(missing, 'nope.img: no such file');
  // The proxy refuses a request without a valid token.
  const cfg = await L().client.get<KubeObject & { status?: { uploadProxyURL?: string } }>(Resources.cdiConfigs, undefined, 'config');
  const code = await new Promise<number>((resolve, reject) => {
    const req = httpsRequest(`${cfg.status!.uploadProxyURL}/v1beta1/upload`, { method: 'POST', headers: { authorization: 'Bearer forged.token' }, rejectUnauthorized: false }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('error', reject);
    req.end('x');
  });
  assert.is(code, 401);

  // KubeVirt's own virtctl, unchanged (its upload pod wait reads the claim's CDI annotations).
  const virtctl = await virtctlPath();
  const vr = await promisify(execFile)(virtctl, ['image-upload', 'dv', 'vup-dv', '--size', '64Mi', '--image-path', join(files, 'guest.raw.xz'), '--insecure', '--kubeconfig', L().kubeconfig], { timeout: 120_000 });
  assert.match(vr.stdout, 'Processing completed successfully');
  assert.is((await getDv('vup-dv'))?.status?.phase, 'Succeeded');
  assert.is(sha(join(await claimDir('vup-dv'), 'disk.img'), RAW_SIZE), rawHash, 'virtctl\'s upload of the .xz, decompressed');
});

test('image-upload pvc (qvirt and KubeVirt\'s virtctl): a bare claim with CDI\'s upload annotations, its upload pod annotations waited on, the qcow2 in the claim as raw, pod phase Succeeded', async () => {
  const qvirt = join(import.meta.dirname, '../../bin/qvirt');
  const r = await promisify(execFile)(qvirt, ['image-upload', 'pvc', 'up-pvc', '--size', '64Mi', '--image-path', join(files, 'guest.qcow2'), '--kubeconfig', L().kubeconfig], { timeout: 120_000 });
  assert.match(r.stdout, 'PersistentVolumeClaim default/up-pvc created');
  assert.match(r.stdout, 'Pod now ready');
  assert.match(r.stdout, 'Processing completed successfully');
  assert.match(r.stderr, '100%', 'a progress bar on stderr');
  const check = async (name: string) => {
    const pvc = await getPvc(name);
    const a = pvc.metadata?.annotations ?? {};
    assert.is(a['cdi.kubevirt.io/storage.upload.target'], '');
    assert.is(a['cdi.kubevirt.io/storage.contentType'], 'kubevirt');
    assert.is(a['cdi.kubevirt.io/storage.pod.phase'], 'Succeeded');
    assert.is(a['cdi.kubevirt.io/storage.pod.ready'], 'false');
    assert.is(pvc.spec?.resources?.requests?.storage, '64Mi', 'the claim as virtctl renders it: the size as given');
    assert.is(await getDv(name), undefined, 'no DataVolume');
    const dir = await claimDir(name);
    assert.is(sha(join(dir, 'disk.img'), RAW_SIZE), rawHash, 'the uploaded qcow2, converted to raw');
    assert.is(execFileSync('qemu-img', ['info', '--output=json', join(dir, 'disk.img')]).toString().includes('"format": "raw"'), true);
    assert.equal(readdirSync(dir).sort(), ['disk.img'], 'nothing but the disk in the claim');
    const events = JSON.parse(await kubectl('get', 'events', '-o', 'json', '--field-selector', `involvedObject.name=${name}`)) as { items: { reason?: string; involvedObject?: { kind?: string } }[] };
    assert.ok(events.items.some((e) => e.reason === 'UploadSucceeded' && e.involvedObject?.kind === 'PersistentVolumeClaim'), 'CDI\'s UploadSucceeded event on the claim');
  };
  await check('up-pvc');
  // Again: refused as virtctl refuses it.
  const again = await promisify(execFile)(qvirt, ['image-upload', 'pvc', 'up-pvc', '--size', '64Mi', '--image-path', join(files, 'guest.qcow2'), '--kubeconfig', L().kubeconfig], { timeout: 60_000 }).then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
  assert.match(again, 'PVC up-pvc already successfully imported/cloned/updated');

  // KubeVirt's own virtctl, unchanged.
  const virtctl = await virtctlPath();
  const vr = await promisify(execFile)(virtctl, ['image-upload', 'pvc', 'vup-pvc', '--size', '64Mi', '--image-path', join(files, 'guest.qcow2'), '--insecure', '--kubeconfig', L().kubeconfig], { timeout: 120_000 });
  assert.match(vr.stdout, 'PersistentVolumeClaim default/vup-pvc created');
  assert.match(vr.stdout, 'Processing completed successfully');
  await check('vup-pvc');

  // A claim of the user's own with --no-create: the upload target annotation added (virtctl's
  // ensurePVCSupportsUpload), then the upload as for one it made; by both CLIs.
  for (const [cli, name] of [[virtctl, 'own-vpvc'], [qvirt, 'own-qpvc']] as const) {
    await apply(name, `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ${name}}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 64Mi}}}\n`);
    const o = await promisify(execFile)(cli, ['image-upload', 'pvc', name, '--no-create', '--image-path', join(files, 'guest.raw.gz'), '--insecure', '--kubeconfig', L().kubeconfig], { timeout: 120_000 });
    assert.match(o.stdout, `Using existing PVC default/${name}`);
    assert.match(o.stdout, 'Processing completed successfully');
    const a = (await getPvc(name)).metadata?.annotations ?? {};
    assert.is(a['cdi.kubevirt.io/storage.upload.target'], '');
    assert.is(a['cdi.kubevirt.io/storage.pod.phase'], 'Succeeded');
    assert.is(sha(join(await claimDir(name), 'disk.img'), RAW_SIZE), rawHash, `${name}: the .gz, decompressed`);
  }
  // Without --no-create, a claim that is not an upload claim is refused, as virtctl refuses it.
  await apply('plain-pvc', 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: plain-pvc}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 64Mi}}}\n');
  const refused = await promisify(execFile)(qvirt, ['image-upload', 'pvc', 'plain-pvc', '--size', '64Mi', '--image-path', join(files, 'guest.qcow2'), '--kubeconfig', L().kubeconfig], { timeout: 60_000 }).then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
  assert.match(refused, 'PVC plain-pvc not available for upload');
});

test('a VMI naming a standalone DataVolume: no launcher pod while it imports, then one; a Failed DataVolume fails the VMI', async () => {
  const s = server!;
  s.slowRate = 8 * 1024 * 1024;
  await apply('standalone', dvYaml('dv-slow', `    http:\n      url: ${s.httpUrl}/slow/guest.raw`));
  const vmi = (name: string, dv: string) => `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 0
  domain:
    firmware:
      kernelBoot:
        kernelArgs: console=ttyS0 quiet cryptomgr.notests
        container: {image: ${TEST_GUEST_IMAGE}, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
    devices:
      disks: [{name: d, disk: {bus: virtio}}]
    resources: {requests: {memory: 128Mi}}
  volumes: [{name: d, dataVolume: {name: ${dv}}}]
`;
  await apply('vmi-slow', vmi('vmi-slow', 'dv-slow'));
  await apply('vmi-failed', vmi('vmi-failed', 'dv-404'));
  const podsOf = async (name: string) => {
    const uid = (await L().client.get<Vmi>(Resources.virtualMachineInstances, 'default', name)).metadata!.uid!;
    return (await kubectl('get', 'pods', '-l', `kubevirt.io/created-by=${uid}`, '-o', 'name')).trim();
  };
  await waitFor('dv-slow importing', async () => (await getDv('dv-slow'))?.status?.phase === 'ImportInProgress', 30_000);
  // The pods are listed before the phase is read: a pod seen while the DataVolume is still importing
  // afterwards was there during the import (listed after a phase read, it may be the Succeeded's pod).
  const during: string[] = [];
  for (;;) {
    const pods = await podsOf('vmi-slow');
    if ((await getDv('dv-slow'))?.status?.phase === 'Succeeded') break;
    during.push(pods);
    await sleep(300);
  }
  assert.ok(during.length > 0 && during.every((p) => p === ''), `no launcher pod while importing: ${JSON.stringify(during)}`);
  await waitFor('a launcher pod for vmi-slow', async () => (await podsOf('vmi-slow')) !== '', 30_000);
  await waitFor('vmi-failed Failed', async () => (await L().client.get<Vmi>(Resources.virtualMachineInstances, 'default', 'vmi-failed')).status?.phase === 'Failed', 30_000);
  assert.is(await podsOf('vmi-failed'), '');
  await kubectl('delete', 'vmi', 'vmi-slow', 'vmi-failed', '--wait=false');
});

test('a VM whose claim cannot bind: WaitingForVolumeBinding', async () => {
  await apply('unbound', `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: never-bound}
spec:
  storageClassName: no-such-class
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 16Mi}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: unbound-vm}
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        firmware:
          kernelBoot:
            container: {image: ${TEST_GUEST_IMAGE}, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
        devices: {disks: [{name: d, disk: {bus: virtio}}]}
        resources: {requests: {memory: 128Mi}}
      volumes: [{name: d, persistentVolumeClaim: {claimName: never-bound}}]
`);
  await waitFor('unbound-vm WaitingForVolumeBinding', async () => (await L().client.get<Vm>(Resources.virtualMachines, 'default', 'unbound-vm')).status?.printableStatus === 'WaitingForVolumeBinding', 30_000);
  await kubectl('delete', 'vm', 'unbound-vm', '--wait=false');
});

test('a VM with dataVolumeTemplates: Provisioning while the import runs, then Running; the guest reads the imported disk', async () => {
  const s = server!;
  s.slowRate = 4 * 1024 * 1024; // ~3 s for the qcow2: long enough to see Provisioning
  await apply('vm', `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: dv-vm
spec:
  runStrategy: Always
  dataVolumeTemplates:
  - metadata:
      name: dv-vm-root
    spec:
      source:
        http:
          url: ${s.httpUrl}/slow/guest.qcow2
      storage:
        resources:
          requests:
            storage: 64Mi
  template:
    spec:
      terminationGracePeriodSeconds: 5
      domain:
        firmware:
          kernelBoot:
            kernelArgs: console=ttyS0 quiet cryptomgr.notests
            container:
              image: ${TEST_GUEST_IMAGE}
              kernelPath: /boot/vmlinuz
              initrdPath: /boot/initrd.img
        devices:
          disks:
          - name: root
            serial: dvroot
            disk: {bus: virtio}
          - name: cloudinit
            disk: {bus: virtio}
        resources:
          requests:
            memory: 128Mi
      volumes:
      - name: root
        dataVolume:
          name: dv-vm-root
      - name: cloudinit
        cloudInitNoCloud:
          userData: |
            #!/bin/sh
            for b in /sys/block/vd*; do [ "$(cat $b/serial 2>/dev/null)" = dvroot ] && echo "QVIRT-DV-READ $(head -c 64 /dev/\${b##*/} | head -n 1)"; done
`);
  const seen: string[] = [];
  const progress = new Set<string>();
  const vmi = await waitFor('VM dv-vm Running', async () => {
    const vm = await L().client.get<Vm>(Resources.virtualMachines, 'default', 'dv-vm').catch(() => undefined);
    const st = vm?.status?.printableStatus;
    if (st && seen.at(-1) !== st) seen.push(st);
    const p = (await getDv('dv-vm-root'))?.status?.progress;
    if (p) progress.add(p);
    const v = await L().client.get<Vmi>(Resources.virtualMachineInstances, 'default', 'dv-vm').catch(() => undefined);
    return v?.status?.phase === 'Running' && st === 'Running' && v;
  }, 120_000);
  assert.ok(seen.includes('Provisioning'), `printable statuses: ${seen.join(' → ')}`);
  assert.ok(seen.indexOf('Provisioning') < seen.indexOf('Running'), seen.join(' → '));
  const partial = [...progress].filter((p) => /^\d+\.\d\d%$/.test(p) && p !== '100.00%' && p !== '0.00%');
  assert.ok(partial.length >= 1, `status.progress while downloading: ${[...progress].join(', ')}`);
  assert.ok(progress.has('100.0%'));
  const dv = (await getDv('dv-vm-root'))!;
  assert.is(dv.status?.phase, 'Succeeded');
  const owner = dv.metadata?.ownerReferences?.[0];
  assert.equal([owner?.kind, owner?.name, owner?.controller], ['VirtualMachine', 'dv-vm', true]);
  assert.is(dv.metadata?.labels?.['kubevirt.io/created-by'], (await L().client.get<Vm>(Resources.virtualMachines, 'default', 'dv-vm')).metadata?.uid);
  assert.is(dv.metadata?.annotations?.['cdi.kubevirt.io/allowClaimAdoption'], 'true');
  // The guest: booted, and it reads the marker from the imported disk.
  const pod = (await kubectl('get', 'pods', '-l', `kubevirt.io/created-by=${vmi.metadata!.uid}`, '-o', 'name')).trim().split('\n')[0]!.slice('pod/'.length);
  const out = await waitFor('the guest reading the DataVolume', async () => {
    const c = await kubectl('logs', pod, '-c', 'guest-console-log');
    return c.includes(`QVIRT-DV-READ ${MARKER}`) && c;
  }, 120_000);
  assert.match(out, /QVIRT-GUEST-BOOTED/);
  assert.match(out, /QVIRT-DISK name=vd\w+ serial=dvroot size=131072 /);
  const events = await kubectl('get', 'events', '--field-selector', 'involvedObject.name=dv-vm', '-o', 'jsonpath={.items[*].reason}');
  assert.match(events, /SuccessfulDataVolumeCreate/);
  assert.ok(existsSync(join(await claimDir('dv-vm-root'), 'disk.img')));
});

test.run();
