// The pod runner's side of its spawner process (spawner-process.ts): container processes are started
// there, not forked from the runner's own large process. A container's exit comes back with its code
// and signal. A stopped runner's spawner stays while its containers run (it reaps them) but reports
// nothing more; if the spawner ends first, its containers run on (detached) and are reported lost —
// the runner watches them by pid as it watches those a previous runner started.
import { spawn, type ChildProcess } from 'node:child_process';
import { checkoutPath } from '../checkout.ts';

export interface SpawnSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Files the process's stdout and stderr are appended to. */
  readonly stdout: string;
  readonly stderr: string;
}

export interface SpawnerRequest extends SpawnSpec { readonly id: number }
export type SpawnerReply =
  | { readonly id: number; readonly pid: number }
  | { readonly id: number; readonly error: string }
  | { readonly exit: number; readonly code: number | null; readonly signal: NodeJS.Signals | null };

export interface SpawnWatch {
  /** The process ended (its code, or the signal that ended it). */
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  /** The spawner ended first: the process may still run, its end will not be reported here. */
  lost(): void;
}

const PROGRAM = checkoutPath('src/local/pod-runner/spawner-process.ts');

export class Spawner {
  readonly #node: string;
  #child: ChildProcess | undefined;
  #next = 1;
  readonly #pending = new Map<number, { resolve: (pid: number) => void; reject: (err: Error) => void; watch: SpawnWatch }>();
  readonly #live = new Map<number, SpawnWatch>();

  /** `node`: the Node binary that runs the spawner (the runner's own). */
  constructor(node: string = process.execPath) {
    this.#node = node;
  }

  /** Starts a detached process (its own process group and session); resolves with its pid, rejects when it could not be started. */
  spawn(spec: SpawnSpec, watch: SpawnWatch): Promise<number> {
    const child = this.#child ?? this.#start();
    const id = this.#next++;
    return new Promise<number>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, watch });
      child.channel?.ref();
      child.send({ id, ...spec } satisfies SpawnerRequest);
    });
  }

  /** Disconnects the spawner: it reports nothing more and ends once the processes it started have (they run on). */
  stop(): void {
    const child = this.#child;
    this.#child = undefined;
    for (const p of this.#pending.values()) p.reject(new Error('the spawner was stopped'));
    this.#pending.clear();
    this.#live.clear();
    if (child?.connected) child.disconnect();
  }

  #start(): ChildProcess {
    const child = spawn(this.#node, [PROGRAM], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.#child = child;
    child.unref();
    child.on('message', (m: SpawnerReply) => this.#onReply(m));
    // A spawner that cannot start fails its requests through 'exit' below.
    child.on('error', () => undefined);
    child.on('exit', () => this.#ended(child));
    return child;
  }

  #onReply(m: SpawnerReply): void {
    if ('exit' in m) {
      const watch = this.#live.get(m.exit);
      this.#live.delete(m.exit);
      // After the spawn's awaiter has run: an exit that arrives with its pid is still seen second.
      if (watch) setImmediate(() => watch.exited(m.code, m.signal));
      return;
    }
    const p = this.#pending.get(m.id);
    if (!p) return;
    this.#pending.delete(m.id);
    if (this.#pending.size === 0) this.#child?.channel?.unref();
    if ('pid' in m) {
      this.#live.set(m.pid, p.watch);
      p.resolve(m.pid);
    } else {
      p.reject(new Error(m.error));
    }
  }

  #ended(child: ChildProcess): void {
    if (this.#child !== child) return;
    this.#child = undefined;
    for (const p of this.#pending.values()) p.reject(new Error('the spawner process ended'));
    this.#pending.clear();
    const lost = [...this.#live.values()];
    this.#live.clear();
    for (const w of lost) w.lost();
  }
}
