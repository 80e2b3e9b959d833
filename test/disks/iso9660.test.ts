// The built-in ISO 9660 writer, read back by independent tools: xorriso (Rock Ridge and Joliet
// trees), blkid (label), and xorriso's media check.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IsoWriteError, PADDING_SECTORS, primaryNames, writeIso9660, type IsoEntry } from '../../launcher/disks/iso9660.ts';
import { tempDir } from '../lib/tmp.ts';
import { blkid, readIso } from './lib.ts';

const enc = (s: string) => Buffer.from(s, 'utf8');
const tmp = tempDir('qv-iso');
test.after(() => tmp.cleanup());

const big = Buffer.alloc(5000, 0x41);
big.write('tail', 4996);
const tree: IsoEntry[] = [
  { kind: 'file', name: 'meta-data', data: enc('{"instance-id":"x"}') },
  { kind: 'file', name: 'user-data', data: enc('#cloud-config\npassword: x\n') },
  { kind: 'file', name: 'network-config', data: enc('version: 2\n') },
  { kind: 'file', name: 'empty', data: enc('') },
  { kind: 'file', name: '..data', data: enc('dots') },
  { kind: 'file', name: 'UPPER.and.lower.TXT', data: enc('mixed') },
  { kind: 'file', name: 'ünïcødé', data: enc('utf8 name') },
  {
    kind: 'dir', name: 'openstack', children: [
      { kind: 'dir', name: 'latest', children: [
        { kind: 'file', name: 'meta_data.json', data: enc('{}') },
        { kind: 'file', name: 'user_data', data: big },
      ] },
    ],
  },
];
const expected = new Map<string, Buffer>([
  ['..data', enc('dots')],
  ['UPPER.and.lower.TXT', enc('mixed')],
  ['empty', enc('')],
  ['meta-data', enc('{"instance-id":"x"}')],
  ['network-config', enc('version: 2\n')],
  ['openstack/latest/meta_data.json', enc('{}')],
  ['openstack/latest/user_data', big],
  ['user-data', enc('#cloud-config\npassword: x\n')],
  ['ünïcødé', enc('utf8 name')],
]);

const sorted = (m: Map<string, Buffer>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, v.toString('hex')]);

test('Rock Ridge tree reads back with exact names and bytes; blkid sees the label', () => {
  const iso = join(tmp.path, 'rr.iso');
  writeFileSync(iso, writeIso9660(tree, { volumeId: 'cidata' }));
  assert.equal(blkid(iso), { label: 'cidata', type: 'iso9660' });
  assert.equal(sorted(readIso(iso, 'any')), sorted(expected));
});

test('Joliet tree (what Windows and norock readers use) has the same names and bytes', () => {
  const iso = join(tmp.path, 'joliet.iso');
  writeFileSync(iso, writeIso9660(tree, { volumeId: 'config-2' }));
  assert.equal(blkid(iso).label, 'config-2');
  assert.equal(sorted(readIso(iso, 'norock')), sorted(expected));
});

test('the primary tree holds unique level-1 names and xorriso finds no media errors', () => {
  const iso = join(tmp.path, 'p.iso');
  writeFileSync(iso, writeIso9660(tree, { volumeId: 'cfgdata' }));
  const listing = execFileSync('xorriso', ['-read_fs', 'ecma119', '-indev', iso, '-find', '/'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const names = listing.split('\n').filter((l) => l.startsWith("'")).map((l) => l.slice(1, -1));
  assert.ok(names.includes('/META_DAT'), listing);
  assert.ok(names.includes('/OPENSTAC/LATEST/META_DAT.JSO'), listing);
  for (const n of names) assert.ok(/^[A-Z0-9_/.]*$/.test(n), `non-d-character in ${n}`);
  const check = execFileSync('xorriso', ['-indev', iso, '-check_media', '--'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.ok(/\+ good/.test(check), check);
});

test('many files: directories spanning several sectors', () => {
  const files: IsoEntry[] = Array.from({ length: 300 }, (_, i) => ({ kind: 'file' as const, name: `key-number-${String(i).padStart(4, '0')}.conf`, data: enc(`value ${i}\n`) }));
  const iso = join(tmp.path, 'many.iso');
  writeFileSync(iso, writeIso9660(files, { volumeId: 'many' }));
  for (const tree of ['any', 'norock'] as const) {
    const back = readIso(iso, tree);
    assert.is(back.size, 300, tree);
    assert.is(back.get('key-number-0299.conf')?.toString(), 'value 299\n');
    assert.is(back.get('key-number-0000.conf')?.toString(), 'value 0\n');
  }
});

test('longest names: 103 ASCII characters (Joliet limit) and 160 UTF-8 bytes (Rock Ridge limit)', () => {
  const ascii = 'k'.repeat(103);
  const wide = 'é'.repeat(80); // 80 characters, 160 UTF-8 bytes
  const iso = join(tmp.path, 'long.iso');
  writeFileSync(iso, writeIso9660([
    { kind: 'file', name: ascii, data: enc('a') },
    { kind: 'dir', name: wide, children: [{ kind: 'file', name: wide, data: enc('w') }] },
  ], { volumeId: 'long' }));
  for (const t of ['any', 'norock'] as const) {
    const back = readIso(iso, t);
    assert.is(back.get(ascii)?.toString(), 'a', t);
    assert.is(back.get(`${wide}/${wide}`)?.toString(), 'w', t);
  }
  assert.throws(() => writeIso9660([{ kind: 'file', name: 'é'.repeat(81), data: enc('') }], { volumeId: 'x' }), /longer than 160 bytes/);
});

test('the volume size covers the image, padded like mkisofs (probers read 68 KiB windows)', () => {
  const img = writeIso9660([{ kind: 'file', name: 'meta-data', data: enc('{}') }], { volumeId: 'cidata' });
  const pvd = Buffer.from(img.subarray(16 * 2048, 17 * 2048));
  assert.is(pvd.readUInt32LE(80) * 2048, img.length);
  assert.is(pvd.readUInt32BE(84) * 2048, img.length);
  assert.ok(img.length >= 300 * 1024 + 0x11000 / 4, `image is ${img.length} bytes`);
  assert.ok(img.subarray(img.length - PADDING_SECTORS * 2048).every((b) => b === 0));
});

test('an empty tree is a valid, labelled image', () => {
  const iso = join(tmp.path, 'empty.iso');
  writeFileSync(iso, writeIso9660([], { volumeId: 'cidata' }));
  assert.is(blkid(iso).label, 'cidata');
  assert.is(readIso(iso).size, 0);
});

const nameRows: [string, IsoEntry[], string[]][] = [
  ['8.3 upper-casing and mapping to d-characters', [{ kind: 'file', name: 'meta-data', data: enc('') }], ['META_DAT.;1']],
  ['extension kept, truncated to 3', [{ kind: 'file', name: 'meta_data.json', data: enc('') }], ['META_DAT.JSO;1']],
  ['collisions get numeric suffixes', [
    { kind: 'file', name: 'network-config', data: enc('') },
    { kind: 'file', name: 'network-data', data: enc('') },
    { kind: 'file', name: 'network-xyz', data: enc('') },
  ], ['NETWORK_.;1', 'NETWOR_1.;1', 'NETWOR_2.;1']],
  ['directories have no version or dot', [{ kind: 'dir', name: 'openstack', children: [] }], ['OPENSTAC']],
  ['dot files', [{ kind: 'file', name: '..data', data: enc('') }], ['_.DAT;1']],
];
for (const [name, entries, want] of nameRows) {
  test(`primaryNames: ${name}`, () => assert.equal(primaryNames(entries), want));
}

const badRows: [string, IsoEntry[], RegExp][] = [
  ['duplicate names', [{ kind: 'file', name: 'a', data: enc('') }, { kind: 'file', name: 'a', data: enc('') }], /duplicate name "a" in \//],
  ['slash in a name', [{ kind: 'file', name: 'a/b', data: enc('') }], /invalid file name "a\/b"/],
  ['name too long for Joliet', [{ kind: 'file', name: 'x'.repeat(104), data: enc('') }], /104 characters long/],
];
for (const [name, entries, re] of badRows) {
  test(`rejects ${name}`, () => {
    assert.throws(() => writeIso9660(entries, { volumeId: 'x' }), (e: unknown) => e instanceof IsoWriteError && re.test(e.message));
  });
}

test('a 32-character label survives (Joliet keeps 16, blkid merges the rest from the PVD)', () => {
  const iso = join(tmp.path, 'label.iso');
  writeFileSync(iso, writeIso9660([], { volumeId: 'a-very-long-volume-label-32chars' }));
  assert.is(blkid(iso).label, 'a-very-long-volume-label-32chars');
});

test('rejects a volume id longer than 32 characters', () => {
  assert.throws(() => writeIso9660([], { volumeId: 'x'.repeat(33) }), /1 to 32 characters/);
});

test.run();
