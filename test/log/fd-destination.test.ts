// src/log/fd-destination.ts: a component logging to a file descriptor writes whole lines, in order, with
// multi-byte UTF-8 intact — to a file, and through a pipe to a reader slower than the writer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

test('every line, whole and in order, to a file descriptor', () => {
  const work = tempDir('qfd');
  try {
    const file = join(work.path, 'log');
    const fd = openSync(file, 'w');
    const log = componentLogger('fdtest', { level: 'info', destination: fd });
    for (let i = 0; i < 500; i++) log.info({ i, text: 'é🙂'.repeat(i % 7) }, `line ${i}`);
    closeSync(fd);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { i: number; msg: string; component: string; text: string });
    assert.is(lines.length, 500);
    lines.forEach((l, i) => {
      assert.is(l.i, i);
      assert.is(l.msg, `line ${i}`);
      assert.is(l.component, 'fdtest');
      assert.is(l.text, 'é🙂'.repeat(i % 7));
    });
  } finally {
    work.cleanup();
  }
});

test('through a pipe larger than its buffer: nothing lost or torn', () => {
  // A child logs 4 MiB to its stdout (a pipe holds 64 KiB); the parent reads it all.
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', `
    const { componentLogger } = await import(${JSON.stringify(new URL('../../src/log/logger.ts', import.meta.url).href)});
    const log = componentLogger('pipe', { level: 'info', destination: 1 });
    for (let i = 0; i < 4096; i++) log.info({ i, pad: 'x'.repeat(1000) }, 'm');
  `], { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 60_000 });
  assert.is(child.status, 0, child.stderr);
  const lines = child.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { i: number });
  assert.is(lines.length, 4096);
  lines.forEach((l, i) => assert.is(l.i, i));
});

test.run();
