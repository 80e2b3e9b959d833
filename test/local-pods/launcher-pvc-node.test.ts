// A rendered KubeVirt launcher pod run by the local pod runner (container disks through the image
// store, `qvirt launcher` publishing launcher-sock in the sockets emptyDir), claims bound by the
// local-path provisioner with data that survives a runner restart, and the local Node object.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Resources } from '../../src/kube/resource.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startPodRunner, type PodRunner } from '../../src/local/pod-runner/index.ts';
import { startLocalPathProvisioner, type PersistentVolumeClaim } from '../../src/local/local-path-provisioner.ts';
import { registerLocalNode, type NodeObject } from '../../src/local/node.ts';
import type { Pod } from '../../src/local/pod-runner/pod.ts';
import { LOCAL_PATH_ANNOTATION } from '../../src/kube/local-path.ts';
import { renderLaunchManifest } from '../../controller/vmi/launcher-pod.ts';
import { DEFAULT_RENDER_CONFIG } from '../../controller/vmi/render-config.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { defaultNewVirtualMachineInstance } from '../../src/api/defaults.ts';
import { decodeKubeVirtObject } from '../../src/api/parse.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import yaml from 'js-yaml';
import { getPod, log, pidAlive, startEnv, waitFor, type Env } from './lib.ts';

const NODE = 'local';
let env: Env;
let runner: PodRunner | undefined;
let prov: { stop(): void } | undefined;
let store: ImageStore;
const start = () => startPodRunner({ client: env.client, nodeName: NODE, podsDir: env.podsDir, rootsDir: env.rootsDir, imageStore: store, log });

test.before(async () => {
  env = await startEnv();
  store = new ImageStore(join(env.dir, 'images'));
  runner = await start();
  prov = await startLocalPathProvisioner({ client: env.client, dataDir: env.dir, log });
});

test.after(async () => {
  const pods = await env.client.list<Pod>(Resources.pods, {}).catch(() => ({ items: [] as Pod[] }));
  for (const p of pods.items) await env.client.delete(Resources.pods, p.metadata?.namespace, p.metadata?.name ?? '', { gracePeriodSeconds: 0 }).catch(() => undefined);
  await waitFor('pods gone', async () => (await env.client.list<Pod>(Resources.pods, {})).items.length === 0, 10_000).catch(() => undefined);
  prov?.stop();
  await runner?.stop();
  await env.close();
});

test('registerLocalNode: labels, device-plugin capacity, Ready; labels others set are kept', async () => {
  const n = await registerLocalNode({ client: env.client, nodeName: NODE });
  assert.is(n.metadata!.labels!['kubernetes.io/hostname'], NODE);
  assert.is(n.metadata!.labels!['kubernetes.io/arch'], 'amd64');
  const st = n.status as { allocatable: Record<string, string>; conditions: Array<{ type: string; status: string }>; addresses: Array<{ type: string; address: string }> };
  for (const r of ['devices.kubevirt.io/kvm', 'devices.kubevirt.io/tun', 'devices.kubevirt.io/vhost-net']) assert.is(st.allocatable[r], '1k');
  assert.ok(st.conditions.some((c) => c.type === 'Ready' && c.status === 'True'));
  assert.ok(st.addresses.some((a) => a.type === 'InternalIP' && a.address === '127.0.0.1'));
  await env.client.patch(Resources.nodes, undefined, NODE, { metadata: { labels: { 'kubevirt.io/schedulable': 'true' } } });
  const again = await registerLocalNode({ client: env.client, nodeName: NODE });
  assert.is(again.metadata!.labels!['kubevirt.io/schedulable'], 'true');
  assert.ok((await env.client.get<NodeObject>(Resources.nodes, undefined, NODE)).status);
});

test('a rendered launcher pod: container disks resolve through the image store, qvirt launcher publishes launcher-sock', async () => {
  const disk = join(env.dir, 'cirros.qcow2');
  writeFileSync(disk, 'not really a disk');
  const image = 'registry:5000/kubevirt/cirros-container-disk-demo:devel';
  await store.importDisk(image, disk);
  const doc = yaml.load(readFileSync(new URL('../fixtures/kubevirt-examples/vmi-ephemeral.yaml', import.meta.url), 'utf8'));
  const vmi = defaultNewVirtualMachineInstance(decodeKubeVirtObject(doc).object as VirtualMachineInstance, { config: defaultClusterConfig(), now: () => new Date(), randomUUID });
  vmi.metadata = { ...vmi.metadata, namespace: 'default', uid: randomUUID() };
  const rendered = renderLaunchManifest(vmi, { ...DEFAULT_RENDER_CONFIG, launcherImage: 'quay.io/qvirt/qvirt:v0.1.0' }) as unknown as Pod;
  // No VMI object exists here: the owner reference would let the garbage collector delete the pod.
  const { ownerReferences: _owners, generateName: _g, ...meta } = rendered.metadata!;
  const pod: Pod = { ...rendered, metadata: { ...meta, name: 'virt-launcher-vmi-ephemeral-x1' }, spec: { ...rendered.spec, nodeName: NODE } };
  const created = await env.client.create(Resources.pods, pod);
  const uid = created.metadata!.uid!;
  const podDir = runner!.podDir(uid);
  const sock = join(podDir, 'volumes/kubernetes.io~empty-dir/sockets/launcher-sock');
  try {
    await waitFor('launcher-sock', async () => existsSync(sock) && statSync(sock).isSocket(), 30_000);
  } catch (err) {
    const st = (await getPod(env.client, pod.metadata!.name!)).status;
    const logs = existsSync(join(podDir, 'logs/compute/0.log')) ? readFileSync(join(podDir, 'logs/compute/0.log'), 'utf8').slice(-1500) : '(no compute log)';
    throw new Error(`${(err as Error).message}; pod status ${JSON.stringify(st?.containerStatuses ?? st?.initContainerStatuses)} ${JSON.stringify(st?.initContainerStatuses)}; compute log: ${logs}`);
  }
  const img = join(podDir, 'volumes/kubernetes.io~empty-dir/container-disks/disk_0.img');
  assert.is(readFileSync(readlinkSync(img), 'utf8'), 'not really a disk');
  const p = await waitFor('Running', async () => { const p = await getPod(env.client, pod.metadata!.name!); return p.status?.phase === 'Running' && p; });
  const names = (p.status!.containerStatuses ?? []).map((c) => `${c.name}:${Object.keys(c.state)[0]}`);
  assert.ok(names.includes('compute:running'), names.join(','));
  assert.ok(names.includes('volumecontainerdisk:running'), names.join(','));
  const inits = (p.status!.initContainerStatuses ?? []).map((c) => `${c.name}:${Object.keys(c.state)[0]}`);
  assert.equal(inits, ['guest-console-log:running', 'container-disk-binary:terminated', 'volumecontainerdisk-init:terminated'].filter((n) => (rendered.spec.initContainers ?? []).some((c) => n.startsWith(`${c.name}:`))));
  assert.ok(inits.length >= 2, inits.join(','));
  assert.is(p.status!.conditions!.find((c) => c.type === 'Initialized')!.status, 'True');
  const ready = p.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.is(ready.status, 'False'); // the readiness gate is the VMI controller's
  // The longest socket path the launcher makes stays under the unix limit.
  const root = runner!.containerRoot(uid, 'compute')!;
  assert.ok(`${root}/var/run/kubevirt-private/${vmi.metadata.uid}/virt-serial0`.length <= 107);
  const pid = Number(p.status!.containerStatuses!.find((c) => c.name === 'compute')!.containerID!.replace('local://', ''));
  await env.client.delete(Resources.pods, 'default', pod.metadata!.name!, { gracePeriodSeconds: 5 });
  await waitFor('launcher pod gone', async () => { try { await getPod(env.client, pod.metadata!.name!); return false; } catch { return true; } }, 15_000);
  assert.not.ok(pidAlive(pid));
  await waitFor('pod dir removed', async () => !existsSync(podDir));
});

test('a claim bound by the local-path provisioner keeps its data across pods and a runner restart', async () => {
  await env.client.create<PersistentVolumeClaim>(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  const pvc = await waitFor('Bound', async () => { const c = await env.client.get<PersistentVolumeClaim>(Resources.persistentVolumeClaims, 'default', 'data'); return c.status?.phase === 'Bound' && c; });
  assert.is(pvc.status!.capacity!.storage, '1Gi');
  assert.equal(pvc.status!.accessModes, ['ReadWriteOnce']);
  const dir = pvc.metadata!.annotations![LOCAL_PATH_ANNOTATION]!;
  assert.is(dir, join(env.dir, 'pv/default_data'));
  const mk = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: NODE, restartPolicy: 'Never', volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }], containers: [{ name: 'main', image: 'quay.io/qvirt/qvirt:v0.1.0', command: ['/usr/bin/qvirt', 'version'], volumeMounts: [{ name: 'd', mountPath: '/data' }] }] } });
  const c1 = await env.client.create(Resources.pods, mk('pvc-a'));
  await waitFor('pvc-a done', async () => (await getPod(env.client, 'pvc-a')).status?.phase === 'Succeeded');
  writeFileSync(join(runner!.containerRoot(c1.metadata!.uid!, 'main')!, 'data/kept'), 'still here');
  await env.client.delete(Resources.pods, 'default', 'pvc-a');
  await runner!.stop();
  runner = await start();
  const c2 = await env.client.create(Resources.pods, mk('pvc-b'));
  await waitFor('pvc-b done', async () => (await getPod(env.client, 'pvc-b')).status?.phase === 'Succeeded');
  assert.is(readFileSync(join(runner!.containerRoot(c2.metadata!.uid!, 'main')!, 'data/kept'), 'utf8'), 'still here');
  await env.client.delete(Resources.pods, 'default', 'pvc-b');
  // Block mode: a sparse disk.img of the requested size.
  await env.client.create<PersistentVolumeClaim>(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'blk', namespace: 'default' }, spec: { volumeMode: 'Block', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } });
  const b = await waitFor('blk Bound', async () => { const c = await env.client.get<PersistentVolumeClaim>(Resources.persistentVolumeClaims, 'default', 'blk'); return c.status?.phase === 'Bound' && c; });
  assert.is(statSync(b.metadata!.annotations![LOCAL_PATH_ANNOTATION]!).size, 64 * 2 ** 20);
});

test.run();
