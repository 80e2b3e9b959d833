// emptyDisk, PVC/DataVolume, hostDisk and ephemeral volumes on a real filesystem with real qemu-img.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, openSync, readSync, closeSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { prepareEmptyDisk, emptyDiskSize } from '../../launcher/disks/empty-disk.ts';
import { prepareEphemeral } from '../../launcher/disks/ephemeral.ts';
import { decideSparseSize, prepareHostDisk } from '../../launcher/disks/host-disk.ts';
import { diskDirsUnder, emptyDisk, pvcFilesystemImage, vmiDiskDir, type DiskDirs } from '../../launcher/disks/paths.ts';
import { alignImageSizeTo1MiB, isHotplugVolume, preparePvc, pvcDiskSize, pvcHintFromStatus } from '../../launcher/disks/pvc.ts';
import type { Volume } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { backingChain, qemuImg, vmiWith, failure } from './lib.ts';

const tmp = tempDir('qv-st');
test.after(() => tmp.cleanup());
let n = 0;
const fresh = (): DiskDirs => diskDirsUnder(join(tmp.path, `r${n++}`));
const MiB = 1024 * 1024;

const writeAt = (path: string, offset: number, data: string) => {
  const fd = openSync(path, 'r+');
  try { writeSync(fd, Buffer.from(data), 0, data.length, offset); } finally { closeSync(fd); }
};
const readAt = (path: string, offset: number, len: number) => {
  const fd = openSync(path, 'r');
  const b = Buffer.alloc(len);
  try { readSync(fd, b, 0, len, offset); } finally { closeSync(fd); }
  return b.toString();
};

// --- emptyDisk ------------------------------------------------------------------------------

test('emptyDisk: sparse qcow2 of the capacity at <libvirt>/empty-disks/<vol>.qcow2, kept on re-prepare', async () => {
  const d = fresh();
  const v: Volume = { name: 'scratch', emptyDisk: { capacity: '2Gi' } };
  const p = await prepareEmptyDisk(v, d);
  assert.is(p.path, join(d.libvirtRuntimeDir, 'empty-disks', 'scratch.qcow2'));
  assert.is(p.path, emptyDisk(d, 'scratch'));
  assert.equal({ format: p.format, created: p.created, discard: p.discard }, { format: 'qcow2', created: true, discard: true });
  const info = backingChain(p.path)[0]!;
  assert.is(info.format, 'qcow2');
  assert.is(info['virtual-size'], 2 * 1024 * MiB);
  assert.ok(statSync(p.path).blocks * 512 < 2 * MiB, 'sparse');
  const again = await prepareEmptyDisk(v, d);
  assert.is(again.created, false);
});

const sizeRows: [string, string, number | string][] = [
  ['binary suffix', '1Gi', 1024 * MiB],
  ['decimal suffix is aligned down to 1 MiB', '1G', alignImageSizeTo1MiB(1e9)],
  ['1500Ki rounds down to 1 MiB', '1500Ki', MiB],
  ['below 1 MiB is too low', '1000Ki', 'the size for volume v is too low'],
  ['fractions round up before alignment', '1.5Mi', MiB],
  ['garbage', 'lots', 'emptyDisk.capacity: quantity "lots" is invalid'],
];
for (const [name, capacity, want] of sizeRows) {
  test(`emptyDiskSize: ${name}`, () => {
    const got = emptyDiskSize({ name: 'v', emptyDisk: { capacity } });
    if (typeof want === 'number') assert.is(got, want);
    else assert.ok(typeof got === 'object' && got.error.startsWith(want), JSON.stringify(got));
  });
}

// --- PVC / DataVolume -----------------------------------------------------------------------

test('filesystem PVC: disk.img created sparse to the PVC size, then reused with data preserved', async () => {
  const d = fresh();
  mkdirSync(vmiDiskDir(d, 'data'), { recursive: true });
  const v: Volume = { name: 'data', persistentVolumeClaim: { claimName: 'pvc-1' } };
  const hint = { volumeMode: 'Filesystem' as const, capacity: 10 * MiB + 123, requests: 20 * MiB };
  const p = await preparePvc(v, d, hint);
  assert.is(p.path, join(d.privateDir, 'vmi-disks', 'data', 'disk.img'));
  assert.equal({ type: p.type, format: p.format, created: p.created, readOnly: p.readOnly }, { type: 'file', format: 'raw', created: true, readOnly: false });
  const st = statSync(p.path);
  assert.is(st.size, 10 * MiB, 'smaller of capacity and request, aligned down');
  assert.ok(st.blocks * 512 < MiB, 'sparse');
  writeAt(p.path, 5 * MiB, 'guest wrote this');
  const again = await preparePvc(v, d, { ...hint, capacity: 50 * MiB });
  assert.is(again.created, false);
  assert.is(statSync(again.path).size, 10 * MiB);
  assert.is(readAt(again.path, 5 * MiB, 16), 'guest wrote this');
});

test('dataVolume and readOnly PVC; size from VMI status persistentVolumeClaimInfo', async () => {
  const d = fresh();
  mkdirSync(vmiDiskDir(d, 'dv'), { recursive: true });
  const vmi = vmiWith({ volumes: [{ name: 'dv', dataVolume: { name: 'my-dv' } }] });
  vmi.status = { volumeStatus: [{ name: 'dv', target: '', persistentVolumeClaimInfo: { claimName: 'my-dv', volumeMode: 'Filesystem', capacity: { storage: '3Mi' }, requests: { storage: '2Mi' } } }] };
  const hint = pvcHintFromStatus(vmi, 'dv');
  assert.equal(hint, { volumeMode: 'Filesystem', capacity: 3 * MiB, requests: 2 * MiB });
  const p = await preparePvc(vmi.spec.volumes![0]!, d, hint);
  assert.is(p.source, 'dataVolume');
  assert.is(statSync(p.path).size, 2 * MiB);

  mkdirSync(vmiDiskDir(d, 'ro'), { recursive: true });
  const ro = await preparePvc({ name: 'ro', persistentVolumeClaim: { claimName: 'c', readOnly: true } }, d, { capacity: MiB });
  assert.is(ro.readOnly, true);
  assert.is(pvcFilesystemImage(d, 'ro'), ro.path);
});

test('PVC errors: not mounted, no size, too small, not enough space', async () => {
  const d = fresh();
  const v: Volume = { name: 'data', persistentVolumeClaim: { claimName: 'c' } };
  let e = await failure(preparePvc(v, d, undefined));
  assert.is(e.message, 'volume "data" (persistentVolumeClaim): neither found block device nor regular file for volume data');
  mkdirSync(vmiDiskDir(d, 'data'), { recursive: true });
  e = await failure(preparePvc(v, d, undefined));
  assert.match(e.message, 'unable to determine capacity of HostDisk from PVC that provides no storage capacity or requests');
  e = await failure(preparePvc(v, d, { capacity: 1000 }));
  assert.match(e.message, 'the size for volume data is too low, must be at least 1MiB');
  e = await failure(preparePvc(v, d, { capacity: 2 ** 52 }));
  assert.match(e.message, /volume "data" \(persistentVolumeClaim\): unable to create .*disk\.img, not enough space, demanded size 4503599627370496 B is bigger than available space \d+ B, also after taking 10 % toleration into account/);
});

test('block PVC: /dev/<vol> must be a block device', async () => {
  const d = fresh();
  mkdirSync(d.devDir, { recursive: true });
  const v: Volume = { name: 'blk', persistentVolumeClaim: { claimName: 'c' } };
  let e = await failure(preparePvc(v, d, { volumeMode: 'Block' }));
  assert.match(e.message, `volume "blk" (persistentVolumeClaim): block device ${join(d.devDir, 'blk')} is not attached`);
  // the real /dev has block devices (loop devices at least): point the dev dir there
  const devd = { ...d, devDir: '/dev' };
  const blockName = readdirSync('/dev').sort().find((x) => statSync(join('/dev', x)).isBlockDevice());
  assert.ok(blockName, 'this test needs a block device in /dev (e.g. /dev/loop0)');
  const loop = await preparePvc({ name: blockName!, persistentVolumeClaim: { claimName: 'c' } }, devd, undefined);
  assert.equal({ type: loop.type, path: loop.path, format: loop.format }, { type: 'block', path: join('/dev', blockName!), format: 'raw' });
  e = await failure(preparePvc({ name: 'null', persistentVolumeClaim: { claimName: 'c' } }, devd, undefined));
  assert.match(e.message, "found /dev/null, but it's not a block device");
});

test('hotplugged PVC: the image the node attached in the hotplug dir, nothing created', async () => {
  const d = fresh();
  const v: Volume = { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } };
  const vmi = vmiWith({ volumes: [v] });
  vmi.status = { volumeStatus: [{ name: 'hp', target: 'sda', hotplugVolume: { attachPodName: 'hp-volume-xyz' } }] };
  assert.ok(isHotplugVolume(vmi, 'hp'));
  let e = await failure(preparePvc(v, d, undefined, { hotplug: true }));
  assert.is(e.message, `volume "hp" (persistentVolumeClaim): hotplug volume is not attached at ${join(d.hotplugDiskDir, 'hp.img')}`);
  mkdirSync(d.hotplugDiskDir, { recursive: true });
  qemuImg('create', '-f', 'raw', join(d.hotplugDiskDir, 'hp.img'), '1M');
  const p = await preparePvc(v, d, undefined, { hotplug: true });
  assert.equal({ path: p.path, hotplug: p.hotplug, created: p.created }, { path: join(d.hotplugDiskDir, 'hp.img'), hotplug: true, created: false });
  e = await failure(preparePvc(v, d, { volumeMode: 'Block' }, { hotplug: true }));
  assert.match(e.message, `not attached at ${join(d.hotplugDiskDir, 'hp')}`);
});

const pvcSizeRows: [string, { capacity?: number; requests?: number }, number | string][] = [
  ['request only', { requests: 5 * MiB }, 5 * MiB],
  ['capacity only', { capacity: 7 * MiB + 1 }, 7 * MiB],
  ['capacity above request → request', { capacity: 9 * MiB, requests: 4 * MiB }, 4 * MiB],
  ['capacity below request → capacity', { capacity: 3 * MiB, requests: 4 * MiB }, 3 * MiB],
  ['equal', { capacity: 3 * MiB, requests: 3 * MiB }, 3 * MiB],
  ['neither', {}, 'unable to determine capacity'],
  ['sub-MiB', { requests: 100 }, 'the size for volume v is too low, must be at least 1MiB'],
];
for (const [name, hint, want] of pvcSizeRows) {
  test(`pvcDiskSize: ${name}`, () => {
    const got = pvcDiskSize('v', hint);
    if (typeof want === 'number') assert.is(got, want);
    else assert.ok(typeof got === 'object' && got.error.startsWith(want), JSON.stringify(got));
  });
}

const spaceRows: [string, number, number, number, { size?: number; tolerated?: boolean; error?: boolean }][] = [
  ['fits', 100, 200, 10, { size: 100 }],
  ['exactly fits', 200, 200, 10, { size: 200 }],
  ['5% short, within 10% toleration → available', 100, 95, 10, { size: 95, tolerated: true }],
  ['10% short → still tolerated', 100, 90, 10, { size: 90, tolerated: true }],
  ['11% short → error', 100, 89, 10, { error: true }],
  ['no toleration', 100, 99, 0, { error: true }],
];
for (const [name, requested, available, tol, want] of spaceRows) {
  test(`decideSparseSize: ${name}`, () => {
    const got = decideSparseSize('/p', requested, available, tol);
    if (want.error) {
      assert.ok('error' in got);
    } else {
      assert.ok(!('error' in got));
      if (!('error' in got)) {
        assert.is(got.size, want.size);
        assert.is(Boolean(got.tolerated), Boolean(want.tolerated));
      }
    }
  });
}

// --- hostDisk -------------------------------------------------------------------------------

test('hostDisk Disk: must exist; error names the volume', async () => {
  const d = fresh();
  mkdirSync(vmiDiskDir(d, 'hd'), { recursive: true });
  const v: Volume = { name: 'hd', hostDisk: { path: '/data/images/vm.img', type: 'Disk' } };
  const e = await failure(prepareHostDisk(v, d));
  assert.is(e.message, `volume "hd" (hostDisk): hostDisk.path /data/images/vm.img of type Disk does not exist (looked for ${join(vmiDiskDir(d, 'hd'), 'vm.img')})`);
  qemuImg('create', '-f', 'raw', join(vmiDiskDir(d, 'hd'), 'vm.img'), '1M');
  const p = await prepareHostDisk(v, d);
  assert.equal({ path: p.path, format: p.format, created: p.created, shared: p.shared, discard: p.discard }, { path: join(vmiDiskDir(d, 'hd'), 'vm.img'), format: 'raw', created: false, shared: false, discard: false });
});

test('hostDisk DiskOrCreate: sparse raw of capacity, reused afterwards; parent dir must exist', async () => {
  const d = fresh();
  const v: Volume = { name: 'hd', hostDisk: { path: '/var/data/disk.img', type: 'DiskOrCreate', capacity: '64Mi', shared: true } };
  const e = await failure(prepareHostDisk(v, d));
  assert.match(e.message, `volume "hd" (hostDisk): directory ${vmiDiskDir(d, 'hd')} for hostDisk.path /var/data/disk.img does not exist (the hostPath volume is not mounted)`);
  mkdirSync(vmiDiskDir(d, 'hd'), { recursive: true });
  const p = await prepareHostDisk(v, d);
  assert.is(p.created, true);
  assert.is(p.shared, true);
  assert.is(statSync(p.path).size, 64 * MiB);
  assert.ok(statSync(p.path).blocks * 512 < MiB, 'sparse');
  writeAt(p.path, MiB, 'keep me');
  const again = await prepareHostDisk({ ...v, hostDisk: { ...v.hostDisk!, capacity: '128Mi' } }, d);
  assert.is(again.created, false);
  assert.is(statSync(again.path).size, 64 * MiB);
  assert.is(readAt(again.path, MiB, 7), 'keep me');
});

test('hostDisk in host view (local mode) uses the path itself', async () => {
  const d = fresh();
  const dir = join(tmp.path, `host-${n}`);
  const v: Volume = { name: 'hd', hostDisk: { path: join(dir, 'x.img'), type: 'DiskOrCreate', capacity: '1Mi' } };
  const e = await failure(prepareHostDisk(v, d, { view: 'host' }));
  assert.match(e.message, `directory ${dir} for hostDisk.path ${join(dir, 'x.img')} does not exist`);
  mkdirSync(dir);
  const p = await prepareHostDisk(v, d, { view: 'host' });
  assert.is(p.path, join(dir, 'x.img'));
  assert.is(statSync(p.path).size, MiB);
});

test('hostDisk tolerated small PV emits ToleratedSmallPV', async () => {
  const d = fresh();
  mkdirSync(vmiDiskDir(d, 'hd'), { recursive: true });
  const events: [string, string][] = [];
  // ask for more than the filesystem has, with a 100% toleration: the disk gets the free space
  const v: Volume = { name: 'hd', hostDisk: { path: '/x/big.img', type: 'DiskOrCreate', capacity: String(2 ** 52) } };
  const p = await prepareHostDisk(v, d, { lessPVCSpaceToleration: 100, onEvent: (r, m) => events.push([r, m]) });
  assert.is(events.length, 1);
  assert.is(events[0]![0], 'ToleratedSmallPV');
  assert.match(events[0]![1], /^PV size too small: expected 4503599627370496 B, found \d+ B\. Using it anyway, it is within 100 % toleration$/);
  assert.ok(statSync(p.path).size < 2 ** 52);
});

// --- ephemeral ------------------------------------------------------------------------------

test('ephemeral PVC: overlay backed read-only by the PVC\'s disk.img, PVC bytes untouched', async () => {
  const d = fresh();
  mkdirSync(vmiDiskDir(d, 'eph'), { recursive: true });
  const img = pvcFilesystemImage(d, 'eph');
  qemuImg('create', '-f', 'raw', img, '16M');
  writeAt(img, 0, 'original');
  const v: Volume = { name: 'eph', ephemeral: { persistentVolumeClaim: { claimName: 'golden' } } };
  const p = await prepareEphemeral(v, d, undefined);
  assert.is(p.path, join(d.ephemeralDiskDir, 'disk-data', 'eph', 'disk.qcow2'));
  assert.equal(p.backing, { type: 'file', path: img, format: 'raw' });
  const chain = backingChain(p.path);
  assert.is(chain[0]!['backing-filename'], img);
  assert.is(chain[0]!['backing-filename-format'], 'raw');
  assert.is(chain[0]!['virtual-size'], 16 * MiB);
  qemuImg('resize', p.path, '32M');
  assert.is(statSync(img).size, 16 * MiB);
  assert.is(readAt(img, 0, 8), 'original');
  const e = await failure(prepareEphemeral({ name: 'none', ephemeral: { persistentVolumeClaim: { claimName: 'x' } } }, d, undefined));
  assert.is(e.message, 'volume "none" (ephemeral): neither found block device nor regular file for volume none');
});

test.run();
