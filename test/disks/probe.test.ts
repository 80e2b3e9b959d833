// Direct-I/O and preallocation probes on real filesystems: /tmp (disk-backed here) supports O_DIRECT,
// procfs refuses it (EINVAL), like ramfs and tmpfs before Linux 6.6.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPreallocated, probeVolume, supportsDirectIO } from '../../launcher/disks/probe.ts';
import { tempDir } from '../lib/tmp.ts';
import { qemuImg } from './lib.ts';

const tmp = tempDir('qv-probe');
test.after(() => tmp.cleanup());

test('O_DIRECT: supported on the disk filesystem, refused by procfs; a missing file is probed and removed', async () => {
  const onDisk = join(tmp.path, 'a.img');
  writeFileSync(onDisk, 'x');
  // oracle: coreutils dd opening the same file with O_DIRECT
  const ddDirect = (p: string) => { try { execFileSync('dd', [`if=${p}`, 'of=/dev/null', 'iflag=direct', 'count=0'], { stdio: 'ignore' }); return true; } catch { return false; } };
  assert.is(await supportsDirectIO(onDisk), ddDirect(onDisk));
  assert.is(ddDirect('/proc/version'), false);
  assert.is(await supportsDirectIO('/proc/version'), false);
  const missing = join(tmp.path, 'not-yet.img');
  assert.is(await supportsDirectIO(missing), ddDirect(onDisk));
  assert.ok(!existsSync(missing));
});

test('preallocation: fully allocated raw yes, sparse raw and fresh qcow2 no', async () => {
  const full = join(tmp.path, 'full.raw');
  qemuImg('create', '-f', 'raw', '-o', 'preallocation=full', full, '2M');
  const sparse = join(tmp.path, 'sparse.raw');
  qemuImg('create', '-f', 'raw', sparse, '2M');
  const q = join(tmp.path, 'x.qcow2');
  qemuImg('create', '-f', 'qcow2', q, '2M');
  assert.is(await isPreallocated(full), true);
  assert.is(await isPreallocated(sparse), false);
  assert.is(await isPreallocated(q), false);
  assert.is(await isPreallocated(join(tmp.path, 'missing')), false);
});

test('probeVolume: an overlay whose backing refuses O_DIRECT', async () => {
  const top = join(tmp.path, 'top.qcow2');
  qemuImg('create', '-f', 'qcow2', top, '1M');
  const p = await probeVolume({ name: 'v', source: 'containerDisk', type: 'file', path: top, format: 'qcow2', readOnly: false, discard: true, created: true, backing: { type: 'file', path: '/proc/version', format: 'raw' } });
  assert.equal(p, { directIO: await supportsDirectIO(top), backingDirectIO: false, preallocated: false });
});

test.run();
