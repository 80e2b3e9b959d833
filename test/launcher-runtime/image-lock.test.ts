// launcher/supervise/image-lock: QEMU's image locking is on in the converter's -blockdev chain (a
// second QEMU opening a raw image the first one has attached is refused), and QEMU's refusal —
// `Failed to get "write" lock`, a -device JSON and a path in the launcher's mount namespace — is
// said in the VMI's words: the volume, what it names (claim, hostDisk), another VM holding it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blockChain } from '../../launcher/convert/disks.ts';
import { explainImageLock, lockableDisks, volumeSource, type LockableDisk } from '../../launcher/supervise/image-lock.ts';
import type { PlanDevice } from '../../launcher/convert/plan.ts';
import type { Volume } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { within } from '../lib/within.ts';

const IMG = '/run/qvirt/r/e2f6b69cc0/var/run/kubevirt-private/vmi-disks/hd/disk.img';
/** What QEMU 7.2 printed in the local mode for a second VMI naming the same claim. */
const QEMU_WRITE_LOCK = `2026-11-26T15:15:42.700122Z qemu-system-x86_64: -device {"driver":"virtio-blk-pci-non-transitional","id":"ua-hd","drive":"libvirt-1-storage","write-cache":"on","werror":"stop","rerror":"stop","bus":"pci.4","addr":"0x0"}: Failed to get "write" lock\nIs another process using the image [${IMG}]?`;

const argv = [
  'qemu-system-x86_64',
  '-blockdev', JSON.stringify({ driver: 'file', filename: '/var/run/kubevirt-ephemeral-disks/cloud-init-data/default/a/noCloud.iso', 'node-name': 'libvirt-2-storage', 'read-only': true }),
  '-blockdev', JSON.stringify({ driver: 'file', filename: IMG, 'node-name': 'libvirt-1-storage', 'read-only': false }),
  '-blockdev', JSON.stringify({ driver: 'file', filename: '/images/base.qcow2', 'node-name': 'libvirt-4-storage' }),
  '-blockdev', JSON.stringify({ 'node-name': 'libvirt-4-format', driver: 'qcow2', file: 'libvirt-4-storage' }),
  '-blockdev', JSON.stringify({ driver: 'file', filename: '/var/run/kubevirt-ephemeral-disks/disk-data/root/disk.qcow2', 'node-name': 'libvirt-3-storage' }),
  '-blockdev', JSON.stringify({ 'node-name': 'libvirt-3-format', driver: 'qcow2', file: 'libvirt-3-storage', backing: 'libvirt-4-format' }),
];
const devices: PlanDevice[] = [
  { alias: 'cloudinit', kind: 'disk', qemuId: 'ua-cloudinit', driver: 'virtio-blk-pci-non-transitional', nodeNames: ['libvirt-2-storage'] },
  { alias: 'hd', kind: 'disk', qemuId: 'ua-hd', driver: 'virtio-blk-pci-non-transitional', nodeNames: ['libvirt-1-storage'] },
  { alias: 'root', kind: 'disk', qemuId: 'ua-root', driver: 'virtio-blk-pci-non-transitional', nodeNames: ['libvirt-3-format', 'libvirt-3-storage', 'libvirt-4-format', 'libvirt-4-storage'] },
  { alias: 'default', kind: 'interface', qemuId: 'ua-default', driver: 'virtio-net-pci', netdevId: 'hostua-default' },
];
const volumes: Volume[] = [
  { name: 'cloudinit', cloudInitNoCloud: { userData: '#!/bin/sh\n' } },
  { name: 'hd', persistentVolumeClaim: { claimName: 'shared' } },
  { name: 'root', ephemeral: { persistentVolumeClaim: { claimName: 'golden' } } },
] as Volume[];

test('lockableDisks: each disk device with its chain\'s files and its volume\'s source; NICs left out', () => {
  assert.equal(lockableDisks(argv, devices, volumes), [
    { name: 'cloudinit', qemuId: 'ua-cloudinit', paths: ['/var/run/kubevirt-ephemeral-disks/cloud-init-data/default/a/noCloud.iso'], source: 'cloudInitNoCloud volume' },
    { name: 'hd', qemuId: 'ua-hd', paths: [IMG], source: 'PersistentVolumeClaim "shared"' },
    { name: 'root', qemuId: 'ua-root', paths: ['/var/run/kubevirt-ephemeral-disks/disk-data/root/disk.qcow2', '/images/base.qcow2'], source: 'ephemeral PersistentVolumeClaim "golden"' },
  ]);
});

const sources: Array<[string, Volume | undefined, string]> = [
  ['a claim', { name: 'v', persistentVolumeClaim: { claimName: 'c' } } as Volume, 'PersistentVolumeClaim "c"'],
  ['a DataVolume', { name: 'v', dataVolume: { name: 'dv' } } as Volume, 'DataVolume "dv"'],
  ['a hostDisk', { name: 'v', hostDisk: { path: '/data/d.img', type: 'Disk' } } as Volume, 'hostDisk /data/d.img'],
  ['a containerDisk', { name: 'v', containerDisk: { image: 'x' } } as Volume, 'containerDisk volume'],
  ['none', undefined, 'no volume of that name'],
];
for (const [name, v, want] of sources) test(`volumeSource: ${name}`, () => { assert.is(volumeSource(v), want); });

const disks = lockableDisks(argv, devices, volumes);
const explained: Array<[string, string, string | undefined]> = [
  ['QEMU\'s write lock on a claim\'s image, found by its path', QEMU_WRITE_LOCK,
    `volume "hd" (PersistentVolumeClaim "shared") is held by another VM: its image ${IMG} is locked by another QEMU process (QEMU: Failed to get "write" lock); a disk takes one writer at a time, so this VMI cannot start while the other VM runs`],
  ['a shared lock on a backing image, found by its path', 'qemu-system-x86_64: -blockdev {"node-name":"libvirt-4-format"}: Failed to get shared "write" lock\nIs another process using the image [/images/base.qcow2]?',
    'volume "root" (ephemeral PersistentVolumeClaim "golden") is held by another VM: its image /images/base.qcow2 is locked by another QEMU process (QEMU: Failed to get shared "write" lock); a disk takes one writer at a time, so this VMI cannot start while the other VM runs'],
  ['no path in the output: the -device id says which disk', 'qemu-system-x86_64: -device {"driver":"virtio-blk-pci","id":"ua-hd","drive":"libvirt-1-storage"}: Failed to lock byte 100',
    `volume "hd" (PersistentVolumeClaim "shared") is held by another VM: its image ${IMG} is locked by another QEMU process (QEMU: Failed to lock byte 100); a disk takes one writer at a time, so this VMI cannot start while the other VM runs`],
  ['an image no disk of the plan has', 'Failed to get "write" lock\nIs another process using the image [/elsewhere.img]?',
    'a disk is held by another VM: its image /elsewhere.img is locked by another QEMU process (QEMU: Failed to get "write" lock); a disk takes one writer at a time, so this VMI cannot start while the other VM runs'],
  ['another failure: not a lock', 'qemu-system-x86_64: -blockdev {"driver":"file"}: Could not open \'/x\': No such file or directory', undefined],
  ['no output', '', undefined],
];
for (const [name, out, want] of explained) test(`explainImageLock: ${name}`, () => { assert.is(explainImageLock(out, disks), want); });

/** A paused q35 QEMU with the converter's -blockdev chain of a raw image behind a virtio disk. */
function qemuWithDisk(image: string, diskName: string): { child: ChildProcess; done: Promise<{ code: number | null; stderr: string }> } {
  const chain = blockChain({ name: diskName, disk: { bus: 'virtio' } }, { path: image, format: 'raw' }, `spec.domain.devices.disks[0]`, 1);
  const args = ['-machine', 'q35', '-accel', 'tcg', '-S', '-nodefaults', '-display', 'none', '-m', '64',
    ...chain.nodes.flatMap((n) => ['-blockdev', JSON.stringify(n)]),
    '-device', JSON.stringify({ driver: 'virtio-blk-pci', id: `ua-${diskName}`, drive: chain.drive }),
    '-qmp', 'stdio'];
  const child = spawn('qemu-system-x86_64', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) => child.once('close', (code) => resolve({ code, stderr })));
  return { child, done };
}

test('real QEMU: the converter\'s chain locks the image; a second QEMU is refused and the refusal names the volume', async () => {
  const t = tempDir('qvk');
  const image = join(t.path, 'disk.img');
  writeFileSync(image, Buffer.alloc(1 << 20));
  const first = qemuWithDisk(image, 'hd');
  try {
    // The first QEMU holds the image once its QMP greeting is out (the devices exist by then).
    await within(new Promise<void>((resolve, reject) => {
      first.child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('"QMP"')) resolve(); });
      void first.done.then((e) => reject(new Error(`the first QEMU exited: ${e.stderr}`)));
    }), 30_000, 'the first QEMU\'s QMP greeting');
    const second = qemuWithDisk(image, 'hd');
    const r = await within(second.done, 30_000, 'the second QEMU to exit');
    assert.is.not(r.code, 0);
    assert.match(r.stderr, /Failed to get "write" lock/);
    const mine: LockableDisk[] = [{ name: 'hd', qemuId: 'ua-hd', paths: [image], source: 'PersistentVolumeClaim "shared"' }];
    assert.is(explainImageLock(r.stderr, mine), `volume "hd" (PersistentVolumeClaim "shared") is held by another VM: its image ${image} is locked by another QEMU process (QEMU: Failed to get "write" lock); a disk takes one writer at a time, so this VMI cannot start while the other VM runs`);
    assert.is(first.child.exitCode, null, 'the first QEMU still runs');
  } finally {
    first.child.kill('SIGKILL');
    await within(first.done, 10_000, 'the first QEMU to end');
    t.cleanup();
  }
});

test.run();
