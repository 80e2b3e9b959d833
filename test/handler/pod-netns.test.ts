import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { podNetns } from '../../handler/network/setup.ts';

const UID = '6f1c2d3e-aaaa-bbbb-cccc-000000000002';

// A fake /proc with one process of the pod, in a network namespace other than the fake self's.
async function fixture(): Promise<{ dir: string; podDir: string; proc: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'pod-netns-'));
  const podDir = join(dir, 'pods', UID);
  const proc = join(dir, 'proc');
  await mkdir(podDir, { recursive: true });
  await mkdir(join(proc, '42', 'ns'), { recursive: true });
  await mkdir(join(proc, 'self', 'ns'), { recursive: true });
  await writeFile(join(proc, '42', 'cgroup'), `0::/kubepods/pod${UID}/c1\n`);
  await symlink('net:[4026530001]', join(proc, '42', 'ns', 'net'));
  await symlink('net:[4026530000]', join(proc, 'self', 'ns', 'net'));
  return { dir, podDir, proc };
}

test('podNetns: the netns file the local pod runner wrote', async () => {
  const f = await fixture();
  try {
    await writeFile(join(f.podDir, 'netns'), '/run/netns/qvirt-x\n');
    assert.is(await podNetns(f.podDir, f.proc), '/run/netns/qvirt-x');
  } finally { await rm(f.dir, { recursive: true, force: true }); }
});

test('podNetns: an empty netns file is the host network — /proc is not scanned', async () => {
  const f = await fixture();
  try {
    await writeFile(join(f.podDir, 'netns'), '');
    assert.is(await podNetns(f.podDir, f.proc), undefined);
  } finally { await rm(f.dir, { recursive: true, force: true }); }
});

test('podNetns: without the file (a real node), the pod\'s first process\'s namespace', async () => {
  const f = await fixture();
  try {
    assert.is(await podNetns(f.podDir, f.proc), join(f.proc, '42', 'ns', 'net'));
  } finally { await rm(f.dir, { recursive: true, force: true }); }
});

test.run();
