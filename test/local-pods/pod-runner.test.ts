// The local pod runner against the embedded API server, with real qvirt processes as containers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startPodRunner, type PodRunner } from '../../src/local/pod-runner/index.ts';
import type { Pod } from '../../src/local/pod-runner/pod.ts';
import { getPod, log, pidAlive, startEnv, waitFor, type Env } from './lib.ts';

const NODE = 'local';
let env: Env;
let runner: PodRunner | undefined;
let store: ImageStore;

test.before(async () => {
  env = await startEnv();
  store = new ImageStore(join(env.dir, 'images'));
  await env.client.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } });
  runner = await startPodRunner({ client: env.client, nodeName: NODE, podsDir: env.podsDir, rootsDir: env.rootsDir, imageStore: store, log });
});

test.after(async () => {
  // Delete every pod so the runner stops its processes, then stop everything.
  const pods = await env.client.list<Pod>(Resources.pods, {}).catch(() => ({ items: [] as Pod[] }));
  for (const p of pods.items) await env.client.delete(Resources.pods, p.metadata?.namespace, p.metadata?.name ?? '', { gracePeriodSeconds: 0 }).catch(() => undefined);
  await waitFor('pods gone', async () => (await env.client.list<Pod>(Resources.pods, {})).items.length === 0, 10_000).catch(() => undefined);
  await runner?.stop();
  await env.close();
});

const qvirtPod = (name: string, command: string[], extra: Partial<Pod['spec']> = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: { nodeName: NODE, restartPolicy: 'Never', terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'quay.io/qvirt/qvirt:v0.1.0', command }], ...extra },
});

test('a finite qvirt command: Pending → Succeeded with kubelet statuses; volumes visible under the container root', async () => {
  const hostDir = join(env.dir, 'host-data');
  mkdirSync(hostDir);
  writeFileSync(join(hostDir, 'hello'), 'from the host');
  await env.client.create(Resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1', namespace: 'default' }, data: { password: Buffer.from('hunter2').toString('base64') } } as never);
  await env.client.create(Resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1', namespace: 'default' }, data: { 'app.conf': 'x=1' } } as never);
  const pod = qvirtPod('finite', ['/usr/bin/qvirt', 'version'], {
    volumes: [
      { name: 'scratch', emptyDir: {} },
      { name: 'host', hostPath: { path: hostDir, type: 'Directory' } },
      { name: 'made', hostPath: { path: join(env.dir, 'made-by-runner'), type: 'DirectoryOrCreate' } },
      { name: 'sec', secret: { secretName: 's1' } },
      { name: 'cfg', configMap: { name: 'c1', items: [{ key: 'app.conf', path: 'conf/app.conf' }] } },
      { name: 'info', downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
    ],
  });
  pod.spec.containers[0]!.volumeMounts = [
    { name: 'scratch', mountPath: '/var/run/kubevirt-private' },
    { name: 'host', mountPath: '/mnt/host', readOnly: true },
    { name: 'made', mountPath: '/mnt/made' },
    { name: 'sec', mountPath: '/etc/secret' },
    { name: 'cfg', mountPath: '/etc/app' },
    { name: 'info', mountPath: '/etc/podinfo' },
  ];
  const created = await env.client.create(Resources.pods, pod);
  const uid = created.metadata!.uid!;
  const done = await waitFor('Succeeded', async () => { const p = await getPod(env.client, 'finite'); return p.status?.phase === 'Succeeded' && p; });
  const cs = done.status!.containerStatuses![0]!;
  assert.equal(cs.name, 'main');
  assert.ok('terminated' in cs.state);
  if ('terminated' in cs.state) {
    assert.is(cs.state.terminated.exitCode, 0);
    assert.is(cs.state.terminated.reason, 'Completed');
    assert.ok(cs.state.terminated.startedAt && cs.state.terminated.finishedAt);
  }
  assert.is(cs.ready, false);
  assert.is(cs.restartCount, 0);
  const cond = (t: string) => done.status!.conditions!.find((c) => c.type === t);
  assert.is(cond('PodScheduled')?.status, 'True');
  assert.is(cond('Initialized')?.status, 'True');
  assert.is(cond('Ready')?.status, 'False');
  assert.is(cond('Ready')?.reason, 'PodCompleted');
  assert.is(done.status!.qosClass, 'BestEffort');
  assert.is(done.status!.podIP, '127.0.0.1');
  assert.ok(done.status!.startTime);
  // kubelet's layout, and the container's view through its root.
  const podDir = runner!.podDir(uid);
  assert.ok(existsSync(join(podDir, 'volumes/kubernetes.io~empty-dir/scratch')));
  const root = runner!.containerRoot(uid, 'main')!;
  assert.ok(root.length < 40, root);
  assert.is(readFileSync(join(root, 'mnt/host/hello'), 'utf8'), 'from the host');
  assert.ok(existsSync(join(env.dir, 'made-by-runner')));
  assert.is(readFileSync(join(root, 'etc/secret/password'), 'utf8'), 'hunter2');
  // A Secret's content and the service-account token are the owner's alone.
  const dirMode = (p: string) => (statSync(join(podDir, 'volumes', p)).mode & 0o777).toString(8);
  assert.equal([dirMode('kubernetes.io~secret/sec'), dirMode('kubernetes.io~projected/kube-api-access')], ['700', '700']);
  assert.is(readFileSync(join(root, 'etc/app/conf/app.conf'), 'utf8'), 'x=1');
  assert.is(readFileSync(join(root, 'etc/podinfo/name'), 'utf8'), 'finite');
  assert.is(readlinkSync(join(root, 'var/run/kubevirt-private')), join(podDir, 'volumes/kubernetes.io~empty-dir/scratch'));
  // Its output is in the CRI log (time, stream, F/P tag), as kubelet keeps container logs.
  const cri = await waitFor('CRI log of main', async () => { const t = readFileSync(join(podDir, 'logs/main/0.log'), 'utf8'); return /qvirt/.test(t) && t; });
  assert.match(cri, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stdout F .*qvirt/m);
  // Deleting a finished pod removes it at once (apiserver) and the runner removes its directory.
  await env.client.delete(Resources.pods, 'default', 'finite');
  await waitFor('pod dir removed', async () => !existsSync(podDir));
});

test('a containerDisk container serves its disk until the disk is removed from the shared directory, then completes with the pod', async () => {
  const diskFile = join(env.dir, 'disk.img');
  writeFileSync(diskFile, 'not really a disk');
  await store.importFiles('example.org/disk:1', [{ src: diskFile, dest: '/disk/disk.img' }]);
  const pod = qvirtPod('with-disk', ['/usr/bin/qvirt', 'version'], {
    volumes: [{ name: 'container-disks', emptyDir: {} }],
  });
  pod.spec.containers[0]!.volumeMounts = [{ name: 'container-disks', mountPath: '/var/run/kubevirt/container-disks' }];
  pod.spec.containers.push({ name: 'volumedisk', image: 'example.org/disk:1', command: ['/usr/bin/container-disk'], args: ['--copy-path', '/var/run/kubevirt/container-disks/u1/disk_0'],
    volumeMounts: [{ name: 'container-disks', mountPath: '/var/run/kubevirt/container-disks/u1' }] });
  const created = await env.client.create(Resources.pods, pod);
  const link = join(runner!.podDir(created.metadata!.uid!), 'volumes/kubernetes.io~empty-dir/container-disks/disk_0.img');
  // The main container ends; the disk container keeps the pod Running (1/2 ready, kubectl's "NotReady").
  const serving = await waitFor('main done, disk served', async () => {
    const p = await getPod(env.client, 'with-disk');
    const st = (n: string) => p.status?.containerStatuses?.find((c) => c.name === n)?.state;
    return st('main') && 'terminated' in st('main')! && st('volumedisk') && 'running' in st('volumedisk')! && p;
  });
  assert.is(serving.status?.phase, 'Running');
  assert.is(readFileSync(link, 'utf8'), 'not really a disk');
  // What the launcher does when it ends: the container-disk directory's contents go.
  const { rmSync } = await import('node:fs');
  rmSync(link);
  const done = await waitFor('pod Succeeded', async () => { const p = await getPod(env.client, 'with-disk'); return p.status?.phase === 'Succeeded' && p; }, 10_000);
  const disk = done.status!.containerStatuses!.find((c) => c.name === 'volumedisk')!;
  assert.ok('terminated' in disk.state && disk.state.terminated.exitCode === 0 && disk.state.terminated.reason === 'Completed', JSON.stringify(disk.state));
  await env.client.delete(Resources.pods, 'default', 'with-disk');
});

test('a long-running container with a readiness gate; graceful delete sends SIGTERM then the pod is gone', async () => {
  const pod = qvirtPod('tailer', ['/usr/bin/qvirt', 'tail'], { volumes: [{ name: 'private', emptyDir: {} }], readinessGates: [{ conditionType: 'kubevirt.io/virtual-machine-unpaused' }] });
  pod.spec.containers[0]!.args = ['--logfile', '/var/run/kubevirt-private/x.log'];
  pod.spec.containers[0]!.volumeMounts = [{ name: 'private', mountPath: '/var/run/kubevirt-private' }];
  const created = await env.client.create(Resources.pods, pod);
  const uid = created.metadata!.uid!;
  const running = await waitFor('Running', async () => { const p = await getPod(env.client, 'tailer'); return p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True') && p; });
  const ready = running.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.is(ready.status, 'False');
  assert.is(ready.reason, 'ReadinessGatesNotReady');
  assert.match(ready.message ?? '', /kubevirt.io\/virtual-machine-unpaused/);
  // The VMI controller's part: the gate condition True → Ready.
  await env.client.updateStatus(Resources.pods, { ...running, status: { ...running.status, conditions: [...running.status!.conditions!, { type: 'kubevirt.io/virtual-machine-unpaused', status: 'True', lastProbeTime: null, lastTransitionTime: new Date().toISOString() }] } });
  await waitFor('Ready', async () => (await getPod(env.client, 'tailer')).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  const cid = (await getPod(env.client, 'tailer')).status!.containerStatuses![0]!.containerID!;
  const pid = Number(cid.replace('local://', ''));
  assert.ok(pidAlive(pid));
  await env.client.delete(Resources.pods, 'default', 'tailer', { gracePeriodSeconds: 10 });
  const t0 = Date.now();
  await waitFor('pod gone', async () => { try { await getPod(env.client, 'tailer'); return false; } catch { return true; } });
  assert.ok(Date.now() - t0 < 8000, 'SIGTERM ended the container well before the grace period');
  assert.not.ok(pidAlive(pid));
  await waitFor('pod dir removed', async () => !existsSync(runner!.podDir(uid)));
});

test('a running pod\'s secret and configMap volumes follow their objects: a changed key is replaced, a new one appears, a removed one goes', async () => {
  const b64 = (x: string) => Buffer.from(x).toString('base64');
  const secret = await env.client.create(Resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keys', namespace: 'default' }, data: { a: b64('key A\n'), gone: b64('soon gone') } } as never) as KubeObject & { data: Record<string, string> };
  const cm = await env.client.create(Resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conf', namespace: 'default' }, data: { x: '1' } } as never) as KubeObject & { data: Record<string, string> };
  const pod = qvirtPod('refresher', ['/usr/bin/qvirt', 'tail'], {
    volumes: [
      { name: 'private', emptyDir: {} },
      { name: 'keys-access-cred', secret: { secretName: 'keys' } },
      { name: 'proj', projected: { sources: [{ configMap: { name: 'conf' } }, { secret: { name: 'keys', items: [{ key: 'a', path: 'sub/a' }] } }] } },
    ],
  });
  pod.spec.containers[0]!.args = ['--logfile', '/var/run/kubevirt-private/x.log'];
  pod.spec.containers[0]!.volumeMounts = [
    { name: 'private', mountPath: '/var/run/kubevirt-private' },
    { name: 'keys-access-cred', mountPath: '/var/run/kubevirt-private/secret/keys-access-cred', readOnly: true },
    { name: 'proj', mountPath: '/etc/proj' },
  ];
  const created = await env.client.create(Resources.pods, pod);
  const uid = created.metadata!.uid!;
  await waitFor('Running', async () => (await getPod(env.client, 'refresher')).status?.phase === 'Running');
  const root = runner!.containerRoot(uid, 'main')!;
  const secretDir = join(root, 'var/run/kubevirt-private/secret/keys-access-cred');
  const read = (dir: string, f: string) => { try { return readFileSync(join(dir, f), 'utf8'); } catch { return undefined; } };
  assert.equal([read(secretDir, 'a'), read(secretDir, 'gone'), read(join(root, 'etc/proj'), 'x'), read(join(root, 'etc/proj'), 'sub/a')], ['key A\n', 'soon gone', '1', 'key A\n']);
  const inodeOfA = statSync(join(secretDir, 'a')).ino;

  await env.client.update(Resources.secrets, { ...secret, data: { a: b64('key A\nkey B\n'), b: b64('another') } });
  await waitFor('the secret volume rewritten', async () => read(secretDir, 'a') === 'key A\nkey B\n' && read(secretDir, 'b') === 'another' && read(secretDir, 'gone') === undefined, 10_000);
  assert.is.not(statSync(join(secretDir, 'a')).ino, inodeOfA, 'a changed key is a new file renamed into place, not rewritten in place');
  await waitFor('the projected volume follows the secret', async () => read(join(root, 'etc/proj'), 'sub/a') === 'key A\nkey B\n', 10_000);
  assert.equal(readdirSync(secretDir).sort(), ['a', 'b'], 'no temporary files left behind');

  await env.client.update(Resources.configMaps, { ...cm, data: { x: '2' } });
  await waitFor('the projected volume follows the configMap', async () => read(join(root, 'etc/proj'), 'x') === '2', 10_000);
  // Unchanged content is left alone (no rewrite, so a watcher of the directory sees no change).
  const inodeOfB = statSync(join(secretDir, 'b')).ino;
  await env.client.update(Resources.configMaps, { ...(await env.client.get(Resources.configMaps, 'default', 'conf')), data: { x: '3' } });
  await waitFor('configMap applied again', async () => read(join(root, 'etc/proj'), 'x') === '3', 10_000);
  assert.is(statSync(join(secretDir, 'b')).ino, inodeOfB);
  await env.client.delete(Resources.pods, 'default', 'refresher', { gracePeriodSeconds: 0 });
  await waitFor('pod dir removed', async () => !existsSync(runner!.podDir(uid)));
});

test('an image the node cannot run waits with ErrImagePull and a clear message', async () => {
  await env.client.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nginx', namespace: 'default' }, spec: { nodeName: NODE, containers: [{ name: 'web', image: 'nginx:1.25' }] } } as Pod);
  const p = await waitFor('waiting status', async () => { const p = await getPod(env.client, 'nginx'); return p.status?.containerStatuses?.[0] && p; });
  const st = p.status!.containerStatuses![0]!.state;
  assert.ok('waiting' in st);
  if ('waiting' in st) {
    assert.is(st.waiting.reason, 'ErrImagePull');
    assert.match(st.waiting.message ?? '', /nginx:1\.25/);
  }
  assert.is(p.status!.phase, 'Pending');
  const evs = await waitFor('Failed event', async () => { const l = await env.client.list<KubeObject & { reason?: string; message?: string; source?: { component?: string } }>(Resources.events, { namespace: 'default', fieldSelector: 'involvedObject.name=nginx' }); return l.items.length > 0 && l.items; });
  assert.ok(evs.some((e) => e.reason === 'Failed' && /Failed to pull image "nginx:1\.25"/.test(e.message ?? '') && e.source?.component === 'kubelet'));
  await env.client.delete(Resources.pods, 'default', 'nginx', { gracePeriodSeconds: 1 });
  await waitFor('nginx gone', async () => { try { await getPod(env.client, 'nginx'); return false; } catch { return true; } });
});

test('a restarted runner re-adopts a running container instead of starting it again', async () => {
  const pod = qvirtPod('adopt', ['/usr/bin/qvirt', 'tail'], { volumes: [{ name: 'private', emptyDir: {} }] });
  pod.spec.containers[0]!.args = ['--logfile', '/var/run/kubevirt-private/x.log'];
  pod.spec.containers[0]!.volumeMounts = [{ name: 'private', mountPath: '/var/run/kubevirt-private' }];
  await env.client.create(Resources.pods, pod);
  const p1 = await waitFor('Running', async () => { const p = await getPod(env.client, 'adopt'); return p.status?.phase === 'Running' && p; });
  const cid = p1.status!.containerStatuses![0]!.containerID!;
  await runner!.stop();
  runner = await startPodRunner({ client: env.client, nodeName: NODE, podsDir: env.podsDir, rootsDir: env.rootsDir, imageStore: store, log });
  await new Promise((r) => setTimeout(r, 500));
  const p2 = await getPod(env.client, 'adopt');
  assert.is(p2.status!.containerStatuses![0]!.containerID, cid);
  assert.is(p2.status!.containerStatuses![0]!.restartCount, 0);
  const pid = Number(cid.replace('local://', ''));
  assert.ok(pidAlive(pid));
  await env.client.delete(Resources.pods, 'default', 'adopt', { gracePeriodSeconds: 5 });
  await waitFor('adopted pod gone', async () => { try { await getPod(env.client, 'adopt'); return false; } catch { return true; } });
  assert.not.ok(pidAlive(pid));
});

test('an unassigned pod whose nodeSelector fits is bound to the local node; one that does not fit is Unschedulable', async () => {
  await env.client.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'fits', namespace: 'default' }, spec: { nodeSelector: { 'kubernetes.io/hostname': NODE }, restartPolicy: 'Never', containers: [{ name: 'v', image: 'quay.io/qvirt/qvirt:v0.1.0', command: ['/usr/bin/qvirt', 'version'] }] } } as Pod);
  await env.client.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'nofit', namespace: 'default' }, spec: { nodeSelector: { gpu: 'true' }, containers: [{ name: 'v', image: 'x' }] } } as Pod);
  await waitFor('fits Succeeded', async () => (await getPod(env.client, 'fits')).status?.phase === 'Succeeded');
  assert.is((await getPod(env.client, 'fits')).spec.nodeName, NODE);
  const sched = await env.client.list<KubeObject & { reason?: string; message?: string }>(Resources.events, { namespace: 'default', fieldSelector: 'involvedObject.name=fits' });
  assert.ok(sched.items.some((e) => e.reason === 'Scheduled' && e.message === `Successfully assigned default/fits to ${NODE}`));
  assert.ok(sched.items.some((e) => e.reason === 'Started'));
  const nf = await waitFor('nofit Unschedulable', async () => { const p = await getPod(env.client, 'nofit'); return p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') && p; });
  assert.not.ok(nf.spec.nodeName);
  await env.client.delete(Resources.pods, 'default', 'fits');
  await env.client.delete(Resources.pods, 'default', 'nofit');
});

test('a failing command ends Failed with its exit code; a missing hostPath Directory waits in ContainerCreating until it exists', async () => {
  await env.client.create(Resources.pods, qvirtPod('fails', ['/usr/bin/qvirt', 'no-such-command']));
  const f = await waitFor('Failed', async () => { const p = await getPod(env.client, 'fails'); return p.status?.phase === 'Failed' && p; });
  const st = f.status!.containerStatuses![0]!.state;
  assert.ok('terminated' in st && st.terminated.exitCode === 2 && st.terminated.reason === 'Error', JSON.stringify(st));
  await env.client.delete(Resources.pods, 'default', 'fails');

  const missing = join(env.dir, 'later');
  const pod = qvirtPod('mountwait', ['/usr/bin/qvirt', 'version'], { volumes: [{ name: 'h', hostPath: { path: missing, type: 'Directory' } }] });
  pod.spec.containers[0]!.volumeMounts = [{ name: 'h', mountPath: '/h' }];
  await env.client.create(Resources.pods, pod);
  const w = await waitFor('ContainerCreating', async () => { const p = await getPod(env.client, 'mountwait'); return p.status?.containerStatuses?.[0] && p; });
  const ws = w.status!.containerStatuses![0]!.state;
  assert.ok('waiting' in ws && ws.waiting.reason === 'ContainerCreating' && /hostPath type check failed: .*later is not a directory/.test(ws.waiting.message ?? ''), JSON.stringify(ws));
  mkdirSync(missing);
  await waitFor('mountwait Succeeded', async () => (await getPod(env.client, 'mountwait')).status?.phase === 'Succeeded', 10_000);
  await env.client.delete(Resources.pods, 'default', 'mountwait');
});

test.run();
