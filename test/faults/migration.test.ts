// Fault injection during a live migration, in the local mode with two nodes run as a process of its
// own (local-up-process.ts; the API server, the controllers, the node agents and the pod runners are
// that one process). One VM (runStrategy Always) with a ReadWriteMany claim disk its every boot
// writes a counter to (user data from a Secret, synced; as in local-mode.test.ts) and a masquerade
// interface, migrated with migrations.bandwidthPerMigration 1Mi so that the migration is mid-flight
// when the fault comes. The VM is reused across the cases; only a fault that takes the source down
// boots it again. Cases, in this order:
//
// - SIGKILL of the source launcher: the guest is gone (its QEMU dies with the launcher), the VMI
//   Failed, the migration Failed, the VM started again (a new VMI, the next boot).
// - SIGKILL of the source QEMU: the same.
// - SIGKILL of the whole local mode, started again on the same data dir: the guest outlives it; the
//   migration Failed with the source running on, or Succeeded on the target (both accepted).
// - SIGTERM of the target launcher: a graceful stop of the target pod while the guest is arriving.
//   Either the migration Failed and the source runs on, or it Succeeded and the target's launcher,
//   told to stop, stops the guest after the hand-off — then the VM boots a new VMI (runStrategy Always).
// - SIGKILL of the target launcher: its QEMU goes with it, the migration Failed, the source QEMU runs
//   on.
// A QEMU that ran on through a failed migration is replaced (the VM restarted) before the next case's
// migration: QEMU 7.2 can keep such a migration's multifd threads for good, and qvirt then refuses its
// next migrations saying so (launcher/migration/source.ts settlePreviousMigration). See failedOnThisQemu.
//
// After each: the migration final, the VM Running with exactly one QEMU on the host (both nodes), one
// active launcher pod, no socat relay of the local mode and no relay record left, no unix socket of a
// finished pod or of the migration, nothing stuck with a deletionTimestamp, and the claim's image
// holds what the last boot wrote.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import { MIGRATION_TRANSPORT_ANNOTATION } from '../../src/api/migration.ts';
import { isNotFound, type KubeObject } from '../../src/kube/client.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { localNodeDirs } from '../../src/local/local-node.ts';
import { waitFor, within } from '../lib/within.ts';
import { claimDirOf, claimImageHead, computePid, processGone, qemuOf, terminatingObjects, type PodView as Pod } from './lib.ts';
import { localProcess, mountsUnder, podNetnsLeft, podNetworkLeft, processesUnder, socketsUnder, type LocalProcess } from './local-process.ts';
import { bootCounterSecret, bootCounterVm } from './boot-counter-vm.ts';

// Its own name per run: QEMUs are found by their `-name guest=default_<name>` on the host, and another run of
// this suite on the machine (a CI beside a developer's run) must not count as a second QEMU of this VM.
const NAME = `migfault-${process.pid}`;
const CASE_MS = 180_000;
let lp!: LocalProcess;
const podUids = new Set<string>();
let boots = 0;

/**
 * Over the transport QVIRT_FAULT_MIGRATION_TRANSPORT names (qvirt.io/migration-transport; default the node
 * agents' relay, whose processes and records are what a fault can leave behind; migration-direct.test.ts
 * runs the suite QEMU → QEMU, where the migration's credentials in both pods and the hand-over of the
 * target launcher to the node's main controller are). 1Mi/s keeps a migration in flight for the fault (a
 * bandwidth limit keeps the migration on one stream: QEMU 7.2's multifd channels do not honour max-bandwidth).
 */
const vm = (): VirtualMachine => {
  const v = bootCounterVm(NAME, { terminationGracePeriodSeconds: 10, podNetwork: true });
  const meta = v.spec!.template!.metadata ??= {};
  meta.annotations = { ...meta.annotations, [MIGRATION_TRANSPORT_ANNOTATION]: process.env.QVIRT_FAULT_MIGRATION_TRANSPORT ?? 'relay' };
  return v;
};

async function getVmi(): Promise<VirtualMachineInstance | undefined> {
  return lp.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, 'default', NAME).catch((err) => { if (isNotFound(err)) return undefined; throw err; });
}

/** Both nodes' pod directories. */
function podsDirs(): string[] {
  return lp.nodeNames.map((n, i) => localNodeDirs(lp.dataDir, i, n).podsDir);
}

/** The VMI's serial log, in whichever pod directory (either node) holds it. */
function serial(vmiUid: string): string {
  for (const d of podsDirs()) {
    if (!existsSync(d)) continue;
    for (const pod of readdirSync(d)) {
      const f = join(d, pod, 'volumes/kubernetes.io~empty-dir/private', vmiUid, 'virt-serial0-log');
      if (existsSync(f)) return readFileSync(f, 'utf8');
    }
  }
  return '';
}

/** A launcher pod and the node it runs on. */
type PodView = Pod & { spec?: { nodeName?: string } };

const finished = (p: PodView) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** The VM's launcher pods not finished (source and, during a migration, target). */
async function activePods(): Promise<PodView[]> {
  const pods = (await lp.client.list<PodView>(Resources.pods, { namespace: 'default', labelSelector: 'kubevirt.io=virt-launcher' })).items;
  for (const p of pods) podUids.add(p.metadata!.uid!);
  return pods.filter((p) => !finished(p) && !p.metadata?.deletionTimestamp);
}

interface Running { vmi: VirtualMachineInstance; pod: PodView; launcher: number; qemu: number }

/**
 * The VM settled: its VMI Running and not migrating, one active launcher pod (on the VMI's node), one
 * QEMU on the host, a child of that pod's launcher. A new VMI (uid not `uid`) is a new boot: its
 * console shows the counter written.
 */
async function settled(o: { notUid?: string } = {}): Promise<Running> {
  const vmi = await waitFor(`VMI ${NAME} Running, not migrating${o.notUid ? `, not ${o.notUid}` : ''}`, async () => {
    const v = await getVmi();
    if (v?.status?.phase !== 'Running' || v.metadata?.deletionTimestamp || v.metadata?.uid === o.notUid) return undefined;
    const ms = v.status.migrationState;
    return !ms || ms.completed || ms.failed ? v : undefined;
  }, CASE_MS, 200);
  const pod = await waitFor('one active launcher pod, the VMI\'s, on its node, with its compute pid', async () => {
    const pods = await activePods();
    return pods.length === 1 && pods[0]!.spec?.nodeName === vmi.status!.nodeName && pods[0]!.metadata?.labels?.['kubevirt.io/created-by'] === vmi.metadata?.uid && computePid(pods[0]) ? pods[0] : undefined;
  }, 90_000, 200);
  const launcher = computePid(pod)!;
  const [qemu] = await waitFor('exactly one QEMU for the VM on the host', () => { const q = qemuOf('default', NAME); return q.length === 1 ? q : undefined; }, 60_000, 200);
  const ppid = Number(readFileSync(`/proc/${qemu}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  assert.is(ppid, launcher, 'the QEMU is the active launcher\'s');
  return { vmi, pod, launcher, qemu: qemu! };
}

/** A new boot of VMI `uid`: waits for its console's counter and checks it continues the previous one. */
async function booted(uid: string): Promise<void> {
  const c = await waitFor('the boot counter written on the console', () => { const s = serial(uid); return /QVIRT-FAULT wrote boots=\d+/.test(s) ? s : undefined; }, CASE_MS, 200);
  assert.match(c, new RegExp(`QVIRT-FAULT prev=\\[${boots ? `boots=${boots}` : ''}\\]`), `boot ${boots + 1} read what boot ${boots} wrote`);
  boots++;
  assert.match(c, new RegExp(`QVIRT-FAULT wrote boots=${boots}\\b`));
}

let claimDir = '';

/** The claim's image on the host starts with `text` (its directory looked up once, while the API server serves). */
async function claimHolds(text: string): Promise<void> {
  claimDir ||= await claimDirOf(lp.client, 'default', `${NAME}-data`);
  assert.is(claimImageHead(claimDir, text.length), text, `the claim's disk.img holds ${JSON.stringify(text)}`);
}

/** socat processes the local mode started (they inherit its environment, which names the test's directory). */
function socatsOfLocalMode(): number[] {
  let out = '';
  try { out = execFileSync('pgrep', ['-x', 'socat'], { encoding: 'utf8' }); } catch { return []; }
  return out.split('\n').filter(Boolean).map(Number).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(lp.dir); } catch { return false; }
  });
}

/** Relay records (handler/migration/relay-records.ts) left on either node. */
function relayRecordsLeft(): string[] {
  return lp.nodeNames.flatMap((n, i) => {
    const d = join(localNodeDirs(lp.dataDir, i, n).stateDir, 'migration-relays');
    return existsSync(d) ? readdirSync(d).map((f) => join(d, f)) : [];
  });
}

let baseSockets: string[] = [];

/** Unix sockets that are neither the node agents' own (as before any migration) nor the active pod's. */
function strayPodSockets(active: PodView): string[] {
  return socketsUnder(lp.dataDir).filter((s) => !baseSockets.includes(s) && !s.includes(`/pods/${active.metadata!.uid}/`));
}

/**
 * Nothing of the test is stuck being deleted: what is terminating (a launcher pod in its grace period, the
 * source pod of a migration that just ended) may take its time, up to a minute, but not forever.
 */
async function noneTerminating(): Promise<void> {
  await waitFor('nothing terminating', async () => (await terminating()).length === 0, 60_000, 200).catch(() => undefined);
  assert.equal(await terminating(), [], 'nothing stuck terminating');
}

async function terminating(): Promise<string[]> {
  return terminatingObjects(lp.client, 'default', [Resources.virtualMachines, Resources.virtualMachineInstances, Resources.virtualMachineInstanceMigrations, Resources.pods, Resources.secrets, Resources.persistentVolumeClaims]);
}

/** After a case: nothing of the migration left, nothing stuck, the disk whole. */
async function clean(r: Running): Promise<void> {
  await waitFor('no socat relay of the local mode left', () => socatsOfLocalMode().length === 0, 60_000, 200).catch(() => {
    assert.equal(socatsOfLocalMode().map((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' ')), [], 'no socat relay left');
  });
  await waitFor('no relay record left', () => relayRecordsLeft().length === 0, 30_000, 200).catch(() => assert.equal(relayRecordsLeft(), [], 'no relay record left'));
  await waitFor('no stray unix socket left', () => strayPodSockets(r.pod).length === 0, 60_000, 200).catch(() => assert.equal(strayPodSockets(r.pod), [], 'no unix socket of a finished pod or of the migration'));
  await noneTerminating();
  await claimHolds(`boots=${boots}\0`);
  const qemus = qemuOf('default', NAME);
  if (qemus.length !== 1 || qemus[0] !== r.qemu) assert.unreachable(`still one QEMU, ${r.qemu}; found ${await describeQemus(qemus)}`);
}

/** Each QEMU with its launcher (pid, the VMI uid it was started for, its pod), every VMI, pod and migration of the test: a post-mortem. */
async function describeQemus(pids: number[]): Promise<string> {
  const pods = (await lp.client.list<PodView>(Resources.pods, { namespace: 'default' })).items;
  const vmis = (await lp.client.list<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, { namespace: 'default' })).items;
  const migs = (await lp.client.list<VirtualMachineInstanceMigration & KubeObject>(Resources.virtualMachineInstanceMigrations, { namespace: 'default' })).items;
  const qemus = pids.map((pid) => {
    let ppid = 0; let launcher = '';
    try {
      ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      launcher = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch { /* gone */ }
    const qemuArgs = (() => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '); } catch { return ''; } })();
    const pod = pods.find((p) => computePid(p) === ppid);
    return { pid, ppid, vmiUid: / --uid (\S+)/.exec(launcher)?.[1], incoming: qemuArgs.includes('-incoming'), pod: pod?.metadata?.name };
  });
  return JSON.stringify({
    qemus,
    vmis: vmis.map((v) => ({ uid: v.metadata?.uid, phase: v.status?.phase, node: v.status?.nodeName, deleting: !!v.metadata?.deletionTimestamp, activePods: v.status?.activePods, migrationState: v.status?.migrationState ? { uid: v.status.migrationState.migrationUid, completed: v.status.migrationState.completed, failed: v.status.migrationState.failed, sourcePod: v.status.migrationState.sourcePod, targetPod: v.status.migrationState.targetPod } : undefined })),
    pods: pods.map((p) => ({ name: p.metadata?.name, uid: p.metadata?.uid, node: p.spec?.nodeName, phase: p.status?.phase, deleting: !!p.metadata?.deletionTimestamp, createdBy: p.metadata?.labels?.['kubevirt.io/created-by'], migrationJob: p.metadata?.labels?.['kubevirt.io/migrationJobUID'], compute: computePid(p) })),
    migrations: migs.map((m) => ({ name: m.metadata?.name, uid: m.metadata?.uid, phase: m.status?.phase, reason: m.status?.migrationState?.failureReason })),
  });
}

let n = 0;

interface MidFlight { mig: VirtualMachineInstanceMigration; source: PodView; target: PodView; sourceLauncher: number; targetLauncher: number; sourceQemu: number; targetQemu: number }

/** Starts a migration of the VM and waits until it is mid-flight: Running, the target QEMU receiving memory. */
async function migrateToMidFlight(r: Running): Promise<MidFlight> {
  const name = `${NAME}-mig-${++n}`;
  await lp.client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: 'default' }, spec: { vmiName: NAME } } as KubeObject);
  let last: unknown;
  const mig = await waitFor(`migration ${name} Running`, async () => {
    const m = await lp.client.get<VirtualMachineInstanceMigration & KubeObject>(Resources.virtualMachineInstanceMigrations, 'default', name);
    if (m.status?.phase === 'Failed' || m.status?.phase === 'Succeeded') throw new Error(`migration ${name} ended before the fault: ${JSON.stringify(m.status)}`);
    last = m.status;
    return m.status?.phase === 'Running' ? m : undefined;
  }, 120_000, 200).catch(async (err: Error) => {
    const v = await getVmi();
    throw new Error(`${err.message}; its status ${JSON.stringify(last)}; the VMI's conditions ${JSON.stringify(v?.status?.conditions)}, migrationState ${JSON.stringify(v?.status?.migrationState)}; events ${JSON.stringify((await lp.client.list<KubeObject & { reason?: string; message?: string }>(Resources.events, { namespace: 'default' })).items.map((e) => `${e.reason}: ${e.message}`))}`);
  });
  const target = await waitFor('the target pod with its launcher', async () => (await activePods()).find((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] === mig.metadata!.uid && computePid(p)), 30_000, 200);
  const targetLauncher = computePid(target)!;
  const targetQemu = await waitFor('the target QEMU', () => qemuOf('default', NAME).find((q) => q !== r.qemu), 30_000, 200);
  // Memory flowing: the source QEMU's migration status is read by the launcher; give it a moment in flight.
  await new Promise((res) => setTimeout(res, 1500));
  const m = await lp.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', name);
  if (m.status?.phase !== 'Running') assert.unreachable(`migration ${name} was no longer mid-flight when the fault came: ${m.status?.phase}; the VMI's migrationState ${JSON.stringify((await getVmi())?.status?.migrationState)}`);
  assert.is(target.spec?.nodeName === r.pod.spec?.nodeName, false, 'the target is the other node');
  return { mig, source: r.pod, target, sourceLauncher: r.launcher, targetLauncher, sourceQemu: r.qemu, targetQemu };
}

async function finalMigration(name: string): Promise<VirtualMachineInstanceMigration> {
  return waitFor(`migration ${name} final`, async () => {
    const m = await lp.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', name);
    return m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed' ? m : undefined;
  }, CASE_MS, 200);
}

let current!: Running;

/**
 * The running QEMU went through a failed migration and runs on. QEMU 7.2 can keep such a migration's
 * multifd threads for good (status 'failed', its yank instance never dropped, migrate_cancel and yank
 * notwithstanding: a hang later QEMUs fixed), and then refuses every later migration — qvirt says so
 * ("QEMU still runs a previous migration ... its channels not yet cleaned up"). Seen after a target
 * launcher SIGKILL and after the local mode's SIGKILL, some runs in three under load.
 */
let failedOnThisQemu = false;

/** A case that needs a QEMU able to migrate gets a fresh one: the VMI deleted, the VM (Always) boots another. */
async function migratableQemu(): Promise<void> {
  if (!failedOnThisQemu) return;
  const t0 = Date.now();
  const old = current.vmi.metadata!.uid!;
  await lp.client.delete(Resources.virtualMachineInstances, 'default', NAME);
  current = await settled({ notUid: old });
  await booted(current.vmi.metadata!.uid!);
  failedOnThisQemu = false;
  console.log(`    (a fresh QEMU for the next migration: the VM restarted in ${Date.now() - t0} ms)`);
}

test.before(async () => {
  lp = await localProcess('qvmf', { nodes: 2, clusterConfig: { migrations: { bandwidthPerMigration: '1Mi' } } });
  await lp.start();
  await lp.client.create(Resources.secrets, bootCounterSecret(NAME));
  // ReadWriteMany: KubeVirt live-migrates a VMI only when its claims are shared.
  await lp.client.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${NAME}-data`, namespace: 'default' }, spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '16Mi' } } } } as KubeObject);
  await lp.client.create(Resources.virtualMachines, vm());
});
test.after(async () => { await lp?.cleanup(); });

test('the VM runs on one of the two nodes and its first boot writes the counter to its claim', async () => {
  const t0 = Date.now();
  current = await settled();
  await booted(current.vmi.metadata!.uid!);
  baseSockets = socketsUnder(lp.dataDir).filter((s) => !podsDirs().some((d) => s.startsWith(`${d}/`)));
  await claimHolds('boots=1\0');
  console.log(`    first boot: ${Date.now() - t0} ms`);
});

/** A fault on the target side: the migration Failed, the same VMI and QEMU run on at the source. */
async function targetFault(what: string, kill: (x: MidFlight) => void): Promise<void> {
  await migratableQemu();
  const x = await migrateToMidFlight(current);
  const t0 = Date.now();
  kill(x);
  const m = await finalMigration(x.mig.metadata!.name!);
  assert.is(m.status?.phase, 'Failed', JSON.stringify(m.status));
  const r = await settled();
  assert.is(r.vmi.metadata!.uid, current.vmi.metadata!.uid, 'the same VMI');
  assert.is(r.qemu, x.sourceQemu, 'the source QEMU runs on');
  assert.is(r.vmi.status?.migrationState?.failed, true);
  assert.ok(processGone(x.targetQemu), 'the target QEMU is gone');
  assert.ok(processGone(x.targetLauncher), 'the target launcher is gone');
  await clean(r);
  console.log(`    ${what}: migration Failed (${r.vmi.status?.migrationState?.failureReason ?? ''}), source running on; settled ${Date.now() - t0} ms after the kill`);
  current = r;
  failedOnThisQemu = true;
}

/** A fault on the source side: the guest is gone, the migration Failed, the VM started again (next boot). */
async function sourceFault(what: string, kill: (x: MidFlight) => void): Promise<void> {
  const x = await migrateToMidFlight(current);
  const t0 = Date.now();
  kill(x);
  const m = await finalMigration(x.mig.metadata!.name!);
  assert.is(m.status?.phase, 'Failed', JSON.stringify(m.status));
  const r = await settled();
  assert.is.not(r.vmi.metadata!.uid, current.vmi.metadata!.uid, 'a new VMI (runStrategy Always)');
  assert.ok(processGone(x.sourceQemu), 'the source QEMU is gone');
  assert.ok(processGone(x.targetQemu), 'the target QEMU is gone');
  assert.ok(processGone(x.sourceLauncher) && processGone(x.targetLauncher), 'both launchers are gone');
  await booted(r.vmi.metadata!.uid!);
  await clean(r);
  console.log(`    ${what}: migration Failed, the VM Running again (boot ${boots}) ${Date.now() - t0} ms after the kill`);
  current = r;
}

test('SIGKILL of the source launcher mid-migration', () => within(sourceFault('source launcher SIGKILL', (x) => process.kill(x.sourceLauncher, 'SIGKILL')), CASE_MS, 'the case'));

test('SIGKILL of the source QEMU mid-migration', () => within(sourceFault('source QEMU SIGKILL', (x) => process.kill(x.sourceQemu, 'SIGKILL')), CASE_MS, 'the case'));

// The launchers and QEMUs outlive the local mode (as a node's pods outlive kubelet and virt-handler),
// the socat relays' forked children too, so the migration may end either way: Succeeded on the target,
// or Failed with the source running on.
test('SIGKILL of the whole local mode mid-migration, started again on the same data dir', () => within((async () => {
  await migratableQemu();
  const x = await migrateToMidFlight(current);
  const t0 = Date.now();
  await lp.kill('SIGKILL');
  await lp.start();
  const m = await finalMigration(x.mig.metadata!.name!);
  const r = await settled();
  assert.is(r.vmi.metadata!.uid, current.vmi.metadata!.uid, 'the same VMI: the guest outlived the local mode');
  if (m.status?.phase === 'Succeeded') {
    assert.is(r.qemu, x.targetQemu, 'Succeeded: the target QEMU runs the guest');
    assert.is(r.vmi.status?.nodeName, x.target.spec?.nodeName);
    assert.ok(processGone(x.sourceQemu), 'the source QEMU is gone');
  } else {
    assert.is(m.status?.phase, 'Failed', JSON.stringify(m.status));
    assert.is(r.qemu, x.sourceQemu, 'Failed: the source QEMU runs on');
    assert.ok(processGone(x.targetQemu), 'the target QEMU is gone');
  }
  await clean(r);
  console.log(`    local mode SIGKILL: migration ${m.status?.phase}, the VM Running (same guest) ${Date.now() - t0} ms after the kill`);
  current = r;
  failedOnThisQemu = m.status?.phase === 'Failed';
})(), CASE_MS, 'the case'));

test('SIGTERM of the target launcher mid-migration', () => within((async () => {
  await migratableQemu();
  const x = await migrateToMidFlight(current);
  const t0 = Date.now();
  process.kill(x.targetLauncher, 'SIGTERM');
  const m = await finalMigration(x.mig.metadata!.name!);
  let r: Running;
  if (m.status?.phase === 'Failed') {
    r = await settled();
    assert.is(r.vmi.metadata!.uid, current.vmi.metadata!.uid, 'Failed: the same VMI');
    assert.is(r.qemu, x.sourceQemu, 'Failed: the source QEMU runs on');
    assert.ok(processGone(x.targetQemu), 'the target QEMU is gone');
  } else {
    // The guest arrived in a launcher that was told to stop: it stops the guest (the node agent's graceful
    // shutdown, QEMU destroyed at the latest when the grace period ends), and the VM boots a new VMI.
    assert.is(m.status?.phase, 'Succeeded', JSON.stringify(m.status));
    r = await settled({ notUid: current.vmi.metadata!.uid! });
    assert.ok(processGone(x.sourceQemu), 'Succeeded: the source QEMU is gone');
    assert.ok(processGone(x.targetQemu), 'Succeeded: the target QEMU, stopped with its launcher, is gone');
    await booted(r.vmi.metadata!.uid!);
  }
  await clean(r);
  console.log(`    target launcher SIGTERM: migration ${m.status?.phase}, the VM Running ${Date.now() - t0} ms after the signal`);
  current = r;
  failedOnThisQemu = m.status?.phase === 'Failed';
})(), CASE_MS, 'the case'));

test('SIGKILL of the target launcher mid-migration', () => within(targetFault('target launcher SIGKILL', (x) => process.kill(x.targetLauncher, 'SIGKILL')), CASE_MS, 'the case'));

test('the VM, migrations, claim and Secret deleted, the local mode stopped: nothing of them is left', async () => {
  await lp.client.delete(Resources.virtualMachines, 'default', NAME);
  for (const m of (await lp.client.list<KubeObject>(Resources.virtualMachineInstanceMigrations, { namespace: 'default' })).items) await lp.client.delete(Resources.virtualMachineInstanceMigrations, 'default', m.metadata!.name!);
  await waitFor('the VM, VMI and migrations gone', async () => (await getVmi()) === undefined
    && (await lp.client.list(Resources.virtualMachines, { namespace: 'default' })).items.length === 0
    && (await lp.client.list(Resources.virtualMachineInstanceMigrations, { namespace: 'default' })).items.length === 0, 90_000, 200);
  await lp.client.delete(Resources.persistentVolumeClaims, 'default', `${NAME}-data`);
  await lp.client.delete(Resources.secrets, 'default', `${NAME}-userdata`);
  await waitFor('no QEMU for the VM', () => qemuOf('default', NAME).length === 0, 60_000, 200);
  await waitFor('its launcher pods gone', async () => (await lp.client.list<PodView>(Resources.pods, { namespace: 'default' })).items.every((p) => !podUids.has(p.metadata!.uid!)), 60_000, 200);
  await waitFor('the claim gone', async () => (await lp.client.list(Resources.persistentVolumeClaims, { namespace: 'default' })).items.length === 0, 30_000, 200);
  assert.equal(processesUnder(lp.dir, [lp.pid]), [], 'only the local mode runs');
  assert.equal(podNetnsLeft([...podUids]), [], 'no pod namespace or veth left');
  await lp.kill('SIGTERM');
  assert.equal(processesUnder(lp.dir), [], 'no process left');
  assert.equal(socatsOfLocalMode(), [], 'no socat left');
  assert.equal(socketsUnder(lp.dataDir), [], 'no unix socket left');
  assert.equal(mountsUnder(lp.dir), [], 'no mount left');
  assert.equal(podNetworkLeft(lp.bridge), [], 'no bridge or nft table left');
});

test.run();
