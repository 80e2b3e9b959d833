// Container logs the kubelet way: the CRI record format and kubelet's selection (table tests),
// which container run a request reads, the collector turning raw output into CRI records, and
// the kubelet endpoint over real HTTPS with client certificates from the local PKI — plain
// reads, tailLines/timestamps/sinceSeconds/limitBytes/previous, follow until the container ends,
// kubelet's errors — and pods/log through the embedded API server with the real kubectl.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensurePki, type Pki } from '../../src/apiserver/auth.ts';
import { criTime, formatCriRecord, parseCriRecord, parseLogQuery, selectLog, splitIntoRecords, tailStart, MAX_CRI_RECORD_CONTENT, type CriRecord } from '../../src/local/pod-runner/cri-log.ts';
import { logInstance } from '../../src/local/pod-runner/log-instance.ts';
import { containerLogPaths, LogCollector } from '../../src/local/pod-runner/log-collector.ts';
import { startKubeletServer, type KubeletServer } from '../../src/local/pod-runner/kubelet-server.ts';
import type { ContainerRuntime } from '../../src/local/pod-runner/status.ts';
import { tempDir } from '../lib/tmp.ts';
import { log, waitFor } from './lib.ts';

const rec = (time: string, content: string, partial = false, stream: 'stdout' | 'stderr' = 'stdout'): CriRecord => ({ time, stream, partial, content });
const T = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000000000Z`;

test('CRI records: time format, splitting, parsing', () => {
  assert.is(criTime(Date.parse('2026-01-01T00:00:01.5Z') + 0.123), '2026-01-01T00:00:01.500123000Z');
  assert.is(criTime(Date.parse('2026-01-01T00:00:01Z')), '2026-01-01T00:00:01.000000000Z');
  assert.is(formatCriRecord(rec(T(1), 'hello')), `${T(1)} stdout F hello\n`);
  assert.is(formatCriRecord(rec(T(1), 'par', true, 'stderr')), `${T(1)} stderr P par\n`);
  const a = splitIntoRecords('', 'one\ntwo\nthr', 'stdout', T(1));
  assert.equal(a.records.map((r) => r.content), ['one', 'two']);
  assert.is(a.pending, 'thr');
  const b = splitIntoRecords(a.pending, 'ee\n', 'stdout', T(2));
  assert.equal(b.records, [rec(T(2), 'three')]);
  assert.equal(splitIntoRecords('tail', '', 'stderr', T(3), true).records, [rec(T(3), 'tail', false, 'stderr')]);
  const long = 'x'.repeat(MAX_CRI_RECORD_CONTENT * 2 + 5);
  const c = splitIntoRecords('', `${long}\n`, 'stdout', T(4));
  assert.equal(c.records.map((r) => [r.partial, r.content.length]), [[true, MAX_CRI_RECORD_CONTENT], [true, MAX_CRI_RECORD_CONTENT], [false, 5]]);
  assert.equal(parseCriRecord(`${T(5)} stderr F a b  c`), rec(T(5), 'a b  c', false, 'stderr'));
  assert.equal(parseCriRecord(`${T(5)} stdout F `), rec(T(5), ''));
  for (const bad of ['', 'garbage', `${T(5)} stdin F x`, `${T(5)} stdout X x`]) assert.is(parseCriRecord(bad), undefined, bad);
});

test('kubelet selection: tailLines (full lines), sinceTime, timestamps, limitBytes', () => {
  const file = [rec(T(1), 'a'), rec(T(2), 'b1', true), rec(T(3), 'b2'), rec(T(4), 'c'), rec(T(5), 'd', false, 'stderr')].map(formatCriRecord).join('') + 'not a record\n';
  const table: Array<[string, Parameters<typeof selectLog>[1], string]> = [
    ['everything', {}, 'a\nb1b2\nc\nd\n'],
    ['tail 2', { tailLines: 2 }, 'c\nd\n'],
    ['tail 3 keeps a split line whole', { tailLines: 3 }, 'b1b2\nc\nd\n'],
    ['tail 0', { tailLines: 0 }, ''],
    ['tail more than there is', { tailLines: 50 }, 'a\nb1b2\nc\nd\n'],
    ['since 00:00:04', { sinceMs: Date.parse('2026-01-01T00:00:04Z') }, 'c\nd\n'],
    ['timestamps', { tailLines: 1, timestamps: true }, `${T(5)} d\n`],
    ['limitBytes', { limitBytes: 3 }, 'a\nb'],
  ];
  for (const [what, o, want] of table) assert.is(selectLog(file, o), want, what);
  assert.is(tailStart([rec(T(1), 'x', true)], 1), 0);
});

test('kubelet query parameters: defaults and errors naming the parameter', () => {
  const now = Date.parse('2026-01-01T00:01:00Z');
  assert.equal(parseLogQuery(new URLSearchParams('follow=true&tailLines=10&timestamps=1&sinceSeconds=30'), now), { follow: true, previous: false, timestamps: true, sinceMs: now - 30_000, tailLines: 10 });
  assert.equal(parseLogQuery(new URLSearchParams('sinceTime=2026-01-01T00:00:30Z&limitBytes=5&previous=false'), now), { follow: false, previous: false, timestamps: false, sinceMs: Date.parse('2026-01-01T00:00:30Z'), limitBytes: 5 });
  const bad: Array<[string, RegExp]> = [['tailLines=x', /^tailLines: invalid value "x"/], ['tailLines=-1', /^tailLines/], ['sinceSeconds=0', /^sinceSeconds/], ['limitBytes=0', /^limitBytes/], ['follow=maybe', /^follow: invalid value "maybe"/], ['sinceTime=yesterday', /^sinceTime/], ['sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z', /at most one/]];
  for (const [q, re] of bad) assert.throws(() => parseLogQuery(new URLSearchParams(q), now), re, q);
});

test('which run of a container is read: kubelet\'s rules and messages', () => {
  const term = { kind: 'terminated' as const, exitCode: 1, reason: 'Error', finishedAt: T(1) };
  const rt = (state: ContainerRuntime['state'], restartCount: number, last = false): ContainerRuntime => ({ state, restartCount, ...(last ? { lastTerminated: term } : {}) });
  const table: Array<[string, ContainerRuntime | undefined, boolean, number | string]> = [
    ['running first run', rt({ kind: 'running', startedAt: T(1) }, 0), false, 0],
    ['running after two restarts', rt({ kind: 'running', startedAt: T(1) }, 2, true), false, 2],
    ['previous of that', rt({ kind: 'running', startedAt: T(1) }, 2, true), true, 1],
    ['terminated', rt(term, 1, true), false, 1],
    ['waiting to restart: the last run', rt({ kind: 'waiting', reason: 'CrashLoopBackOff' }, 3, true), false, 2],
    ['no previous', rt({ kind: 'running', startedAt: T(1) }, 0), true, 'previous terminated container "compute" in pod "p" not found'],
    ['image pull', rt({ kind: 'waiting', reason: 'ErrImagePull' }, 0), false, 'container "compute" in pod "p" is waiting to start: image can\'t be pulled'],
    ['config error', rt({ kind: 'waiting', reason: 'CreateContainerConfigError' }, 0), false, 'container "compute" in pod "p" is waiting to start: CreateContainerConfigError'],
    ['not created yet', undefined, false, 'container "compute" in pod "p" is waiting to start: ContainerCreating'],
  ];
  for (const [what, r, previous, want] of table) {
    const got = logInstance('p', 'compute', r, previous);
    assert.is(got.ok ? got.instance : got.message, want, what);
  }
});

// ----------------------------------------------------------------------- the endpoint over HTTPS

let pki: Pki;
let dir: { path: string; cleanup: () => void };
let server: KubeletServer;
const rts = new Map<string, ContainerRuntime>();
const collectors = new Map<string, LogCollector>();
const podDir = () => join(dir.path, 'pod');

test.before(async () => {
  dir = tempDir('qkl');
  pki = ensurePki(join(dir.path, 'pki'));
  server = await startKubeletServer({
    host: '127.0.0.1', tls: { key: pki.kubeletKey, cert: pki.kubeletCert, ca: pki.caCert }, log,
    source: {
      find: (ns, pod, container) => (ns === 'default' && pod === 'p' ? { rt: rts.get(container), paths: (i) => containerLogPaths(podDir(), container, i), collector: (i) => collectors.get(`${container}#${i}`) } : undefined),
    },
  });
});

test.after(async () => {
  for (const c of collectors.values()) await c.stop();
  await server.stop();
  dir.cleanup();
});

function get(path: string, opts: { cert?: boolean; onData?: (s: string) => void } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, ca: pki.caCert, ...(opts.cert === false ? {} : { cert: pki.kubeletClientCert, key: pki.kubeletClientKey }) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; opts.onData?.(body); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the endpoint: collected output, kubelet options, previous runs, errors, authentication', async () => {
  // Run 0 of "compute" ended; run 1 is running and writing.
  const p0 = containerLogPaths(podDir(), 'compute', 0);
  LogCollector.prepare(p0);
  appendFileSync(p0.stdout, 'first run\n');
  appendFileSync(p0.stderr, 'first run failed');
  const c0 = new LogCollector(p0, log).start();
  await c0.finish();
  assert.match(readFileSync(p0.cri, 'utf8'), /stderr F first run failed\n$/);
  const p1 = containerLogPaths(podDir(), 'compute', 1);
  LogCollector.prepare(p1);
  const c1 = new LogCollector(p1, log).start();
  collectors.set('compute#1', c1);
  rts.set('compute', { state: { kind: 'running', startedAt: T(1) }, restartCount: 1, lastTerminated: { kind: 'terminated', exitCode: 1, reason: 'Error', finishedAt: T(1) } });
  appendFileSync(p1.stdout, 'line 1\nline 2\n');
  appendFileSync(p1.stderr, 'warn 3\n');
  await waitFor('collected', async () => readFileSync(p1.cri, 'utf8').split('\n').length === 4);

  const all = await get('/containerLogs/default/p/compute');
  assert.is(all.status, 200);
  assert.is(all.body.split('\n').sort().join('\n'), '\nline 1\nline 2\nwarn 3');
  assert.is((await get('/containerLogs/default/p/compute?tailLines=1')).body.split('\n').length, 2);
  assert.match((await get('/containerLogs/default/p/compute?timestamps=true&tailLines=1')).body, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (line 2|warn 3)\n$/);
  assert.is((await get('/containerLogs/default/p/compute?sinceSeconds=600')).body.split('\n').length, 4);
  assert.is((await get('/containerLogs/default/p/compute?limitBytes=4')).body.length, 4);
  assert.is((await get('/containerLogs/default/p/compute?previous=true')).body, 'first run\nfirst run failed\n');

  rts.set('sidecar', { state: { kind: 'waiting', reason: 'ErrImagePull' }, restartCount: 0 });
  assert.equal(await get('/containerLogs/default/p/sidecar'), { status: 400, body: 'container "sidecar" in pod "p" is waiting to start: image can\'t be pulled' });
  assert.equal(await get('/containerLogs/default/p/compute?tailLines=ten'), { status: 400, body: 'tailLines: invalid value "ten": must be an integer ≥ 0' });
  assert.is((await get('/containerLogs/default/other/compute')).status, 404);
  assert.equal(await get('/containerLogs/default/p/compute', { cert: false }), { status: 401, body: 'Unauthorized' });
  assert.is((await get('/nothing')).status, 404);

  // Follow: what is there (tail 1), then each new line, until the run ends.
  let seen = '';
  const following = get('/containerLogs/default/p/compute?follow=true&tailLines=1', { onData: (s) => { seen = s; } });
  await waitFor('first followed line', async () => seen.length > 0);
  appendFileSync(p1.stdout, 'line 4\n');
  await waitFor('appended line followed', async () => seen.includes('line 4\n'));
  appendFileSync(p1.stdout, 'last words without newline');
  await c1.finish();
  const done = await following;
  assert.is(done.status, 200);
  assert.match(done.body, /line 4\nlast words without newline\n$/);
  assert.is(done.body.split('\n').length, 4, done.body);
});

test.run();
