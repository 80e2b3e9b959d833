import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findContainerDiskSocketInodes, hostPathCandidates, mountCount, mountPointsOf, parseMountInfo, parseProcNetUnix, socketInodeOfFdLink, unescapeMountPath } from '../../handler/container-disk/proc.ts';

const UID = '6f1c2d3e-aaaa-bbbb-cccc-000000000001';
const NET_UNIX = `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 31337 /var/run/kubevirt/container-disks/${UID}/disk_0.sock
0000000000000000: 00000002 00000000 00010000 0001 01 31338 /var/lib/kubelet/pods/p1/volumes/kubernetes.io~empty-dir/container-disks/disk_1.sock
0000000000000000: 00000003 00000000 00000000 0001 03 2222
0000000000000000: 00000002 00000000 00010000 0001 01 4444 @/tmp/abstract
0000000000000000: 00000002 00000000 00010000 0001 01 5555 /var/run/kubevirt/container-disks/${UID}/kernel-boot.sock
0000000000000000: 00000002 00000000 00010000 0001 01 6666 /var/run/kubevirt/container-disks/other-uid/disk_0.sock
0000000000000000: 00000002 00000000 00010000 0001 01 7777 /x/container-disks/${UID}/disk_10.sock
0000000000000000: 00000002 00000000 00010000 0001 01 8888 /path with space/container-disks/${UID}/disk_2.sock
garbage line
`;

test('parseProcNetUnix: inode and path of every socket, header and junk skipped', () => {
  const e = parseProcNetUnix(NET_UNIX);
  assert.is(e.length, 8);
  assert.equal(e[0], { inode: 31337, path: `/var/run/kubevirt/container-disks/${UID}/disk_0.sock` });
  assert.equal(e[2], { inode: 2222, path: '' });
  assert.equal(e[7], { inode: 8888, path: `/path with space/container-disks/${UID}/disk_2.sock` });
  assert.equal(parseProcNetUnix(''), []);
});

const rows: Array<[string, string, string, number[]]> = [
  ['container-side path of disk_0', UID, 'disk_0', [31337]],
  ['disk_1 bound at the node path (no uid dir): not this VMI', UID, 'disk_1', []],
  ['kernel-boot', UID, 'kernel-boot', [5555]],
  ['other VMI uid', 'other-uid', 'disk_0', [6666]],
  ['disk_1 does not match disk_10', UID, 'disk_1', []],
  ['disk_10 by suffix under any prefix', UID, 'disk_10', [7777]],
  ['path with a space', UID, 'disk_2', [8888]],
  ['unknown uid', 'nope', 'disk_0', []],
  ['empty uid never matches', '', 'disk_0', []],
];
for (const [name, uid, disk, want] of rows) {
  test(`findContainerDiskSocketInodes: ${name}`, () => {
    assert.equal(findContainerDiskSocketInodes(parseProcNetUnix(NET_UNIX), uid, disk), want);
  });
}

const links: Array<[string, number | undefined]> = [
  ['socket:[31337]', 31337],
  ['pipe:[31337]', undefined],
  ['/dev/null', undefined],
  ['socket:[]', undefined],
  ['anon_inode:[eventfd]', undefined],
];
for (const [link, want] of links) test(`socketInodeOfFdLink(${link})`, () => assert.is(socketInodeOfFdLink(link), want));

const MOUNTINFO = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 8:1 /var/lib/images/disk.img /var/lib/kubelet/pods/p/volumes/kubernetes.io~empty-dir/container-disks/disk_0.img ro,relatime shared:1 - ext4 /dev/sda1 rw
41 22 8:1 /x /tmp/with\\040space/disk_0.img ro shared:1 - ext4 /dev/sda1 rw
42 40 8:1 /x /var/lib/kubelet/pods/p/volumes/kubernetes.io~empty-dir/container-disks/disk_0.img ro shared:1 - ext4 /dev/sda1 rw
`;
test('unescapeMountPath: octal escapes', () => {
  assert.is(unescapeMountPath('/a\\040b\\011c\\134d'), '/a b\tc\\d');
  assert.is(unescapeMountPath('/plain'), '/plain');
});
test('mountPointsOf / mountCount: stacked mounts count twice, escapes undone, absent is 0', () => {
  assert.is(mountPointsOf(MOUNTINFO).length, 4);
  assert.is(mountCount(MOUNTINFO, '/var/lib/kubelet/pods/p/volumes/kubernetes.io~empty-dir/container-disks/disk_0.img'), 2);
  assert.is(mountCount(MOUNTINFO, '/tmp/with space/disk_0.img'), 1);
  assert.is(mountCount(MOUNTINFO, '/var/lib/kubelet/pods/p/volumes/kubernetes.io~empty-dir/container-disks/disk_1.img'), 0);
});

// Recorded on a real node (containerd 1.6, overlayfs snapshotter): the container-disk container's
// own mountinfo, and virt-handler's (its pod has the host's / at /host; the host's root mount is
// private, so the container's rootfs mount does not appear there).
const CONTAINER = [
  '1251 1050 0:69 / / rw,relatime - overlay overlay rw,lowerdir=/var/cache/k8s/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/31/fs:/var/cache/k8s/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/30/fs,upperdir=/var/cache/k8s/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/32/fs,workdir=/var/cache/k8s/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/32/work',
  '1252 1251 0:72 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw',
  '1260 1251 254:0 /var/lib/kubelet/pods/0f/volumes/kubernetes.io~empty-dir/container-disks /var/run/kubevirt/container-disks rw,relatime - ext4 /dev/vda rw',
].join('\n');
const HANDLER = [
  '900 800 0:80 / / rw,relatime - overlay overlay rw,lowerdir=/x/fs,upperdir=/y/fs,workdir=/y/work',
  '901 900 254:0 / /host rw,relatime - ext4 /dev/vda rw',
  '902 900 254:0 /var/lib/kubelet/pods /var/lib/kubelet/pods rw,relatime shared:2 - ext4 /dev/vda rw',
].join('\n');
const SNAP = '/var/cache/k8s/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots';

test('hostPathCandidates: where a file in a container can be bind-mounted from in our mount namespace', () => {
  const table: Array<[string, string, string, string, string[]]> = [
    // overlay root, not mounted here: its upper layer, then each lower layer, under the host's / at /host
    ['image file, layers under --host-fs', CONTAINER, HANDLER, '/disk/disk.qcow2', [`/host${SNAP}/32/fs/disk/disk.qcow2`, `/host${SNAP}/31/fs/disk/disk.qcow2`, `/host${SNAP}/30/fs/disk/disk.qcow2`]],
    // in the host's namespace (nsenter): the rootfs mount itself, first; layers at / after it
    ['host namespace sees the rootfs mount', CONTAINER, `${HANDLER}\n77 27 0:69 / /run/containerd/k8s.io/abc/rootfs rw - overlay overlay rw,lowerdir=/l`, '/disk/disk.qcow2', ['/run/containerd/k8s.io/abc/rootfs/disk/disk.qcow2', `/host${SNAP}/32/fs/disk/disk.qcow2`, `/host${SNAP}/31/fs/disk/disk.qcow2`, `/host${SNAP}/30/fs/disk/disk.qcow2`]],
    // a bind mount in the container: the same ext4 filesystem, found by device and root
    ['a file under a bind mount', CONTAINER, HANDLER, '/var/run/kubevirt/container-disks/x.img', ['/var/lib/kubelet/pods/0f/volumes/kubernetes.io~empty-dir/container-disks/x.img']],
    ['no mount covers it', '', HANDLER, '/disk/disk.qcow2', []],
  ];
  for (const [name, container, ours, path, want] of table) {
    assert.equal(hostPathCandidates(parseMountInfo(container), parseMountInfo(ours), path, '/host'), want, name);
  }
});

test.run();
