// handler/launcher-liveness: when a launcher the node agent has a client for counts as gone — at
// once when its socket refuses connections or is gone, after the watchdog timeout when it merely
// does not answer — and the probe against real unix sockets.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { launcherLiveness, probeFromErrno, probeSocket, type LivenessView, type SocketProbe } from '../../handler/launcher/liveness.ts';
import { tempDir } from '../lib/tmp.ts';

const W = 30_000;
const cases: Array<[string, Omit<LivenessView, 'watchdogTimeoutMs'>, 'responsive' | 'silent' | 'unresponsive']> = [
  ['answered', { answered: true, silentMs: 0 }, 'responsive'],
  ['answered long after its last answer: responsive again', { answered: true, probe: 'refused', silentMs: 10 * W }, 'responsive'],
  ['no answer, socket refuses connections: gone now', { answered: false, probe: 'refused', silentMs: 0 }, 'unresponsive'],
  ['no answer, socket file gone: gone now', { answered: false, probe: 'missing', silentMs: 5 }, 'unresponsive'],
  ['no answer, somebody listens (busy): wait', { answered: false, probe: 'listening', silentMs: W - 1 }, 'silent'],
  ['no answer, probe failed otherwise (EAGAIN, EACCES): wait', { answered: false, probe: 'error', silentMs: 1000 }, 'silent'],
  ['no answer, not probed: wait', { answered: false, silentMs: 1000 }, 'silent'],
  ['listening but silent for the watchdog timeout: unresponsive', { answered: false, probe: 'listening', silentMs: W }, 'unresponsive'],
  ['not probed, silent past the timeout: unresponsive', { answered: false, silentMs: W + 1 }, 'unresponsive'],
];
for (const [name, v, want] of cases) {
  test(name, () => { assert.is(launcherLiveness({ ...v, watchdogTimeoutMs: W }).state, want); });
}

test('the reason names what was seen', () => {
  const refused = launcherLiveness({ answered: false, probe: 'refused', silentMs: 0, watchdogTimeoutMs: W });
  assert.ok(refused.state === 'unresponsive' && /refuses connections: the launcher has exited/.test(refused.why));
  const timedOut = launcherLiveness({ answered: false, probe: 'listening', silentMs: 31_000, watchdogTimeoutMs: W });
  assert.ok(timedOut.state === 'unresponsive' && /no answer for 31 s \(watchdog timeout 30 s\)/.test(timedOut.why));
});

const errnos: Array<[string | undefined, SocketProbe]> = [['ECONNREFUSED', 'refused'], ['ENOENT', 'missing'], ['ENOTDIR', 'missing'], ['EAGAIN', 'error'], ['EACCES', 'error'], [undefined, 'error']];
for (const [code, want] of errnos) test(`connect errno ${code ?? '(none)'} → ${want}`, () => { assert.is(probeFromErrno(code), want); });

test('probe: a listening socket, the same path once its listener is gone (file left behind), no file', async () => {
  const t = tempDir('qvl');
  try {
    const path = join(t.path, 's.sock');
    const server = createServer((c) => c.destroy());
    await new Promise<void>((r) => server.listen(path, r));
    assert.is(await probeSocket(path), 'listening');
    await new Promise<void>((r) => server.close(() => r()));
    assert.is(await probeSocket(path), 'missing', 'node unlinks its socket on close');
    // A SIGKILLed process leaves its socket file behind, with nobody listening on it.
    const r = spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`]);
    assert.is(r.signal, 'SIGKILL');
    assert.is(await probeSocket(path), 'refused');
    assert.is(await probeSocket(join(t.path, 'none.sock')), 'missing');
  } finally {
    t.cleanup();
  }
});

test.run();
