// `qvirt image import` of what users have: an OCI layout built here, turned by skopeo into an OCI
// archive and a docker save archive, each imported (the real skopeo, the real layers: whiteouts
// and opaque directories applied in order); bare qcow2 and raw disks; and bad input refused with
// the file and the reason, leaving nothing in the store.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { ImageStore, ImageStoreError } from '../../src/local/image-store.ts';
import { importImage } from '../../src/local/image-import.ts';
import { classifyDir, classifyFile } from '../../src/local/image-source.ts';
import { applyLayer, whiteoutOf } from '../../src/local/layer-unpack.ts';
import { buildOciLayout } from '../lib/oci-image.ts';
import { tempDir } from '../lib/tmp.ts';

const t = tempDir('qii');
const run = promisify(execFile);
const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
const skopeo = (...args: string[]) => execFileSync('skopeo', ['--insecure-policy', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });

/** Every path under a directory with its content (files) or `/` (directories). */
function tree(dir: string, pre = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, pre), { withFileTypes: true })) {
    const rel = `${pre}/${e.name}`;
    if (e.isDirectory()) { out[rel] = '/'; Object.assign(out, tree(dir, rel)); } else out[rel] = readFileSync(join(dir, rel), 'utf8');
  }
  return out;
}

const storeLeftovers = (store: ImageStore) => readdirSync(store.root).filter((n) => n !== '.tmp').concat(existsSync(join(store.root, '.tmp')) ? readdirSync(join(store.root, '.tmp')) : []);

test('classify: disks by header, archives by their members, everything else refused with the reason', () => {
  const head = (bytes: Record<number, string>, len = 34 * 1024) => { const b = Buffer.alloc(len); for (const [off, s] of Object.entries(bytes)) b.write(s, Number(off), 'latin1'); return b; };
  assert.equal(classifyFile('/x', head({ 0: 'QFI\xfb' }), 1 << 20), { kind: 'disk', format: 'qcow2' });
  assert.equal(classifyFile('/x', head({ 0: 'KDMV' }), 1 << 20), { kind: 'disk', format: 'vmdk' });
  assert.equal(classifyFile('/x', head({ 510: '\x55\xaa' }), 1 << 20), { kind: 'disk', format: 'raw' });
  assert.equal(classifyFile('/x', head({ 32769: 'CD001' }), 1 << 20), { kind: 'disk', format: 'raw' });
  assert.equal(classifyFile('/x', Buffer.alloc(4096, 1), 3 << 20), { kind: 'disk', format: 'raw' }, 'binary, whole sectors: raw');
  assert.equal(classifyFile('/a.tar', head({ 257: 'ustar' }), 4096, ['oci-layout', 'index.json', 'blobs/sha256/x']), { kind: 'oci-archive', transport: 'oci-archive:/a.tar' });
  assert.equal(classifyFile('/d.tar', head({ 257: 'ustar' }), 4096, ['abc/layer.tar', 'manifest.json', 'repositories']), { kind: 'docker-archive', transport: 'docker-archive:/d.tar' });
  assert.equal(classifyFile('/d.tgz', head({ 0: '\x1f\x8b' }), 4096, ['manifest.json']), { kind: 'docker-archive', transport: 'docker-archive:/d.tgz' });
  assert.equal(classifyDir('/l', ['oci-layout', 'index.json', 'blobs']), { kind: 'oci-layout', transport: 'oci:/l' });
  assert.equal(classifyDir('/s', ['manifest.json', 'version', 'abc']), { kind: 'dir', transport: 'dir:/s' });
  const refused: Array<[Buffer, number, string[] | undefined, RegExp]> = [
    [Buffer.from('hello, this is a README\n'.repeat(40)), 960, undefined, /\/x is not a disk image: it is a text file/],
    [head({ 0: '\x1f\x8b' }), 4096, undefined, /gzip-compressed/],
    [head({ 0: '\xfd7zXZ\0' }), 4096, undefined, /xz-compressed file \(decompress it first\)/],
    [head({ 0: '\x7fELF' }), 4096, undefined, /an ELF executable/],
    [Buffer.alloc(700, 1), 700, undefined, /size \(700 bytes\) is not a whole number of 512-byte sectors/],
    [Buffer.alloc(0), 0, undefined, /it is empty/],
    [head({ 257: 'ustar' }), 4096, ['etc/passwd'], /a tar archive but neither an OCI archive .* nor a docker save archive/],
  ];
  for (const [h, size, members, re] of refused) assert.throws(() => classifyFile('/x', h, size, members), re);
  assert.throws(() => classifyDir('/e', ['x']), /neither an OCI image layout .* nor a skopeo dir: image/);
});

test('whiteouts: .wh.NAME removes a lower path, .wh..wh..opq hides a directory\'s lower content', () => {
  assert.equal(whiteoutOf('a/.wh.y'), { kind: 'remove', path: '/a/y' });
  assert.equal(whiteoutOf('./b/.wh..wh..opq'), { kind: 'opaque', dir: '/b' });
  assert.equal(whiteoutOf('.wh.top'), { kind: 'remove', path: '/top' });
  assert.is(whiteoutOf('disk/x.qcow2'), undefined);
});

test('an OCI layout, its OCI archive and its docker save archive import to the same root filesystem', async () => {
  const store = new ImageStore(join(t.path, 'store'));
  const layout = join(t.path, 'layout');
  const { manifestDigest } = await buildOciLayout(layout, [
    [{ path: '/a/x', data: 'x1' }, { path: '/a/y', data: 'y1' }, { path: '/b/z', data: 'z1' }, { path: '/b/sub/q', data: 'q1' }, { path: '/disk/old.img', data: 'old' }],
    [{ path: '/a/y', whiteout: true }, { path: '/b', whiteout: true, opaque: true }, { path: '/b/new', data: 'n2' }, { path: '/disk/old.img', whiteout: true }, { path: '/disk/new.qcow2', data: 'QFI\xfbdisk' }, { path: '/a/x', data: 'x2' }],
  ], 'v1');
  const ociArchive = join(t.path, 'img.oci.tar');
  const dockerArchive = join(t.path, 'img.docker.tar');
  skopeo('copy', '-q', `oci:${layout}:v1`, `oci-archive:${ociArchive}:v1`);
  skopeo('copy', '-q', `oci:${layout}:v1`, `docker-archive:${dockerArchive}:example/img:v1`);
  const want = { '/a': '/', '/a/x': 'x2', '/b': '/', '/b/new': 'n2', '/disk': '/', '/disk/new.qcow2': 'QFI\xfbdisk' };
  const digests: Record<string, string> = {};
  for (const [kind, path] of [['oci-layout', layout], ['oci-archive', ociArchive], ['docker-archive', dockerArchive]] as const) {
    const { info, source } = await importImage(store, `example/${kind}:v1`, path);
    assert.is(source.kind, kind);
    assert.equal(tree(info.rootfs), want, kind);
    assert.is(info.sizeBytes, 2 + 2 + Buffer.byteLength('QFI\xfbdisk'), `${kind}: the size of its files`);
    assert.is(await store.containerDiskFile(`example/${kind}:v1`), join(info.rootfs, 'disk/new.qcow2'), `${kind}: a container disk (the one file in /disk)`);
    digests[kind] = info.digest;
  }
  // The manifest digest: skopeo keeps an OCI manifest as it is; a docker save archive holds its own (Docker schema 2) manifest.
  assert.is(`sha256:${digests['oci-layout']}`, manifestDigest);
  assert.is(`sha256:${digests['oci-archive']}`, manifestDigest);
  assert.match(digests['docker-archive']!, /^[0-9a-f]{64}$/);
  assert.is.not(digests['docker-archive'], digests['oci-layout']);
  // `qvirt image list` shows the three with their sizes and digests.
  const list = (await run(qvirt, ['image', 'list', '--image-store', store.root])).stdout;
  for (const kind of ['oci-layout', 'oci-archive', 'docker-archive']) assert.match(list, new RegExp(`example/${kind}:v1\\s+0\\.0 MiB  sha256:${digests[kind]!.slice(0, 12)}  `));
  assert.equal(storeLeftovers(store).filter((n) => n.includes('.importing-') || n.startsWith('copy-')), [], 'no scratch left');
});

test('qvirt image import of a bare qcow2 and of an OCI archive, from the command line', async () => {
  const store = join(t.path, 'cli-store');
  const disk = join(t.path, 'd.qcow2');
  execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', disk, '16M']);
  const imp = await run(qvirt, ['image', 'import', '--image-store', store, 'example/bare:v1', disk]);
  const sum = execFileSync('sha256sum', [disk], { encoding: 'utf8' }).split(' ')[0]!;
  assert.match(imp.stdout, new RegExp(`imported example/bare:v1 \\(0\\.2 MiB, qcow2 disk, sha256:${sum}\\)`), 'a bare disk: its content digest');
  const layout = join(t.path, 'kb-layout');
  await buildOciLayout(layout, [[{ path: '/opt/kernels/vmlinuz-custom', data: 'KERNEL' }, { path: '/opt/initrds/initrd-custom.img', data: 'INITRD' }]], 'v2');
  const archive = join(t.path, 'kb.tar');
  skopeo('copy', '-q', `oci:${layout}:v2`, `oci-archive:${archive}:v2`);
  const imp2 = await run(qvirt, ['image', 'import', '--image-store', store, 'example/kernel-boot:v2', archive]);
  assert.match(imp2.stdout, /imported example\/kernel-boot:v2 \(0\.0 MiB, oci-archive, sha256:[0-9a-f]{64}\)/);
  const s = new ImageStore(store);
  assert.is(readFileSync(await s.fileIn('example/kernel-boot:v2', '/opt/kernels/vmlinuz-custom'), 'utf8'), 'KERNEL', 'a kernel-boot image keeps its paths');
});

test('bad input: the file and the reason, and nothing left in the store', async () => {
  const store = new ImageStore(join(t.path, 'bad-store'));
  const fails = async (path: string, re: RegExp) => {
    await importImage(store, 'example/bad:v1', path).then(() => assert.unreachable(`${path} was imported`), (err: Error) => {
      assert.instance(err, ImageStoreError);
      assert.match(err.message, re);
    });
  };
  const text = join(t.path, 'notes.txt');
  writeFileSync(text, 'not a disk\n'.repeat(100));
  await fails(text, /notes\.txt is not a disk image: it is a text file/);
  const gz = join(t.path, 'disk.img.gz');
  writeFileSync(gz, gzipSync(Buffer.alloc(1 << 20)));
  await fails(gz, /disk\.img\.gz is not a disk image: it is a gzip-compressed file/);
  await fails(join(t.path, 'missing.qcow2'), /missing\.qcow2: no such file or directory/);
  // A layout whose layer does not match its digest (a corrupted download, a tampered archive).
  const layout = join(t.path, 'corrupt');
  await buildOciLayout(layout, [[{ path: '/disk/d.img', data: 'x'.repeat(4096) }]], 'v1');
  const blobs = join(layout, 'blobs/sha256');
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: Array<{ digest: string }> };
  const manifest = JSON.parse(readFileSync(join(blobs, index.manifests[0]!.digest.slice(7)), 'utf8')) as { layers: Array<{ digest: string }> };
  const layer = join(blobs, manifest.layers[0]!.digest.slice(7));
  const bytes = readFileSync(layer);
  bytes[bytes.length - 12] = bytes[bytes.length - 12]! ^ 0xff;
  writeFileSync(layer, bytes);
  await fails(layout, /corrupt: .*(digest|checksum)/i);
  assert.equal(await store.list(), []);
  assert.equal(storeLeftovers(store), [], 'no partial image, no scratch');
});

test('a layer cannot write outside the image root: absolute paths, .. and a symlinked parent are refused', async () => {
  const outside = join(t.path, 'outside');
  mkdirSync(outside);
  const s1 = join(t.path, 'evil-1');
  const s2 = join(t.path, 'evil-2');
  mkdirSync(s1);
  mkdirSync(join(s2, 'disk'), { recursive: true });
  symlinkSync(outside, join(s1, 'disk'));
  writeFileSync(join(s2, 'disk/evil'), 'pwned');
  const layer = join(t.path, 'evil.tar');
  // `disk` a symlink to a directory outside, then `disk/evil` through it (no directory entry in between).
  execFileSync('tar', ['-cf', layer, '-C', s1, 'disk']);
  execFileSync('tar', ['-rf', layer, '-C', s2, 'disk/evil']);
  execFileSync('tar', ['-rf', layer, '-C', s2, '--transform', 's,^disk/evil$,../escaped,', 'disk/evil']);
  const root = join(t.path, 'evil-root');
  mkdirSync(root);
  await applyLayer(layer, root).then(() => undefined, (err: Error) => assert.match(err.message, /symbolic link|SymlinkError|TAR_ENTRY/i));
  assert.equal(readdirSync(outside), [], 'nothing written through the symlink');
  assert.not.ok(existsSync(join(t.path, 'escaped')), 'nothing written above the root');
});

test('symlinks in an image resolve inside it: an absolute one against the image root, none leads out', async () => {
  const stage = join(t.path, 'links-stage');
  mkdirSync(join(stage, 'boot'), { recursive: true });
  writeFileSync(join(stage, 'boot/vmlinuz-6.1'), 'KERNEL');
  symlinkSync('/boot/vmlinuz-6.1', join(stage, 'boot/vmlinuz'));
  symlinkSync('/boot', join(stage, 'bootlink'));
  symlinkSync('../../../../../../../../etc/hostname', join(stage, 'boot/evil'));
  const layer = join(t.path, 'links.tar');
  execFileSync('tar', ['-cf', layer, '-C', stage, 'boot', 'bootlink']);
  const store = new ImageStore(join(t.path, 'links-store'));
  await store.importTree('example/links:v1', async (rootfs) => { await applyLayer(layer, rootfs); return { digest: `sha256:${'1'.repeat(64)}` }; });
  assert.is(readFileSync(await store.fileIn('example/links:v1', '/boot/vmlinuz'), 'utf8'), 'KERNEL', 'an absolute symlink: the image\'s /boot');
  assert.is(readFileSync(await store.fileIn('example/links:v1', '/bootlink/vmlinuz'), 'utf8'), 'KERNEL');
  // node-tar does not even create a symlink climbing out of the root...
  await store.fileIn('example/links:v1', '/boot/evil').then(() => assert.unreachable('followed out of the image'), (err: Error) => {
    assert.match(err.message, /image "example\/links:v1" has no file \/boot\/evil/, err.message);
  });
  // ...and one that is there anyway (a store written by something else) is not followed out.
  await store.importTree('example/planted:v1', async (rootfs) => {
    mkdirSync(join(rootfs, 'disk'));
    symlinkSync('/etc/hostname', join(rootfs, 'disk/d.img'));
    return { digest: `sha256:${'2'.repeat(64)}` };
  });
  await store.containerDiskFile('example/planted:v1').then(() => assert.unreachable('followed out of the image'), (err: Error) => {
    assert.match(err.message, /image "example\/planted:v1": \/disk is a symlink leading out of the image/);
  });
});

test('leftovers of imports and pulls whose process is gone are removed, a running one\'s kept', async () => {
  const store = new ImageStore(join(t.path, 'stale-store'));
  let dead = 4_000_000;
  for (;; dead--) { try { process.kill(dead, 0); } catch (err) { if ((err as NodeJS.ErrnoException).code === 'ESRCH') break; } }
  const made = [`abc.importing-${dead}-1`, `.tmp/copy-${dead}-2-x1`, `.tmp/auth-${dead}-3-x2`, `abd.importing-${process.pid}-4`, `.tmp/copy-${process.pid}-5-x3`];
  for (const m of made) mkdirSync(join(store.root, m), { recursive: true });
  await store.removeStale();
  assert.equal(made.filter((m) => existsSync(join(store.root, m))), [`abd.importing-${process.pid}-4`, `.tmp/copy-${process.pid}-5-x3`]);
});

test.after(() => t.cleanup());
test.run();
