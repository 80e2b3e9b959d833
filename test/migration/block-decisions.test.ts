// Table tests for block migration's pure parts: whether a migration copies disks and which
// (src/api/block-migration.ts, KubeVirt's checkVolumesForMigration / classifyVolumesForMigration /
// getDiskTargetsForMigration), each disk's top node, the QMP sequences of both ends
// (launcher/migration/block.ts), the target's paused argv, and the source node agent's wait for the
// second (disks) port.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { disksToMigrate, isBlockMigration, specNeedsBlockMigration } from '../../src/api/block-migration.ts';
import { BlockMigrationError, blockMigrationEndpoint, migratedDisks, sourceMirrorAbort, sourceMirrorCompletion, sourceMirrorSteps, sourceNodeRemoval, targetExportSteps, targetExportTeardown } from '../../launcher/migration/block.ts';
import { incomingArgv } from '../../launcher/migration/target.ts';
import { migrationDataSizeGiB } from '../../launcher/migration/options.ts';
import { domainJobInfo } from '../../launcher/domain/migration-metadata.ts';
import { sourceAction } from '../../handler/migration/state.ts';
import type { Disk, VirtualMachineInstance, Volume } from '../../src/api/types.ts';
import type { PlanDevice } from '../../launcher/convert/plan.ts';

function vmi(disks: Disk[], volumes: Volume[], status: Partial<NonNullable<VirtualMachineInstance['status']>> = {}, filesystems: string[] = []): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'default', uid: 'u1' },
    spec: { domain: { devices: { disks, ...(filesystems.length ? { filesystems: filesystems.map((name) => ({ name, virtiofs: {} })) } : {}) } }, volumes },
    status: { phase: 'Running', ...status },
  } as VirtualMachineInstance;
}
const disk = (name: string, extra: Partial<Disk> = {}): Disk => ({ name, disk: { bus: 'virtio' }, ...extra });
const cdrom = (name: string, readonly?: boolean): Disk => ({ name, cdrom: { bus: 'sata', ...(readonly !== undefined ? { readonly } : {}) } });

test('isBlockMigration / disksToMigrate: KubeVirt\'s volume rules', () => {
  const rows: [string, VirtualMachineInstance, boolean, string[]][] = [
    ['containerDisk', vmi([disk('root')], [{ name: 'root', containerDisk: { image: 'x' } }]), true, ['root']],
    ['emptyDisk', vmi([disk('scratch')], [{ name: 'scratch', emptyDisk: { capacity: '1Gi' } }]), true, ['scratch']],
    ['ephemeral PVC overlay', vmi([disk('e')], [{ name: 'e', ephemeral: { persistentVolumeClaim: { claimName: 'c' } } }]), true, ['e']],
    ['cloud-init disk (generated)', vmi([disk('ci')], [{ name: 'ci', cloudInitNoCloud: { userData: '#!/bin/sh' } }]), true, ['ci']],
    ['containerDisk + cloud-init (vmi-migratable.yaml)', vmi([disk('root'), disk('ci')], [{ name: 'root', containerDisk: { image: 'x' } }, { name: 'ci', cloudInitNoCloud: { userData: 'x' } }]), true, ['root', 'ci']],
    ['shared PVC only', vmi([disk('p')], [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }]), false, []],
    ['DataVolume only', vmi([disk('d')], [{ name: 'd', dataVolume: { name: 'dv' } }]), false, []],
    ['shared hostDisk', vmi([disk('h')], [{ name: 'h', hostDisk: { path: '/x', type: 'Disk', shared: true } }]), false, []],
    ['read-only CD-ROM (containerDisk)', vmi([cdrom('iso')], [{ name: 'iso', containerDisk: { image: 'x' } }]), false, []],
    ['cloud-init on a CD-ROM', vmi([cdrom('ci')], [{ name: 'ci', cloudInitNoCloud: { userData: 'x' } }]), false, []],
    ['writable CD-ROM: block, but CD-ROMs are never copied', vmi([cdrom('iso', false)], [{ name: 'iso', containerDisk: { image: 'x' } }]), true, []],
    ['read-only configMap disk: block, not copied (QEMU cannot export a read-only node writable)', vmi([disk('cm', { disk: { bus: 'virtio', readonly: true } })], [{ name: 'cm', configMap: { name: 'cm' } }]), true, []],
    ['virtiofs filesystem', vmi([], [{ name: 'fs', configMap: { name: 'cm' } }], {}, ['fs']), false, []],
    ['no volumes (kernel boot)', vmi([], []), false, []],
    ['PVC being migrated (migratedVolumes)', vmi([disk('p')], [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }], { migratedVolumes: [{ volumeName: 'p' }] }), true, ['p']],
    ['PVC + containerDisk: the PVC is shared', vmi([disk('p'), disk('root')], [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }, { name: 'root', containerDisk: { image: 'x' } }]), true, ['root']],
    ['status.migrationMethod LiveMigration decides', vmi([disk('root')], [{ name: 'root', containerDisk: { image: 'x' } }], { migrationMethod: 'LiveMigration' }), false, []],
    ['status.migrationMethod BlockMigration decides', vmi([disk('p')], [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }, { name: 'x', emptyDisk: { capacity: '1Gi' } }], { migrationMethod: 'BlockMigration' }), true, []],
  ];
  for (const [what, v, block, disks] of rows) {
    assert.is(isBlockMigration(v), block, `${what}: isBlockMigration`);
    assert.equal(disksToMigrate(v), disks, `${what}: disksToMigrate`);
  }
  assert.is(specNeedsBlockMigration(vmi([disk('root')], [{ name: 'root', containerDisk: { image: 'x' } }], { migrationMethod: 'LiveMigration' })), true, 'the spec rule ignores the status');
});

test('migratedDisks: each disk\'s top node from the plan; a disk without one is an error naming it', () => {
  const devices: PlanDevice[] = [
    { alias: 'root', kind: 'disk', qemuId: 'ua-root', driver: 'virtio-blk-pci-non-transitional', nodeNames: ['libvirt-3-format', 'libvirt-3-storage', 'libvirt-2-format', 'libvirt-2-storage'] },
    { alias: 'ci', kind: 'disk', qemuId: 'ua-ci', driver: 'virtio-blk-pci-non-transitional', nodeNames: ['libvirt-1-storage'] },
    { alias: 'default', kind: 'interface', qemuId: 'ua-default', driver: 'virtio-net-pci' },
  ];
  const v = vmi([disk('root'), disk('ci')], [{ name: 'root', containerDisk: { image: 'x' } }, { name: 'ci', cloudInitNoCloud: { userData: 'x' } }]);
  assert.equal(migratedDisks(v, devices), [{ name: 'root', node: 'libvirt-3-format' }, { name: 'ci', node: 'libvirt-1-storage' }]);
  assert.equal(migratedDisks(vmi([disk('p')], [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }]), devices), []);
  assert.throws(() => migratedDisks(vmi([disk('gone')], [{ name: 'gone', emptyDisk: { capacity: '1Gi' } }]), devices), (e: Error) => e instanceof BlockMigrationError && /disk "gone" has no block node/.test(e.message));
});

test('QMP sequences: target NBD server + writable exports and their teardown; source NBD nodes, sync=top mirrors, completion, abort', () => {
  const disks = [{ name: 'root', node: 'libvirt-3-format' }, { name: 'ci', node: 'libvirt-1-storage' }];
  assert.equal(targetExportSteps(disks, { kind: 'unix', path: '/p/nbd.sock' }), [
    { execute: 'nbd-server-start', arguments: { addr: { type: 'unix', data: { path: '/p/nbd.sock' } } } },
    { execute: 'block-export-add', arguments: { type: 'nbd', id: 'migration-export-0', 'node-name': 'libvirt-3-format', writable: true, name: 'root' } },
    { execute: 'block-export-add', arguments: { type: 'nbd', id: 'migration-export-1', 'node-name': 'libvirt-1-storage', writable: true, name: 'ci' } },
  ]);
  assert.equal(targetExportTeardown(disks), [
    { execute: 'block-export-del', arguments: { id: 'migration-export-0', mode: 'hard' } },
    { execute: 'block-export-del', arguments: { id: 'migration-export-1', mode: 'hard' } },
    { execute: 'nbd-server-stop', arguments: {} },
  ]);
  assert.equal(sourceMirrorSteps(disks, { kind: 'unix', path: '/s/nbd.sock' }), [
    { execute: 'blockdev-add', arguments: { driver: 'nbd', 'node-name': 'migration-nbd-0', server: { type: 'unix', path: '/s/nbd.sock' }, export: 'root', discard: 'unmap', 'detect-zeroes': 'unmap' } },
    { execute: 'blockdev-add', arguments: { driver: 'nbd', 'node-name': 'migration-nbd-1', server: { type: 'unix', path: '/s/nbd.sock' }, export: 'ci', discard: 'unmap', 'detect-zeroes': 'unmap' } },
    { execute: 'blockdev-mirror', arguments: { 'job-id': 'migration-mirror-0', device: 'libvirt-3-format', target: 'migration-nbd-0', sync: 'top', 'auto-finalize': true, 'auto-dismiss': true } },
    { execute: 'blockdev-mirror', arguments: { 'job-id': 'migration-mirror-1', device: 'libvirt-1-storage', target: 'migration-nbd-1', sync: 'top', 'auto-finalize': true, 'auto-dismiss': true } },
  ]);
  assert.equal(sourceMirrorSteps(disks.slice(0, 1), { kind: 'unix', path: '/s/nbd.sock' }, 64 * 2 ** 20)[1]!.arguments.speed, 64 * 2 ** 20, 'the migration bandwidth limits the mirrors too');
  assert.equal(sourceMirrorSteps(disks.slice(0, 1), { kind: 'unix', path: '/s/nbd.sock' }, 0)[1]!.arguments.speed, undefined, 'unlimited');
  assert.equal(sourceMirrorCompletion(disks), [
    { execute: 'block-job-cancel', arguments: { device: 'migration-mirror-0' } },
    { execute: 'block-job-cancel', arguments: { device: 'migration-mirror-1' } },
  ]);
  assert.equal(sourceMirrorAbort(disks).map((s) => s.arguments), [{ device: 'migration-mirror-0', force: true }, { device: 'migration-mirror-1', force: true }]);
  assert.equal(sourceNodeRemoval(disks).map((s) => [s.execute, s.arguments['node-name']]), [['blockdev-del', 'migration-nbd-0'], ['blockdev-del', 'migration-nbd-1']]);
});

test('a direct block migration: the target QEMU\'s NBD server on its pod\'s address with the migration\'s TLS and authz; the source\'s NBD nodes with its tls-hostname', () => {
  const disks = [{ name: 'root', node: 'libvirt-3-format' }];
  const direct = { Address: '10.244.0.7', Port: 49152, BlockPort: 49153, TLS: true, TLSHostname: 'u1.migration.qvirt.io', TLSAuthz: 'O=qvirt,CN=src' };
  const server = blockMigrationEndpoint(direct, '/p/nbd.sock', 'server');
  assert.equal(server, { kind: 'inet', host: '10.244.0.7', port: 49153, tls: { creds: 'qvirt-migration-tls', authz: 'qvirt-migration-authz' } });
  assert.equal(targetExportSteps(disks, server!)[0], { execute: 'nbd-server-start', arguments: { addr: { type: 'inet', data: { host: '10.244.0.7', port: '49153' } }, 'tls-creds': 'qvirt-migration-tls', 'tls-authz': 'qvirt-migration-authz' } });
  const client = blockMigrationEndpoint(direct, '/s/nbd.sock', 'client');
  assert.equal(client, { kind: 'inet', host: '10.244.0.7', port: 49153, tls: { creds: 'qvirt-migration-tls', hostname: 'u1.migration.qvirt.io' } });
  assert.equal(sourceMirrorSteps(disks, client!)[0]!.arguments, { driver: 'nbd', 'node-name': 'migration-nbd-0', server: { type: 'inet', host: '10.244.0.7', port: '49153' }, export: 'root', 'tls-creds': 'qvirt-migration-tls', 'tls-hostname': 'u1.migration.qvirt.io', discard: 'unmap', 'detect-zeroes': 'unmap' });
  // disableTLS: plain NBD; IPv6 stays unbracketed in QEMU's inet address
  const plain = blockMigrationEndpoint({ Address: 'fd00::7', Port: 49152, BlockPort: 49153, TLS: false }, '/s/nbd.sock', 'client');
  assert.equal(sourceMirrorSteps(disks, plain!)[0]!.arguments.server, { type: 'inet', host: 'fd00::7', port: '49153' });
  assert.is(sourceMirrorSteps(disks, plain!)[0]!.arguments['tls-creds'], undefined);
  // the relay: the pod's socket; a direct migration without an NBD port cannot take the disks
  assert.equal(blockMigrationEndpoint(undefined, '/s/nbd.sock', 'client'), { kind: 'unix', path: '/s/nbd.sock' });
  assert.is(blockMigrationEndpoint({ Address: '10.0.0.1', Port: 49152, TLS: true }, '/s/nbd.sock', 'client'), undefined);
});

test('incomingArgv: a block migration target keeps -S (it resumes once its NBD exports are gone)', () => {
  assert.equal(incomingArgv(['qemu', '-S', '-m', '256']), ['qemu', '-m', '256', '-incoming', 'defer']);
  assert.equal(incomingArgv(['qemu', '-S', '-m', '256'], true), ['qemu', '-S', '-m', '256', '-incoming', 'defer']);
  assert.equal(incomingArgv(['qemu', '-m', '256'], true), ['qemu', '-m', '256', '-S', '-incoming', 'defer']);
});

test('migrationDataSizeGiB: a block migration\'s data size counts the disks (KubeVirt\'s getVMIMigrationDataSize)', () => {
  const v = vmi([], []);
  v.spec.domain.memory = { guest: '256Mi' };
  const rows: [number, number][] = [[0, 1], [131072, 1], [800_000_000, 2], [1_500_000_000, 2], [2_000_000_000, 3]];
  for (const [bytes, gib] of rows) assert.is(migrationDataSizeGiB(v, bytes), gib, `${bytes} disk bytes`);
});

test('domainJobInfo: a block migration\'s disks count in the job\'s data (before migrate they are all of it)', () => {
  const ram = { total: 1000, transferred: 400, remaining: 600, 'page-size': 4096, mbps: 8 };
  assert.equal(domainJobInfo(undefined), undefined);
  assert.equal(domainJobInfo(undefined, { total: 500, processed: 200 }), { DataTotal: 500, DataTotalSet: true, DataProcessed: 200, DataProcessedSet: true, DataRemaining: 300, DataRemainingSet: true });
  const both = domainJobInfo({ ram }, { total: 500, processed: 500 })!;
  assert.equal([both.DataTotal, both.DataProcessed, both.DataRemaining, both.MemoryBps], [1500, 900, 600, 1e6]);
  const memOnly = domainJobInfo({ ram })!;
  assert.equal([memOnly.DataTotal, memOnly.DataProcessed, memOnly.DataRemaining], [1000, 400, 600]);
});

test('sourceAction: a block migration waits for the target\'s disks port too, and proxies both', () => {
  const ms = { migrationUid: 'm1', sourceNode: 'a', targetNode: 'b', targetNodeAddress: '127.0.0.2' };
  const blockVmi = (ports: Record<string, number>) => {
    const v = vmi([disk('root')], [{ name: 'root', containerDisk: { image: 'x' } }], { nodeName: 'a', migrationState: { ...ms, targetDirectMigrationNodePorts: ports } });
    return v;
  };
  assert.equal(sourceAction(blockVmi({ 40001: 49152 }), 'a', undefined, false), { kind: 'none' }, 'the disks port is not published yet');
  assert.equal(sourceAction(blockVmi({ 40001: 49152, 40002: 49153 }), 'a', undefined, false), { kind: 'migrate', host: '127.0.0.2', port: 40001, blockPort: 40002 });
  const live = vmi([disk('p')], [{ name: 'p', persistentVolumeClaim: { claimName: 'c' } }], { nodeName: 'a', migrationState: { ...ms, targetDirectMigrationNodePorts: { 40001: 49152 } } });
  assert.equal(sourceAction(live, 'a', undefined, false), { kind: 'migrate', host: '127.0.0.2', port: 40001 });
});

test.run();
