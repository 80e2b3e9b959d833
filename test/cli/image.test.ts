import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../lib/tmp.ts';

const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
const run = promisify(execFile);

test('qvirt image import / list / rm against a store directory', async () => {
  const t = tempDir('qvi');
  try {
    const env = { ...process.env, QVIRT_IMAGE_STORE: join(t.path, 'store') };
    const file = join(t.path, 'disk.img');
    writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 1));
    const imp = await run(qvirt, ['image', 'import', 'example/disk:v1', file], { env });
    assert.match(imp.stdout, /imported example\/disk:v1 \(3\.0 MiB\)/);
    assert.match(imp.stderr, /100% 3\.0 MiB \/ 3\.0 MiB/);
    const list = await run(qvirt, ['image', 'list'], { env });
    assert.match(list.stdout, /example\/disk:v1\s+3\.0 MiB/);
    const missing = await run(qvirt, ['image', 'import', 'x', join(t.path, 'nope')], { env }).then(() => undefined, (e: { code: number; stderr: string }) => e);
    assert.is(missing?.code, 1);
    assert.match(missing!.stderr, /is not a readable file/);
    assert.match((await run(qvirt, ['image', 'rm', 'example/disk:v1'], { env })).stdout, /removed/);
    assert.not.match((await run(qvirt, ['image', 'list'], { env })).stdout, /example\/disk/);
  } finally {
    t.cleanup();
  }
});

test.run();
