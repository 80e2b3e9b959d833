// prepareVolumes over a VMI with every kind of disk source, and cleanup afterwards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanupPaths, cleanupVolumes } from '../../launcher/disks/cleanup.ts';
import { prepareVolumes } from '../../launcher/disks/prepare.ts';
import { planVolume } from '../../launcher/disks/plan.ts';
import { configMapSource, containerDiskTarget, diskDirsUnder, hostDiskMounted, pvcFilesystemImage, secretSource, vmiDiskDir } from '../../launcher/disks/paths.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';
import { backingChain, failure, qemuImg, readIso } from './lib.ts';

const tmp = tempDir('qv-prep');
test.after(() => tmp.cleanup());

function bigVmi(): VirtualMachineInstance {
  const volumes = [
    { name: 'rootdisk', containerDisk: { image: 'quay.io/containerdisks/fedora:41' } },
    { name: 'cloudinitdisk', cloudInitNoCloud: { userData: '#cloud-config\n' } },
    { name: 'scratch', emptyDisk: { capacity: '128Mi' } },
    { name: 'data', persistentVolumeClaim: { claimName: 'data-pvc' } },
    { name: 'host', hostDisk: { path: '/mnt/disks/host.img', type: 'DiskOrCreate' as const, capacity: '16Mi' } },
    { name: 'golden', ephemeral: { persistentVolumeClaim: { claimName: 'golden-pvc' } } },
    { name: 'app-config', configMap: { name: 'app' } },
    { name: 'unreferenced', secret: { secretName: 's' } },
    { name: 'shared', persistentVolumeClaim: { claimName: 'shared-fs' } },
  ];
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: 'big', namespace: 'tenant', uid: 'u-1' },
    spec: {
      domain: {
        firmware: { uuid: '11111111-2222-3333-4444-555555555555' },
        devices: {
          disks: volumes.filter((v) => v.name !== 'unreferenced' && v.name !== 'shared').map((v) => ({ name: v.name, disk: { bus: 'virtio' as const } })),
          filesystems: [{ name: 'shared', virtiofs: {} }],
        },
      },
      volumes,
    },
    status: { volumeStatus: [{ name: 'data', target: '', persistentVolumeClaimInfo: { volumeMode: 'Filesystem', capacity: { storage: '64Mi' }, requests: { storage: '64Mi' } } }] },
  };
}

test('every source prepared in spec order; cleanup removes what the launcher made and nothing else', async () => {
  const d = diskDirsUnder(join(tmp.path, 'a'));
  const vmi = bigVmi();
  mkdirSync(d.containerDiskDir, { recursive: true });
  qemuImg('create', '-f', 'qcow2', containerDiskTarget(d, 0), '32M');
  mkdirSync(vmiDiskDir(d, 'data'), { recursive: true });
  mkdirSync(vmiDiskDir(d, 'host'), { recursive: true });
  mkdirSync(vmiDiskDir(d, 'golden'), { recursive: true });
  qemuImg('create', '-f', 'raw', pvcFilesystemImage(d, 'golden'), '8M');
  mkdirSync(configMapSource(d, 'app-config'), { recursive: true });
  writeFileSync(join(configMapSource(d, 'app-config'), 'k'), 'v');
  mkdirSync(secretSource(d, 'unreferenced'), { recursive: true });

  const lines: string[] = [];
  const log = componentLogger('launcher', { level: 'info', destination: { write: (s: string) => { lines.push(s); return true; } } as unknown as NodeJS.WritableStream });
  const r = await prepareVolumes(vmi, d, { isoWriter: 'builtin', log, owner: { uid: 107, gid: 107 } });
  assert.equal(r.volumes.map((v) => [v.name, v.source, v.format, v.type]), [
    ['rootdisk', 'containerDisk', 'qcow2', 'file'],
    ['cloudinitdisk', 'cloudInitNoCloud', 'raw', 'file'],
    ['scratch', 'emptyDisk', 'qcow2', 'file'],
    ['data', 'persistentVolumeClaim', 'raw', 'file'],
    ['host', 'hostDisk', 'raw', 'file'],
    ['golden', 'ephemeral', 'qcow2', 'file'],
    ['app-config', 'configMap', 'raw', 'file'],
  ]);
  assert.equal(r.skipped, [
    { name: 'unreferenced', reason: 'no disk references it' },
    { name: 'shared', reason: 'shared with the guest as a filesystem (virtiofs), not a disk' },
  ]);
  const by = Object.fromEntries(r.volumes.map((v) => [v.name, v]));
  assert.is(backingChain(by.rootdisk!.path)[0]!['backing-filename'], containerDiskTarget(d, 0));
  assert.is(readIso(by.cloudinitdisk!.path).get('meta-data')?.toString(), '{"instance-id":"11111111-2222-3333-4444-555555555555","local-hostname":"big"}');
  assert.is(backingChain(by.scratch!.path)[0]!['virtual-size'], 128 * 1024 * 1024);
  assert.is(by.data!.path, pvcFilesystemImage(d, 'data'));
  assert.is(by.host!.path, hostDiskMounted(d, 'host', '/mnt/disks/host.img'));
  assert.is(by.golden!.backing?.path, pvcFilesystemImage(d, 'golden'));
  for (const v of r.volumes) {
    const st = statSync(v.path);
    assert.equal([v.name, st.uid, st.gid], [v.name, 107, 107]);
  }
  assert.ok(lines.some((l) => l.includes('"volume":"rootdisk"') && l.includes('"name":"big"') && l.includes('"namespace":"tenant"')), lines.join(''));

  // the pure plan agrees with what was prepared
  for (const v of r.volumes) {
    const planned = planVolume(vmi, vmi.spec.volumes!.find((x) => x.name === v.name)!, d);
    assert.equal(planned, { name: v.name, source: v.source, type: v.type, path: v.path, format: v.format }, v.name);
  }

  const removed = await cleanupVolumes(vmi, d);
  assert.equal(removed, cleanupPaths(vmi, d));
  for (const gone of [by.rootdisk!.path, by.cloudinitdisk!.path, by.scratch!.path, by.golden!.path, by['app-config']!.path]) assert.ok(!existsSync(gone), gone);
  for (const kept of [containerDiskTarget(d, 0), by.data!.path, by.host!.path, pvcFilesystemImage(d, 'golden'), join(configMapSource(d, 'app-config'), 'k')]) assert.ok(existsSync(kept), kept);
  assert.equal(readdirSync(join(d.ephemeralDiskDir, 'cloud-init-data', 'tenant')), []);
});

test('the first failing volume stops preparation and is named', async () => {
  const d = diskDirsUnder(join(tmp.path, 'b'));
  const vmi = bigVmi();
  const e = await failure(prepareVolumes(vmi, d, { isoWriter: 'builtin' }));
  assert.match(e.message, /^volume "rootdisk" \(containerDisk\): no supported file disk found/);
});

test('a VMI without name or namespace is refused', async () => {
  const vmi = bigVmi();
  delete vmi.metadata!.namespace;
  const e = await failure(prepareVolumes(vmi, diskDirsUnder(join(tmp.path, 'c'))));
  assert.match(e.message, 'metadata.name and metadata.namespace');
});

test('planVolume table: every source\'s path and format', () => {
  const d = diskDirsUnder('/');
  const vmi = bigVmi();
  const rows: [Parameters<typeof planVolume>[1], Parameters<typeof planVolume>[3], [string, string, string] | undefined][] = [
    [{ name: 'cd', containerDisk: { image: 'i' } }, {}, ['file', '/var/run/kubevirt-ephemeral-disks/disk-data/cd/disk.qcow2', 'qcow2']],
    [{ name: 'eph', ephemeral: { persistentVolumeClaim: { claimName: 'c' } } }, { isBlock: true }, ['file', '/var/run/kubevirt-ephemeral-disks/disk-data/eph/disk.qcow2', 'qcow2']],
    [{ name: 'e', emptyDisk: { capacity: '1Gi' } }, {}, ['file', '/var/run/libvirt/empty-disks/e.qcow2', 'qcow2']],
    [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }, {}, ['file', '/var/run/kubevirt-private/vmi-disks/p/disk.img', 'raw']],
    [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }, { isBlock: true }, ['block', '/dev/p', 'raw']],
    [{ name: 'dv', dataVolume: { name: 'd' } }, { hotplug: true }, ['file', '/var/run/kubevirt/hotplug-disks/dv.img', 'raw']],
    [{ name: 'dv', dataVolume: { name: 'd' } }, { hotplug: true, isBlock: true }, ['block', '/var/run/kubevirt/hotplug-disks/dv', 'raw']],
    [{ name: 'h', hostDisk: { path: '/data/x.img', type: 'Disk' } }, {}, ['file', '/var/run/kubevirt-private/vmi-disks/h/x.img', 'raw']],
    [{ name: 'h', hostDisk: { path: '/data/x.img', type: 'Disk' } }, { hostDiskView: 'host' }, ['file', '/data/x.img', 'raw']],
    [{ name: 'ci', cloudInitNoCloud: {} }, {}, ['file', '/var/run/kubevirt-ephemeral-disks/cloud-init-data/tenant/big/noCloud.iso', 'raw']],
    [{ name: 'ci', cloudInitConfigDrive: {} }, {}, ['file', '/var/run/kubevirt-ephemeral-disks/cloud-init-data/tenant/big/configdrive.iso', 'raw']],
    [{ name: 'cm', configMap: {} }, {}, ['file', '/var/run/kubevirt-private/config-map-disks/cm.iso', 'raw']],
    [{ name: 's', secret: {} }, {}, ['file', '/var/run/kubevirt-private/secret-disks/s.iso', 'raw']],
    [{ name: 'da', downwardAPI: {} }, {}, ['file', '/var/run/kubevirt-private/downwardapi-disks/da.iso', 'raw']],
    [{ name: 'sa', serviceAccount: {} }, {}, ['file', '/var/run/kubevirt-private/service-account-disk/service-account.iso', 'raw']],
    [{ name: 'sp', sysprep: {} }, {}, ['file', '/var/run/kubevirt-private/sysprep-disks/sp.iso', 'raw']],
    [{ name: 'dm', downwardMetrics: {} }, {}, ['file', '/var/run/kubevirt-private/downwardapi-disks/vhostmd0', 'raw']],
    [{ name: 'md', memoryDump: { claimName: 'c' } }, {}, undefined],
  ];
  for (const [volume, facts, want] of rows) {
    const p = planVolume(vmi, volume, d, facts);
    assert.equal(p ? [p.type, p.path, p.format] : undefined, want, `${volume.name} ${JSON.stringify(facts)}`);
  }
});

test('cleanupPaths never names user data and never the whole cloud-init dir', () => {
  const d = diskDirsUnder('/r');
  const vmi = bigVmi();
  const paths = cleanupPaths(vmi, d);
  assert.equal(paths, [
    '/r/var/run/kubevirt-ephemeral-disks/disk-data/rootdisk',
    '/r/var/run/libvirt/empty-disks/scratch.qcow2',
    '/r/var/run/kubevirt-ephemeral-disks/disk-data/golden',
    '/r/var/run/kubevirt-private/config-map-disks/app-config.iso',
    '/r/var/run/kubevirt-private/config-map-disks/app-config.iso.staging',
    '/r/var/run/kubevirt-private/secret-disks/unreferenced.iso',
    '/r/var/run/kubevirt-private/secret-disks/unreferenced.iso.staging',
    '/r/var/run/kubevirt-ephemeral-disks/cloud-init-data/tenant/big',
  ]);
  delete vmi.metadata!.name;
  assert.ok(!cleanupPaths(vmi, d).some((p) => p.includes('cloud-init-data')));
});

test.run();
