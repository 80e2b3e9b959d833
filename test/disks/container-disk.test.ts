// containerDisk volumes: a qcow2 overlay in the ephemeral dir backed by the image's disk, checked
// with qemu-img's own view of the chain.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareContainerDisk, verifyContainerDiskImage } from '../../launcher/disks/container-disk.ts';
import { VolumePreparationError } from '../../launcher/disks/errors.ts';
import { containerDiskTarget, diskDirsUnder, ephemeralOverlay, type DiskDirs } from '../../launcher/disks/paths.ts';
import type { Volume } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { backingChain, qemuImg, failure } from './lib.ts';

const tmp = tempDir('qv-cd');
test.after(() => tmp.cleanup());
let n = 0;
const fresh = (): DiskDirs => {
  const d = diskDirsUnder(join(tmp.path, `r${n++}`));
  mkdirSync(d.containerDiskDir, { recursive: true });
  mkdirSync(d.ephemeralDiskDir, { recursive: true });
  return d;
};
const cdVolume = (name: string, path?: string): Volume => ({ name, containerDisk: { image: 'quay.io/x/y:1', ...(path ? { path } : {}) } });

test('raw image at disk_<i>.img → qcow2 overlay at disk-data/<vol>/disk.qcow2 backed by it', async () => {
  const d = fresh();
  const base = containerDiskTarget(d, 2);
  qemuImg('create', '-f', 'raw', base, '64M');
  const p = await prepareContainerDisk(cdVolume('rootdisk'), 2, d);
  assert.is(p.path, join(d.ephemeralDiskDir, 'disk-data', 'rootdisk', 'disk.qcow2'));
  assert.is(p.path, ephemeralOverlay(d, 'rootdisk'));
  assert.equal({ format: p.format, type: p.type, readOnly: p.readOnly, discard: p.discard, created: p.created }, { format: 'qcow2', type: 'file', readOnly: false, discard: true, created: true });
  assert.equal(p.backing, { type: 'file', path: base, format: 'raw' });
  const chain = backingChain(p.path);
  assert.is(chain.length, 2);
  assert.is(chain[0]!.format, 'qcow2');
  assert.is(chain[0]!['backing-filename'], base);
  assert.is(chain[0]!['backing-filename-format'], 'raw');
  assert.is(chain[0]!['virtual-size'], 64 * 1024 * 1024);
  assert.is(chain[1]!.filename, base);
  assert.is(chain[1]!.format, 'raw');
  assert.is(statSync(p.path).mode & 0o777, 0o640);
});

test('qcow2 base (via a symlink, as the local image store makes it) keeps qcow2 as backing format', async () => {
  const d = fresh();
  const real = join(tmp.path, `img-${n}.qcow2`);
  qemuImg('create', '-f', 'qcow2', real, '32M');
  symlinkSync(real, containerDiskTarget(d, 0));
  const p = await prepareContainerDisk(cdVolume('root'), 0, d);
  const chain = backingChain(p.path);
  assert.is(chain[0]!['backing-filename-format'], 'qcow2');
  assert.is(chain[1]!.format, 'qcow2');
  assert.is(p.backing?.format, 'qcow2');
});

test('an existing overlay is kept (guest writes survive a launcher restart)', async () => {
  const d = fresh();
  qemuImg('create', '-f', 'raw', containerDiskTarget(d, 0), '8M');
  const first = await prepareContainerDisk(cdVolume('root'), 0, d);
  qemuImg('resize', first.path, '16M'); // a visible change to the overlay
  const second = await prepareContainerDisk(cdVolume('root'), 0, d);
  assert.is(second.created, false);
  assert.is(backingChain(second.path)[0]!['virtual-size'], 16 * 1024 * 1024);
});

test('directory form disk_<i>/ with the image\'s disk/ folder, and with containerDisk.path', async () => {
  const d = fresh();
  const dir = join(d.containerDiskDir, 'disk_1', 'disk');
  mkdirSync(dir, { recursive: true });
  qemuImg('create', '-f', 'qcow2', join(dir, 'fedora.qcow2'), '8M');
  const p = await prepareContainerDisk(cdVolume('a'), 1, d);
  assert.is(p.backing?.path, join(dir, 'fedora.qcow2'));

  const custom = join(d.containerDiskDir, 'disk_3', 'images');
  mkdirSync(custom, { recursive: true });
  qemuImg('create', '-f', 'raw', join(custom, 'os.img'), '4M');
  writeFileSync(join(custom, 'README'), 'not a disk');
  const q = await prepareContainerDisk(cdVolume('b', '/images/os.img'), 3, d);
  assert.is(q.backing?.path, join(custom, 'os.img'));
  assert.is(q.backing?.format, 'raw');
});

test('missing base → error naming the volume and KubeVirt\'s message', async () => {
  const d = fresh();
  try {
    await prepareContainerDisk(cdVolume('rootdisk'), 4, d);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, VolumePreparationError);
    const e = err as VolumePreparationError;
    assert.is(e.volume, 'rootdisk');
    assert.match(e.message, `volume "rootdisk" (containerDisk): no supported file disk found for volume found in: ${containerDiskTarget(d, 4)}`);
  }
});

test('two files in disk/ → error naming both; a dangling disk_<i>.img link → missing-disk error', async () => {
  const d = fresh();
  const dir = join(d.containerDiskDir, 'disk_0', 'disk');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'a.img'), 'x');
  writeFileSync(join(dir, 'b.img'), 'y');
  const err = await failure(prepareContainerDisk(cdVolume('v'), 0, d));
  assert.match(err.message, /volume "v" \(containerDisk\): more than one file found in folder .*disk \(a\.img, b\.img\)/);

  symlinkSync(join(tmp.path, 'gone.img'), containerDiskTarget(d, 5));
  const e2 = await failure(prepareContainerDisk(cdVolume('w'), 5, d));
  assert.match(e2.message, `volume "w" (containerDisk): no supported file disk found for volume found in: ${containerDiskTarget(d, 5)}`);
});

test('a qcow2 base with its own backing file is refused (VerifyImage)', async () => {
  const d = fresh();
  const under = join(tmp.path, `under-${n}.raw`);
  qemuImg('create', '-f', 'raw', under, '1M');
  qemuImg('create', '-f', 'qcow2', '-b', under, '-F', 'raw', containerDiskTarget(d, 0));
  const e = await failure(prepareContainerDisk(cdVolume('v'), 0, d));
  assert.match(e.message, `volume "v" (containerDisk): invalid image in containerDisk v: expected no backing file, but found ${under}`);
});

test('a non-image file is detected as raw; garbage formats are refused', async () => {
  const rows: [string, { format: string; backingFile?: string }, string][] = [
    ['raw', { format: 'raw' }, 'raw'],
    ['qcow2', { format: 'qcow2' }, 'qcow2'],
    ['qcow2 with backing', { format: 'qcow2', backingFile: '/x' }, 'expected no backing file, but found /x'],
    ['vmdk', { format: 'vmdk' }, 'unsupported image format: vmdk'],
  ];
  for (const [name, info, want] of rows) {
    const v = verifyContainerDiskImage({ format: info.format, backingFile: info.backingFile });
    assert.is('format' in v ? v.format : v.error, want, name);
  }
});

test.run();
