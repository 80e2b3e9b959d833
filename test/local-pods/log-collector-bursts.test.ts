// The pod runner's log collector takes a burst of lines (a launcher starting its VM logs a dozen within a
// few hundred ms) in a few rounds of file operations, not one per line, and loses none of them. Once its
// watcher has reported a change, it no longer polls the files every second.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { LogCollector, containerLogPaths } from '../../src/local/pod-runner/log-collector.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('test', { level: 'warn' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('twelve lines 5 ms apart: collected in a few rounds, every line in order', async () => {
  const work = tempDir('qlc');
  try {
    const paths = containerLogPaths(work.path, 'compute', 0);
    LogCollector.prepare(paths);
    const c = new LogCollector(paths, log).start();
    let rounds = 0;
    c.on('append', () => rounds++);
    await sleep(50);
    const t0 = performance.now();
    for (let i = 0; i < 12; i++) {
      appendFileSync(paths.stdout, `line ${i}\n`);
      await sleep(5);
    }
    const writing = performance.now() - t0;
    for (let i = 0; i < 100 && readFileSync(paths.cri, 'utf8').split('\n').length < 13; i++) await sleep(20);
    await c.finish();
    const lines = readFileSync(paths.cri, 'utf8').trim().split('\n').map((l) => l.split(' ').slice(3).join(' '));
    assert.equal(lines, Array.from({ length: 12 }, (_, i) => `line ${i}`));
    // One round per 50 ms window the writes spanned (a loaded machine stretches the 5 ms sleeps), give or take one.
    assert.ok(rounds <= Math.ceil(writing / 50) + 2, `${rounds} rounds of collection for 12 lines written in ${writing.toFixed(0)} ms`);
  } finally {
    work.cleanup();
  }
});

test('a collector whose watcher works reads nothing while its container writes nothing', async () => {
  const work = tempDir('qlc');
  // Every read of a FileHandle in this process, counted.
  const probe = await open(import.meta.filename, 'r');
  const proto = Object.getPrototypeOf(probe) as { read: (...a: unknown[]) => Promise<unknown> };
  await probe.close();
  const read = proto.read;
  let reads = 0;
  proto.read = function (this: unknown, ...a: unknown[]) { reads++; return read.apply(this, a); };
  try {
    const paths = containerLogPaths(work.path, 'compute', 0);
    LogCollector.prepare(paths);
    const c = new LogCollector(paths, log).start();
    appendFileSync(paths.stdout, 'started\n');
    for (let i = 0; i < 100 && !readFileSync(paths.cri, 'utf8').includes('started'); i++) await sleep(20);
    await sleep(100);
    const before = reads;
    await sleep(2500);
    const idleReads = reads - before;
    appendFileSync(paths.stdout, 'later\n');
    for (let i = 0; i < 100 && !readFileSync(paths.cri, 'utf8').includes('later'); i++) await sleep(20);
    await c.finish();
    assert.ok(readFileSync(paths.cri, 'utf8').includes('later'), 'a line written after the quiet spell was collected');
    // Polled every second, as before, it read both files at least twice in those 2.5 s.
    assert.is(idleReads, 0, `${idleReads} reads while nothing was written`);
  } finally {
    proto.read = read;
    work.cleanup();
  }
});

test.run();
