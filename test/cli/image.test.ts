import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../lib/tmp.ts';
import { initialProgress, renderProgress, type ProgressState } from '../../src/cli/progress.ts';

const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
const run = promisify(execFile);

test('qvirt image import / list / rm against a store directory', async () => {
  const t = tempDir('qvi');
  try {
    const env = { ...process.env, QVIRT_IMAGE_STORE: join(t.path, 'store') };
    const file = join(t.path, 'disk.img');
    writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 1));
    const imp = await run(qvirt, ['image', 'import', 'example/disk:v1', file], { env });
    assert.match(imp.stdout, /imported example\/disk:v1 \(3\.0 MiB, raw disk, sha256:[0-9a-f]{64}\)/);
    assert.match(imp.stderr, /100% 3\.0 MiB \/ 3\.0 MiB/);
    const list = await run(qvirt, ['image', 'list'], { env });
    assert.match(list.stdout, /example\/disk:v1\s+3\.0 MiB  sha256:[0-9a-f]{12}  /);
    const missing = await run(qvirt, ['image', 'import', 'x', join(t.path, 'nope')], { env }).then(() => undefined, (e: { code: number; stderr: string }) => e);
    assert.is(missing?.code, 1);
    assert.match(missing!.stderr, /is not a readable file/);
    assert.match((await run(qvirt, ['image', 'rm', 'example/disk:v1'], { env })).stdout, /removed/);
    assert.not.match((await run(qvirt, ['image', 'list'], { env })).stdout, /example\/disk/);
  } finally {
    t.cleanup();
  }
});

test('the progress renderer: a bar redrawn in place on a terminal, quarter lines elsewhere', () => {
  const M = 1048576;
  const drive = (steps: number[], total: number, tty: boolean): Array<string | undefined> => {
    let st: ProgressState = initialProgress;
    return steps.map((done) => { const r = renderProgress(st, done, total, tty); st = r.state; return r.text; });
  };
  assert.equal(drive([0, 0.5 * M, 0.5 * M, 10 * M], 10 * M, true), [
    `\r[${' '.repeat(30)}]   0% 0.0 MiB / 10.0 MiB`,
    `\r[##${' '.repeat(28)}]   5% 0.5 MiB / 10.0 MiB`,
    undefined, // same percentage: nothing redrawn
    `\r[${'#'.repeat(30)}] 100% 10.0 MiB / 10.0 MiB\n`,
  ]);
  assert.equal(drive([0, 2.4 * M, 2.6 * M, 4 * M, 7.9 * M, 10 * M], 10 * M, false), [
    '0% 0.0 MiB / 10.0 MiB\n', undefined, '26% 2.6 MiB / 10.0 MiB\n', undefined, '79% 7.9 MiB / 10.0 MiB\n', '100% 10.0 MiB / 10.0 MiB\n',
  ]);
  assert.equal(drive([0], 0, true), [`\r[${'#'.repeat(30)}] 100% 0.0 MiB / 0.0 MiB\n`], 'an empty file is done at once');
});

test('qvirt image import on a terminal draws the bar in place', async () => {
  const t = tempDir('qvt');
  try {
    const file = join(t.path, 'disk.img');
    writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, 2));
    // script(1) gives the command a pseudo-terminal, as an interactive shell would.
    const cmd = `QVIRT_IMAGE_STORE=${join(t.path, 'store')} ${qvirt} image import example/tty:v1 ${file}`;
    const out = (await run('script', ['-qec', cmd, '/dev/null'], { timeout: 30_000 })).stdout;
    assert.match(out, /\r\[#{30}\] 100% 8\.0 MiB \/ 8\.0 MiB\r?\n/);
    assert.ok(out.split('\r[').length >= 3, 'redrawn more than once');
    assert.match(out, /imported example\/tty:v1 \(8\.0 MiB, raw disk, sha256:[0-9a-f]{64}\)/);
  } finally {
    t.cleanup();
  }
});

test.run();
