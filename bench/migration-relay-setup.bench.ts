// Does a busy node-agent main thread delay a migration's channel setup? The socat relay's control
// runs on the node agent's main thread (the source's accept and spawn of one socat per QEMU
// connection, the target's log parsing that opens the multifd channels' gate); the Node relay did
// all of it in worker threads. In the local mode the whole control plane shares that thread.
//
// One migration's setup as QEMU does it: a main channel, then 8 multifd channels, each with a small
// first write, through the source relay (unix) → TLS → the target relay → the target socket. Timed
// from the first connect to every channel's bytes at the target socket. QEMU's stand-ins (the
// clients and the target socket) run in a worker thread, so only the relay's control shares the
// main thread with the synthetic load: busy-waiting slices of 18 ms with 2 ms gaps (90 %), or
// 10 ms with 10 ms gaps (50 %). Same run, interleaved: each relay loaded vs idle, and socat vs the
// Node relay under the same load.
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { componentLogger } from '../src/log/logger.ts';
import { SourceListener, TargetListener, type RelayKind } from '../handler/migration/proxy.ts';
import { ensureMigrationTls } from '../handler/migration/tls.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { median, report, saveResults } from './lib.ts';

const RUNS = Number(process.env.RUNS ?? 10);
const CHANNELS = 9;
const LOADS = { idle: undefined, '50%': { busyMs: 10, gapMs: 10 }, '90%': { busyMs: 18, gapMs: 2 } } as const;
type Load = keyof typeof LOADS;
const RELAYS: RelayKind[] = ['socat', 'node'];

const log = componentLogger('bench', { level: 'error' });
const t = tempDir('qrs');
const tls = ensureMigrationTls(join(t.path, 'tls'));

// QEMU's stand-ins, off the main thread: a target socket that counts each channel's bytes, and the
// source QEMU's connections.
const QEMU_SIDE = `
const { parentPort } = require('node:worker_threads');
const net = require('node:net');
let sink;
parentPort.on('message', (m) => {
  if (m.kind === 'sink') {
    sink = net.createServer((s) => { s.on('data', (d) => { got += d.length; if (got === want) done(); }); s.on('error', () => {}); });
    sink.listen(m.path, () => parentPort.postMessage({ kind: 'ready' }));
  } else if (m.kind === 'go') {
    got = 0; want = m.channels * 64;
    const t0 = performance.now();
    done = () => { parentPort.postMessage({ kind: 'took', ms: performance.now() - t0 }); for (const c of conns) c.destroy(); };
    const conns = [];
    for (let i = 0; i < m.channels; i++) { const c = net.connect(m.source); c.on('error', () => {}); c.write(Buffer.alloc(64, i)); conns.push(c); }
  } else if (m.kind === 'stop') { sink.close(); parentPort.close(); }
});
let got = 0, want = 0, done = () => {};
`;

async function oneSetup(relay: RelayKind, load: Load, i: number): Promise<number> {
  const sinkPath = join(t.path, `sink-${i}.sock`);
  const w = new Worker(QEMU_SIDE, { eval: true });
  const next = (kind: string) => new Promise<{ kind: string; ms: number }>((resolve) => { const on = (m: { kind: string; ms: number }) => { if (m.kind === kind) { w.off('message', on); resolve(m); } }; w.on('message', on); });
  const ready = next('ready');
  w.postMessage({ kind: 'sink', path: sinkPath });
  await ready;
  const target = await TargetListener.start({ address: '127.0.0.1', unixPath: sinkPath, tls, log, relay });
  const source = await SourceListener.start({ unixPath: join(t.path, `src-${i}`, 'mig.sock'), host: '127.0.0.1', port: target.port, multifdPort: target.multifdPort, tls, log, relay });
  let loading = true;
  const shape = LOADS[load];
  const loadDone = (async () => {
    if (!shape) return;
    while (loading) {
      const end = performance.now() + shape.busyMs;
      while (performance.now() < end) { /* the node agent's main thread at work */ }
      await new Promise((r) => setTimeout(r, shape.gapMs));
    }
  })();
  try {
    const took = next('took');
    w.postMessage({ kind: 'go', source: source.unixPath, channels: CHANNELS });
    return (await took).ms;
  } finally {
    loading = false;
    await loadDone;
    await source.close();
    await target.close();
    w.postMessage({ kind: 'stop' });
    await new Promise((r) => w.once('exit', r));
  }
}

const samples = new Map<string, number[]>();
try {
  let i = 0;
  for (let r = 0; r < RUNS; r++) {
    for (const relay of RELAYS) {
      for (const load of Object.keys(LOADS) as Load[]) {
        const ms = await oneSetup(relay, load, i++);
        const k = `${relay} ${load}`;
        samples.set(k, [...(samples.get(k) ?? []), ms]);
      }
    }
  }
} finally {
  t.cleanup();
}

const med = (relay: RelayKind, load: Load) => median(samples.get(`${relay} ${load}`)!);
for (const relay of RELAYS) {
  for (const load of ['50%', '90%'] as const) {
    report({ name: `${CHANNELS}-channel setup, ${relay} relay, main thread ${load} busy`, value: med(relay, load), unit: 'ms', baseline: med(relay, 'idle'), baselineName: `${relay}, idle`, details: { runs: RUNS } });
  }
}
for (const load of Object.keys(LOADS) as Load[]) {
  report({ name: `${CHANNELS}-channel setup, socat vs Node relay, ${load}`, value: med('socat', load), unit: 'ms', baseline: med('node', load), baselineName: 'node', details: { runs: RUNS } });
}
process.exitCode = saveResults('migration-relay-setup') ? 0 : 1;
