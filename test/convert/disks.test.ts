// Table tests for disks: device naming, cache/io/error-policy mapping, iothreads, bus frontends,
// block nodes and backing chains, and the errors that name the offending disk field.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Disk, VirtualMachineInstance } from '../../src/api/types.ts';
import {
  cacheMode, deviceIndices, errorPolicy, formatDeviceName, ioMode, ioThreadCounts, CACHE_MODES,
} from '../../launcher/convert/disks.ts';
import { ConversionError, type ResolvedVolume } from '../../launcher/convert/plan.ts';
import { resolvedVolumes } from '../../launcher/convert/volumes.ts';
import { blockdevs, convert, ctx, device, devices, vmi } from './helpers.ts';

const withDisks = (disks: Disk[], volumes = disks.map((d) => d.name)) => vmi((v: VirtualMachineInstance) => {
  v.spec.domain.devices.disks = disks;
  v.spec.volumes = volumes.map((name) => ({ name, persistentVolumeClaim: { claimName: name } }));
});
const raw = (names: string[], extra: Partial<ResolvedVolume> = {}) => ctx(Object.fromEntries(names.map((n) => [n, extra])));
const fieldIs = (field: string) => (e: unknown) => e instanceof ConversionError && e.field === field;

for (const [i, name] of [[0, 'sda'], [25, 'sdz'], [26, 'sdaa'], [27, 'sdab'], [701, 'sdzz'], [702, 'sdaaa']] as const) {
  test(`formatDeviceName(sd, ${i}) = ${name}`, () => assert.is(formatDeviceName('sd', i), name));
}

test('deviceIndices: sd names are shared by sata, scsi and usb; vd by virtio', () => {
  const v = withDisks([
    { name: 'a', disk: { bus: 'virtio' } }, { name: 'b', disk: { bus: 'sata' } }, { name: 'c', disk: { bus: 'scsi' } },
    { name: 'd', disk: { bus: 'virtio' } }, { name: 'e', cdrom: { bus: 'sata' } }, { name: 'f', disk: { bus: 'usb' } },
  ]);
  const idx = deviceIndices(v);
  assert.equal([...idx.entries()].map(([k, x]) => `${k}=${x.name}/${x.index}`), ['a=vda/0', 'b=sda/0', 'c=sdb/1', 'd=vdb/1', 'e=sdc/2', 'f=sdd/3']);
});

test('deviceIndices: targets recorded in status.volumeStatus are kept', () => {
  const v = withDisks([{ name: 'a', disk: { bus: 'scsi' } }, { name: 'b', disk: { bus: 'scsi' } }]);
  v.status = { volumeStatus: [{ name: 'b', target: 'sda' }] };
  const idx = deviceIndices(v);
  assert.is(idx.get('b')?.name, 'sda');
  assert.is(idx.get('a')?.name, 'sdb');
  assert.is(idx.get('a')?.index, 1);
});

const cacheCases: Array<[string, Partial<Disk>, Partial<ResolvedVolume>, string]> = [
  ['unset + O_DIRECT → none', {}, {}, 'none'],
  ['unset, no O_DIRECT → writethrough', {}, { directIO: false }, 'writethrough'],
  ['unset, backing without O_DIRECT → writethrough', {}, { backing: { path: '/b', format: 'raw', directIO: false } }, 'writethrough'],
  ['explicit writeback', { cache: 'writeback' }, { directIO: false }, 'writeback'],
  ['explicit writethrough', { cache: 'writethrough' }, {}, 'writethrough'],
  ['shareable defaults to none', { shareable: true }, {}, 'none'],
];
for (const [name, disk, vol, want] of cacheCases) {
  test(`cacheMode: ${name}`, () => {
    assert.is(cacheMode({ name: 'd', ...disk }, { path: '/d', format: 'raw', ...vol }, 'f'), want);
  });
}
test('cacheMode: none without O_DIRECT is an error on .cache', () => {
  assert.throws(() => cacheMode({ name: 'd', cache: 'none' }, { path: '/d', format: 'raw', directIO: false }, 'spec.x'), fieldIs('spec.x.cache'));
});
test('cacheMode: shareable needs none', () => {
  assert.throws(() => cacheMode({ name: 'd', cache: 'writeback', shareable: true }, { path: '/d', format: 'raw' }, 'spec.x'), /shareable/);
});
test('CACHE_MODES matches the libvirt table', () => {
  assert.equal(CACHE_MODES.none, { direct: true, noFlush: false, writeCache: 'on' });
  assert.equal(CACHE_MODES.writethrough, { direct: false, noFlush: false, writeCache: 'off' });
  assert.equal(CACHE_MODES.writeback, { direct: false, noFlush: false, writeCache: 'on' });
});

const ioCases: Array<[string, Partial<Disk>, Partial<ResolvedVolume>, 'none' | 'writethrough' | 'writeback', string | undefined]> = [
  ['block device + none → native', {}, { kind: 'block' }, 'none', 'native'],
  ['preallocated file + none → native', {}, { preallocated: true }, 'none', 'native'],
  ['sparse file → QEMU default', {}, {}, 'none', undefined],
  ['block + writethrough → QEMU default', {}, { kind: 'block' }, 'writethrough', undefined],
  ['explicit threads', { io: 'threads' }, { kind: 'block' }, 'none', 'threads'],
  ['explicit native with none', { io: 'native' }, {}, 'none', 'native'],
];
for (const [name, disk, vol, cache, want] of ioCases) {
  test(`ioMode: ${name}`, () => assert.is(ioMode({ name: 'd', ...disk }, { path: '/d', format: 'raw', ...vol }, cache, 'f'), want));
}
test('ioMode: native without O_DIRECT cache is an error on .io', () => {
  assert.throws(() => ioMode({ name: 'd', io: 'native' }, { path: '/d', format: 'raw' }, 'writeback', 'spec.x'), fieldIs('spec.x.io'));
});

const policyCases: Array<[Disk['errorPolicy'], Record<string, string>]> = [
  [undefined, { werror: 'stop', rerror: 'stop' }], ['stop', { werror: 'stop', rerror: 'stop' }],
  ['ignore', { werror: 'ignore', rerror: 'ignore' }], ['report', { werror: 'report', rerror: 'report' }], ['enospace', { werror: 'enospc' }],
];
for (const [policy, want] of policyCases) {
  test(`errorPolicy ${policy ?? '(default)'}`, () => assert.equal(errorPolicy(policy ? { name: 'd', errorPolicy: policy } : { name: 'd' }), want));
}

test('ioThreadCounts: none without policy or dedicated threads', () => {
  assert.equal(ioThreadCounts(withDisks([{ name: 'a', disk: { bus: 'virtio' } }]), 1), { total: 0, auto: 0 });
});
test('ioThreadCounts: shared policy = 1 thread; dedicated ones on top', () => {
  const v = withDisks([{ name: 'a', disk: { bus: 'virtio' } }, { name: 'b', disk: { bus: 'virtio' } }, { name: 'c', disk: { bus: 'virtio' }, dedicatedIOThread: true }]);
  v.spec.domain.ioThreadsPolicy = 'shared';
  assert.equal(ioThreadCounts(v, 4), { total: 2, auto: 1 });
  v.spec.domain.ioThreadsPolicy = 'auto';
  assert.equal(ioThreadCounts(v, 4), { total: 3, auto: 2 });
  assert.equal(ioThreadCounts(v, 1), { total: 2, auto: 1 });
});
test('ioThreadCounts: supplementalPool is rejected', () => {
  const v = withDisks([{ name: 'a', disk: { bus: 'virtio' } }]);
  v.spec.domain.ioThreadsPolicy = 'supplementalPool';
  assert.throws(() => ioThreadCounts(v, 1), fieldIs('spec.domain.ioThreadsPolicy'));
});

test('virtio disk: raw volume is a single storage node used as drive', () => {
  const p = convert(withDisks([{ name: 'root', disk: { bus: 'virtio' }, bootOrder: 1, serial: 'S1' }]), raw(['root'], { kind: 'block' }));
  const [node] = blockdevs(p);
  assert.equal(node, { driver: 'host_device', filename: '/data/root.img', 'node-name': 'libvirt-1-storage', 'read-only': false, discard: 'unmap', aio: 'native', cache: { direct: true, 'no-flush': false } });
  const d = device(p, 'ua-root');
  assert.is(d?.['driver'], 'virtio-blk-pci-non-transitional');
  assert.is(d?.['drive'], 'libvirt-1-storage');
  assert.is(d?.['bootindex'], 1);
  assert.is(d?.['serial'], 'S1');
  assert.is(d?.['write-cache'], 'on');
  assert.match(String(d?.['bus']), /^pci\.\d+$/);
  const rec = p.devices.find((x) => x.qemuId === 'ua-root');
  assert.equal(rec?.nodeNames, ['libvirt-1-storage']);
  assert.is(rec?.bus, d?.['bus']);
  assert.is(p.nextBlockNodeIndex, 2);
});

test('overlay with a qcow2 backing image: two storage+format pairs, backing read-only', () => {
  const p = convert(withDisks([{ name: 'cd', disk: { bus: 'virtio' } }]),
    ctx({ cd: { path: '/e/disk.qcow2', format: 'qcow2', backing: { path: '/c/disk.img', format: 'qcow2' } } }));
  const nodes = blockdevs(p);
  assert.equal(nodes.map((n) => n['node-name']), ['libvirt-1-storage', 'libvirt-1-format', 'libvirt-2-storage', 'libvirt-2-format']);
  assert.is(nodes[1]?.['read-only'], true);
  assert.is(nodes[3]?.['backing'], 'libvirt-1-format');
  assert.is(nodes[3]?.['file'], 'libvirt-2-storage');
  assert.equal(p.devices.find((x) => x.qemuId === 'ua-cd')?.nodeNames, ['libvirt-2-format', 'libvirt-2-storage', 'libvirt-1-format', 'libvirt-1-storage']);
});

test('node numbering: the first disk gets the highest N, hotplug continues above', () => {
  const p = convert(withDisks([{ name: 'a', disk: { bus: 'virtio' } }, { name: 'b', disk: { bus: 'virtio' } }]), raw(['a', 'b']));
  assert.is(device(p, 'ua-a')?.['drive'], 'libvirt-2-storage');
  assert.is(device(p, 'ua-b')?.['drive'], 'libvirt-1-storage');
  assert.is(p.nextBlockNodeIndex, 3);
});

test('read-only virtio disk and discardIgnore', () => {
  const p = convert(withDisks([{ name: 'a', disk: { bus: 'virtio', readonly: true } }]), raw(['a'], { discardIgnore: true }));
  const [n] = blockdevs(p);
  assert.is(n?.['read-only'], true);
  assert.is(n?.['discard'], undefined);
});

test('sata: disks on ide.N, a seventh SATA device on a second AHCI controller', () => {
  const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
  const p = convert(withDisks(names.map((name) => ({ name, disk: { bus: 'sata' } }))), raw(names));
  assert.equal(names.map((n) => device(p, `ua-${n}`)?.['bus']), ['ide.0', 'ide.1', 'ide.2', 'ide.3', 'ide.4', 'ide.5', 'sata1.0']);
  assert.is(device(p, 'sata1')?.['driver'], 'ich9-ahci');
  assert.is(device(p, 'ua-a')?.['driver'], 'ide-hd');
});

test('cdrom: ide-cd, read-only by default, no discard, empty when there is no volume, tray open via QMP', () => {
  const v = withDisks([{ name: 'iso', cdrom: { bus: 'sata', tray: 'open' } }, { name: 'empty', cdrom: { bus: 'sata' } }], ['iso']);
  const p = convert(v, raw(['iso']));
  const iso = device(p, 'ua-iso');
  assert.is(iso?.['driver'], 'ide-cd');
  const [n] = blockdevs(p);
  assert.is(n?.['read-only'], true);
  assert.is(n?.['discard'], undefined);
  const empty = device(p, 'ua-empty');
  assert.equal(empty, { driver: 'ide-cd', bus: 'ide.1', id: 'ua-empty' });
  assert.equal(p.setupCommands.find((c) => c.execute === 'blockdev-open-tray')?.arguments, { id: 'ua-iso', force: true });
});

test('scsi: scsi-hd / scsi-cd on scsi0.0 with lun = sd index; LUN on a block device is scsi-block', () => {
  const v = withDisks([{ name: 'a', disk: { bus: 'scsi' } }, { name: 'b', cdrom: { bus: 'scsi' } }, { name: 'c', lun: { bus: 'scsi' } }]);
  const p = convert(v, ctx({ a: {}, b: {}, c: { kind: 'block' } }));
  assert.equal(device(p, 'ua-a'), { driver: 'scsi-hd', bus: 'scsi0.0', channel: 0, 'scsi-id': 0, lun: 0, id: 'ua-a', device_id: 'drive-ua-a', drive: 'libvirt-3-storage', 'write-cache': 'on', werror: 'stop', rerror: 'stop' });
  assert.is(device(p, 'ua-b')?.['driver'], 'scsi-cd');
  assert.is(device(p, 'ua-b')?.['lun'], 1);
  assert.is(device(p, 'ua-c')?.['driver'], 'scsi-block');
  assert.is(device(p, 'ua-c')?.['write-cache'], undefined);
});

test('scsi LUN on a file falls back to scsi-hd with a warning', () => {
  const p = convert(withDisks([{ name: 'l', lun: { bus: 'scsi' } }]), raw(['l']));
  assert.is(device(p, 'ua-l')?.['driver'], 'scsi-hd');
  assert.ok(p.warnings.some((w) => w.includes('LUN "l"')));
});

test('usb disk: usb-storage on the xhci controller', () => {
  const p = convert(withDisks([{ name: 'u', disk: { bus: 'usb' } }]), raw(['u']));
  assert.is(device(p, 'ua-u')?.['driver'], 'usb-storage');
  assert.is(device(p, 'ua-u')?.['bus'], 'usb.0');
  assert.is(device(p, 'usb')?.['driver'], 'qemu-xhci');
});

test('useVirtioTransitional picks the -transitional models', () => {
  const v = withDisks([{ name: 'a', disk: { bus: 'virtio' } }]);
  v.spec.domain.devices.useVirtioTransitional = true;
  const p = convert(v, raw(['a']));
  assert.is(device(p, 'ua-a')?.['driver'], 'virtio-blk-pci-transitional');
  assert.is(device(p, 'scsi0')?.['driver'], 'virtio-scsi-pci-transitional');
  assert.is(device(p, 'virtio-serial0')?.['driver'], 'virtio-serial-pci-transitional');
  assert.is(device(p, 'balloon0')?.['driver'], 'virtio-balloon-pci-transitional');
});

test('blockSize: custom sizes and matchVolume from the launcher probe', () => {
  const p = convert(withDisks([
    { name: 'a', disk: { bus: 'virtio' }, blockSize: { custom: { logical: 512, physical: 4096, discardGranularity: 4096 } } },
    { name: 'b', disk: { bus: 'virtio' }, blockSize: { matchVolume: {} } },
  ]), ctx({ a: {}, b: { blockIO: { logical: 4096, physical: 4096 } } }));
  assert.is(device(p, 'ua-a')?.['physical_block_size'], 4096);
  assert.is(device(p, 'ua-a')?.['discard_granularity'], 4096);
  assert.is(device(p, 'ua-b')?.['logical_block_size'], 4096);
});

test('shareable disk: share-rw on the device, cache none', () => {
  const p = convert(withDisks([{ name: 'a', disk: { bus: 'virtio' }, shareable: true }]), raw(['a']));
  assert.is(device(p, 'ua-a')?.['share-rw'], true);
  assert.is(device(p, 'ua-a')?.['write-cache'], 'on');
});

test('hotpluggable volume not yet prepared: skipped with a warning', () => {
  const v = withDisks([{ name: 'a', disk: { bus: 'scsi' } }]);
  v.spec.volumes = [{ name: 'a', persistentVolumeClaim: { claimName: 'a', hotpluggable: true } }];
  const p = convert(v, ctx());
  assert.not.ok(device(p, 'ua-a'));
  assert.ok(p.warnings.some((w) => w.includes('hotplugged')));
});

const errorCases: Array<[string, Disk[], string[], string]> = [
  ['disk without a volume', [{ name: 'a', disk: { bus: 'virtio' } }], [], 'spec.domain.devices.disks[0]'],
  ['cdrom on virtio', [{ name: 'a', cdrom: { bus: 'virtio' } }], ['a'], 'spec.domain.devices.disks[0].cdrom.bus'],
  ['lun on sata', [{ name: 'a', lun: { bus: 'sata' } }], ['a'], 'spec.domain.devices.disks[0].lun.bus'],
  ['lun on usb', [{ name: 'a', lun: { bus: 'usb' } }], ['a'], 'spec.domain.devices.disks[0].lun.bus'],
  ['read-only sata disk', [{ name: 'a', disk: { bus: 'sata', readonly: true } }], ['a'], 'spec.domain.devices.disks[0].disk.readonly'],
  ['pci address', [{ name: 'a', disk: { bus: 'virtio', pciAddress: '0000:81:01.0' } }], ['a'], 'spec.domain.devices.disks[0].disk.pciAddress'],
  ['persistent reservation', [{ name: 'a', lun: { bus: 'scsi', reservation: true } }], ['a'], 'spec.domain.devices.disks[0].lun.reservation'],
  ['changed block tracking', [{ name: 'a', disk: { bus: 'virtio' }, changedBlockTracking: true }], ['a'], 'spec.domain.devices.disks[0].changedBlockTracking'],
];
for (const [name, disks, vols, field] of errorCases) {
  test(`error: ${name} → ${field}`, () => {
    assert.throws(() => convert(withDisks(disks, vols), raw(vols)), fieldIs(field));
  });
}

test('error: a volume the launcher did not prepare names spec.volumes[i]', () => {
  assert.throws(() => convert(withDisks([{ name: 'a', disk: { bus: 'virtio' } }]), ctx()), fieldIs('spec.volumes[0]'));
});

test('error: a raw top image with a backing chain', () => {
  assert.throws(() => convert(withDisks([{ name: 'a', disk: { bus: 'virtio' } }]), ctx({ a: { format: 'raw', backing: { path: '/b', format: 'raw' } } })), /not qcow2/);
});

test('every disk device carries its ua- id and a record', () => {
  const p = convert(withDisks([{ name: 'a', disk: { bus: 'virtio' } }, { name: 'b', disk: { bus: 'sata' } }]), raw(['a', 'b']));
  for (const n of ['a', 'b']) {
    assert.ok(devices(p).some((d) => d['id'] === `ua-${n}`));
    assert.is(p.devices.find((d) => d.alias === n)?.kind, 'disk');
  }
});

test('a read-only volume (PVC readOnly) makes the nodes read-only; on sata it is an error', () => {
  const p = convert(withDisks([{ name: 'a', disk: { bus: 'virtio' } }]), raw(['a'], { readOnly: true }));
  assert.is(blockdevs(p)[0]?.['read-only'], true);
  assert.throws(() => convert(withDisks([{ name: 'a', disk: { bus: 'sata' } }]), raw(['a'], { readOnly: true })), fieldIs('spec.domain.devices.disks[0].disk.readonly'));
});

test('resolvedVolumes: launcher/disks PreparedVolume + probes → ResolvedVolume', () => {
  const vols = resolvedVolumes([
    { name: 'cd', source: 'containerDisk', type: 'file', path: '/e/cd.qcow2', format: 'qcow2', readOnly: false, discard: true, created: true, backing: { type: 'file', path: '/c/disk_0.img', format: 'raw' } },
    { name: 'pvc', source: 'persistentVolumeClaim', type: 'block', path: '/dev/pvc', format: 'raw', readOnly: true, discard: false, created: false },
  ], { cd: { directIO: true, backingDirectIO: false }, pvc: { preallocated: true } });
  assert.equal(vols['cd'], { path: '/e/cd.qcow2', format: 'qcow2', kind: 'file', directIO: true, backing: { path: '/c/disk_0.img', format: 'raw', kind: 'file', directIO: false } });
  assert.equal(vols['pvc'], { path: '/dev/pvc', format: 'raw', kind: 'block', readOnly: true, discardIgnore: true, preallocated: true });
});

test.run();
