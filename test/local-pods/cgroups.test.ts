// The local pod runner's CPU cgroups on this machine (cgroup v1's cpu controller or cgroup v2,
// whichever it can write): a pod's processes land in kubepods-<hash>/<qos>/pod<uid> with kubelet's
// values, the control plane (this process) in system-reserved; a pod's cgroup goes with the pod,
// the runner's tree with the runner. Where this machine has no writable cpu cgroup, the runner says
// so once and weighs containers by nice values instead — asserted as such.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { componentLogger } from '../../src/log/logger.ts';
import { Resources } from '../../src/kube/resource.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startPodRunner, type PodRunner } from '../../src/local/pod-runner/index.ts';
import { cpuCgroupCandidates, kubepodsName, QVIRT_CGROUP, SYSTEM_RESERVED_CGROUP } from '../../src/local/pod-runner/cgroup-manager.ts';
import type { Pod } from '../../src/local/pod-runner/pod.ts';
import { getPod, pidAlive, startEnv, waitFor, type Env } from './lib.ts';

const NODE = 'local';
let env: Env;
let runner: PodRunner | undefined;
const lines: Array<{ msg?: string; version?: number }> = [];
const log = componentLogger('cgroups-test', {
  level: 'info',
  destination: new Writable({ write(chunk: Buffer, _e, cb) { for (const l of chunk.toString().split('\n').filter(Boolean)) { try { lines.push(JSON.parse(l) as { msg?: string }); } catch { /* not JSON */ } } cb(); } }),
});
/** Where this process's cpu cgroup is before the runner moves it (the runner builds qvirt/ below it). */
const ownCgroups = () => cpuCgroupCandidates(readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync('/proc/self/cgroup', 'utf8'));
const before = ownCgroups();
const cgroupText = (pid: number) => readFileSync(`/proc/${pid}/cgroup`, 'utf8');
const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8').trim();
const environOf = (pid: number) => Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const procsOf = (dir: string) => read(dir, 'cgroup.procs').split('\n').filter(Boolean).map(Number);

test.before(async () => {
  env = await startEnv();
  await env.client.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } });
  runner = await startPodRunner({ client: env.client, nodeName: NODE, podsDir: env.podsDir, rootsDir: env.rootsDir, imageStore: new ImageStore(join(env.dir, 'images')), log });
});

test.after(async () => {
  const pods = await env.client.list<Pod>(Resources.pods, {}).catch(() => ({ items: [] as Pod[] }));
  for (const p of pods.items) await env.client.delete(Resources.pods, p.metadata?.namespace, p.metadata?.name ?? '', { gracePeriodSeconds: 0 }).catch(() => undefined);
  await waitFor('pods gone', async () => (await env.client.list<Pod>(Resources.pods, {})).items.length === 0, 10_000).catch(() => undefined);
  await runner?.stop();
  await env.close();
});

const tailPod = (name: string, resources: { requests?: Record<string, string>; limits?: Record<string, string> }): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: {
    nodeName: NODE, restartPolicy: 'Never', terminationGracePeriodSeconds: 5, volumes: [{ name: 'private', emptyDir: {} }],
    containers: [{ name: 'main', image: 'quay.io/qvirt/qvirt:v0.1.0', command: ['/usr/bin/qvirt', 'tail'], args: ['--logfile', '/var/run/kubevirt-private/x.log'], volumeMounts: [{ name: 'private', mountPath: '/var/run/kubevirt-private' }], resources }],
  },
});

async function runningPid(name: string): Promise<{ uid: string; pid: number }> {
  const p = await waitFor(`${name} Running`, async () => { const x = await getPod(env.client, name); return x.status?.phase === 'Running' && x; });
  const id = p.status!.containerStatuses![0]!.containerID!;
  return { uid: p.metadata!.uid!, pid: Number(/^local:\/\/(\d+)$/.exec(id)![1]) };
}

test('launcher-like pods in their cgroups with kubelet\'s CPU values; the control plane in system-reserved; all of it gone with the pods and the runner', async () => {
  const opened = lines.find((l) => l.msg?.startsWith('CPU cgroups:'));
  const warned = lines.filter((l) => l.msg?.startsWith('no writable CPU cgroups'));
  if (!opened) {
    // This machine has no cpu cgroup the runner may write: one warning, containers weighed by nice values.
    assert.is(warned.length, 1, 'one warning');
    await env.client.create(Resources.pods, tailPod('niced', { requests: { cpu: '100m' } }));
    const { pid } = await runningPid('niced');
    assert.is(getPriority(pid), 10, '100m → 102 shares → nice 10');
    return;
  }
  assert.is(warned.length, 0);
  const version = opened.version as 1 | 2;
  const base = before.find((c) => c.version === version)!.dir;
  const qvirt = join(base, QVIRT_CGROUP);
  const kubepods = join(qvirt, kubepodsName(env.podsDir));
  const systemReserved = join(qvirt, SYSTEM_RESERVED_CGROUP);
  // The control plane: this process, in system-reserved with one CPU's weight (2+ CPUs here) beside kubepods.
  assert.ok(procsOf(systemReserved).includes(process.pid), 'this process in system-reserved');
  const weight = (dir: string) => Number(read(dir, version === 1 ? 'cpu.shares' : 'cpu.weight'));
  assert.is(weight(systemReserved), version === 1 ? 1024 : 39);
  // A process this one starts is born in system-reserved; a local mode it ran would build beside this qvirt/, not in it.
  const childSees = execFileSync(process.execPath, ['--input-type=module', '-e', `import { cpuCgroupCandidates } from ${JSON.stringify(new URL('../../src/local/pod-runner/cgroup-manager.ts', import.meta.url).href)}; import { readFileSync } from 'node:fs'; console.log(JSON.stringify({ own: readFileSync('/proc/self/cgroup', 'utf8'), candidates: cpuCgroupCandidates(readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync('/proc/self/cgroup', 'utf8')) }))`], { encoding: 'utf8' });
  const seen = JSON.parse(childSees) as { own: string; candidates: typeof before };
  assert.ok(seen.own.includes(`/${QVIRT_CGROUP}/${SYSTEM_RESERVED_CGROUP}`), 'the child was born in system-reserved');
  assert.equal(seen.candidates.find((c) => c.version === version)?.dir, base);

  // A launcher-like Burstable pod (compute's 100m request, no limit) and a Guaranteed one (250m = limits).
  await env.client.create(Resources.pods, tailPod('burstable', { requests: { cpu: '100m', memory: '64Mi' } }));
  await env.client.create(Resources.pods, tailPod('guaranteed', { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '250m', memory: '64Mi' } }));
  const b = await runningPid('burstable');
  const g = await runningPid('guaranteed');
  const bDir = join(kubepods, 'burstable', `pod${b.uid}`);
  const gDir = join(kubepods, `pod${g.uid}`);
  // kubelet's layout: each container in its own cgroup below its pod's.
  assert.ok(procsOf(join(bDir, 'main')).includes(b.pid), 'the burstable pod\'s container process in burstable/pod<uid>/main');
  assert.ok(procsOf(join(gDir, 'main')).includes(g.pid), 'the guaranteed pod\'s container process in pod<uid>/main at kubepods\' top');
  assert.equal(procsOf(bDir), [], 'no process in the pod\'s cgroup itself');
  assert.ok(cgroupText(b.pid).includes(`/${kubepodsName(env.podsDir)}/burstable/pod${b.uid}/main`), '/proc/<pid>/cgroup names the pod, as the node agent finds pods (pod-processes.ts)');
  if (version === 1) {
    assert.equal([read(bDir, 'cpu.shares'), read(bDir, 'cpu.cfs_quota_us')], ['102', '-1']);
    assert.equal([read(gDir, 'cpu.shares'), read(gDir, 'cpu.cfs_quota_us'), read(gDir, 'cpu.cfs_period_us')], ['256', '25000', '100000']);
    assert.is(read(join(kubepods, 'burstable'), 'cpu.shares'), '102', 'burstable weighs its pods\' requests');
    assert.is(read(join(kubepods, 'besteffort'), 'cpu.shares'), '2');
    assert.equal([read(join(bDir, 'main'), 'cpu.shares'), read(join(bDir, 'main'), 'cpu.cfs_quota_us')], ['102', '-1'], 'the container: its own request, no limit');
    assert.equal([read(join(gDir, 'main'), 'cpu.shares'), read(join(gDir, 'main'), 'cpu.cfs_quota_us')], ['256', '25000'], 'the container: its request and its limit\'s quota');
    // The vCPU tier beside the QoS levels, weighing the least; each pod's vCPU cgroup with the pod's values;
    // a container is told where its guest's vCPU threads go.
    assert.is(read(join(kubepods, 'vcpus'), 'cpu.shares'), '2', 'the vCPU tier weighs the least');
    assert.equal([read(join(kubepods, 'vcpus', `pod${b.uid}`), 'cpu.shares'), read(join(kubepods, 'vcpus', `pod${b.uid}`), 'cpu.cfs_quota_us')], ['102', '-1']);
    assert.equal([read(join(kubepods, 'vcpus', `pod${g.uid}`), 'cpu.shares'), read(join(kubepods, 'vcpus', `pod${g.uid}`), 'cpu.cfs_quota_us')], ['256', '25000']);
    assert.is(environOf(b.pid)['QVIRT_VCPU_CGROUP'], join(kubepods, 'vcpus', `pod${b.uid}`));
  } else {
    assert.not.ok(existsSync(join(kubepods, 'vcpus')), 'cgroup v2: no vCPU tier (a thread cannot leave its process\'s cgroup)');
    assert.is(environOf(b.pid)['QVIRT_VCPU_CGROUP'], undefined);
    assert.equal([read(bDir, 'cpu.weight'), read(bDir, 'cpu.max')], ['4', 'max 100000']);
    assert.equal([read(gDir, 'cpu.weight'), read(gDir, 'cpu.max')], ['10', '25000 100000']);
    assert.equal([read(join(gDir, 'main'), 'cpu.weight'), read(join(gDir, 'main'), 'cpu.max')], ['10', '25000 100000'], 'the container: its request and its limit');
  }
  assert.is(getPriority(b.pid), 0, 'in a cgroup, no nice value on top of its weight');

  // Deleting a pod removes its cgroup once its processes are gone.
  await env.client.delete(Resources.pods, 'default', 'burstable');
  await waitFor('the burstable pod gone', async () => !(await env.client.list<Pod>(Resources.pods, {})).items.some((p) => p.metadata?.name === 'burstable'));
  await waitFor('its cgroup gone', async () => !existsSync(bDir) && !existsSync(join(kubepods, 'vcpus', `pod${b.uid}`)), 5000);
  assert.not.ok(pidAlive(b.pid));
  assert.ok(existsSync(gDir), 'the other pod\'s cgroup stays');
  await env.client.delete(Resources.pods, 'default', 'guaranteed');
  await waitFor('the guaranteed pod\'s cgroup gone', async () => !existsSync(gDir), 15_000);

  // The runner stops with no pod left: its tree goes, this process goes back where it was.
  await runner!.stop();
  runner = undefined;
  assert.not.ok(existsSync(kubepods), 'kubepods-<hash> removed');
  assert.ok(!existsSync(systemReserved) || !procsOf(systemReserved).includes(process.pid), 'this process left system-reserved');
  assert.equal(ownCgroups(), before, 'back in its own cgroup');
});

test.run();
