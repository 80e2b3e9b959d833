// configMap / secret / downwardAPI / serviceAccount / sysprep disks: ISOs of the kubelet-mounted
// directories, from both writers, read back with xorriso and blkid.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configVolumeLayout, prepareConfigVolume } from '../../launcher/disks/config-volumes.ts';
import { xorrisofsConfigArgs } from '../../launcher/disks/constants.ts';
import { graftPoints } from '../../launcher/disks/iso.ts';
import { configMapIso, configMapSource, diskDirsUnder, downwardAPIIso, downwardAPISource, secretIso, secretSource, serviceAccountIso, sysprepIso, sysprepSource, type DiskDirs } from '../../launcher/disks/paths.ts';
import type { Volume } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { blkid, failure, readIso } from './lib.ts';

const tmp = tempDir('qv-cfg');
test.after(() => tmp.cleanup());
let n = 0;
const fresh = (): DiskDirs => diskDirsUnder(join(tmp.path, `r${n++}`));
const text = (m: Map<string, Buffer>) => Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

/** Lays out a directory the way the kubelet's atomic writer does: timestamped dir, ..data link, key links. */
function kubeletVolume(dir: string, files: Record<string, string>): void {
  const ts = '..2026_11_21_17_00_00.000000001';
  mkdirSync(join(dir, ts), { recursive: true });
  for (const [k, v] of Object.entries(files)) {
    writeFileSync(join(dir, ts, k), v);
    symlinkSync(join('..data', k), join(dir, k));
  }
  symlinkSync(ts, join(dir, '..data'));
}

const files = { 'app.properties': 'color=blue\n', 'UPPER_key': 'x', 'option.json': '{"a":1}' };
const expected = (): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(files)) {
    out[k] = v;
    out[`..data/${k}`] = v;
    out[`..2026_11_21_17_00_00.000000001/${k}`] = v;
  }
  return out;
};

for (const writer of ['xorrisofs', 'builtin'] as const) {
  test(`${writer}: configMap → <private>/config-map-disks/<vol>.iso, default label cfgdata, links followed`, async () => {
    const d = fresh();
    kubeletVolume(configMapSource(d, 'app-config'), files);
    const v: Volume = { name: 'app-config', configMap: { name: 'cm' } };
    const p = await prepareConfigVolume(v, d, { writer });
    assert.is(p.path, join(d.privateDir, 'config-map-disks', 'app-config.iso'));
    assert.equal({ source: p.source, format: p.format, isoWriter: p.isoWriter }, { source: 'configMap', format: 'raw', isoWriter: writer });
    assert.equal(blkid(p.path), { label: 'cfgdata', type: 'iso9660' });
    const sorted = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
    assert.equal(sorted(text(readIso(p.path))), sorted(expected()));
    assert.equal(sorted(text(readIso(p.path, 'norock'))), sorted(expected()));
    assert.ok(!existsSync(`${p.path}.staging`));
  });

  test(`${writer}: secret and downwardAPI with volumeLabel; serviceAccount; sysprep labelled unattendCD`, async () => {
    const d = fresh();
    kubeletVolume(secretSource(d, 'sec'), { password: 's3cret' });
    kubeletVolume(downwardAPISource(d, 'dapi'), { labels: 'app="x"\n' });
    kubeletVolume(d.serviceAccountDir, { token: 'eyJ...', namespace: 'default', 'ca.crt': '-----BEGIN' });
    kubeletVolume(sysprepSource(d, 'sp'), { 'Autounattend.xml': '<unattend/>' });
    const s = await prepareConfigVolume({ name: 'sec', secret: { secretName: 'x', volumeLabel: 'SECRETS' } }, d, { writer });
    assert.is(s.path, secretIso(d, 'sec'));
    assert.is(blkid(s.path).label, 'SECRETS');
    assert.is(readIso(s.path).get('password')?.toString(), 's3cret');
    const da = await prepareConfigVolume({ name: 'dapi', downwardAPI: { fields: [], volumeLabel: 'meta' } }, d, { writer });
    assert.is(da.path, downwardAPIIso(d, 'dapi'));
    assert.is(blkid(da.path).label, 'meta');
    assert.is(readIso(da.path).get('labels')?.toString(), 'app="x"\n');
    const sa = await prepareConfigVolume({ name: 'sa', serviceAccount: { serviceAccountName: 'default' } }, d, { writer });
    assert.is(sa.path, serviceAccountIso(d));
    assert.ok(sa.path.endsWith('/service-account-disk/service-account.iso'));
    assert.is(blkid(sa.path).label, 'cfgdata');
    assert.is(readIso(sa.path).get('token')?.toString(), 'eyJ...');
    const sp = await prepareConfigVolume({ name: 'sp', sysprep: { configMap: { name: 'unattend' } } }, d, { writer });
    assert.is(sp.path, sysprepIso(d, 'sp'));
    assert.is(blkid(sp.path).label, 'unattendCD');
    assert.is(readIso(sp.path).get('Autounattend.xml')?.toString(), '<unattend/>');
  });
}

test('errors: source not mounted; sysprep without an answer file', async () => {
  const d = fresh();
  let e = await failure(prepareConfigVolume({ name: 'cm', configMap: { name: 'x' } }, d));
  assert.match(e.message, `volume "cm" (configMap): reading the mounted volume ${configMapSource(d, 'cm')}: ENOENT`);
  kubeletVolume(sysprepSource(d, 'sp'), { 'other.txt': 'x' });
  e = await failure(prepareConfigVolume({ name: 'sp', sysprep: { secret: { name: 'x' } } }, d));
  assert.is(e.message, 'volume "sp" (sysprep): Sysprep drive should contain autounattend.xml or unattend.xml but neither were found.');
});

test('an empty configMap still makes a valid ISO', async () => {
  const d = fresh();
  mkdirSync(configMapSource(d, 'empty'), { recursive: true });
  const p = await prepareConfigVolume({ name: 'empty', configMap: { name: 'x', volumeLabel: 'E' } }, d);
  assert.is(blkid(p.path).label, 'E');
  assert.is(readIso(p.path).size, 0);
});

test('layout table: paths and labels per kind', () => {
  const d = diskDirsUnder('/r');
  const rows: [Volume, string, string][] = [
    [{ name: 'a', configMap: { name: 'x' } }, '/r/var/run/kubevirt-private/config-map-disks/a.iso', 'cfgdata'],
    [{ name: 'b', configMap: { name: 'x', volumeLabel: 'L' } }, configMapIso(d, 'b'), 'L'],
    [{ name: 'c', secret: { secretName: 'x' } }, '/r/var/run/kubevirt-private/secret-disks/c.iso', 'cfgdata'],
    [{ name: 'e', downwardAPI: {} }, '/r/var/run/kubevirt-private/downwardapi-disks/e.iso', 'cfgdata'],
    [{ name: 'f', serviceAccount: {} }, '/r/var/run/kubevirt-private/service-account-disk/service-account.iso', 'cfgdata'],
    [{ name: 'g', sysprep: {} }, '/r/var/run/kubevirt-private/sysprep-disks/g.iso', 'unattendCD'],
  ];
  for (const [v, iso, label] of rows) {
    const l = configVolumeLayout(d, v);
    assert.equal([l?.iso, l?.label], [iso, label], v.name);
  }
  assert.is(configVolumeLayout(d, { name: 'h', emptyDisk: { capacity: '1Mi' } }), undefined);
  assert.is(configVolumeLayout(d, { name: 'f', serviceAccount: {} })?.sourceDir, '/r/var/run/secrets/kubernetes.io/serviceaccount');
});

test('xorrisofs argv and graft points are KubeVirt\'s', async () => {
  const d = fresh();
  kubeletVolume(configMapSource(d, 'x'), { k: 'v' });
  const grafts = await graftPoints(configMapSource(d, 'x'));
  const src = configMapSource(d, 'x');
  assert.equal(grafts, [`..2026_11_21_17_00_00.000000001=${src}/..2026_11_21_17_00_00.000000001`, `..data=${src}/..data`, `k=${src}/k`]);
  assert.equal(xorrisofsConfigArgs('/o.staging', 'cfgdata', ['k=/s/k']), ['-output', '/o.staging', '-follow-links', '-volid', 'cfgdata', '-joliet', '-rock', '-graft-points', '-partition_cyl_align', 'on', 'k=/s/k']);
});

test.run();
