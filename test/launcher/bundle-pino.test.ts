// The launcher bundle leaves pino's sonic-boom, thread-stream and worker_threads out (scripts/build.ts:
// ~1 MiB of RSS in every launcher) and still writes its structured pino lines, through
// src/log/fd-destination.ts, to stdout. Started from its CommonJS loader, the launcher loads neither
// node:fs/promises nor readline (0.7 MiB more: scripts/build.ts, launcher/fs/async.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildLauncherBundle } from '../../scripts/build.ts';
import { LAUNCHER_BUNDLE } from '../../src/local/launcher-command.ts';
import { tempDir } from '../lib/tmp.ts';
import { startBundledLauncher } from './bundled-launcher.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('the bundle holds neither sonic-boom, thread-stream nor worker_threads, the launcher loads neither fs/promises nor readline, and it logs JSON lines', async () => {
  const work = tempDir('qbp');
  try {
    const out = await buildLauncherBundle(join(work.path, 'dist'));
    const bundle = readFileSync(join(out, LAUNCHER_BUNDLE), 'utf8');
    assert.not.ok(bundle.includes('worker_threads'), 'worker_threads is required by the bundle');
    assert.not.ok(bundle.includes('sonic boom is not ready yet'), 'sonic-boom is in the bundle');
    assert.not.ok(bundle.includes('the worker thread exited'), 'thread-stream is in the bundle');
    assert.ok(bundle.includes('pino.destination (sonic-boom) is not in this bundle'), 'sonic-boom was not replaced');

    // The built-in modules the launcher has loaded, written every 50 ms by a preloaded script.
    const loadedFile = join(work.path, 'loaded.txt');
    const preload = join(work.path, 'loaded.cjs');
    // Written beside and renamed into place: a plain writeFileSync truncates first, and a read between
    // the truncation and the write saw an empty list (stop 35's CI failure).
    writeFileSync(preload, `const fs = require('node:fs'); setInterval(() => { fs.writeFileSync(${JSON.stringify(loadedFile + '.tmp')}, process.moduleLoadList.join('\\n')); fs.renameSync(${JSON.stringify(loadedFile + '.tmp')}, ${JSON.stringify(loadedFile)}); }, 50).unref();`);
    const launcher = await startBundledLauncher({ bundleDir: out, work: work.path, name: 'bp', uid: '6c9a1f0e-0000-4000-8000-000000000002', env: { QVIRT_COMPILE_CACHE: join(work.path, 'cc'), QVIRT_LOG_LEVEL: 'info' }, captureStdout: true, nodeArgs: ['--require', preload] });
    let loaded: string[];
    try {
      for (let i = 0; i < 100 && !launcher.stdout().includes('\n'); i++) await sleep(50);
      await sleep(200);
      loaded = readFileSync(loadedFile, 'utf8').split('\n');
    } finally {
      await launcher.stop();
    }
    assert.ok(loaded.includes('NativeModule net'), `the module list was not read: ${loaded.length} entries`);
    for (const m of ['NativeModule fs/promises', 'NativeModule internal/fs/promises', 'NativeModule internal/readline/interface']) assert.not.ok(loaded.includes(m), `the launcher loaded ${m}`);
    const stdout = launcher.stdout();
    const stderr = launcher.stderr();
    const lines = stdout.trimEnd().split('\n');
    assert.ok(lines.length > 0 && lines[0] !== '', `no log line on stdout; stderr: ${stderr}`);
    for (const l of lines) {
      const o = JSON.parse(l) as { level?: string; time?: string; component?: string; msg?: string };
      assert.is(o.component, 'launcher', l);
      assert.match(o.time ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, l);
      assert.ok(typeof o.level === 'string' && typeof o.msg === 'string', l);
    }
  } finally {
    work.cleanup();
  }
});

test.run();
