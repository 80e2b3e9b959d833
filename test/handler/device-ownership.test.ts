// claimDeviceOwnership (KubeVirt's): a non-root launcher gets the device nodes of its own container's
// /dev — never the host's. A fake /proc with the pod's launcher, whose root holds char devices made here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { claimDeviceOwnership } from '../../handler/device-ownership.ts';
import { componentLogger } from '../../src/log/logger.ts';

const UID = '6f1c2d3e-aaaa-bbbb-cccc-000000000003';
const QEMU_USER = 107;
const log = componentLogger('test', { level: 'silent', destination: new Writable({ write(_c, _e, cb) { cb(); } }) });

/** podDir, a fake /proc whose process 42 is the pod's launcher with its root at `root/`, and `root/dev/kvm` (root-owned). */
async function fixture(): Promise<{ dir: string; podDir: string; proc: string; containerDev: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'dev-owner-'));
  const podDir = join(dir, 'pods', UID);
  const proc = join(dir, 'proc');
  const containerDev = join(dir, 'root', 'dev');
  await mkdir(podDir, { recursive: true });
  await mkdir(join(proc, '42'), { recursive: true });
  await mkdir(containerDev, { recursive: true });
  await writeFile(join(proc, '42', 'cgroup'), `0::/kubepods/pod${UID}/c1\n`);
  await writeFile(join(proc, '42', 'cmdline'), 'node\0/dist/launcher/qvirt-launcher.cjs\0--uid\0x\0');
  await symlink(join(dir, 'root'), join(proc, '42', 'root'));
  execFileSync('mknod', ['-m', '600', join(containerDev, 'kvm'), 'c', '1', '3']);
  return { dir, podDir, proc, containerDev };
}

const owner = async (p: string) => (await stat(p)).uid;

test('a real node: the launcher container\'s own /dev/kvm goes to its user', async () => {
  const f = await fixture();
  try {
    assert.equal(await claimDeviceOwnership(f.podDir, QEMU_USER, log, f.proc, join(f.dir, 'host-dev-elsewhere')), ['/dev/kvm']);
    assert.is(await owner(join(f.containerDev, 'kvm')), QEMU_USER);
  } finally { await rm(f.dir, { recursive: true, force: true }); }
});

test('the local pod runner\'s pod (<podDir>/host-dev): nothing changed, /proc not looked at', async () => {
  const f = await fixture();
  try {
    await writeFile(join(f.podDir, 'host-dev'), '');
    assert.equal(await claimDeviceOwnership(f.podDir, QEMU_USER, log, f.proc, join(f.dir, 'host-dev-elsewhere')), []);
    assert.is(await owner(join(f.containerDev, 'kvm')), 0);
  } finally { await rm(f.dir, { recursive: true, force: true }); }
});

test('a launcher whose /dev is the host\'s (same node): the host\'s node is never chowned', async () => {
  const f = await fixture();
  try {
    assert.equal(await claimDeviceOwnership(f.podDir, QEMU_USER, log, f.proc, f.containerDev), []);
    assert.is(await owner(join(f.containerDev, 'kvm')), 0);
  } finally { await rm(f.dir, { recursive: true, force: true }); }
});

test.run();
