// QMP client overhead against a raw-socket baseline, on the same QEMU in the same run.
//  (a) query-status round trip through QmpClient vs a minimal hand-written write/read loop,
//      2 000 calls each, alternated call by call so load and drift hit both equally. Target ≤ 1.15×.
//  (b) QEMU spawn → capabilities negotiated through QmpClient (socketpair, and a socket path), median
//      of 10, beside spawn → greeting read raw from the same kind of channel. Target ≤ 60 ms.
//  (c) 1 000 pipelined query-status: the client's 8-in-flight window vs all written at once (no target).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { QmpClient } from '../qmp/index.ts';
import { median, p99, report, saveResults } from './lib.ts';

const QEMU = 'qemu-system-x86_64';
const MACHINE_NONE = ['-machine', 'none', '-accel', 'tcg', '-nodefaults', '-display', 'none'];
const CALLS = 2000;
const BLOCK = 100;
const SPAWNS = 10;

const children = new Set<ChildProcess>();
const dirs: string[] = [];
function cleanup(): void {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
process.on('exit', cleanup);

async function kill(c: ChildProcess): Promise<void> {
  if (c.exitCode === null && c.signalCode === null) {
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  }
  children.delete(c);
}

/** The baseline: a hand-written QMP loop with nothing but write, split on \n and JSON.parse. */
class RawQmp {
  private buf = '';
  private waiter: ((line: string) => void) | undefined;
  private readonly lines: string[] = [];
  private n = 0;
  readonly sock: Duplex;
  constructor(sock: Duplex) {
    this.sock = sock;
    sock.setEncoding?.('utf8');
    sock.on('error', () => {});
    sock.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const w = this.waiter;
        if (w) { this.waiter = undefined; w(line); } else this.lines.push(line);
      }
    });
  }
  line(): Promise<string> {
    const l = this.lines.shift();
    return l !== undefined ? Promise.resolve(l) : new Promise((r) => { this.waiter = r; });
  }
  /** Write `count` commands at once, then read their `count` replies. */
  async burst(execute: string, count: number): Promise<void> {
    let out = '';
    for (let i = 0; i < count; i++) out += `{"execute":"${execute}","id":"b${++this.n}"}\n`;
    this.sock.write(out);
    for (let got = 0; got < count;) {
      const msg = JSON.parse(await this.line()) as { id?: string };
      if (msg.id !== undefined) got++;
    }
  }

  async call(execute: string, args?: string): Promise<unknown> {
    const id = `r${++this.n}`;
    this.sock.write(args ? `{"execute":"${execute}","arguments":${args},"id":"${id}"}\n` : `{"execute":"${execute}","id":"${id}"}\n`);
    for (;;) {
      const msg = JSON.parse(await this.line()) as { id?: string; return?: unknown };
      if (msg.id === id) return msg.return;
    }
  }
}

async function connectWhenReady(path: string): Promise<Socket> {
  for (;;) {
    if (existsSync(path)) {
      try {
        return await new Promise<Socket>((resolve, reject) => {
          const s = createConnection(path);
          s.once('connect', () => resolve(s));
          s.once('error', reject);
        });
      } catch { /* not listening yet */ }
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function roundTrips(): Promise<void> {
  const dir = mkdtempSync('/tmp/qmpb-');
  dirs.push(dir);
  const a = join(dir, 'raw.sock');
  const b = join(dir, 'client.sock');
  const child = spawn(QEMU, [...MACHINE_NONE,
    '-chardev', `socket,id=m1,path=${a},server=on,wait=off`, '-mon', 'chardev=m1,mode=control',
    '-chardev', `socket,id=m2,path=${b},server=on,wait=off`, '-mon', 'chardev=m2,mode=control'], { stdio: 'ignore' });
  children.add(child);
  try {
    const raw = new RawQmp(await connectWhenReady(a));
    await raw.line(); // greeting
    await raw.call('qmp_capabilities', '{"enable":["oob"]}');
    const client = await QmpClient.connect(b, { waitForServer: true });
    const rawT: number[] = [];
    const cliT: number[] = [];
    // Warm-up (JIT, QEMU caches).
    for (let i = 0; i < 300; i++) { await raw.call('query-status'); await client.execute('query-status'); }
    // Alternate call by call (swapping which goes first every block) so that load from other
    // processes on this shared host lands on both loops alike.
    for (let block = 0; block < CALLS / BLOCK; block++) {
      const rawFirst = block % 2 === 0;
      for (let i = 0; i < BLOCK; i++) {
        for (const which of rawFirst ? ['raw', 'client'] : ['client', 'raw']) {
          const t0 = performance.now();
          if (which === 'raw') await raw.call('query-status');
          else await client.execute('query-status');
          (which === 'raw' ? rawT : cliT).push((performance.now() - t0) * 1000);
        }
      }
    }
    report({ name: 'query-status round trip, QmpClient, median', value: median(cliT), unit: 'µs', baseline: median(rawT), baselineName: 'raw socket', target: { maxRatio: 1.15 }, details: { calls: CALLS } });
    report({ name: 'query-status round trip, QmpClient, p99', value: p99(cliT), unit: 'µs', baseline: p99(rawT), baselineName: 'raw socket', target: { maxRatio: 1.15 }, details: { calls: CALLS } });
    // Pipelined burst: QmpClient keeps ≤ 8 in flight (the QMP spec's limit); the raw loop writes all
    // at once, which the spec does not allow. Informational: the price of obeying the limit.
    const BURST = 1000;
    const rawBurst: number[] = [];
    const cliBurst: number[] = [];
    for (let r = 0; r < 5; r++) {
      let t0 = performance.now();
      await Promise.all(Array.from({ length: BURST }, () => client.execute('query-status')));
      cliBurst.push(((performance.now() - t0) * 1000) / BURST);
      t0 = performance.now();
      await raw.burst('query-status', BURST);
      rawBurst.push(((performance.now() - t0) * 1000) / BURST);
    }
    report({ name: `${BURST} pipelined query-status, per command`, value: median(cliBurst), unit: 'µs', baseline: median(rawBurst), baselineName: 'raw, all written at once', details: { burst: BURST, runs: 5, note: 'informational: the client keeps the QMP spec limit of 8 in-band commands in flight' } });
    await client.close();
    raw.sock.destroy();
  } finally {
    await kill(child);
  }
}

function spawnPair(): ChildProcess {
  const child = spawn(QEMU, [...MACHINE_NONE, '-chardev', 'socket,id=mon,fd=3', '-mon', 'chardev=mon,mode=control'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  children.add(child);
  return child;
}

async function startup(): Promise<void> {
  const caps: number[] = [];
  const greet: number[] = [];
  const rawGreeting = async (): Promise<number> => {
    const t0 = performance.now();
    const child = spawnPair();
    const raw = new RawQmp(child.stdio[3] as Duplex);
    await raw.line();
    const ms = performance.now() - t0;
    (child.stdio[3] as Duplex).destroy();
    await kill(child);
    return ms;
  };
  const clientCaps = async (): Promise<number> => {
    const t0 = performance.now();
    const child = spawnPair();
    const client = await QmpClient.adopt(child.stdio[3] as Duplex);
    const ms = performance.now() - t0;
    await client.close();
    await kill(child);
    return ms;
  };
  await rawGreeting(); // warm the page cache
  await clientCaps();
  for (let i = 0; i < SPAWNS; i++) {
    if (i % 2 === 0) { greet.push(await rawGreeting()); caps.push(await clientCaps()); }
    else { caps.push(await clientCaps()); greet.push(await rawGreeting()); }
  }
  // The same over a unix socket path QEMU creates (connect retried until it listens).
  const pathCaps: number[] = [];
  const pathGreet: number[] = [];
  const spawnPath = (): { child: ChildProcess; path: string } => {
    const dir = mkdtempSync('/tmp/qmpb-');
    dirs.push(dir);
    const path = join(dir, 'qmp.sock');
    const child = spawn(QEMU, [...MACHINE_NONE, '-chardev', `socket,id=mon,path=${path},server=on,wait=off`, '-mon', 'chardev=mon,mode=control'], { stdio: 'ignore' });
    children.add(child);
    return { child, path };
  };
  for (let i = 0; i < SPAWNS; i++) {
    const runs: (() => Promise<void>)[] = [
      async () => {
        const t0 = performance.now();
        const { child, path } = spawnPath();
        const raw = new RawQmp(await connectWhenReady(path));
        await raw.line();
        pathGreet.push(performance.now() - t0);
        raw.sock.destroy();
        await kill(child);
      },
      async () => {
        const t0 = performance.now();
        const { child, path } = spawnPath();
        const client = await QmpClient.connect(path, { waitForServer: true });
        pathCaps.push(performance.now() - t0);
        await client.close();
        await kill(child);
      },
    ];
    if (i % 2) runs.reverse();
    for (const run of runs) await run();
  }
  report({ name: 'QEMU spawn → capabilities negotiated, median', value: median(caps), unit: 'ms', baseline: median(greet), baselineName: 'spawn → greeting (raw)', target: { maxValue: 60 }, details: { runs: SPAWNS, min: Math.min(...caps), max: Math.max(...caps) } });
  report({ name: 'same over a socket path (connect retried)', value: median(pathCaps), unit: 'ms', baseline: median(pathGreet), baselineName: 'spawn → greeting (raw, same retry)', target: { maxValue: 60 }, details: { runs: SPAWNS, min: Math.min(...pathCaps), max: Math.max(...pathCaps) } });
}

try {
  await roundTrips();
  await startup();
} finally {
  cleanup();
}
process.exitCode = saveResults('qmp') ? 0 : 2;
