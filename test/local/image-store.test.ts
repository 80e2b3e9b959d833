import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readFileSync, readlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ImageStore, ImageStoreError, materializeContainerDisks, normalizeImageRef } from '../../src/local/image-store.ts';
import { tempDir } from '../lib/tmp.ts';

test('normalizeImageRef adds :latest only where no tag or digest is given', () => {
  const rows: Array<[string, string]> = [
    ['quay.io/kubevirt/cirros-container-disk-demo', 'quay.io/kubevirt/cirros-container-disk-demo:latest'],
    ['quay.io/kubevirt/cirros-container-disk-demo:v1.2', 'quay.io/kubevirt/cirros-container-disk-demo:v1.2'],
    ['registry:5000/kubevirt/cirros-container-disk-demo', 'registry:5000/kubevirt/cirros-container-disk-demo:latest'],
    ['registry:5000/kubevirt/cirros-container-disk-demo:devel', 'registry:5000/kubevirt/cirros-container-disk-demo:devel'],
    ['img@sha256:abc', 'img@sha256:abc'],
  ];
  for (const [input, want] of rows) assert.is(normalizeImageRef(input), want, input);
  assert.throws(() => normalizeImageRef(' '), /not an image reference/);
});

test('import a disk, find it as a containerDisk, list and remove it', async () => {
  const t = tempDir('img');
  try {
    const src = join(t.path, 'cirros.qcow2');
    writeFileSync(src, 'disk-bytes');
    const store = new ImageStore(join(t.path, 'store'));
    let last = 0;
    const info = await store.importDisk('example/cirros', src, (done) => { last = done; });
    assert.is(info.ref, 'example/cirros:latest');
    assert.is(last, 10, 'progress reached the file size');
    const file = await store.containerDiskFile('example/cirros:latest');
    assert.is(readFileSync(file, 'utf8'), 'disk-bytes');
    assert.equal((await store.list()).map((i) => i.ref), ['example/cirros:latest']);
    // re-import replaces, never duplicates
    writeFileSync(src, 'new-bytes');
    await store.importDisk('example/cirros', src);
    assert.is(readFileSync(await store.containerDiskFile('example/cirros'), 'utf8'), 'new-bytes');
    assert.is((await store.list()).length, 1);
    assert.is(await store.remove('example/cirros'), true);
    assert.is(await store.get('example/cirros'), undefined);
  } finally {
    t.cleanup();
  }
});

test('a missing image is an error that says how to import it', async () => {
  const t = tempDir('img');
  try {
    const store = new ImageStore(join(t.path, 'store'));
    await store.require('nope/missing').then(() => assert.unreachable(), (err: Error) => {
      assert.instance(err, ImageStoreError);
      assert.match(err.message, /"nope\/missing:latest" is not in the local image store/);
      assert.match(err.message, /qvirt image import nope\/missing:latest FILE/);
    });
  } finally {
    t.cleanup();
  }
});

test('materializeContainerDisks links disks by volume index and kernel-boot artifacts by basename', async () => {
  const t = tempDir('img');
  try {
    const store = new ImageStore(join(t.path, 'store'));
    writeFileSync(join(t.path, 'a.img'), 'A');
    writeFileSync(join(t.path, 'vmlinuz'), 'K');
    writeFileSync(join(t.path, 'initrd.img'), 'I');
    await store.importDisk('disk/a', join(t.path, 'a.img'));
    await store.importFiles('boot/kernel', [{ src: join(t.path, 'vmlinuz'), dest: '/boot/vmlinuz' }, { src: join(t.path, 'initrd.img'), dest: '/boot/initrd.img' }]);
    const cdDir = join(t.path, 'container-disks');
    const made = await materializeContainerDisks({
      volumes: [{ name: 'cloudinit' }, { name: 'rootdisk', containerDisk: { image: 'disk/a' } }],
      kernelBoot: { container: { image: 'boot/kernel', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } },
    }, store, cdDir);
    assert.equal(made.map((m) => m.slice(cdDir.length)), ['/disk_1.img', '/kernel-boot/vmlinuz', '/kernel-boot/initrd.img']);
    assert.is(readFileSync(join(cdDir, 'disk_1.img'), 'utf8'), 'A');
    assert.ok(readlinkSync(join(cdDir, 'disk_1.img')).startsWith(store.root));
    assert.is(readFileSync(join(cdDir, 'kernel-boot/vmlinuz'), 'utf8'), 'K');
    assert.not.ok(existsSync(join(cdDir, 'disk_0.img')));
    // idempotent: running it again re-points the links
    await materializeContainerDisks({ volumes: [{ name: 'cloudinit' }, { name: 'rootdisk', containerDisk: { image: 'disk/a' } }] }, store, cdDir);
  } finally {
    t.cleanup();
  }
});

test('materializeContainerDisks names the field when an image or artifact is missing', async () => {
  const t = tempDir('img');
  try {
    const store = new ImageStore(join(t.path, 'store'));
    mkdirSync(join(t.path, 'cd'));
    await materializeContainerDisks({ volumes: [{ name: 'x', containerDisk: { image: 'absent' } }] }, store, join(t.path, 'cd')).then(
      () => assert.unreachable(),
      (err: Error) => assert.match(err.message, /^spec\.volumes\[0\]\.containerDisk\.image: image "absent:latest" is not in the local image store/),
    );
    writeFileSync(join(t.path, 'k'), 'K');
    await store.importFiles('boot/k', [{ src: join(t.path, 'k'), dest: '/boot/vmlinuz' }]);
    await materializeContainerDisks({ kernelBoot: { container: { image: 'boot/k', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/missing' } } }, store, join(t.path, 'cd')).then(
      () => assert.unreachable(),
      (err: Error) => assert.match(err.message, /^spec\.domain\.firmware\.kernelBoot\.container\.initrdPath: image "boot\/k:latest" has no file \/boot\/missing/),
    );
  } finally {
    t.cleanup();
  }
});

test.run();
