// Fault injection on the local mode itself while a VM runs. The API server, the controllers, the node
// agent and the pod runner (kubelet) are one process (`qvirt local up`, src/local/up.ts), so killing
// any of them is killing that process; it runs here as a process of its own (local-up-process.ts) with
// a pod network, and is started again on the same data dir after each fault. The VM (runStrategy
// Always) has a claim disk it writes a boot counter to (user data from a Secret, synced), and a
// masquerade interface on the pod network.
//
// - SIGKILL: as on a node whose kubelet and virt-handler restart, the guest keeps running — the same
//   QEMU, the same VMI Running, re-adopted (pause and unpause go through the new node agent), one QEMU,
//   nothing duplicated (processes, sockets, mounts, namespaces), every object as it was.
// - SIGTERM: `qvirt local up` drains (the guest powers off), and on the next start the VM runs again
//   with one QEMU, its disk read back whole (the counter the first boot wrote).
// - At the end the VM, claim and Secret are deleted and the local mode stopped: no QEMU, process,
//   socket, mount, namespace, veth, bridge or nft table of it is left.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import { isNotFound, type KubeObject } from '../../src/kube/client.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import { waitFor } from '../lib/within.ts';
import { claimDirOf, claimImageHead, computePid, launcherPodOf, processGone, qemuOf, terminatingObjects, type PodView } from './lib.ts';
import { localProcess, mountsUnder, podNetnsLeft, podNetworkLeft, processesUnder, socketsUnder, type LocalProcess } from './local-process.ts';
import { bootCounterSecret, bootCounterVm } from './boot-counter-vm.ts';

const NAME = 'keeper';
let lp!: LocalProcess;
const podUids = new Set<string>();

const vm = (): VirtualMachine => bootCounterVm(NAME, { terminationGracePeriodSeconds: 20, podNetwork: true });

async function getVmi(): Promise<VirtualMachineInstance | undefined> {
  return lp.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, 'default', NAME).catch((err) => { if (isNotFound(err)) return undefined; throw err; });
}

function serial(podUid: string, vmiUid: string): string {
  const f = join(lp.podsDir, podUid, 'volumes/kubernetes.io~empty-dir/private', vmiUid, 'virt-serial0-log');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}

interface Running { vmi: VirtualMachineInstance; pod: PodView; launcher: number; qemu: number }

/** The VM's VMI Running (not one of `notUids`), its guest through its user data, its pod, launcher and one QEMU. */
async function running(notUids: readonly string[], marker: RegExp): Promise<Running & { console: string }> {
  const vmi = await waitFor(`VMI ${NAME} Running`, async () => { const v = await getVmi(); return v?.status?.phase === 'Running' && !notUids.includes(v.metadata!.uid!) ? v : undefined; }, 180_000, 200);
  const uid = vmi.metadata!.uid!;
  const pod = await waitFor('the launcher pod with its compute pid', async () => { const p = await launcherPodOf(lp.client, 'default', uid); return computePid(p) ? p : undefined; }, 30_000, 200);
  podUids.add(pod.metadata!.uid!);
  const console = await waitFor(`${marker} on the console`, () => { const c = serial(pod.metadata!.uid!, uid); return marker.test(c) ? c : undefined; }, 180_000, 200);
  const [qemu] = await waitFor('exactly one QEMU for the VM', () => { const q = qemuOf('default', NAME); return q.length === 1 ? q : undefined; }, 30_000, 200);
  return { vmi, pod, launcher: computePid(pod)!, qemu: qemu!, console };
}

interface Snapshot { uids: Record<string, string>; sockets: string[]; mounts: string[] }

/** The UIDs of the objects that must outlive a fault, and what must not be duplicated. */
async function snapshot(extraPods: boolean): Promise<Snapshot> {
  const uids: Record<string, string> = {};
  uids.vm = (await lp.client.get<KubeObject>(Resources.virtualMachines, 'default', NAME)).metadata!.uid!;
  uids.secret = (await lp.client.get<KubeObject>(Resources.secrets, 'default', `${NAME}-userdata`)).metadata!.uid!;
  uids.pvc = (await lp.client.get<KubeObject>(Resources.persistentVolumeClaims, 'default', `${NAME}-data`)).metadata!.uid!;
  if (extraPods) {
    uids.vmi = (await getVmi())!.metadata!.uid!;
    uids.pod = (await launcherPodOf(lp.client, 'default', uids.vmi))!.metadata!.uid!;
  }
  return { uids, sockets: socketsUnder(lp.dataDir), mounts: mountsUnder(lp.dir) };
}

/** No object of the test is being deleted (stuck on a finalizer) once things settled. */
async function noneTerminating(): Promise<void> {
  const terminating = await terminatingObjects(lp.client, 'default', [Resources.virtualMachines, Resources.virtualMachineInstances, Resources.pods, Resources.secrets, Resources.persistentVolumeClaims]);
  assert.equal(terminating, [], 'nothing stuck terminating');
}

let claimDir = '';

/** The claim's image on the host starts with `text` (its directory looked up once, while the API server serves). */
async function claimHolds(text: string): Promise<void> {
  claimDir ||= await claimDirOf(lp.client, 'default', `${NAME}-data`);
  assert.is(claimImageHead(claimDir, text.length), text, `the claim's disk.img holds ${text}`);
}

test.before(async () => {
  lp = await localProcess('qvlm');
  await lp.start();
  await lp.client.create(Resources.secrets, bootCounterSecret(NAME));
  await lp.client.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${NAME}-data`, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } } } as KubeObject);
  await lp.client.create(Resources.virtualMachines, vm());
});
test.after(async () => { await lp?.cleanup(); });

let first!: Running;

test('the VM runs and its first boot writes the counter to its claim', async () => {
  const r = await running([], /QVIRT-FAULT wrote boots=\d/);
  assert.match(r.console, /QVIRT-FAULT prev=\[\]/);
  assert.match(r.console, /QVIRT-FAULT wrote boots=1/);
  first = r;
});

test('SIGKILL to the local mode, started again: the same QEMU runs on, re-adopted, nothing lost or duplicated', async () => {
  const before = await snapshot(true);
  assert.ok(before.sockets.some((p) => p.includes(before.uids.pod!)), 'the launcher pod\'s sockets are counted');
  const t0 = Date.now();
  await lp.kill('SIGKILL');
  // Like virt-handler and kubelet dying on a node: the guest does not notice.
  assert.not.ok(processGone(first.qemu), 'QEMU survived the local mode');
  assert.not.ok(processGone(first.launcher), 'the launcher survived the local mode');
  await lp.start();
  const after = await snapshot(true);
  assert.equal(after.uids, before.uids, 'the VM, VMI, launcher pod, Secret and claim are the ones from before');
  // Re-adopted: the new node agent reaches the launcher (pause/unpause are commands to it).
  let r = await lp.qvirt('pause', 'vm', NAME);
  assert.is(r.code, 0, r.err);
  await waitFor('the VMI Paused', async () => (await getVmi())?.status?.conditions?.some((c) => c.type === 'Paused' && c.status === 'True'), 30_000, 200);
  r = await lp.qvirt('unpause', 'vm', NAME);
  assert.is(r.code, 0, r.err);
  await waitFor('the VMI unpaused', async () => !(await getVmi())?.status?.conditions?.some((c) => c.type === 'Paused'), 30_000, 200);
  console.log(`    SIGKILL: local mode up again and the VMI re-adopted (paused and unpaused) ${Date.now() - t0} ms after the kill`);
  const vmi = (await getVmi())!;
  assert.is(vmi.status?.phase, 'Running');
  assert.equal(qemuOf('default', NAME), [first.qemu], 'one QEMU, the same');
  assert.is(computePid(await launcherPodOf(lp.client, 'default', vmi.metadata!.uid!)), first.launcher, 'the same launcher');
  assert.equal(socketsUnder(lp.dataDir), before.sockets, 'the same unix sockets, none added');
  assert.equal(mountsUnder(lp.dir), before.mounts, 'the same mounts');
  await noneTerminating();
  await claimHolds('boots=1\0');
});

test('SIGTERM to the local mode: the node drained; started again, the VM runs with one QEMU and reads its disk back', async () => {
  const before = await snapshot(false);
  const vmiUid = (await getVmi())!.metadata!.uid!;
  await lp.kill('SIGTERM');
  assert.ok(processGone(first.qemu), 'the drain stopped the guest');
  assert.ok(processGone(first.launcher), 'and its launcher');
  assert.equal(processesUnder(lp.dir), [], 'nothing of the local mode runs');
  assert.equal(podNetworkLeft(lp.bridge), [], 'the pod network went with the last pod');
  assert.equal(podNetnsLeft([...podUids]), []);
  await claimHolds('boots=1\0');
  const t0 = Date.now();
  await lp.start();
  const r = await running([vmiUid], /QVIRT-FAULT wrote boots=\d/);
  console.log(`    SIGTERM: the VM Running again ${Date.now() - t0} ms after the local mode was started again`);
  assert.match(r.console, /QVIRT-FAULT prev=\[boots=1\]/, 'the second boot read what the first wrote');
  assert.match(r.console, /QVIRT-FAULT wrote boots=2/);
  const after = await snapshot(false);
  assert.equal(after.uids, before.uids, 'the VM, Secret and claim are the ones from before');
  await noneTerminating();
  await claimHolds('boots=2\0');
});

test('the VM, claim and Secret deleted, the local mode stopped: nothing of them is left', async () => {
  await lp.client.delete(Resources.virtualMachines, 'default', NAME);
  await waitFor('the VM and VMI gone', async () => (await getVmi()) === undefined && (await lp.client.list(Resources.virtualMachines, { namespace: 'default' })).items.length === 0, 60_000, 200);
  await lp.client.delete(Resources.persistentVolumeClaims, 'default', `${NAME}-data`);
  await lp.client.delete(Resources.secrets, 'default', `${NAME}-userdata`);
  await waitFor('no QEMU for the VM', () => qemuOf('default', NAME).length === 0, 60_000, 200);
  await waitFor('its launcher pods gone', async () => (await lp.client.list<PodView>(Resources.pods, { namespace: 'default' })).items.every((p) => !podUids.has(p.metadata!.uid!)), 60_000, 200);
  await waitFor('the claim gone', async () => (await lp.client.list(Resources.persistentVolumeClaims, { namespace: 'default' })).items.length === 0, 30_000, 200);
  assert.equal(processesUnder(lp.dir, [lp.pid]), [], 'only the local mode runs');
  assert.equal(podNetnsLeft([...podUids]), [], 'no pod namespace or veth left');
  await lp.kill('SIGTERM');
  assert.equal(processesUnder(lp.dir), [], 'no process left');
  assert.equal(socketsUnder(lp.dataDir), [], 'no unix socket left');
  assert.equal(mountsUnder(lp.dir), [], 'no mount left');
  assert.equal(podNetworkLeft(lp.bridge), [], 'no bridge or nft table left');
  for (const uid of podUids) assert.not.ok(existsSync(join(lp.podsDir, uid)), `pod directory ${uid} removed`);
});

test.run();
