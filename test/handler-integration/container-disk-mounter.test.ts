// The node agent's container-disk mounter for real, as root, without a container runtime: qvirt's
// static container-disk helper runs chrooted into a tiny image root whose
// /var/run/kubevirt/container-disks/<uid> is a bind mount of the launcher pod's emptyDir (as the
// kubelet would lay it out), the mounter finds its process through the socket and bind-mounts the
// image's disk read-only where the launcher looks.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile, open } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { ContainerDiskMounter, ContainerDiskMountError, WaitingForContainerDiskError } from '../../handler/container-disk/mounter.ts';
import { mountCount } from '../../handler/container-disk/proc.ts';
import { settlesWithin, within } from '../lib/within.ts';

const log = componentLogger('test', { level: 'silent' });
const UID = 'c0ffee00-0000-4000-8000-00000000cd01';
const mountinfo = () => readFileSync('/proc/self/mountinfo', 'utf8');

let tmp = '';
let root = '';
let emptyDir = '';
let stateDir = '';
const helpers: ChildProcess[] = [];
/** Each helper's exit, listened for from its spawn on (an exit before a wait is not missed). */
const helperExits = new Map<ChildProcess, Promise<void>>();
const bindMounts: string[] = [];

function vmi(volumes: VirtualMachineInstance['spec']['volumes'], kernelPath?: string): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: 'cd', namespace: 'default', uid: UID },
    spec: { domain: { devices: {}, ...(kernelPath ? { firmware: { kernelBoot: { container: { image: 'k', kernelPath } } } } : {}) }, volumes },
  } as unknown as VirtualMachineInstance;
}

async function startHelper(name: string): Promise<ChildProcess> {
  const child = spawn('chroot', [root, '/container-disk', '--copy-path', `/var/run/kubevirt/container-disks/${UID}/${name}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  helpers.push(child);
  helperExits.set(child, new Promise<void>((r) => child.once('exit', () => r())));
  const sock = join(emptyDir, `${name}.sock`);
  for (let i = 0; i < 300 && !existsSync(sock); i++) {
    if (child.exitCode !== null) throw new Error(`container-disk helper exited ${child.exitCode}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(existsSync(sock), `the helper's socket ${sock} appeared (${stderr})`);
  return child;
}

test.before(async () => {
  assert.is(process.getuid?.(), 0, 'this test needs root (mount)');
  try { execFileSync('cc', ['--version'], { stdio: 'ignore' }); } catch { throw new Error('cc is required to build deploy/images/container-disk.c for this test'); }
  tmp = await mkdtemp(join(tmpdir(), 'qvirt-cdmount-'));
  root = join(tmp, 'root');
  emptyDir = join(tmp, 'pods', 'pod-uid-1', 'volumes', 'kubernetes.io~empty-dir', 'container-disks');
  stateDir = join(tmp, 'state');
  await mkdir(join(root, 'disk'), { recursive: true });
  await mkdir(join(root, 'boot'), { recursive: true });
  await mkdir(join(root, 'var', 'run', 'kubevirt', 'container-disks', UID), { recursive: true });
  await mkdir(emptyDir, { recursive: true });
  execFileSync('cc', ['-static', '-O2', '-o', join(root, 'container-disk'), 'deploy/images/container-disk.c']);
  execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', join(root, 'disk', 'disk.img'), '16M']);
  await writeFile(join(root, 'boot', 'vmlinuz'), 'not really a kernel\n');
  const inRoot = join(root, 'var', 'run', 'kubevirt', 'container-disks', UID);
  execFileSync('mount', ['--bind', emptyDir, inRoot]);
  bindMounts.push(inRoot);
});

test.after(async () => {
  for (const c of helpers) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      if (!(await settlesWithin(helperExits.get(c)!, 10_000))) {
        c.kill('SIGKILL');
        await settlesWithin(helperExits.get(c)!, 10_000);
      }
    }
  }
  const info = mountinfo();
  for (const t of [join(emptyDir, 'disk_0.img'), join(emptyDir, 'kernel-boot', 'vmlinuz'), ...bindMounts]) {
    for (let n = mountCount(info, t); n > 0; n--) execFileSync('umount', [t]);
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

test('no helper serving the socket yet: a waiting error naming the volume', async () => {
  const m = new ContainerDiskMounter({ stateDir, log });
  try {
    await m.mount(vmi([{ name: 'rootdisk', containerDisk: { image: 'x' } }]), emptyDir, log);
    assert.unreachable('mounted without a helper');
  } catch (err) {
    assert.instance(err, WaitingForContainerDiskError);
    assert.match((err as Error).message, 'spec.volumes[0].containerDisk');
  }
  assert.not.ok(m.has(UID), 'nothing recorded');
});

test('finds the helper by its socket and bind-mounts /disk/ read-only at disk_0.img; kernel-boot too; idempotent; a restarted mounter unmounts', async () => {
  const disk = await startHelper('disk_0');
  const kernel = await startHelper('kernel-boot');
  const m = new ContainerDiskMounter({ stateDir, log });
  assert.is(await m.findHelperPid(UID, 'disk_0'), disk.pid);
  assert.is(await m.findHelperPid(UID, 'kernel-boot'), kernel.pid);
  assert.is(await m.findHelperPid('some-other-uid', 'disk_0'), undefined);

  const cdVmi = vmi([{ name: 'rootdisk', containerDisk: { image: 'x' } }], '/boot/vmlinuz');
  const target = join(emptyDir, 'disk_0.img');
  const kTarget = join(emptyDir, 'kernel-boot', 'vmlinuz');
  const made = await m.mount(cdVmi, emptyDir, log);
  assert.equal(made, [target, kTarget]);
  assert.is(mountCount(mountinfo(), target), 1);
  assert.is(mountCount(mountinfo(), kTarget), 1);
  assert.ok((await readFile(target)).equals(await readFile(join(root, 'disk', 'disk.img'))), 'the mounted file is the image');
  assert.is(await readFile(kTarget, 'utf8'), 'not really a kernel\n');
  const info = JSON.parse(execFileSync('qemu-img', ['info', '--output=json', target], { encoding: 'utf8' })) as { format: string };
  assert.is(info.format, 'qcow2');
  // Read-only: writing through the mount fails.
  try {
    await (await open(target, 'r+')).close();
    assert.unreachable('opened read-write');
  } catch (err) {
    assert.is((err as NodeJS.ErrnoException).code, 'EROFS');
  }

  // Idempotent: a second pass mounts nothing more.
  await m.mount(cdVmi, emptyDir, log);
  assert.is(mountCount(mountinfo(), target), 1);

  // A restarted handler finds the record and unmounts.
  const again = new ContainerDiskMounter({ stateDir, log });
  const records = await again.load();
  assert.equal(records.map((r) => r.uid), [UID]);
  assert.ok(again.has(UID));
  await again.unmount(UID, log);
  assert.is(mountCount(mountinfo(), target), 0);
  assert.is(mountCount(mountinfo(), kTarget), 0);
  assert.not.ok(existsSync(target), 'the target file is removed');
  assert.not.ok(again.has(UID));
  assert.equal(await new ContainerDiskMounter({ stateDir, log }).load(), [], 'the record is gone');
  // Nothing recorded: unmount is a no-op.
  await again.unmount(UID, log);
});

test('containerDisk.path missing in the image: a clear error naming the field, nothing mounted', async () => {
  const m = new ContainerDiskMounter({ stateDir, log });
  try {
    await m.mount(vmi([{ name: 'rootdisk', containerDisk: { image: 'x', path: '/nope/disk.img' } }]), emptyDir, log);
    assert.unreachable('mounted a missing path');
  } catch (err) {
    assert.instance(err, ContainerDiskMountError);
    assert.match((err as Error).message, 'spec.volumes[0].containerDisk: /nope/disk.img not found');
  }
  assert.is(mountCount(mountinfo(), join(emptyDir, 'disk_0.img')), 0);
});

test('containerDisk.path naming the file directly is mounted', async () => {
  const m = new ContainerDiskMounter({ stateDir, log });
  const target = join(emptyDir, 'disk_0.img');
  await m.mount(vmi([{ name: 'rootdisk', containerDisk: { image: 'x', path: '/disk/disk.img' } }]), emptyDir, log);
  assert.is(mountCount(mountinfo(), target), 1);
  await m.unmount(UID, log);
  assert.is(mountCount(mountinfo(), target), 0);
});

test('the helper ends when its socket is removed; every mount of the test is gone after unmount', async () => {
  for (const c of helpers) {
    c.kill('SIGTERM');
    await within(helperExits.get(c)!, 10_000, `the container-disk helper ${c.pid} to exit on SIGTERM`);
  }
  assert.not.ok(existsSync(join(emptyDir, 'disk_0.sock')), 'the helper removed its socket on SIGTERM');
  assert.not.ok(mountinfo().includes(join(emptyDir, 'disk_0.img')));
});

test.run();
