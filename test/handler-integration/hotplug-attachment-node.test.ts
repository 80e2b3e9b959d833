// A real node's volume hotplug end to end, as root: the handler against the embedded API server,
// a real launcher and QEMU booting the test guest, and three claims hotplugged the way a cluster
// attaches them — a CSI claim the kubelet mounted for the attachment pod (here: a real bind mount
// at <pods>/<attachment pod>/volumes/kubernetes.io~csi/<pv>/mount, empty, so the handler creates
// its disk.img), a local PV the kubelet bind-mounted at .../kubernetes.io~local-volume/<pv>, and a
// hostPath PV's directory (no pod directory) with a disk.img in it. The VMI's volumeStatus says
// what the VMI controller would (AttachedToNode, attachPodUID); the handler bind-mounts each
// disk.img onto <launcher pod>/volumes/kubernetes.io~empty-dir/hotplug-disks/<volume>.img with a
// record first, the guest sees both disks; removing one unmounts it once the guest let it go; a
// handler restarted after the VMI went away unmounts the rest and drops the record.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { importTestGuest, MarkerLog, markers } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { ImageStoreContainerDisks } from '../../src/local/image-store-container-disks.ts';
import { tempDir } from '../lib/tmp.ts';
import { Resources } from '../../src/kube/resource.ts';
import { isConflict } from '../../src/kube/client.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { HandlerController } from '../../handler/controller.ts';
import { emptyDir, LauncherVolume } from '../../handler/launcher/sockets.ts';
import { HOTPLUG_DISKS_VOLUME } from '../../handler/hotplug/volumes.ts';
import { HOTPLUG_DISK_MOUNTS_DIR } from '../../handler/hotplug/disk-mounter.ts';
import { mountCount } from '../../handler/container-disk/proc.ts';
import type { VirtualMachineInstance, VolumeStatus } from '../../src/api/types.ts';
import { NODE, createVmiWithLauncher, log, startCluster, waitFor, type TestLauncher } from './lib.ts';

const work = tempDir('qhpa');
const podsDir = join(work.path, 'pods');
const stateDir = join(work.path, 'state');
const store = new ImageStore(join(work.path, 'store'));
const ATTACH_POD_UID = randomUUID();
const csiBacking = join(work.path, 'csi-backing');
const csiMount = join(podsDir, ATTACH_POD_UID, 'volumes', 'kubernetes.io~csi', 'pv-csi', 'mount');
const hostDir = join(work.path, 'host-pv');
const localDir = join(work.path, 'local-pv');
const localMount = join(podsDir, ATTACH_POD_UID, 'volumes', 'kubernetes.io~local-volume', 'pv-local');
const MiB = 1024 * 1024;
let cluster: Awaited<ReturnType<typeof startCluster>>;
let handler: HandlerController | undefined;
let launcher: TestLauncher | undefined;
const mountinfo = () => readFileSync('/proc/self/mountinfo', 'utf8');
const getVmi = () => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'hpvm');
const newHandler = () => new HandlerController({ client: cluster.client, nodeName: NODE, podsDir, stateDir, log, containerDiskSource: new ImageStoreContainerDisks(store), recorder: new EventRecorder(cluster.client, 'virt-handler', { host: NODE, log }) });

async function claimWithPV(name: string, pv: Record<string, unknown>): Promise<void> {
  await cluster.client.create(Resources.persistentVolumes, { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `pv-${name}` }, spec: { capacity: { storage: '64Mi' }, accessModes: ['ReadWriteOnce'], ...pv } });
  const c = await cluster.client.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `data-${name}`, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } }, volumeName: `pv-${name}` } });
  await cluster.client.updateStatus(Resources.persistentVolumeClaims, { ...c, status: { phase: 'Bound', capacity: { storage: '64Mi' }, accessModes: ['ReadWriteOnce'] } });
}

/** addvolume as the VM controller applies it, with the volumeStatus the VMI controller writes once the attachment pod runs. */
async function setHotplug(volumes: Array<{ name: string; serial: string }>): Promise<void> {
  // The handler writes the status meanwhile: retry on a conflict, as a controller would.
  await waitFor('the VMI updated', () => writeHotplug(volumes).then(() => true, (err: unknown) => { if (isConflict(err)) return false; throw err; }), 10_000);
}

async function writeHotplug(volumes: Array<{ name: string; serial: string }>): Promise<void> {
  const vmi = await getVmi();
  const status: VolumeStatus[] = (vmi.status?.volumeStatus ?? []).filter((s) => !s.hotplugVolume || volumes.some((v) => v.name === s.name));
  for (const v of volumes) {
    if (status.some((s) => s.name === v.name)) continue;
    status.push({ name: v.name, target: '', phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: `Created hotplug attachment pod hp-volume-abcde, for volume ${v.name}`, hotplugVolume: { attachPodName: 'hp-volume-abcde', attachPodUID: ATTACH_POD_UID } });
  }
  await cluster.client.update(Resources.virtualMachineInstances, {
    ...vmi,
    spec: {
      ...vmi.spec,
      domain: { ...vmi.spec.domain, devices: { ...vmi.spec.domain.devices, disks: volumes.map((v) => ({ name: v.name, serial: v.serial, disk: { bus: 'scsi' as const } })) } },
      volumes: volumes.map((v) => ({ name: v.name, persistentVolumeClaim: { claimName: `data-${v.name}`, hotpluggable: true } })),
    },
    status: { ...vmi.status, volumeStatus: status },
  });
}

test.before(async () => {
  assert.is(process.getuid?.(), 0, 'this test needs root (mount)');
  await importTestGuest(store);
  // What the kubelet does for the attachment pod's CSI volume: the filesystem mounted at .../<pv>/mount.
  mkdirSync(csiBacking, { recursive: true });
  mkdirSync(csiMount, { recursive: true });
  execFileSync('mount', ['--bind', csiBacking, csiMount]);
  mkdirSync(localDir, { recursive: true });
  mkdirSync(localMount, { recursive: true });
  execFileSync('mount', ['--bind', localDir, localMount]);
  // A hostPath PV's directory holding an image with something in it.
  mkdirSync(hostDir, { recursive: true });
  const img = Buffer.alloc(32 * MiB);
  img.write('QVIRT-HOSTPATH-DATA', 0);
  writeFileSync(join(hostDir, 'disk.img'), img);
  cluster = await startCluster();
});

test.after(async () => {
  await handler?.stop().catch(() => undefined);
  await launcher?.stop();
  const mounted = [...new Set(mountinfo().split('\n').map((l) => l.split(' ')[4] ?? '').filter((p) => p.startsWith(work.path)))];
  for (const t of mounted.sort().reverse()) {
    for (let n = mountCount(mountinfo(), t); n > 0; n--) execFileSync('umount', [t]);
  }
  await cluster?.close();
  work.cleanup();
});

test('attachment pod volumes (CSI, local, hostPath PV) bind-mounted into the launcher, plugged; removal unmounts; a restarted handler cleans up', async () => {
  await claimWithPV('csi', { csi: { driver: 'test.csi.example.com', volumeHandle: 'vol-1' } });
  await claimWithPV('host', { hostPath: { path: hostDir } });
  await claimWithPV('local', { local: { path: localDir } });
  handler = newHandler();
  await handler.start();
  const created = await createVmiWithLauncher(cluster.client, podsDir, 'hpvm', work.path, {
    // The compute container's /var/run/kubevirt/hotplug-disks is the pod's hotplug-disks emptyDir.
    beforeLaunch: (ed) => { mkdirSync(ed(HOTPLUG_DISKS_VOLUME), { recursive: true }); symlinkSync(ed(HOTPLUG_DISKS_VOLUME), join(ed(LauncherVolume.Public), 'hotplug-disks')); },
  });
  launcher = created.launcher;
  const uid = created.vmi.metadata!.uid!;
  const hotplugDir = emptyDir(podsDir, launcher.podUid, HOTPLUG_DISKS_VOLUME);
  const console = new MarkerLog();
  let offset = 0;
  const poll = setInterval(() => { const s = launcher!.serialLog(); if (s.length > offset) { console.push(s.slice(offset)); offset = s.length; } }, 50);
  try {
    await waitFor('VMI Running', async () => (await getVmi()).status?.phase === 'Running', 120_000);
    await console.waitFor(markers.ready, { timeoutMs: 120_000 });

    const since = console.seen.length;
    await setHotplug([{ name: 'csi', serial: 'HPCSI' }, { name: 'host', serial: 'HPHOST' }, { name: 'local', serial: 'HPLOCAL' }]);
    const csiTarget = join(hotplugDir, 'csi.img');
    const hostTarget = join(hotplugDir, 'host.img');
    const localTarget = join(hotplugDir, 'local.img');
    await waitFor('the three disks in the guest', async () => console.seen.slice(since).filter((m) => m.name === markers.diskAdded).length >= 3, 60_000);
    assert.is(mountCount(mountinfo(), csiTarget), 1, 'the CSI volume\'s disk.img is bind-mounted');
    assert.is(mountCount(mountinfo(), hostTarget), 1, 'the hostPath volume\'s disk.img is bind-mounted');
    assert.is(mountCount(mountinfo(), localTarget), 1, 'the local volume\'s disk.img is bind-mounted');
    assert.is(statSync(localTarget).ino, statSync(join(localDir, 'disk.img')).ino, 'through the kubelet\'s mount of the local volume');
    const csiImage = join(csiBacking, 'disk.img');
    assert.ok(existsSync(csiImage), 'an empty claim got a disk.img');
    assert.is(statSync(csiImage).size, 64 * MiB, 'sized from the claim');
    assert.is(statSync(csiTarget).ino, statSync(csiImage).ino, 'the target is the claim\'s image');
    assert.is(readFileSync(hostTarget).subarray(0, 19).toString(), 'QVIRT-HOSTPATH-DATA');
    const addedCsi = console.seen.slice(since).find((m) => m.name === markers.diskAdded && m.fields.serial === 'HPCSI');
    assert.is(addedCsi?.fields.size, String(64 * 2048));
    const record = join(stateDir, HOTPLUG_DISK_MOUNTS_DIR, `${uid}.json`);
    assert.equal((JSON.parse(readFileSync(record, 'utf8')) as { targets: string[] }).targets.sort(), [csiTarget, hostTarget, localTarget]);
    const ready: VirtualMachineInstance = await waitFor('the volumes Ready', async () => { const v = await getVmi(); return v.status?.volumeStatus?.filter((s) => s.hotplugVolume && s.phase === 'Ready').length === 3 ? v : undefined; });
    assert.equal(ready.status?.volumeStatus?.filter((s) => s.hotplugVolume).map((s) => [s.name, s.phase, s.hotplugVolume?.attachPodUID]), [['csi', 'Ready', ATTACH_POD_UID], ['host', 'Ready', ATTACH_POD_UID], ['local', 'Ready', ATTACH_POD_UID]]);

    // removevolume csi and local: the guest lets them go, the mounts go, the record keeps host.
    const since2 = console.seen.length;
    await setHotplug([{ name: 'host', serial: 'HPHOST' }]);
    await console.waitFor(markers.diskRemoved, { fields: { serial: 'HPCSI' }, since: since2, timeoutMs: 60_000 });
    await console.waitFor(markers.diskRemoved, { fields: { serial: 'HPLOCAL' }, since: since2, timeoutMs: 60_000 });
    await waitFor('csi and local unmounted', () => mountCount(mountinfo(), csiTarget) + mountCount(mountinfo(), localTarget) === 0 && !existsSync(csiTarget) && !existsSync(localTarget), 30_000);
    assert.is(mountCount(mountinfo(), hostTarget), 1);
    await waitFor('the record keeps host only', () => JSON.stringify((JSON.parse(readFileSync(record, 'utf8')) as { targets: string[] }).targets) === JSON.stringify([hostTarget]), 10_000);
    assert.ok(existsSync(csiImage), 'the claim\'s data stays');

    // The handler stops; the VM goes while it is down (launcher gone, VMI deleted); a new handler cleans up.
    await handler.stop();
    handler = undefined;
    await launcher.stop();
    await cluster.client.patch(Resources.virtualMachineInstances, 'default', 'hpvm', { metadata: { finalizers: null } });
    await cluster.client.delete(Resources.virtualMachineInstances, 'default', 'hpvm');
    assert.is(mountCount(mountinfo(), hostTarget), 1, 'still mounted while no handler runs');
    handler = newHandler();
    await handler.start();
    await waitFor('host unmounted by the restarted handler', () => mountCount(mountinfo(), hostTarget) === 0, 30_000);
    await waitFor('record dropped', () => !existsSync(record) && !handler!.live.attached.has(uid), 10_000);
    assert.is(readFileSync(join(hostDir, 'disk.img')).subarray(0, 19).toString(), 'QVIRT-HOSTPATH-DATA', 'the hostPath volume\'s data is untouched');
  } finally {
    clearInterval(poll);
  }
});

test.run();
