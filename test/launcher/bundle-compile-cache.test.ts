// The launcher bundle's loader (scripts/build.ts) writes V8's compile cache while the launcher runs, not
// only when it exits: a launcher lives as long as its VM and may end by SIGKILL, and until a cache is
// written every launcher compiles the whole bundle again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildLauncherBundle } from '../../scripts/build.ts';
import { LAUNCHER_NODE_FLAGS } from '../../src/local/launcher-command.ts';
import { tempDir } from '../lib/tmp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const filesUnder = (dir: string): string[] => existsSync(dir)
  ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]))
  : [];

test('a launcher that is killed while it runs has written the compile cache', async () => {
  const work = tempDir('qcc');
  try {
    const out = await buildLauncherBundle(join(work.path, 'dist'));
    const cache = join(work.path, 'cc');
    const root = join(work.path, 'root');
    const child = spawn(process.execPath, [...LAUNCHER_NODE_FLAGS, join(out, 'qvirt-launcher.mjs'),
      '--name', 'cc', '--uid', '6c9a1f0e-0000-4000-8000-000000000001', '--namespace', 'default', '--root', root,
      '--allow-emulation', '--notify-socket', 'none', '--cache-dir', join(work.path, 'cache')],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', QVIRT_COMPILE_CACHE: cache, QVIRT_LOG_LEVEL: 'warn' } });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      // Serving (its command socket is up), then past the loader's flush.
      const sock = join(root, 'var/run/kubevirt/sockets/launcher-sock');
      for (let i = 0; i < 300 && !existsSync(sock) && child.exitCode === null; i++) await sleep(50);
      assert.ok(existsSync(sock), `launcher did not come up: ${stderr}`);
      for (let i = 0; i < 200 && filesUnder(cache).length === 0; i++) await sleep(50);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const files = filesUnder(cache);
    assert.ok(files.length > 0, 'the compile cache was written while the launcher ran');
  } finally {
    work.cleanup();
  }
});

test.run();
