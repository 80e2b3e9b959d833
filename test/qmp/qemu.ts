// Test helper: a real `qemu-system-x86_64 -machine none` (or any argv) with QMP on a unix socket
// path or on a spawn-time socketpair (child.stdio[3]). `stop()` always leaves nothing behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { tempDir } from '../lib/tmp.ts';

export const QEMU = 'qemu-system-x86_64';
export const MACHINE_NONE = ['-machine', 'none', '-accel', 'tcg', '-nodefaults', '-display', 'none'];

export interface TestQemu {
  child: ChildProcess;
  /** The QMP socket path (mode 'socket'). */
  socketPath: string;
  /** The QMP stream (mode 'socketpair'). */
  stream: Duplex;
  /** Exit code/signal once exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
  /** SIGKILL if still running, wait for the exit, remove the temp dir. Idempotent. */
  stop: () => Promise<void>;
}

export function spawnQemu(opts: { mode: 'socket' | 'socketpair'; args?: string[] }): TestQemu {
  const dir = tempDir('qmpt');
  const socketPath = join(dir.path, 'qmp.sock');
  const monitor = opts.mode === 'socket'
    ? ['-chardev', `socket,id=mon,path=${socketPath},server=on,wait=off`, '-mon', 'chardev=mon,mode=control']
    : ['-chardev', 'socket,id=mon,fd=3', '-mon', 'chardev=mon,mode=control'];
  const child = spawn(QEMU, [...(opts.args ?? MACHINE_NONE), ...monitor], {
    stdio: opts.mode === 'socket' ? ['ignore', 'ignore', 'pipe'] : ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); if (err.length > 65536) err = err.slice(-65536); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let stopped: Promise<void> | undefined;
  return {
    child,
    socketPath,
    stream: (opts.mode === 'socketpair' ? child.stdio[3] : undefined) as Duplex,
    exited,
    stderr: () => err,
    stop: () => (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      const s = child.stdio[3] as Duplex | null | undefined;
      s?.destroy();
      dir.cleanup();
    })()),
  };
}

/** Wait until QEMU has created its listening socket (mode 'socket'). */
export async function waitForSocket(q: TestQemu, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!existsSync(q.socketPath)) {
    if (q.child.exitCode !== null) throw new Error(`QEMU exited (${q.child.exitCode}) before creating ${q.socketPath}: ${q.stderr()}`);
    if (Date.now() > end) throw new Error(`QEMU did not create ${q.socketPath} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
