// A container's log, the way a CRI runtime keeps it for kubelet: the container's stdout and stderr
// go straight to files the process owns (so a container outlives a pod-runner restart, like a
// kubelet restart), and the collector turns what appears there into CRI records with the time it
// was read (`<podDir>/logs/<container>/<restartCount>.log`). Where it got to is kept in a `.pos`
// file, so a restarted runner continues instead of repeating. Followers (`kubectl logs -f`)
// subscribe to appends and to the end of the container.
import { EventEmitter } from 'node:events';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { appendFile, open, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Logger } from '../../log/logger.ts';
import { criTime, formatCriRecord, splitIntoRecords, type LogStream } from './cri-log.ts';

export interface ContainerLogPaths {
  readonly dir: string;
  /** The CRI log kubelet's endpoint reads. */
  readonly cri: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly pos: string;
}

/** `<podDir>/logs/<container>/<instance>.{log,stdout,stderr,pos}`; instance = the restart count it ran as. */
export function containerLogPaths(podDir: string, container: string, instance: number): ContainerLogPaths {
  const dir = join(podDir, 'logs', container);
  const f = (ext: string) => join(dir, `${instance}.${ext}`);
  return { dir, cri: f('log'), stdout: f('stdout'), stderr: f('stderr'), pos: f('pos') };
}

interface StreamState { name: LogStream; path: string; fh?: FileHandle; offset: number; pending: string; decoder: StringDecoder }

const POLL_MS = 1000;
/**
 * The poll once the watcher has reported a change (so it works on this filesystem): a safety net only.
 * Twenty running VMs have some forty containers; at POLL_MS their polls were ~2 % of the local control
 * plane's CPU while the VMs started (density bench profile), for output the watcher had already reported.
 */
const POLL_WATCHED_MS = 10_000;
/**
 * How long a change the watcher reports waits for more: a process writes its lines in bursts (a launcher
 * logs a dozen while it starts its VM), and each collection is a round of file operations on this
 * process's event loop — one round per burst, not per line. What `kubectl logs -f` sees is this late.
 */
const COALESCE_MS = 50;
const READ_CHUNK = 64 * 1024;

/** Collects one container instance's output into its CRI log until `finish()` (the process ended) or `stop()`. */
export class LogCollector extends EventEmitter {
  readonly paths: ContainerLogPaths;
  #streams: StreamState[];
  #watchers: FSWatcher[] = [];
  #poll: NodeJS.Timeout | undefined;
  #pollMs = POLL_MS;
  #watchFailed = false;
  #soon: NodeJS.Timeout | undefined;
  #running = false;
  #again = false;
  #idle: Promise<void> = Promise.resolve();
  #ended = false;
  #stopped = false;
  #finishing: Promise<void> | undefined;
  #log: Logger;

  constructor(paths: ContainerLogPaths, log: Logger) {
    super();
    this.paths = paths;
    this.#log = log;
    let pos: Partial<Record<LogStream, number>> = {};
    try { if (existsSync(paths.pos)) pos = JSON.parse(readFileSync(paths.pos, 'utf8')) as Partial<Record<LogStream, number>>; } catch { pos = {}; }
    this.#streams = (['stdout', 'stderr'] as const).map((name) => ({ name, path: paths[name], offset: typeof pos[name] === 'number' ? pos[name] : 0, pending: '', decoder: new StringDecoder('utf8') }));
  }

  /** Whether the container instance is over and everything it wrote is in the CRI log. */
  get ended(): boolean { return this.#ended; }

  /** Creates the directory and the empty output files the container is given (synchronous: part of a container's start). */
  static prepare(paths: ContainerLogPaths): void {
    mkdirSync(paths.dir, { recursive: true });
    for (const f of [paths.stdout, paths.stderr, paths.cri]) closeSync(openSync(f, 'a'));
  }

  start(): this {
    for (const s of this.#streams) {
      try {
        const w = watch(s.path, { persistent: false }, () => { this.#slowPoll(); this.#kickSoon(); });
        w.on('error', () => { this.#watchFailed = true; this.#startPoll(POLL_MS); });
        this.#watchers.push(w);
      } catch { /* the poll below still collects */ }
    }
    this.#startPoll(POLL_MS);
    this.#kick();
    return this;
  }

  #startPoll(ms: number): void {
    if (this.#stopped || (this.#poll && this.#pollMs === ms)) return;
    if (this.#poll) clearInterval(this.#poll);
    this.#pollMs = ms;
    this.#poll = setInterval(() => this.#kick(), ms);
    this.#poll.unref();
  }

  /** The watcher works: poll rarely. Not if a watcher failed (its file is then only polled). */
  #slowPoll(): void {
    if (this.#watchers.length === this.#streams.length && !this.#watchFailed) this.#startPoll(POLL_WATCHED_MS);
  }

  #kickSoon(): void {
    if (this.#soon || this.#stopped) return;
    this.#soon = setTimeout(() => { this.#soon = undefined; this.#kick(); }, COALESCE_MS);
    this.#soon.unref();
  }

  #kick(): void {
    if (this.#stopped) return;
    if (this.#running) { this.#again = true; return; }
    this.#running = true;
    this.#idle = (async () => {
      try {
        do {
          this.#again = false;
          await this.#collect(false);
        } while (this.#again && !this.#stopped);
      } catch (err) {
        this.#log.warn({ err: (err as Error).message, log: this.paths.cri }, 'collecting container output failed');
      } finally {
        this.#running = false;
      }
    })();
  }

  async #collect(final: boolean): Promise<void> {
    let out = '';
    for (const s of this.#streams) {
      s.fh ??= await open(s.path, 'r').catch(() => undefined);
      if (!s.fh) continue;
      const buf = Buffer.allocUnsafe(READ_CHUNK);
      for (;;) {
        const { bytesRead } = await s.fh.read(buf, 0, READ_CHUNK, s.offset);
        if (bytesRead === 0) break;
        s.offset += bytesRead;
        const text = s.decoder.write(buf.subarray(0, bytesRead));
        const { records, pending } = splitIntoRecords(s.pending, text, s.name, criTime(performance.timeOrigin + performance.now()));
        s.pending = pending;
        for (const r of records) out += formatCriRecord(r);
      }
      if (final) {
        const { records } = splitIntoRecords(s.pending, s.decoder.end(), s.name, criTime(performance.timeOrigin + performance.now()), true);
        s.pending = '';
        for (const r of records) out += formatCriRecord(r);
      }
    }
    if (out) {
      await appendFile(this.paths.cri, out);
      const pos = Object.fromEntries(this.#streams.map((s) => [s.name, s.offset - Buffer.byteLength(s.pending)]));
      await writeFile(this.paths.pos, JSON.stringify(pos));
      this.emit('append');
    }
  }

  /** The process ended: collect the rest (an unterminated last line included) and tell followers. */
  finish(): Promise<void> {
    this.#finishing ??= this.#finish();
    return this.#finishing;
  }

  async #finish(): Promise<void> {
    this.#stopped = true;
    this.#close();
    await this.#idle;
    try { await this.#collect(true); } catch (err) { this.#log.warn({ err: (err as Error).message, log: this.paths.cri }, 'collecting container output failed'); }
    await this.#closeFiles();
    this.#ended = true;
    this.emit('end');
  }

  /** The runner stops while the container runs on: the next runner's collector continues from `.pos`. */
  async stop(): Promise<void> {
    if (this.#finishing) return this.#finishing;
    this.#stopped = true;
    this.#close();
    await this.#idle;
    await this.#closeFiles();
    this.emit('end');
  }

  #close(): void {
    for (const w of this.#watchers) w.close();
    this.#watchers = [];
    if (this.#poll) clearInterval(this.#poll);
    if (this.#soon) clearTimeout(this.#soon);
    this.#soon = undefined;
  }

  async #closeFiles(): Promise<void> {
    for (const s of this.#streams) { await s.fh?.close().catch(() => undefined); s.fh = undefined; }
  }
}
