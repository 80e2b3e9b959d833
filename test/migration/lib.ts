// Helpers for migration tests: a source and a target launcher runtime (each in its own temp dir,
// as two pods on two nodes), a plain unix-socket forwarder standing in for the handlers' proxy, and
// a tick reader that timestamps the guest's counter as it appears in each side's serial log.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { harness, guestArgv, type Harness } from '../launcher-runtime/lib.ts';
import type { GuestArtifacts } from '../../src/local/guest/guest.ts';

export interface Side { h: Harness; serial: () => string }

/**
 * A launcher runtime booting the test guest (kernel args `append`) with its serial log in its run dir;
 * `extraArgs` appended to QEMU's argv (a device only one side has, say).
 */
export async function guestSide(guest: GuestArtifacts, uid: string, append: string, memoryMiB = 256, extraArgs: string[] = []): Promise<Side> {
  let serial = '';
  const h: Harness = await harness({
    uid,
    notifyTimings: { intervalMs: 100, totalTimeoutMs: 3000 },
    finalNotifyTimeoutMs: 2000,
    start: async () => {
      const a = guestArgv(guest, h.runDir, { agent: false, append });
      const argv = [...a.argv.map((x) => (x === '256' ? String(memoryMiB) : x)), ...extraArgs];
      serial = a.serialLog;
      return { argv, domain: { hypervisor: 'qemu' } };
    },
  });
  return { h, serial: () => serial };
}

/** Forwards every connection on unix socket `from` to unix socket `to` (what the two handlers do, minus TLS). */
export async function unixForwarder(from: string, to: string): Promise<{ close(): Promise<void>; connections: number }> {
  mkdirSync(dirname(from), { recursive: true });
  rmSync(from, { force: true });
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server: Server = createServer((inbound) => {
    state.connections++;
    const outbound = connect(to);
    sockets.add(inbound).add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const end = () => { inbound.destroy(); outbound.destroy(); sockets.delete(inbound); sockets.delete(outbound); };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(from, r));
  return {
    get connections() { return state.connections; },
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => { rmSync(from, { force: true }); r(); });
    }),
  };
}

export interface Tick { n: number; uptime: number; at: number; side: 'source' | 'target' }

/** The test guest's tick (`qvirt.tick=MS` on its kernel command line), a whole console line. */
const TICK = /QVIRT-TICK n=(\d+) uptime=([\d.]+)\r?\n/g;

/**
 * `re`'s matches in the guest's console across a migration: the source's serial log, then the target's.
 * A line the guest was printing when it stopped on the source ends on the target (the rest of it moved in
 * the serial port's and the guest's buffers), so neither log alone holds it whole. Each match is the
 * side's where it began. `re` should match whole lines (end with \n) so that a line still being written
 * is not taken.
 */
export function acrossMigration(source: string, target: string, re: RegExp): { m: RegExpMatchArray; side: 'source' | 'target' }[] {
  return [...(source + target).matchAll(re)].map((m) => ({ m, side: m.index! < source.length ? 'source' : 'target' }));
}

/** QEMU arguments for a virtio-rng: given to a source only, its target fails to load the device state. */
export const SOURCE_ONLY_DEVICE: readonly string[] = ['-object', 'rng-random,id=rng0,filename=/dev/urandom', '-device', 'virtio-rng-pci,rng=rng0,id=rng'];

/** A pass of the block-migration tests' guest loop: it wrote block 4096+n and read back the boot marker and block n-1. */
export interface BlockPass { n: number; boot: string; prev: string }
const BLOCK_PASS = /QVIRT-BLK n=(\d+) boot=(\S*) prev=(\S*)\r?\n/g;
const blockPass = (m: RegExpMatchArray): BlockPass => ({ n: Number(m[1]), boot: m[2]!, prev: m[3]! });

/** The whole QVIRT-BLK lines in one serial log. */
export function blockPasses(text: string): BlockPass[] {
  return [...text.matchAll(BLOCK_PASS)].map(blockPass);
}

/** The passes across a migration (acrossMigration): all of them in order, and those begun on each side. */
export function blockPassesAcross(source: string, target: string): { all: BlockPass[]; source: BlockPass[]; target: BlockPass[] } {
  const across = acrossMigration(source, target, BLOCK_PASS).map((x) => ({ side: x.side, pass: blockPass(x.m) }));
  const of = (side: 'source' | 'target') => across.filter((x) => x.side === side).map((x) => x.pass);
  return { all: across.map((x) => x.pass), source: of('source'), target: of('target') };
}

/** Polls the serial logs every 5 ms and records when each QVIRT-TICK first appeared (host time). */
export class TickReader {
  readonly ticks: Tick[] = [];
  private readonly seen = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private readonly logs: { side: 'source' | 'target'; path: () => string }[];

  constructor(logs: { side: 'source' | 'target'; path: () => string }[]) {
    this.logs = logs;
    this.timer = setInterval(() => this.poll(), 5);
  }

  private poll(): void {
    const texts = new Map<'source' | 'target', string>();
    for (const l of this.logs) {
      try { texts.set(l.side, readFileSync(l.path(), 'utf8')); } catch { /* not there yet */ }
    }
    for (const { m, side } of acrossMigration(texts.get('source') ?? '', texts.get('target') ?? '', TICK)) {
      const key = `${side}:${m[1]}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.ticks.push({ n: Number(m[1]), uptime: Number(m[2]), at: Date.now(), side });
    }
  }

  of(side: 'source' | 'target'): Tick[] {
    this.poll();
    return this.ticks.filter((t) => t.side === side).sort((a, b) => a.n - b.n);
  }

  async waitFor(side: 'source' | 'target', count: number, timeoutMs = 60_000): Promise<Tick[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = this.of(side);
      if (t.length >= count) return t;
      if (Date.now() > deadline) throw new Error(`only ${t.length} ${side} ticks after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
