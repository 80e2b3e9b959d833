// Where the node finds a hotplugged claim's disk image: a hostPath PV's host path, or the
// attachment pod's volume as the kubelet mounted it (CSI one level deeper, in `mount`; a local PV's
// path when the pod has none); block claims refused; the size of a new disk.img from the claim.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HotplugDiskError, claimInfo, diskImageSize, diskSourceOf, podVolumeMountDir, type Claim, type PersistentVolume } from '../../handler/hotplug/disk-source.ts';

const claim = (extra: Partial<NonNullable<Claim['spec']>> = {}, capacity?: string): Claim => ({
  metadata: { name: 'data', namespace: 'ns' },
  spec: { volumeName: 'pv-1', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } }, ...extra },
  status: { phase: 'Bound', ...(capacity ? { capacity: { storage: capacity } } : {}), accessModes: ['ReadWriteOnce'] },
});
const pv = (spec: PersistentVolume['spec']): PersistentVolume => ({ metadata: { name: 'pv-1' }, spec });

const sourceRows: Array<[string, PersistentVolume, ReturnType<typeof diskSourceOf> | RegExp, Claim?]> = [
  ['hostPath: the host directory', pv({ hostPath: { path: '/mnt/data' } }), { kind: 'host', dir: '/mnt/data', field: 'PersistentVolume pv-1 spec.hostPath.path' }],
  ['local: the attachment pod\'s volume, else the host directory', pv({ local: { path: '/mnt/disks/ssd1' } }), { kind: 'podVolume', pvName: 'pv-1', fallback: { dir: '/mnt/disks/ssd1', field: 'PersistentVolume pv-1 spec.local.path' } }],
  ['CSI: the attachment pod\'s volume', pv({ csi: { driver: 'rook-ceph.rbd.csi.ceph.com', volumeHandle: 'h' } }), { kind: 'podVolume', pvName: 'pv-1' }],
  ['another plugin (nfs): the attachment pod\'s volume', pv({}), { kind: 'podVolume', pvName: 'pv-1' }],
  ['a Block PV: refused', pv({ volumeMode: 'Block', local: { path: '/dev/sdb' } }), /volumeMode Block is not supported/],
  ['a Block claim: refused', pv({ hostPath: { path: '/x' } }), /ns\/data: volumeMode Block/, claim({ volumeMode: 'Block' })],
];
for (const [name, p, want, c] of sourceRows) {
  test(`diskSourceOf: ${name}`, () => {
    if (want instanceof RegExp) {
      assert.throws(() => diskSourceOf('ns/data', c ?? claim(), p), (err: Error) => err instanceof HotplugDiskError && want.test(err.message));
    } else {
      assert.equal(diskSourceOf('ns/data', c ?? claim(), p), want);
    }
  });
}

test('podVolumeMountDir: kubelet\'s layout, CSI in mount/', () => {
  assert.is(podVolumeMountDir('/var/lib/kubelet/pods/u/volumes', 'kubernetes.io~csi', 'pv-1'), '/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pv-1/mount');
  assert.is(podVolumeMountDir('/var/lib/kubelet/pods/u/volumes', 'kubernetes.io~nfs', 'pv-1'), '/var/lib/kubelet/pods/u/volumes/kubernetes.io~nfs/pv-1');
  assert.is(podVolumeMountDir('/var/lib/kubelet/pods/u/volumes', 'kubernetes.io~local-volume', 'pv-1'), '/var/lib/kubelet/pods/u/volumes/kubernetes.io~local-volume/pv-1');
});

const MiB = 1024 * 1024;
const sizeRows: Array<[string, Claim, number | RegExp]> = [
  ['request only', claim(), 64 * MiB],
  ['capacity above the request: the request', claim({}, '1Gi'), 64 * MiB],
  ['capacity below the request: the capacity', claim({ resources: { requests: { storage: '2Gi' } } }, '1Gi'), 1024 * MiB],
  ['aligned down to a MiB', claim({ resources: { requests: { storage: '100M' } } }), 95 * MiB],
  ['neither: an error naming the claim', claim({ resources: {} }), /ns\/data: unable to determine capacity/],
  ['a bad quantity: the field', claim({ resources: { requests: { storage: 'lots' } } }), /spec\.resources\.requests\.storage/],
];
for (const [name, c, want] of sizeRows) {
  test(`diskImageSize: ${name}`, () => {
    if (typeof want === 'number') assert.is(diskImageSize('v', 'ns/data', c), want);
    else assert.throws(() => diskImageSize('v', 'ns/data', c), want);
  });
}

test('claimInfo: what the status tells the launcher', () => {
  assert.equal(claimInfo('data', claim({}, '1Gi')), { claimName: 'data', volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, requests: { storage: '64Mi' } });
});

test.run();
