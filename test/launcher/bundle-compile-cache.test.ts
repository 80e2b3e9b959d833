// The launcher bundle's loader (scripts/build.ts) writes V8's compile cache while the launcher runs, not
// only when it exits: a launcher lives as long as its VM and may end by SIGKILL, and until a cache is
// written every launcher compiles the whole bundle again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildLauncherBundle } from '../../scripts/build.ts';
import { tempDir } from '../lib/tmp.ts';
import { startBundledLauncher } from './bundled-launcher.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const filesUnder = (dir: string): string[] => existsSync(dir)
  ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]))
  : [];

test('a launcher that is killed while it runs has written the compile cache', async () => {
  const work = tempDir('qcc');
  try {
    const out = await buildLauncherBundle(join(work.path, 'dist'));
    const cache = join(work.path, 'cc');
    const launcher = await startBundledLauncher({ bundleDir: out, work: work.path, name: 'cc', uid: '6c9a1f0e-0000-4000-8000-000000000001', env: { QVIRT_COMPILE_CACHE: cache, QVIRT_LOG_LEVEL: 'warn' } });
    try {
      // Serving (its command socket is up), then past the loader's flush.
      for (let i = 0; i < 200 && filesUnder(cache).length === 0; i++) await sleep(50);
    } finally {
      await launcher.stop();
    }
    const files = filesUnder(cache);
    assert.ok(files.length > 0, 'the compile cache was written while the launcher ran');
  } finally {
    work.cleanup();
  }
});

test.run();
