// cloud-init seed disks: both writers (xorrisofs as KubeVirt calls it, and the built-in one), read
// back with xorriso and blkid, compared byte for byte with what KubeVirt writes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  cloudInitLimitViolations, configDriveMetaDataJson, decodeBase64Strict, goJsonString, noCloudMetaDataJson, prepareCloudInit, sanitizeHostname,
} from '../../launcher/disks/cloud-init.ts';
import { xorrisofsCloudInitArgs } from '../../launcher/disks/constants.ts';
import { VolumePreparationError } from '../../launcher/disks/errors.ts';
import { accessCredentialSource, cloudInitStagingDir, configDriveIso, diskDirsUnder, noCloudIso, secretSource, type DiskDirs } from '../../launcher/disks/paths.ts';
import type { VirtualMachineInstance, Volume } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { blkid, failure, readIso, vmiWith } from './lib.ts';

const tmp = tempDir('qv-ci');
test.after(() => tmp.cleanup());
let n = 0;
const fresh = (): DiskDirs => diskDirsUnder(join(tmp.path, `r${n++}`));
const UUID = '5d307ca9-b3ef-428c-8861-06e72d69f223';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const text = (m: Map<string, Buffer>) => Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

for (const writer of ['xorrisofs', 'builtin'] as const) {
  test(`${writer}: NoCloud with inline user data → noCloud.iso labelled cidata with KubeVirt's files`, async () => {
    const d = fresh();
    const userData = '#cloud-config\npassword: fedora\nchpasswd: { expire: False }\n';
    const vmi = vmiWith({ volumes: [{ name: 'cloudinitdisk', cloudInitNoCloud: { userData } }] }, { name: 'vmi-fedora', namespace: 'ns1' });
    const p = await prepareCloudInit(vmi, d, { writer });
    const iso = join(d.ephemeralDiskDir, 'cloud-init-data', 'ns1', 'vmi-fedora', 'noCloud.iso');
    assert.is(p?.path, iso);
    assert.is(iso, noCloudIso(d, 'ns1', 'vmi-fedora'));
    assert.equal({ format: p?.format, type: p?.type, source: p?.source, isoWriter: p?.isoWriter }, { format: 'raw', type: 'file', source: 'cloudInitNoCloud', isoWriter: writer });
    assert.equal(blkid(iso), { label: 'cidata', type: 'iso9660' });
    for (const tree of ['any', 'norock'] as const) {
      assert.equal(text(readIso(iso, tree)), {
        'meta-data': `{"instance-id":"${UUID}","local-hostname":"vmi-fedora"}`,
        'user-data': userData,
      }, tree);
    }
    // the data files are removed once the ISO exists; no staging ISO is left behind
    assert.equal(readdirSync(cloudInitStagingDir(d, 'ns1', 'vmi-fedora')), []);
    assert.ok(!existsSync(`${iso}.staging`));
  });

  test(`${writer}: ConfigDrive with ssh keys, instancetype and devices → configdrive.iso labelled config-2`, async () => {
    const d = fresh();
    const vmi = vmiWith({
      volumes: [{ name: 'cd', cloudInitConfigDrive: { userDataBase64: b64('#!/bin/sh\necho hi\n'), networkData: '{"links":[]}' } }],
      hostname: 'myhost',
      accessCredentials: [
        { sshPublicKey: { source: { secret: { secretName: 'keys' } }, propagationMethod: { configDrive: {} } } },
        { sshPublicKey: { source: { secret: { secretName: 'other' } }, propagationMethod: { noCloud: {} } } },
      ],
    }, { name: 'vm', namespace: 'prod', annotations: { 'kubevirt.io/instancetype-name': 'u1.small', 'kubevirt.io/cluster-instancetype-name': 'cx1.large' } });
    const keys = accessCredentialSource(d, 'keys');
    mkdirSync(join(keys, '..2026_11_21'), { recursive: true });
    writeFileSync(join(keys, 'b'), 'ssh-ed25519 BBBB b@x');
    writeFileSync(join(keys, 'a'), 'ssh-rsa AAAA a@x');
    writeFileSync(join(keys, 'empty'), '');
    writeFileSync(join(keys, '..data'), 'ignored');
    const p = await prepareCloudInit(vmi, d, { writer, devices: [{ type: 'nic', bus: 'pci', address: '0000:01:00.0', mac: 'de:ad:00:00:be:ef', tags: ['nic1'] }] });
    const iso = configDriveIso(d, 'prod', 'vm');
    assert.is(p?.path, iso);
    assert.ok(iso.endsWith('/cloud-init-data/prod/vm/configdrive.iso'));
    assert.is(blkid(iso).label, 'config-2');
    assert.equal(text(readIso(iso)), {
      'openstack/latest/meta_data.json': `{"instance_type":"cx1.large","instance_id":"vm.prod","hostname":"myhost","uuid":"${UUID}",` +
        `"devices":[{"type":"nic","bus":"pci","address":"0000:01:00.0","mac":"de:ad:00:00:be:ef","tags":["nic1"]}],` +
        `"public_keys":{"0":"ssh-rsa AAAA a@x","1":"ssh-ed25519 BBBB b@x"}}`,
      'openstack/latest/network_data.json': '{"links":[]}',
      'openstack/latest/user_data': '#!/bin/sh\necho hi\n',
    });
  });

  test(`${writer}: secretRef and networkDataSecretRef read from <private>/secret/<vol>`, async () => {
    const d = fresh();
    const vmi = vmiWith({ volumes: [{ name: 'ci', cloudInitNoCloud: { secretRef: { name: 's' }, networkDataSecretRef: { name: 's' } } }] });
    const dir = secretSource(d, 'ci');
    mkdirSync(dir, { recursive: true });
    const binary = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x80, 0x7f]); // gzip-looking, not UTF-8
    writeFileSync(join(dir, 'userData'), binary);
    writeFileSync(join(dir, 'networkdata'), 'version: 2\nethernets: {}\n');
    await prepareCloudInit(vmi, d, { writer });
    const files = readIso(noCloudIso(d, 'default', 'testvmi'));
    assert.equal(files.get('user-data'), binary);
    assert.is(files.get('network-config')?.toString(), 'version: 2\nethernets: {}\n');
    assert.is(files.get('meta-data')?.toString(), `{"instance-id":"${UUID}","local-hostname":"testvmi"}`);
  });
}

test('base64 user and network data are decoded to exact bytes; NoCloud public-keys from noCloud credentials', async () => {
  const d = fresh();
  const vmi = vmiWith({
    volumes: [{ name: 'ci', cloudInitNoCloud: { userDataBase64: b64('#cloud-config\nusers: []\n'), networkDataBase64: b64('network: {config: disabled}\n') } }],
    accessCredentials: [{ sshPublicKey: { source: { secret: { secretName: 'k' } }, propagationMethod: { noCloud: {} } } }],
  });
  mkdirSync(accessCredentialSource(d, 'k'), { recursive: true });
  for (let i = 0; i < 11; i++) writeFileSync(join(accessCredentialSource(d, 'k'), `key${String(i).padStart(2, '0')}`), `ssh-ed25519 K${i}`);
  await prepareCloudInit(vmi, d, { writer: 'builtin' });
  const files = readIso(noCloudIso(d, 'default', 'testvmi'));
  assert.is(files.get('user-data')?.toString(), '#cloud-config\nusers: []\n');
  assert.is(files.get('network-config')?.toString(), 'network: {config: disabled}\n');
  const keys = Array.from({ length: 11 }, (_, i) => [String(i), `ssh-ed25519 K${i}`] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `"${k}":"${v}"`).join(',');
  assert.is(files.get('meta-data')?.toString(), `{"instance-id":"${UUID}","local-hostname":"testvmi","public-keys":{${keys}}}`);
});

test('errors carry KubeVirt\'s messages and the volume name', async () => {
  const d = fresh();
  const run = (v: Volume) => failure(prepareCloudInit(vmiWith({ volumes: [v] }), d, { writer: 'builtin' }));
  let e = await run({ name: 'ci', cloudInitNoCloud: {} });
  assert.instance(e, VolumePreparationError);
  assert.is(e.message, 'volume "ci" (cloudInitNoCloud): userDataBase64, userData, networkDataBase64 or networkData is required for a cloud-init data source');
  e = await run({ name: 'ci', cloudInitConfigDrive: { secretRef: { name: 's' }, networkDataSecretRef: { name: 's' } } });
  assert.is(e.message, 'volume "ci" (cloudInitConfigDrive): no cloud-init data-source found at volume: ci');
  e = await run({ name: 'ci', cloudInitNoCloud: { userDataBase64: 'not base64!' } });
  assert.match(e.message, 'volume "ci" (cloudInitNoCloud): spec.volumes[0].cloudInitNoCloud.userDataBase64 is not a valid base64 value.');
  e = await run({ name: 'big', cloudInitNoCloud: { userData: 'x'.repeat(2049) } });
  assert.is(e.message, 'volume "big" (cloudInitNoCloud): spec.volumes[0].cloudInitNoCloud userdata exceeds 2048 byte limit. Should use UserDataSecretRef for larger data.');
  // only one secret file missing is not an error by itself; the data check then fails
  e = await run({ name: 'ci', cloudInitNoCloud: { secretRef: { name: 's' } } });
  assert.match(e.message, 'userDataBase64, userData, networkDataBase64 or networkData is required');
});

test('secret data is not subject to the 2048-byte inline limit', async () => {
  const d = fresh();
  const dir = secretSource(d, 'ci');
  mkdirSync(dir, { recursive: true });
  const large = `#cloud-config\n# ${'y'.repeat(100_000)}\n`;
  writeFileSync(join(dir, 'userdata'), large);
  await prepareCloudInit(vmiWith({ volumes: [{ name: 'ci', cloudInitNoCloud: { secretRef: { name: 's' } } }] }), d, { writer: 'builtin' });
  assert.is(readIso(noCloudIso(d, 'default', 'testvmi')).get('user-data')?.toString(), large);
});

test('migration target: a zero-filled ISO of the source\'s size', async () => {
  const d = fresh();
  const vmi = vmiWith({ volumes: [{ name: 'ci', cloudInitNoCloud: { userData: '#cloud-config\n' } }] });
  vmi.status = { volumeStatus: [{ name: 'ci', target: 'vdb', size: 1048576 }] };
  const p = await prepareCloudInit(vmi, d, { emptyIsos: true });
  assert.is(statSync(p!.path).size, 1048576);
  assert.ok(readFileSync(p!.path).every((b) => b === 0));
  vmi.status = {};
  const e = await failure(prepareCloudInit(vmi, d, { emptyIsos: true }));
  assert.match(e.message, 'failed to find the status of volume ci');
});

test('no cloud-init volume → nothing', async () => {
  assert.is(await prepareCloudInit(vmiWith({ volumes: [{ name: 'e', emptyDisk: { capacity: '1Mi' } }] }), fresh()), undefined);
});

test('xorrisofs argv is KubeVirt\'s', () => {
  assert.equal(xorrisofsCloudInitArgs('/o.iso.staging', 'cidata', '/d'), ['-output', '/o.iso.staging', '-volid', 'cidata', '-joliet', '-rock', '-partition_cyl_align', 'on', '/d']);
});

// --- pure tables ------------------------------------------------------------------------------

const jsonRows: [string, string][] = [
  ['plain', '"plain"'],
  ['a<b>&c', '"a\\u003cb\\u003e\\u0026c"'],
  ['line\u2028sep\u2029', '"line\\u2028sep\\u2029"'],
  ['tab\tnl\n"q"\\', '"tab\\tnl\\n\\"q\\"\\\\"'],
  ['\u0001', '"\\u0001"'],
  ['ünï', '"ünï"'],
];
for (const [input, want] of jsonRows) test(`goJsonString ${JSON.stringify(input)}`, () => assert.is(goJsonString(input), want));

test('metadata JSON: omitempty and field order as Go marshals the structs', () => {
  assert.is(noCloudMetaDataJson({ instanceId: '' }), '{"instance-id":""}');
  assert.is(noCloudMetaDataJson({ instanceId: 'i', instanceType: 't', localHostname: 'h', publicSSHKeys: {} }), '{"instance-type":"t","instance-id":"i","local-hostname":"h"}');
  assert.is(configDriveMetaDataJson({ instanceId: 'a.b' }), '{"instance_id":"a.b"}');
  assert.is(configDriveMetaDataJson({ instanceId: 'a.b', uuid: 'u', hostname: 'h', devices: [], publicSSHKeys: { 10: 'x', 2: 'y' } }), '{"instance_id":"a.b","hostname":"h","uuid":"u","devices":[],"public_keys":{"10":"x","2":"y"}}');
});

const hostRows: [string, Partial<VirtualMachineInstance['spec']>, string, string][] = [
  ['name', {}, 'vm1', 'vm1'],
  ['dotted name → first label', {}, 'web.example', 'web'],
  ['long name → 63 chars', {}, 'a'.repeat(70), 'a'.repeat(63)],
  ['spec.hostname wins', { hostname: 'custom' }, 'vm1', 'custom'],
];
for (const [name, spec, vmiName, want] of hostRows) {
  test(`sanitizeHostname: ${name}`, () => assert.is(sanitizeHostname(vmiWith({ volumes: [], ...spec }, { name: vmiName })), want));
}

const b64Rows: [string, string | RegExp][] = [
  ['aGVsbG8=', 'hello'],
  ['aGVs\nbG8=', 'hello'],
  ['aGVsbG8', /illegal base64 data at input byte 4/],
  ['aGVs*G8=', /illegal base64 data at input byte 4/],
  ['aG=sbG8=', /illegal base64 data at input byte 2/],
];
for (const [input, want] of b64Rows) {
  test(`decodeBase64Strict ${JSON.stringify(input)}`, () => {
    if (typeof want === 'string') assert.is(Buffer.from(decodeBase64Strict(input, 'f')).toString(), want);
    else assert.throws(() => decodeBase64Strict(input, 'f'), want);
  });
}

const limitRows: [string, Volume, string[]][] = [
  ['2048 bytes is fine', { name: 'v', cloudInitNoCloud: { userData: 'x'.repeat(2048) } }, []],
  ['2049 bytes of user data', { name: 'v', cloudInitNoCloud: { userData: 'x'.repeat(2049) } }, ['spec.volumes[3].cloudInitNoCloud userdata exceeds 2048 byte limit. Should use UserDataSecretRef for larger data.']],
  ['multi-byte characters count as bytes', { name: 'v', cloudInitNoCloud: { userData: 'é'.repeat(1025) } }, ['spec.volumes[3].cloudInitNoCloud userdata exceeds 2048 byte limit. Should use UserDataSecretRef for larger data.']],
  ['base64 counts decoded bytes', { name: 'v', cloudInitConfigDrive: { networkDataBase64: b64('n'.repeat(2049)) } }, ['spec.volumes[3].cloudInitConfigDrive networkdata exceeds 2048 byte limit. Should use NetworkDataSecretRef for larger data.']],
  ['not cloud-init', { name: 'v', emptyDisk: { capacity: '1Mi' } }, []],
];
for (const [name, volume, want] of limitRows) test(`cloudInitLimitViolations: ${name}`, () => assert.equal(cloudInitLimitViolations(volume, 3), want));

test.run();
