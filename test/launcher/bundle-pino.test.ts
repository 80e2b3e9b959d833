// The launcher bundle leaves pino's sonic-boom, thread-stream and worker_threads out (scripts/build.ts:
// ~1 MiB of RSS in every launcher) and still writes its structured pino lines, through
// src/log/fd-destination.ts, to stdout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildLauncherBundle } from '../../scripts/build.ts';
import { LAUNCHER_NODE_FLAGS } from '../../src/local/launcher-command.ts';
import { tempDir } from '../lib/tmp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('the bundle holds neither sonic-boom, thread-stream nor worker_threads, and the launcher logs JSON lines', async () => {
  const work = tempDir('qbp');
  try {
    const out = await buildLauncherBundle(join(work.path, 'dist'));
    const bundle = readFileSync(join(out, 'launcher.bundle.mjs'), 'utf8');
    assert.not.ok(bundle.includes('worker_threads'), 'worker_threads is required by the bundle');
    assert.not.ok(bundle.includes('sonic boom is not ready yet'), 'sonic-boom is in the bundle');
    assert.not.ok(bundle.includes('the worker thread exited'), 'thread-stream is in the bundle');
    assert.ok(bundle.includes('pino.destination (sonic-boom) is not in this bundle'), 'sonic-boom was not replaced');

    const root = join(work.path, 'root');
    const child = spawn(process.execPath, [...LAUNCHER_NODE_FLAGS, join(out, 'qvirt-launcher.mjs'),
      '--name', 'bp', '--uid', '6c9a1f0e-0000-4000-8000-000000000002', '--namespace', 'default', '--root', root,
      '--allow-emulation', '--notify-socket', 'none', '--cache-dir', join(work.path, 'cache')],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', QVIRT_COMPILE_CACHE: join(work.path, 'cc'), QVIRT_LOG_LEVEL: 'info' } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const sock = join(root, 'var/run/kubevirt/sockets/launcher-sock');
      for (let i = 0; i < 300 && !existsSync(sock) && child.exitCode === null; i++) await sleep(50);
      assert.ok(existsSync(sock), `launcher did not come up: ${stderr}`);
      for (let i = 0; i < 100 && !stdout.includes('\n'); i++) await sleep(50);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
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
