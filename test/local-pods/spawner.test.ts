// The pod runner's spawner process: containers are started there (not forked from the runner), their
// exits come back with code and signal, a failed start is an error, and a stopped runner's spawner
// stays until its processes have ended — reaping them — while they run on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Spawner, type SpawnSpec } from '../../src/local/pod-runner/spawner.ts';
import { pidAlive } from './lib.ts';

const dir = mkdtempSync(join(tmpdir(), 'spawner-'));
const spec = (file: string, args: string[], name: string): SpawnSpec => ({ file, args, cwd: dir, env: { PATH: '/usr/bin:/bin' }, stdout: join(dir, `${name}.out`), stderr: join(dir, `${name}.err`) });
const within = <T>(p: Promise<T>, ms: number, what: string) => Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`timed out: ${what}`)), ms))]);
const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
// The spawner's channel is unref'd between requests (containers never hold the runner's process): keep this one alive.
const keep = setInterval(() => undefined, 1000);

test('a process: its own group, output in its files, the exit code back', async () => {
  const sp = new Spawner();
  try {
    let pid = 0;
    const exited = new Promise<[number | null, string | null]>((resolve) => {
      void sp.spawn(spec('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3'], 'a'), { exited: (code, signal) => resolve([code, signal]), lost: () => resolve([-1, 'lost']) }).then((p) => { pid = p; });
    });
    assert.equal(await within(exited, 10_000, 'exit'), [3, null]);
    assert.ok(pid > 0);
    assert.is(readFileSync(join(dir, 'a.out'), 'utf8'), 'out\n');
    assert.is(readFileSync(join(dir, 'a.err'), 'utf8'), 'err\n');
  } finally { sp.stop(); }
});

test('a signal that ends it is reported; the process is the spawner\'s child, a group leader', async () => {
  const sp = new Spawner();
  try {
    let resolveExit: (v: [number | null, string | null]) => void = () => undefined;
    const exited = new Promise<[number | null, string | null]>((r) => { resolveExit = r; });
    const pid = await within(sp.spawn(spec('/bin/sleep', ['30'], 'b'), { exited: (c, s) => resolveExit([c, s]), lost: () => resolveExit([-1, 'lost']) }), 10_000, 'spawn');
    assert.is.not(parentOf(pid), process.pid);
    assert.is(Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]), pid, 'its own process group');
    process.kill(pid, 'SIGTERM');
    assert.equal(await within(exited, 10_000, 'exit'), [null, 'SIGTERM']);
  } finally { sp.stop(); }
});

test('a command that cannot start is an error', async () => {
  const sp = new Spawner();
  try {
    const err = await within(sp.spawn(spec('/no/such/binary', [], 'c'), { exited: () => undefined, lost: () => undefined }).then(() => undefined, (e: Error) => e), 10_000, 'spawn');
    assert.ok(err instanceof Error);
    assert.match(err.message, /ENOENT/);
  } finally { sp.stop(); }
});

test('stopped: the process runs on and is reaped by the spawner, which then ends; nothing more is reported', async () => {
  const sp = new Spawner();
  let reported = false;
  const pid = await within(sp.spawn(spec('/bin/sleep', ['30'], 'd'), { exited: () => { reported = true; }, lost: () => { reported = true; } }), 10_000, 'spawn');
  const spawnerPid = parentOf(pid);
  sp.stop();
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(pidAlive(pid), 'the process runs on');
  assert.ok(pidAlive(spawnerPid), 'the spawner stays while it runs');
  process.kill(pid, 'SIGKILL');
  await within((async () => { while (pidAlive(pid) || pidAlive(spawnerPid)) await new Promise((r) => setTimeout(r, 50)); })(), 10_000, 'process reaped and spawner ended');
  assert.not.ok(reported);
});

test('the spawner gone first: its running process is reported lost (it runs on)', async () => {
  const sp = new Spawner();
  let resolveLost: () => void = () => undefined;
  const lost = new Promise<void>((r) => { resolveLost = r; });
  const pid = await within(sp.spawn(spec('/bin/sleep', ['30'], 'e'), { exited: () => undefined, lost: () => resolveLost() }), 10_000, 'spawn');
  try {
    process.kill(parentOf(pid), 'SIGKILL');
    await within(lost, 10_000, 'lost');
    assert.ok(pidAlive(pid));
  } finally {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    sp.stop();
  }
});

test.after(() => { clearInterval(keep); rmSync(dir, { recursive: true, force: true }); });
test.run();
