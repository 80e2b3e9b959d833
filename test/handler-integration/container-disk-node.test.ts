// A real node's containerDisk path end to end: the handler WITHOUT an image store, the kernel-boot
// image served by qvirt's container-disk helper chrooted into a tiny image root (as its container
// would run it), a real launcher and QEMU booting the test guest from the bind-mounted artifacts;
// deleting the VMI unmounts them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importTestGuest, markers } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { tempDir } from '../lib/tmp.ts';
import { Resources } from '../../src/kube/resource.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { HandlerController } from '../../handler/controller.ts';
import { emptyDir, LauncherVolume } from '../../handler/launcher/sockets.ts';
import { mountCount } from '../../handler/container-disk/proc.ts';
import { ContainerDiskMounter } from '../../handler/container-disk/mounter.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { NODE, createVmiWithLauncher, log, startCluster, waitFor, type TestLauncher } from './lib.ts';
import { settlesWithin } from '../lib/within.ts';

const work = tempDir('qcdn');
const podsDir = join(work.path, 'pods');
const stateDir = join(work.path, 'state');
const root = join(work.path, 'img');
const store = new ImageStore(join(work.path, 'store'));
let cluster: Awaited<ReturnType<typeof startCluster>>;
let handler: HandlerController | undefined;
let launcher: TestLauncher | undefined;
let helper: ChildProcess | undefined;
const binds: string[] = [];
const mountinfo = () => readFileSync('/proc/self/mountinfo', 'utf8');
const getVmi = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name);

test.before(async () => {
  assert.is(process.getuid?.(), 0, 'this test needs root (mount)');
  try { execFileSync('cc', ['--version'], { stdio: 'ignore' }); } catch { throw new Error('cc is required to build deploy/images/container-disk.c for this test'); }
  await importTestGuest(store);
  // The kernel-boot "image": the test guest's kernel and initrd plus the static helper.
  mkdirSync(join(root, 'boot'), { recursive: true });
  copyFileSync(await store.fileIn('qvirt/test-guest', '/boot/vmlinuz'), join(root, 'boot', 'vmlinuz'));
  copyFileSync(await store.fileIn('qvirt/test-guest', '/boot/initrd.img'), join(root, 'boot', 'initrd.img'));
  execFileSync('cc', ['-static', '-O2', '-o', join(root, 'container-disk'), 'deploy/images/container-disk.c']);
  mkdirSync(podsDir, { recursive: true });
  cluster = await startCluster();
});

test.after(async () => {
  await handler?.stop().catch(() => undefined);
  await launcher?.stop();
  if (helper && helper.exitCode === null && helper.signalCode === null) {
    const h = helper;
    const exited = new Promise<void>((r) => h.once('exit', () => r()));
    h.kill('SIGTERM');
    if (!(await settlesWithin(exited, 10_000))) {
      h.kill('SIGKILL');
      await settlesWithin(exited, 10_000);
    }
  }
  const info = mountinfo();
  for (const line of info.split('\n')) {
    const mp = line.split(' ')[4];
    if (mp && mp.startsWith(work.path)) binds.push(mp);
  }
  for (const t of [...new Set(binds)].reverse()) {
    for (let n = mountCount(mountinfo(), t); n > 0; n--) execFileSync('umount', [t]);
  }
  await cluster?.close();
  work.cleanup();
});

test('no image store: kernel-boot artifacts bind-mounted from the helper, guest boots, delete unmounts', async () => {
  handler = new HandlerController({ client: cluster.client, nodeName: NODE, podsDir, stateDir, log, recorder: new EventRecorder(cluster.client, 'virt-handler', { host: NODE, log }) });
  assert.instance(handler.containerDisks, ContainerDiskMounter, 'the real-node mounter is used without an image store');
  await handler.start();
  const created = await createVmiWithLauncher(cluster.client, podsDir, 'cdvm', work.path);
  launcher = created.launcher;
  const uid = created.vmi.metadata!.uid!;
  // The helper's container: the pod's container-disks emptyDir at /var/run/kubevirt/container-disks/<uid>.
  const cdDir = emptyDir(podsDir, launcher.podUid, LauncherVolume.ContainerDisks);
  const inRoot = join(root, 'var/run/kubevirt/container-disks', uid);
  mkdirSync(inRoot, { recursive: true });
  execFileSync('mount', ['--bind', cdDir, inRoot]);
  binds.push(inRoot);
  helper = spawn('chroot', [root, '/container-disk', '--copy-path', `/var/run/kubevirt/container-disks/${uid}/kernel-boot`], { stdio: 'ignore' });

  await waitFor('VMI Running', async () => (await getVmi('cdvm')).status?.phase === 'Running', 120_000);
  const kernel = join(cdDir, 'kernel-boot', 'vmlinuz');
  const initrd = join(cdDir, 'kernel-boot', 'initrd.img');
  assert.is(mountCount(mountinfo(), kernel), 1, 'kernel bind-mounted');
  assert.is(mountCount(mountinfo(), initrd), 1, 'initrd bind-mounted');
  await waitFor('guest booted on the serial console', () => launcher!.serialLog().includes(markers.booted), 120_000);

  await cluster.client.delete(Resources.virtualMachineInstances, 'default', 'cdvm');
  await waitFor('VMI Succeeded', async () => (await getVmi('cdvm')).status?.phase === 'Succeeded', 90_000);
  await waitFor('container disks unmounted', () => mountCount(mountinfo(), kernel) === 0 && mountCount(mountinfo(), initrd) === 0, 30_000);
  // The record goes after the unmounts, in the same cleanup: wait for it rather than assume the order.
  const record = join(stateDir, 'container-disk-mounts', `${uid}.json`);
  await waitFor('container-disk record dropped', () => !handler!.containerDisks!.has(uid) && !existsSync(record), 30_000);
  assert.not.ok(handler.containerDisks!.has(uid), 'the record is dropped');
  assert.not.ok(existsSync(record));
  await cluster.client.patch(Resources.virtualMachineInstances, 'default', 'cdvm', { metadata: { finalizers: null } });
});

test.run();
