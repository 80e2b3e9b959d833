// KubeVirt's "virt-launcher processes memory usage should be lower than allocated size" test, for
// qvirt's launcher: a real Node process loads `qvirt launcher`'s module graph, settles, collects
// garbage, and its RSS (what `ps` reports, anonymous + file-backed) must stay within
// QVIRT_LAUNCHER_OVERHEAD, the term the launcher pod's memory request budgets for it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../lib/tmp.ts';
import { QVIRT_LAUNCHER_OVERHEAD } from '../../controller/vmi/overhead.ts';

const launcherMain = new URL('../../launcher/main.ts', import.meta.url).pathname;

const probe = `
import { readFileSync } from 'node:fs';
await import(process.argv[2]);
await new Promise((r) => setTimeout(r, 1000));
globalThis.gc?.();
await new Promise((r) => setTimeout(r, 200));
const st = readFileSync('/proc/self/status', 'utf8');
const kb = (k) => Number(new RegExp(k + ':\\\\s+(\\\\d+) kB').exec(st)[1]);
process.stdout.write(JSON.stringify({ rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') }));
`;

test('the launcher process fits its memory overhead budget (QVIRT_LAUNCHER_OVERHEAD)', async () => {
  const dir = tempDir('qvfp');
  try {
    const script = join(dir.path, 'probe.mjs');
    writeFileSync(script, probe);
    const child = spawn(process.execPath, ['--expose-gc', script, launcherMain], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code: number | null = await new Promise((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    assert.is(code, 0, `probe failed: ${err}`);
    const m = JSON.parse(out) as { rss: number; anon: number; file: number };
    const budgetKiB = Number(QVIRT_LAUNCHER_OVERHEAD / 1024n);
    console.log(`qvirt launcher idle RSS ${(m.rss / 1024).toFixed(1)} MiB (anon ${(m.anon / 1024).toFixed(1)}, file ${(m.file / 1024).toFixed(1)}), budget ${budgetKiB / 1024} MiB`);
    assert.ok(m.rss <= budgetKiB, `launcher RSS ${(m.rss / 1024).toFixed(1)} MiB exceeds QVIRT_LAUNCHER_OVERHEAD ${budgetKiB / 1024} MiB`);
  } finally {
    dir.cleanup();
  }
});

test.run();
