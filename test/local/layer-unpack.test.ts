// Applying a layer (src/local/layer-unpack.ts): gzip, zstd and plain tar layers read in uneven
// pieces come out byte for byte; a layer whose digest is checked elsewhere is inflated without
// gzip's CRC-32 but what is not one whole gzip member is still refused; a single-layer image is
// unpacked while skopeo writes it (copyImageIntoStore's stream hint), from one gzip member or,
// unpacked again from the finished blob, two.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { applyLayer, applyLayerFrom, gzipHeaderLength, type LayerReader } from '../../src/local/layer-unpack.ts';
import { copyImageIntoStore, streamHintOf } from '../../src/local/image-import.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { tempDir } from '../lib/tmp.ts';

const t = tempDir('qlu');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// A tar of a 3 MiB file (random, with a zeroed stretch) and a small one, as GNU tar writes it.
const stage = join(t.path, 'stage');
mkdirSync(join(stage, 'disk'), { recursive: true });
const disk = Buffer.concat([randomBytes(1 << 20), Buffer.alloc(1 << 20), randomBytes((1 << 20) + 12345)]);
writeFileSync(join(stage, 'disk/disk.img'), disk);
writeFileSync(join(stage, 'disk/README'), 'a disk\n');
const tarFile = join(t.path, 'layer.tar');
execFileSync('tar', ['-cf', tarFile, '-C', stage, 'disk']);
const tar = readFileSync(tarFile);
const twoMembers = Buffer.concat([gzipSync(tar.subarray(0, 1_500_001)), gzipSync(tar.subarray(1_500_001))]);

/** A reader of `data` handing out pieces of the given sizes in turn. */
function pieces(data: Buffer, sizes: readonly number[] = [7, 1000, 65536, 3, 1 << 20]): LayerReader {
  let pos = 0;
  let i = 0;
  return async (buf) => {
    const n = Math.min(buf.length, sizes[i++ % sizes.length]!, data.length - pos);
    data.copy(buf, 0, pos, pos + n);
    pos += n;
    return n;
  };
}

let roots = 0;
const freshRoot = () => { const r = join(t.path, `root-${++roots}`); mkdirSync(r); return r; };
const assertUnpacked = (root: string, what: string) => {
  assert.is(sha(readFileSync(join(root, 'disk/disk.img'))), sha(disk), `${what}: the disk byte for byte`);
  assert.is(readFileSync(join(root, 'disk/README'), 'utf8'), 'a disk\n', what);
};

test('gzipHeaderLength: the fixed header and its optional fields, undefined when incomplete or not gzip', () => {
  const h = (flags: number, rest: number[] = []) => Buffer.from([0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 3, ...rest, 0xaa, 0xbb]);
  assert.is(gzipHeaderLength(gzipSync(Buffer.from('x'))), 10);
  assert.is(gzipHeaderLength(h(0)), 10);
  assert.is(gzipHeaderLength(h(8, [0x61, 0x62, 0])), 13, 'FNAME');
  assert.is(gzipHeaderLength(h(4 | 8 | 16 | 2, [2, 0, 9, 9, 0x61, 0, 0x63, 0, 1, 2])), 20, 'FEXTRA, FNAME, FCOMMENT, FHCRC');
  assert.is(gzipHeaderLength(h(8, [0x61, 0x62])), undefined, 'a name not ended in what was read');
  assert.is(gzipHeaderLength(h(4, [200, 0])), undefined, 'an extra field longer than what was read');
  assert.is(gzipHeaderLength(Buffer.from([0x1f, 0x8b, 8, 0, 0])), undefined, 'short');
  assert.is(gzipHeaderLength(h(0x20)), undefined, 'a reserved flag');
  assert.is(gzipHeaderLength(Buffer.from('ustar and more bytes')), undefined);
  assert.is(gzipHeaderLength(zstdCompressSync(Buffer.from('x'))), undefined);
});

test('gzip, zstd and plain tar layers read in uneven pieces come out byte for byte', async () => {
  const cases: Array<[string, Buffer, boolean]> = [
    ['plain tar', tar, false],
    ['gzip', gzipSync(tar), false],
    ['gzip, digest checked', gzipSync(tar), true],
    ['gzip with a file name, digest checked', execFileSync('gzip', ['-c', tarFile], { maxBuffer: 64 << 20 }), true],
    ['two gzip members', twoMembers, false],
    ['zstd', zstdCompressSync(tar), true],
  ];
  for (const [what, data, digestChecked] of cases) {
    const root = freshRoot();
    await applyLayerFrom(pieces(data), root, what, { digestChecked });
    assertUnpacked(root, what);
  }
});

test('digest checked: two gzip members or a cut one are refused; without it two members are taken and a wrong CRC refused', async () => {
  await applyLayerFrom(pieces(twoMembers), freshRoot(), 'two', { digestChecked: true }).then(
    () => assert.unreachable('two members taken as one'), (err: Error) => assert.match(err.message, /layer two is not a readable tar archive/));
  // The second member only the tar's end blocks: what the first holds is a whole archive.
  const endApart = Buffer.concat([gzipSync(tar.subarray(0, tar.length - 1024)), gzipSync(tar.subarray(tar.length - 1024))]);
  await applyLayerFrom(pieces(endApart), freshRoot(), 'end apart', { digestChecked: true }).then(
    () => assert.unreachable('two members taken as one'), (err: Error) => assert.match(err.message, /layer end apart .*not a single gzip member/));
  const gz = gzipSync(tar);
  await applyLayerFrom(pieces(gz.subarray(0, gz.length - 4)), freshRoot(), 'cut', { digestChecked: true }).then(
    () => assert.unreachable('a cut member taken'), (err: Error) => assert.match(err.message, /layer cut /));
  const twoFile = join(t.path, 'two.tar.gz');
  writeFileSync(twoFile, twoMembers);
  const root = freshRoot();
  await applyLayer(twoFile, root);
  assertUnpacked(root, 'applyLayer, two members');
  const badCrc = Buffer.from(gz);
  badCrc.writeUInt8(badCrc[badCrc.length - 8]! ^ 0xff, badCrc.length - 8);
  const badFile = join(t.path, 'bad-crc.tar.gz');
  writeFileSync(badFile, badCrc);
  await applyLayer(badFile, freshRoot()).then(() => assert.unreachable('a wrong CRC-32 taken'), (err: Error) => assert.match(err.message, /not a readable tar archive: .*check/i));
});

/** An OCI layout (tag v1) of one layer: its manifest as written. */
function ociLayout(dir: string, layer: Buffer): Buffer {
  const blobs = join(dir, 'blobs/sha256');
  mkdirSync(blobs, { recursive: true });
  const put = (b: Buffer) => { const hex = sha(b); writeFileSync(join(blobs, hex), b); return { digest: `sha256:${hex}`, size: b.length }; };
  const config = put(Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [`sha256:${sha(tar)}`] } })));
  const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config }, layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...put(layer) }] }));
  const m = put(manifest);
  writeFileSync(join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...m, annotations: { 'org.opencontainers.image.ref.name': 'v1' } }] }));
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  return manifest;
}

test('a single-layer image unpacked while skopeo writes it: one gzip member, or two (unpacked again from the finished blob)', async () => {
  const store = new ImageStore(join(t.path, 'store'));
  for (const [name, layer] of [['one', gzipSync(tar)], ['two', twoMembers]] as const) {
    const layout = join(t.path, `layout-${name}`);
    const manifest = ociLayout(layout, layer);
    const hint = streamHintOf(manifest);
    assert.ok(hint, 'a single-layer manifest gives a stream hint');
    const info = await copyImageIntoStore(store, `example/${name}:v1`, `oci:${layout}:v1`, { stream: async () => hint });
    assert.is(info.digest, sha(manifest), `${name}: the manifest's digest is the image's`);
    assertUnpacked(info.rootfs, `${name} member(s)`);
    assert.is(info.sizeBytes, disk.length + 7);
  }
  assert.equal(existsSync(join(store.root, '.tmp')) ? readdirSync(join(store.root, '.tmp')) : [], [], 'no scratch left');
});

test.after(() => t.cleanup());
test.run();
