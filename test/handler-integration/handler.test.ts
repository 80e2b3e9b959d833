// virt-handler end to end: the handler against the embedded API server, real launchers laid out
// under a kubelet-like pods dir, real QEMU (TCG) booting the test guest.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { importTestGuest, markers } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { ImageStoreContainerDisks } from '../../src/local/image-store-container-disks.ts';
import { tempDir } from '../lib/tmp.ts';
import { Resources } from '../../src/kube/resource.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { HandlerController } from '../../handler/controller.ts';
import { Heartbeat } from '../../handler/heartbeat.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { NODE, createVmiWithLauncher, log, sleep, startCluster, vmiManifest, waitFor, type TestLauncher } from './lib.ts';
import { emptyDir, launcherPathsForPod, LauncherVolume } from '../../handler/launcher/sockets.ts';
import { within } from '../lib/within.ts';
import { workQueueMetrics } from '../../src/metrics/workqueue.ts';

const work = tempDir('qhd');
const podsDir = join(work.path, 'pods');
const stateDir = join(work.path, 'state');
const store = new ImageStore(join(work.path, 'store'));
let cluster: Awaited<ReturnType<typeof startCluster>>;
const launchers: TestLauncher[] = [];
let handler: HandlerController | undefined;

const newHandler = (client: KubeClient, extra: { launcherInitTimeoutMs?: number } = {}) => new HandlerController({
  client, nodeName: NODE, podsDir, stateDir, log, containerDiskSource: new ImageStoreContainerDisks(store),
  recorder: new EventRecorder(client, 'virt-handler', { host: NODE, log }),
  watchdogTimeoutMs: 3000,
  // An image missing from the store fails the sync after this wait (one minute by default, for pulls).
  containerDiskReadyTimeoutMs: 2000,
  ...extra,
});

const getVmi = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name);
const cond = (vmi: VirtualMachineInstance, type: string) => vmi.status?.conditions?.find((c) => c.type === type);

interface RecordedEvent { reason: string; type: string; message: string; involvedObject: { name: string } }
/**
 * The namespace's events once `want` holds of them. The handler records an event without waiting
 * for it (after the status write the tests wait for, in the case of Started/Stopped/Crashed): a
 * status seen is no sign that its event is there yet.
 */
async function eventsWhen(what: string, want: (events: RecordedEvent[]) => boolean, timeoutMs = 30_000): Promise<RecordedEvent[]> {
  return waitFor(what, async () => {
    const events = (await cluster.client.list(Resources.events, { namespace: 'default' })).items as unknown as RecordedEvent[];
    if (want(events)) return events;
    throw new Error(`events so far: ${events.map((e) => `${e.involvedObject.name}/${e.reason}`).join(', ')}`);
  }, timeoutMs);
}

test.before(async () => {
  await importTestGuest(store);
  cluster = await startCluster();
});

test.after(async () => {
  await handler?.stop().catch(() => undefined);
  for (const l of launchers) await l.stop();
  await cluster?.close();
  work.cleanup();
});

test('heartbeat: schedulable label, heartbeat annotation, q35 label; false on stop', async () => {
  const hb = new Heartbeat(cluster.client, NODE, log);
  await hb.start();
  let node = await cluster.client.get(Resources.nodes, undefined, NODE);
  assert.is(node.metadata?.labels?.['kubevirt.io/schedulable'], 'true');
  assert.is(node.metadata?.labels?.['machine-type.node.kubevirt.io/q35'], 'true');
  assert.ok(node.metadata?.annotations?.['kubevirt.io/heartbeat']);
  await hb.stop();
  node = await cluster.client.get(Resources.nodes, undefined, NODE);
  assert.is(node.metadata?.labels?.['kubevirt.io/schedulable'], 'false');
});

test('Scheduled → Running, console boots, pause/unpause, handler restart re-adopts, delete → graceful shutdown → Succeeded', async () => {
  handler = newHandler(cluster.client);
  await handler.start();
  const { launcher } = await createVmiWithLauncher(cluster.client, podsDir, 'vma', work.path);
  launchers.push(launcher);
  await waitFor('VMI Running', async () => (await getVmi('vma')).status?.phase === 'Running', 90_000);
  await waitFor('guest ready on the serial console', () => launcher.serialLog().includes(markers.ready), 120_000);
  const qemu = launcher.qemuPid();
  assert.ok(qemu, 'QEMU runs under the launcher');
  const running = await getVmi('vma');
  assert.ok(running.status?.phaseTransitionTimestamps?.some((t) => t.phase === 'Running'));
  assert.is(cond(running, 'LiveMigratable')?.status, 'True');
  // qemu-ga in the guest answers: AgentConnected and the guest OS info from the agent.
  await waitFor('AgentConnected', async () => cond(await getVmi('vma'), 'AgentConnected')?.status === 'True', 120_000);
  // The OS info comes with the agent's first guest-get-osinfo reply, after the channel opened:
  // AgentConnected can be written before it, so the VMI that first has it need not have the OS info.
  const withAgent = await waitFor('guestOSInfo from the agent', async () => {
    const v = await getVmi('vma');
    if (v.status?.guestOSInfo?.kernelRelease) return v;
    throw new Error(`guestOSInfo: ${JSON.stringify(v.status?.guestOSInfo)}`);
  }, 60_000);
  assert.is(cond(withAgent, 'AgentConnected')?.status, 'True');
  assert.ok(withAgent.status?.guestOSInfo?.kernelRelease, `guestOSInfo from the agent: ${JSON.stringify(withAgent.status?.guestOSInfo)}`);

  // Pause/unpause over the launcher's Cmd socket (the authenticated endpoint: endpoint.test.ts).
  const pausedBefore = await handler.launcherOf('default', 'vma')!.client.pauseVirtualMachine(running);
  assert.ok(pausedBefore.success, pausedBefore.message);
  await waitFor('Paused condition', async () => cond(await getVmi('vma'), 'Paused')?.reason === 'PausedByUser');
  assert.is((await getVmi('vma')).status?.phase, 'Running');
  await handler.launcherOf('default', 'vma')!.client.unpauseVirtualMachine(running);
  await waitFor('Paused condition gone', async () => cond(await getVmi('vma'), 'Paused') === undefined);

  // Restart the handler: the ghost record leads the new one to the same launcher and QEMU.
  await handler.stop();
  handler = newHandler(cluster.client);
  await handler.start();
  assert.ok(handler.launcherOf('default', 'vma'), 're-adopted from the ghost record');
  const paused = await handler.launcherOf('default', 'vma')!.client.pauseVirtualMachine(await getVmi('vma'));
  assert.ok(paused.success, paused.message);
  await waitFor('Paused condition after restart', async () => cond(await getVmi('vma'), 'Paused')?.reason === 'PausedByUser');
  await handler.launcherOf('default', 'vma')!.client.unpauseVirtualMachine(await getVmi('vma'));
  await waitFor('unpaused after restart', async () => cond(await getVmi('vma'), 'Paused') === undefined);
  assert.is(launcher.qemuPid(), qemu, 'same QEMU after the handler restart');
  assert.is(launcher.serialLog().split(markers.booted).length - 1, 1, 'the guest booted once');

  // Delete: the finalizer holds the VMI while the handler shuts the guest down over ACPI.
  await cluster.client.delete(Resources.virtualMachineInstances, 'default', 'vma');
  await waitFor('VMI Succeeded', async () => (await getVmi('vma')).status?.phase === 'Succeeded', 60_000);
  assert.ok(launcher.serialLog().includes('QVIRT-GUEST-POWEROFF'), 'the guest powered off by ACPI');
  const code = await Promise.race([launcher.exited, sleep(20_000).then(() => 'timeout')]);
  assert.is(code, 0, 'the launcher exits once its domain is deleted');
  const lifecycle = ['Created', 'Started', 'ShuttingDown', 'Stopped'];
  const events = await eventsWhen(`events ${lifecycle.join(', ')}`, (evs) => lifecycle.every((r) => evs.some((e) => e.reason === r)));
  const reasons = events.map((e) => e.reason);
  for (const r of lifecycle) assert.ok(reasons.includes(r), `event ${r} (got ${reasons.join(',')})`);
  await cluster.client.patch(Resources.virtualMachineInstances, 'default', 'vma', { metadata: { finalizers: null } });
});

test('kill -9 of QEMU → Failed; a launcher that stops answering (SIGSTOP) → Failed', async () => {
  handler ??= newHandler(cluster.client);
  const [b, c] = await Promise.all([
    createVmiWithLauncher(cluster.client, podsDir, 'vmb', work.path),
    createVmiWithLauncher(cluster.client, podsDir, 'vmc', work.path),
  ]);
  launchers.push(b.launcher, c.launcher);
  await waitFor('both Running', async () => (await getVmi('vmb')).status?.phase === 'Running' && (await getVmi('vmc')).status?.phase === 'Running', 90_000);
  const qemu = await waitFor('QEMU pid', () => b.launcher.qemuPid());
  process.kill(qemu, 'SIGKILL');
  await waitFor('vmc QEMU pid', () => c.launcher.qemuPid());
  process.kill(c.launcher.child.pid!, 'SIGSTOP');
  await waitFor('vmb Failed', async () => (await getVmi('vmb')).status?.phase === 'Failed', 30_000);
  await waitFor('vmc Failed (launcher unresponsive)', async () => (await getVmi('vmc')).status?.phase === 'Failed', 30_000);
  process.kill(c.launcher.child.pid!, 'SIGCONT');
});

test('delete of a guest that ignores the power button: killed after the grace period → Failed, Deleted event', async () => {
  handler ??= newHandler(cluster.client);
  const { launcher } = await createVmiWithLauncher(cluster.client, podsDir, 'vmh', work.path, { mutate: (v) => { v.spec.terminationGracePeriodSeconds = 3; } });
  launchers.push(launcher);
  const running = await waitFor('vmh Running', async () => { const v = await getVmi('vmh'); return v.status?.phase === 'Running' ? v : undefined; }, 90_000);
  // A paused guest cannot answer ACPI or its agent: only the kill after the grace period ends it.
  const paused = await handler.launcherOf('default', 'vmh')!.client.pauseVirtualMachine(running);
  assert.ok(paused.success, paused.message);
  await waitFor('vmh paused', () => handler!.launcherOf('default', 'vmh')?.domain?.Status.Status === 'Paused');
  const t0 = Date.now();
  await cluster.client.delete(Resources.virtualMachineInstances, 'default', 'vmh');
  await waitFor('vmh Failed', async () => {
    const v = await getVmi('vmh');
    if (v.status?.phase === 'Failed') return true;
    // What the timeout reports: where the VMI and its domain stood.
    const d = handler!.launcherOf('default', 'vmh')?.domain;
    throw new Error(`phase ${v.status?.phase}, domain ${d ? `${d.Status.Status}/${d.Status.Reason}` : 'none'}, conditions ${JSON.stringify(v.status?.conditions?.map((c) => `${c.type}=${c.status}`))}`);
  }, 60_000);
  assert.ok(Date.now() - t0 >= 3000, 'not before the grace period');
  assert.not.ok(launcher.serialLog().includes('QVIRT-GUEST-POWEROFF'), 'the guest never powered off itself');
  const vmhEvents = (evs: RecordedEvent[]) => evs.filter((e) => e.involvedObject.name === 'vmh').map((e) => e.reason);
  const events = await eventsWhen('vmh events ShuttingDown and Deleted', (evs) => vmhEvents(evs).includes('ShuttingDown') && vmhEvents(evs).includes('Deleted'));
  const mine = vmhEvents(events);
  assert.ok(mine.includes('ShuttingDown') && mine.includes('Deleted'), mine.join(','));
  await cluster.client.patch(Resources.virtualMachineInstances, 'default', 'vmh', { metadata: { finalizers: null } });
});

test('a handler restarted after a Running VMI\'s launcher and pod directories vanished: Failed, not Running forever', async () => {
  handler ??= newHandler(cluster.client);
  const { launcher } = await createVmiWithLauncher(cluster.client, podsDir, 'vmg', work.path);
  launchers.push(launcher);
  await waitFor('vmg Running', async () => (await getVmi('vmg')).status?.phase === 'Running', 90_000);
  await handler.stop();
  const qemu = launcher.qemuPid();
  launcher.child.kill('SIGKILL');
  await within(launcher.exited, 10_000, 'the SIGKILLed launcher of vmg to exit');
  if (qemu) process.kill(qemu, 'SIGKILL');
  // As kubelet does for a pod that is gone.
  rmSync(join(podsDir, launcher.podUid), { recursive: true, force: true });
  handler = newHandler(cluster.client);
  await handler.start();
  await waitFor('vmg Failed', async () => (await getVmi('vmg')).status?.phase === 'Failed', 30_000);
});

test('Synchronized=False with the error when the sync fails (node side and launcher side), SyncFailed events', async () => {
  handler ??= newHandler(cluster.client);
  const [d, e] = await Promise.all([
    // The handler cannot make the container disk available: the image is not in the store.
    createVmiWithLauncher(cluster.client, podsDir, 'vmd', work.path, { mutate: (v) => { v.spec.domain.firmware!.kernelBoot!.container!.image = 'qvirt/no-such-image'; } }),
    // The launcher refuses the spec: a video model QEMU has no device for.
    createVmiWithLauncher(cluster.client, podsDir, 'vme', work.path, { mutate: (v) => { v.spec.domain.devices.video = { type: 'bogus' }; } }),
  ]);
  launchers.push(d.launcher, e.launcher);
  const failed = async (name: string) => { const v = await getVmi(name); const c = cond(v, 'Synchronized'); return c?.status === 'False' ? { v, c } : undefined; };
  const vmd = await waitFor('vmd Synchronized=False', () => failed('vmd'), 60_000);
  assert.is(vmd.c.reason, 'Synchronizing with the Domain failed.');
  assert.match(vmd.c.message ?? '', 'qvirt/no-such-image');
  assert.is(vmd.v.status?.phase, 'Scheduled', 'nothing started');
  const vme = await waitFor('vme Synchronized=False', () => failed('vme'), 60_000);
  assert.match(vme.c.message ?? '', 'video');
  assert.is(vme.v.status?.phase, 'Scheduled');
  const events = await eventsWhen('SyncFailed events of vmd and vme', (evs) => ['vmd', 'vme'].every((n) => evs.some((x) => x.reason === 'SyncFailed' && x.involvedObject.name === n)));
  for (const name of ['vmd', 'vme']) {
    const ev = events.find((x) => x.reason === 'SyncFailed' && x.involvedObject.name === name);
    assert.ok(ev, `SyncFailed event for ${name}`);
    assert.is(ev.type, 'Warning');
  }
  // Each failed sync is retried with a growing backoff (5 ms doubling: at most ~11 retries of a key
  // in its first 4 s). A launcher-side failure used to reset its own backoff each time the start was
  // sent again, and retried every launcher round trip (~60 times in 2.5 s).
  const retries = () => workQueueMetrics().retries.get({ name: 'virt-handler-vm' });
  const before = retries();
  await sleep(4000);
  assert.ok(retries() - before <= 25, `${retries() - before} retries of vmd and vme in 4 s`);
  for (const name of ['vmd', 'vme']) {
    await cluster.client.delete(Resources.virtualMachineInstances, 'default', name);
    await cluster.client.patch(Resources.virtualMachineInstances, 'default', name, { metadata: { finalizers: null } });
  }
});

test('a non-shared hostDisk: LiveMigratable=False with KubeVirt\'s reason', async () => {
  handler ??= newHandler(cluster.client);
  const { launcher } = await createVmiWithLauncher(cluster.client, podsDir, 'vmf', work.path, {
    mutate: (v) => {
      v.spec.volumes = [...(v.spec.volumes ?? []), { name: 'hd', hostDisk: { path: join(work.path, 'hd', 'disk.img'), type: 'DiskOrCreate', capacity: '16Mi' } }];
      v.spec.domain.devices.disks = [...(v.spec.domain.devices.disks ?? []), { name: 'hd', disk: { bus: 'virtio' } }];
    },
    // The disk's directory on the node, and what kubelet's hostPath mount of it gives the launcher.
    beforeLaunch: (ed) => { mkdirSync(join(work.path, 'hd')); mkdirSync(join(ed('private'), 'vmi-disks', 'hd'), { recursive: true }); },
  });
  launchers.push(launcher);
  const vmi = await waitFor('vmf Running', async () => { const v = await getVmi('vmf'); return v.status?.phase === 'Running' ? v : undefined; }, 90_000);
  const lm = cond(vmi, 'LiveMigratable');
  assert.is(lm?.status, 'False');
  assert.is(lm?.reason, 'DisksNotLiveMigratable');
  assert.is(lm?.message, 'cannot migrate VMI with non-shared HostDisk');
});

test('a launcher that died before it created its command socket: Failed after the launcher init timeout, not Scheduled forever', async () => {
  // Its own handler, with a short init timeout (KubeVirt waits 3 minutes) — long enough that the
  // look at 1 s comes back before it ends on a loaded host (3 s left that read 2 s).
  const initTimeoutMs = 10_000;
  await handler?.stop();
  handler = newHandler(cluster.client, { launcherInitTimeoutMs: initTimeoutMs });
  await handler.start();
  // The VMI and its launcher pod as the controller and kubelet leave them, but no launcher runs (it
  // was SIGKILLed while starting): the pod's directories exist, the command socket never appears.
  const podUid = randomUUID();
  for (const v of Object.values(LauncherVolume)) mkdirSync(emptyDir(podsDir, podUid, v), { recursive: true });
  // VMIs have no status subresource: the status is created with it.
  const created = await cluster.client.create(Resources.virtualMachineInstances, vmiManifest('vmk', podUid));
  assert.is(created.status?.phase, 'Scheduled');
  const t0 = Date.now();
  await sleep(1000);
  assert.is((await getVmi('vmk')).status?.phase, 'Scheduled', 'still waiting for the launcher within the timeout');
  await waitFor('vmk Failed', async () => (await getVmi('vmk')).status?.phase === 'Failed', initTimeoutMs + 30_000);
  assert.ok(Date.now() - t0 >= initTimeoutMs, 'not before the init timeout');
  assert.not.ok(existsSync(launcherPathsForPod(podsDir, podUid, created.metadata!.uid!).socket));
  await cluster.client.delete(Resources.virtualMachineInstances, 'default', 'vmk');
  await cluster.client.patch(Resources.virtualMachineInstances, 'default', 'vmk', { metadata: { finalizers: null } });
});

test.run();
