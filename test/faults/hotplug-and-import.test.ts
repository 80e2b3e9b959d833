// Fault injection during a volume hotplug and during a DataVolume import, in the local mode run as a
// process of its own (local-process.ts) and started again on the same data dir after each fault.
//
// Hotplug: a runStrategy Always VM with a claim disk it writes a boot counter to (synced) gets a
// second claim hotplugged. The hotplug is caught in flight deterministically: the launcher is
// stopped (SIGSTOP) before `qvirt addvolume`, so the VMI's spec takes the volume and the node agent
// links the claim into the launcher pod (the local mode's local-path claims need no attachment pod
// and no bind mount), but the launcher cannot plug it: the volume is not Ready. Then
// - SIGKILL to the launcher: its QEMU dies with it, the VMI fails, a new VMI runs (one QEMU), the
//   persisted hotplug volume is plugged there (or, absent, a retried addvolume plugs it), and the
//   boot counter written before the fault is read back by the new boot;
// - SIGKILL to the whole local mode (the launcher resumed as it dies): started again, the same QEMU is
//   re-adopted and the hotplug completes; the counter is still on the claim.
// After each: no attachment pod, no mount under the test's directory, no link of the volume left in
// a launcher pod that is gone, nothing stuck terminating.
//
// Import: a DataVolume from the test's HTTP server, sent slowly, is caught while its bytes arrive;
// - SIGKILL to the local mode: no importer process (curl, qemu-img, ...) outlives it; started again,
//   the import starts over and ends Succeeded with the source's bytes;
// - SIGTERM (a drain): the same.
// After each: the DV's status Succeeded at 100 % with no failed attempt counted, the claim holding
// disk.img and nothing else (no temporary directory, no partial image), nothing stuck terminating.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import { isNotFound, type KubeObject } from '../../src/kube/client.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import type { DataVolume } from '../../src/api/cdi/types.ts';
import { requiredSpace, usableSpace } from '../../controller/datavolume/decisions.ts';
import { startImageServer, type ImageServer } from '../lib/image-server.ts';
import { tempDir } from '../lib/tmp.ts';
import { waitFor, within } from '../lib/within.ts';
import { claimDirOf, claimImageHead, computePid, launcherPodOf, processGone, qemuOf, terminatingObjects, type PodView } from './lib.ts';
import { localProcess, mountsUnder, podNetnsLeft, podNetworkLeft, processesUnder, socketsUnder, type LocalProcess } from './local-process.ts';
import { bootCounterSecret, bootCounterVm } from './boot-counter-vm.ts';

const NAME = 'hpfault';
const HOT = `${NAME}-hot`;
const CASE_MS = 180_000;
let lp!: LocalProcess;
let server!: ImageServer;
let files: { path: string; cleanup: () => void } | undefined;
const podUids = new Set<string>();
const EMPTY_DIR = 'volumes/kubernetes.io~empty-dir';

const vm = (): VirtualMachine => bootCounterVm(NAME, { terminationGracePeriodSeconds: 10, podNetwork: false });

const claim = (name: string, storage: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } }) as KubeObject;

async function getVmi(): Promise<VirtualMachineInstance | undefined> {
  return lp.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, 'default', NAME).catch((err) => { if (isNotFound(err)) return undefined; throw err; });
}
const getVm = () => lp.client.get<VirtualMachine & KubeObject>(Resources.virtualMachines, 'default', NAME);

function serial(podUid: string, vmiUid: string): string {
  const f = join(lp.podsDir, podUid, EMPTY_DIR, 'private', vmiUid, 'virt-serial0-log');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}
const hotLink = (podUid: string) => join(lp.podsDir, podUid, EMPTY_DIR, 'hotplug-disks', `${HOT}.img`);

interface Running { vmi: VirtualMachineInstance; uid: string; podUid: string; launcher: number; qemu: number }

/** The VM's VMI Running (not one of `notUids`), its guest past its user data, its pod, launcher and one QEMU. */
async function running(notUids: readonly string[], marker: RegExp): Promise<Running & { console: string }> {
  const vmi = await waitFor(`VMI ${NAME} Running`, async () => { const v = await getVmi(); return v?.status?.phase === 'Running' && !notUids.includes(v.metadata!.uid!) ? v : undefined; }, 150_000, 200);
  const uid = vmi.metadata!.uid!;
  const pod = await waitFor('the launcher pod with its compute pid', async () => { const p = await launcherPodOf(lp.client, 'default', uid); return computePid(p) ? p : undefined; }, 30_000, 200);
  const podUid = pod.metadata!.uid!;
  podUids.add(podUid);
  const console = await waitFor(`${marker} on the console`, () => { const c = serial(podUid, uid); return marker.test(c) ? c : undefined; }, 150_000, 200);
  const [qemu] = await waitFor('exactly one QEMU for the VM', () => { const q = qemuOf('default', NAME); return q.length === 1 ? q : undefined; }, 30_000, 200);
  return { vmi, uid, podUid, launcher: computePid(pod)!, qemu: qemu!, console };
}

/** The claim's image on the host starts with `text`. */
async function claimHolds(name: string, text: string): Promise<void> {
  assert.is(claimImageHead(await claimDirOf(lp.client, 'default', name), text.length), text, `the claim ${name}'s disk.img holds ${JSON.stringify(text)}`);
}

/** Nothing of the test is being deleted (stuck on a finalizer) once a deletion had 30 s to finish. */
async function noneTerminating(): Promise<void> {
  const terminating = await waitFor('nothing terminating', async () => { const t = await terminatingNow(); return t.length === 0 ? [] : undefined; }, 30_000, 200).catch(terminatingNow);
  assert.equal(terminating, [], 'nothing stuck terminating');
}
async function terminatingNow(): Promise<string[]> {
  return terminatingObjects(lp.client, 'default', [Resources.virtualMachines, Resources.virtualMachineInstances, Resources.pods, Resources.persistentVolumeClaims, Resources.dataVolumes]);
}

/** Processes with a file (or their working directory) under `dir`: an importer's curl writes there without naming it. */
function processesWithFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let paths: string[] = [];
    try { paths = [readlinkSync(`/proc/${pid}/cwd`), ...readdirSync(`/proc/${pid}/fd`).map((fd) => { try { return readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return ''; } })]; } catch { continue; }
    const hit = paths.find((p) => p === dir || p.startsWith(`${dir}/`));
    if (hit) { let comm = '?'; try { comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { /* gone */ } out.push(`${pid} ${comm} ${hit}`); }
  }
  return out;
}

/** After a hotplug fault: no attachment pod, no mount under the test's dir, no link left in a pod that is gone. */
async function noHotplugLeftovers(livePodUid: string): Promise<void> {
  const pods = (await lp.client.list<PodView>(Resources.pods, { namespace: 'default' })).items;
  assert.equal(pods.filter((p) => p.metadata?.labels?.['kubevirt.io'] === 'hotplug-disk').map((p) => p.metadata!.name), [], 'no attachment pod');
  assert.equal(mountsUnder(lp.dir), [], 'no mount under the test\'s directory');
  await waitFor('the launcher pods that are gone removed with their directory (and the hotplug link in it)', async () => {
    const live = new Set((await lp.client.list<PodView>(Resources.pods, { namespace: 'default' })).items.map((p) => p.metadata!.uid!));
    return [...podUids].filter((u) => u !== livePodUid && !live.has(u)).every((u) => !existsSync(join(lp.podsDir, u)));
  }, 60_000, 200);
  for (const d of readdirSync(lp.podsDir)) {
    if (d === livePodUid) continue;
    assert.not.ok(existsSync(hotLink(d)) || (() => { try { return lstatSync(hotLink(d)).isSymbolicLink(); } catch { return false; } })(), `no link of ${HOT} left in pod directory ${d}`);
  }
}

/** The hotplug volume plugged into the running VMI: Ready, the guest seeing the disk by its serial. */
async function hotplugReady(r: Running, serialNo: string): Promise<void> {
  await waitFor(`${HOT} Ready on VMI ${r.uid}`, async () => (await getVmi())?.status?.volumeStatus?.find((s) => s.name === HOT)?.phase === 'Ready', 60_000, 200);
  const re = new RegExp(`QVIRT-DISK(-ADDED)? name=\\w+ serial=${serialNo} `);
  await waitFor(`the guest seeing disk ${serialNo}`, () => re.test(serial(r.podUid, r.uid)), 60_000, 200);
  assert.ok(existsSync(hotLink(r.podUid)), 'the claim linked into the launcher pod');
}

/** Takes the hotplug volume out again (the next case starts without it). */
async function unplug(r: Running, serialNo: string): Promise<void> {
  const res = await lp.qvirt('removevolume', NAME, `--volume-name=${HOT}`);
  assert.is(res.code, 0, res.err);
  await waitFor(`the guest losing disk ${serialNo}`, () => new RegExp(`QVIRT-DISK-REMOVED name=\\w+ serial=${serialNo}`).test(serial(r.podUid, r.uid)), 60_000, 200);
  await waitFor(`${HOT} gone from the VM and VMI`, async () => {
    const v = await getVm();
    const i = await getVmi();
    return !v.status?.volumeRequests && !v.spec.template?.spec?.volumes?.some((x) => x.name === HOT) && !i?.status?.volumeStatus?.some((s) => s.name === HOT);
  }, 60_000, 200);
  await waitFor('the link gone from the launcher pod', () => !existsSync(hotLink(r.podUid)), 30_000, 200);
}

/**
 * `qvirt addvolume` while the launcher is stopped: returns once the VMI's spec has the volume and the
 * node agent linked the claim into the launcher pod, the volume not Ready (the launcher cannot plug it).
 */
async function hotplugInFlight(r: Running, serialNo: string): Promise<void> {
  process.kill(r.launcher, 'SIGSTOP');
  try {
    const res = await lp.qvirt('addvolume', NAME, `--volume-name=${HOT}`, `--serial=${serialNo}`, '--bus=virtio');
    assert.is(res.code, 0, res.err);
    await waitFor('the VMI\'s spec with the volume and its claim linked into the launcher pod', async () => (await getVmi())?.spec.volumes?.some((v) => v.name === HOT) && existsSync(hotLink(r.podUid)), 30_000, 50);
    const vs = (await getVmi())?.status?.volumeStatus?.find((s) => s.name === HOT);
    assert.is.not(vs?.phase, 'Ready', 'the hotplug is in flight: not Ready');
    assert.not.ok(new RegExp(`serial=${serialNo}`).test(serial(r.podUid, r.uid)), 'the guest has not seen the disk');
  } catch (err) {
    process.kill(r.launcher, 'SIGCONT');
    throw err;
  }
}

let current!: Running & { console: string };
let boots = 0;

test.before(async () => {
  files = tempDir('qvhs');
  writeFileSync(join(files.path, 'disk.raw'), SOURCE);
  server = await startImageServer(files.path);
  lp = await localProcess('qvhi');
  await lp.start();
  await lp.client.create(Resources.secrets, bootCounterSecret(NAME));
  await lp.client.create(Resources.persistentVolumeClaims, claim(`${NAME}-data`, '16Mi'));
  await lp.client.create(Resources.persistentVolumeClaims, claim(HOT, '32Mi'));
  await lp.client.create(Resources.virtualMachines, vm());
});
test.after(async () => {
  await lp?.cleanup();
  await server?.close();
  files?.cleanup();
});

// The import's source: 24 MiB of pseudo-random bytes (nothing sparse to hide a hole), a marker first.
const SOURCE_SIZE = 24 * 1024 * 1024;
const SOURCE = (() => {
  const b = Buffer.alloc(SOURCE_SIZE);
  let x = 0x9e3779b9;
  for (let i = 0; i < SOURCE_SIZE; i += 4) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; b.writeUInt32LE(x >>> 0, i); }
  Buffer.from('QVIRT-FAULT-IMPORT\n').copy(b, 0);
  return b;
})();
const SOURCE_SHA = createHash('sha256').update(SOURCE).digest('hex');

test('the VM runs and its first boot writes the counter to its claim', () => within((async () => {
  current = await running([], /QVIRT-FAULT wrote boots=\d/);
  assert.match(current.console, /QVIRT-FAULT prev=\[\]/);
  assert.match(current.console, /QVIRT-FAULT wrote boots=1/);
  boots = 1;
  await claimHolds(`${NAME}-data`, 'boots=1\0');
})(), CASE_MS, 'the first case'));

test('SIGKILL to the launcher during a hotplug: a new VMI with one QEMU, the volume plugged there, the counter read back', () => within((async () => {
  const before = current;
  await hotplugInFlight(before, 'HOTF1');
  const t0 = Date.now();
  process.kill(before.launcher, 'SIGKILL');
  current = await running([before.uid], new RegExp(`QVIRT-FAULT wrote boots=${boots + 1}`));
  console.log(`    launcher SIGKILL during a hotplug: a new VMI's guest up ${Date.now() - t0} ms after the kill`);
  assert.ok(processGone(before.qemu), 'the old QEMU went with its launcher');
  assert.ok(processGone(before.launcher));
  assert.equal(qemuOf('default', NAME), [current.qemu], 'one QEMU for the VM');
  assert.match(current.console, new RegExp(`QVIRT-FAULT prev=\\[boots=${boots}\\]`), 'the new boot read the counter written before the fault');
  boots++;
  // The volume request was persisted in the VM's template before the VMI took it: the new VMI has it.
  // Were it absent, the hotplug is retried.
  const persisted = (await getVm()).spec.template?.spec?.volumes?.some((v) => v.name === HOT);
  if (!persisted) {
    const res = await lp.qvirt('addvolume', NAME, `--volume-name=${HOT}`, '--serial=HOTF1', '--bus=virtio');
    assert.is(res.code, 0, res.err);
  }
  console.log(`    the hotplug ${persisted ? 'was persisted and completes on the new VMI' : 'was lost and is retried'}`);
  await hotplugReady(current, 'HOTF1');
  await noHotplugLeftovers(current.podUid);
  await noneTerminating();
  await claimHolds(`${NAME}-data`, `boots=${boots}\0`);
  await unplug(current, 'HOTF1');
})(), CASE_MS, 'the launcher-kill case'));

test('SIGKILL to the local mode during a hotplug: started again, the same QEMU re-adopted, the hotplug completes', () => within((async () => {
  const before = current;
  await hotplugInFlight(before, 'HOTF2');
  const t0 = Date.now();
  try {
    await lp.kill('SIGKILL');
  } finally {
    process.kill(before.launcher, 'SIGCONT');
  }
  assert.not.ok(processGone(before.qemu), 'QEMU survived the local mode');
  await lp.start();
  const vmi = await waitFor('the VMI Running', async () => { const v = await getVmi(); return v?.status?.phase === 'Running' ? v : undefined; }, 60_000, 200);
  assert.is(vmi.metadata!.uid, before.uid, 'the same VMI');
  await hotplugReady(before, 'HOTF2');
  console.log(`    local mode SIGKILL during a hotplug: the volume Ready ${Date.now() - t0} ms after the kill`);
  assert.equal(qemuOf('default', NAME), [before.qemu], 'one QEMU, the same');
  assert.is(computePid(await launcherPodOf(lp.client, 'default', before.uid)), before.launcher, 'the same launcher');
  assert.ok((await getVm()).spec.template?.spec?.volumes?.some((v) => v.name === HOT), 'the volume persisted in the VM');
  await noHotplugLeftovers(before.podUid);
  await noneTerminating();
  await claimHolds(`${NAME}-data`, `boots=${boots}\0`);
  await unplug(before, 'HOTF2');
})(), CASE_MS, 'the local-mode-kill hotplug case'));

/** A DataVolume from the slow HTTP source, caught while about a third of its bytes have arrived. */
async function importInFlight(name: string): Promise<{ dir: string }> {
  server.slowRate = 3 * 1024 * 1024;
  await lp.client.create(Resources.dataVolumes, {
    apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name, namespace: 'default' },
    spec: { source: { http: { url: `${server.httpUrl}/slow/disk.raw` } }, storage: { resources: { requests: { storage: '64Mi' } } } },
  } as KubeObject);
  await waitFor(`DataVolume ${name} ImportInProgress`, async () => (await lp.client.get<DataVolume & KubeObject>(Resources.dataVolumes, 'default', name)).status?.phase === 'ImportInProgress', 60_000, 100);
  const dir = await claimDirOf(lp.client, 'default', name);
  await waitFor('a third of the bytes in the claim\'s temporary download', () => {
    for (const e of readdirSync(dir)) {
      const f = join(dir, e, 'download');
      if (e.startsWith('.') && existsSync(f) && statSync(f).size >= SOURCE_SIZE / 3) return true;
    }
    return false;
  }, 60_000, 50);
  assert.not.ok(existsSync(join(dir, 'disk.img')), 'no disk.img while importing');
  return { dir };
}

/** After an import fault: started again, the import ends Succeeded with the source's bytes, nothing else in the claim. */
async function importCompletes(name: string, dir: string, requestsBefore: number, t0: number): Promise<void> {
  server.slowRate = 12 * 1024 * 1024;
  await lp.start();
  const dv = await waitFor(`DataVolume ${name} Succeeded`, async () => {
    const d = await lp.client.get<DataVolume & KubeObject>(Resources.dataVolumes, 'default', name);
    if (d.status?.phase === 'Failed') throw new Error(`DataVolume ${name} Failed: ${JSON.stringify(d.status)}`);
    return d.status?.phase === 'Succeeded' ? d : undefined;
  }, 120_000, 200);
  console.log(`      Succeeded ${Date.now() - t0} ms after the fault`);
  assert.ok(server.requests.filter((p) => p === '/slow/disk.raw').length > requestsBefore, 'the import started over after the restart');
  assert.is(dv.status?.progress, '100.0%');
  assert.is(dv.status?.restartCount, undefined, 'no failed attempt counted: the fault is not the source\'s');
  const conds = Object.fromEntries((dv.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
  assert.equal(conds, { Bound: 'True/Bound', Ready: 'True/', Running: 'False/Completed' });
  const disk = join(dir, 'disk.img');
  assert.is(statSync(disk).size, usableSpace(0.06, requiredSpace(0.06, 64 * 1024 * 1024)), 'disk.img at the claim\'s size');
  assert.is(createHash('sha256').update(readFileSync(disk).subarray(0, SOURCE_SIZE)).digest('hex'), SOURCE_SHA, 'disk.img holds the source\'s bytes');
  await waitFor('nothing but disk.img in the claim (no temporary directory, no partial image)', () => readdirSync(dir).join(',') === 'disk.img', 15_000, 100);
  assert.equal(processesWithFilesUnder(dir).filter((l) => !l.startsWith(`${lp.pid} `)), [], 'no process but the local mode holds a file of the claim');
  await noneTerminating();
}

test('SIGKILL to the local mode during a DataVolume import: no importer process left; started again, the import ends Succeeded with the right bytes', () => within((async () => {
  const name = 'imp-kill';
  const { dir } = await importInFlight(name);
  const requests = server.requests.filter((p) => p === '/slow/disk.raw').length;
  const t0 = Date.now();
  await lp.kill('SIGKILL');
  const left = await waitFor('no process holding a file of the claim', () => { const l = processesWithFilesUnder(dir); return l.length === 0 ? l : undefined; }, 5_000, 100).catch(() => processesWithFilesUnder(dir));
  assert.equal(left, [], 'no importer process outlived the local mode');
  await importCompletes(name, dir, requests, t0);
})(), CASE_MS, 'the import SIGKILL case'));

test('SIGTERM to the local mode during a DataVolume import: the drain stops the import; started again, it ends Succeeded with the right bytes', () => within((async () => {
  const name = 'imp-term';
  const { dir } = await importInFlight(name);
  const requests = server.requests.filter((p) => p === '/slow/disk.raw').length;
  const t0 = Date.now();
  await lp.kill('SIGTERM');
  assert.equal(processesWithFilesUnder(dir), [], 'no importer process outlived the drain');
  assert.equal(processesUnder(lp.dir), [], 'nothing of the local mode runs');
  assert.equal(readdirSync(dir), [], 'the drained import removed its temporary directory; no partial disk.img');
  await importCompletes(name, dir, requests, t0);
  // The drain stopped the VM too: it runs again, its counter read back.
  const r = await running([current.uid], new RegExp(`QVIRT-FAULT wrote boots=${boots + 1}`));
  assert.match(r.console, new RegExp(`QVIRT-FAULT prev=\\[boots=${boots}\\]`));
  boots++;
  current = r;
})(), CASE_MS, 'the import SIGTERM case'));

test('everything deleted, the local mode stopped: nothing of it is left', () => within((async () => {
  await lp.client.delete(Resources.virtualMachines, 'default', NAME);
  for (const dv of ['imp-kill', 'imp-term']) await lp.client.delete(Resources.dataVolumes, 'default', dv);
  await waitFor('the VM and VMI gone', async () => (await getVmi()) === undefined && (await lp.client.list(Resources.virtualMachines, { namespace: 'default' })).items.length === 0, 60_000, 200);
  for (const c of [`${NAME}-data`, HOT]) await lp.client.delete(Resources.persistentVolumeClaims, 'default', c);
  await waitFor('no QEMU for the VM', () => qemuOf('default', NAME).length === 0, 60_000, 200);
  await waitFor('the claims and DataVolumes gone', async () => (await lp.client.list(Resources.persistentVolumeClaims, { namespace: 'default' })).items.length === 0 && (await lp.client.list(Resources.dataVolumes, { namespace: 'default' })).items.length === 0, 60_000, 200);
  await waitFor('the launcher pods gone', async () => (await lp.client.list<PodView>(Resources.pods, { namespace: 'default' })).items.every((p) => !podUids.has(p.metadata!.uid!)), 60_000, 200);
  await lp.kill('SIGTERM');
  assert.equal(processesUnder(lp.dir), [], 'no process left');
  assert.equal(processesWithFilesUnder(lp.dir), [], 'no process holding a file of the test\'s directory');
  assert.equal(socketsUnder(lp.dataDir), [], 'no unix socket left');
  assert.equal(mountsUnder(lp.dir), [], 'no mount left');
  assert.equal(podNetworkLeft(lp.bridge), [], 'no bridge or nft table left');
  assert.equal(podNetnsLeft([...podUids]), [], 'no pod namespace or veth left');
})(), CASE_MS, 'the cleanup case'));

test.run();
