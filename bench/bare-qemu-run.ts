// The machine baseline's starts (bare-qemu.ts), run as a small process of their own: stdin carries
// BareRunRequest (the prepared QEMUs and the gap), stdout gets BareRunReply. It loads only the QMP client,
// so spawning a QEMU here costs what it costs from a shell, not a fork of the harness that prepared them.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { QmpClient } from '../qmp/client.ts';
import { isVcpuThread, processCpuMs, threadCpuMs } from './proc-cpu.ts';

/** What a start needs: the binary and full argv, the container root its paths live under, the QMP commands before `cont`. */
export interface BareQemuSpec {
  readonly binary: string;
  readonly args: readonly string[];
  readonly root: string;
  readonly setupCommands: ReadonlyArray<{ execute: string; arguments?: Record<string, unknown> | undefined }>;
}

/** One bare start: spawn → "running" (ms), and the CPU QEMU spent on it apart from its vCPU threads. */
export interface BareStart { readonly ms: number; readonly qemuCpuMs: number; readonly vcpuCpuMs: number }

export interface BareRunRequest { readonly gapMs: number; readonly qemus: readonly BareQemuSpec[] }
export type BareRunReply = { readonly starts: BareStart[] } | { readonly error: string };

/** A started bare QEMU, to be stopped with `stop`. */
export interface RunningBareQemu { readonly start: Promise<BareStart>; stop(): Promise<void> }

/** Spawns one prepared QEMU and takes it to "running"; `start` rejects with QEMU's stderr if it fails. */
export function startBareQemu(q: BareQemuSpec): RunningBareQemu {
  const t0 = performance.now();
  const child: ChildProcess = spawn(q.binary, [...q.args], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4096); });
  const exited = new Promise<void>((r) => { if (child.exitCode !== null || child.signalCode !== null) r(); else child.once('exit', () => r()); });
  let qmp: QmpClient | undefined;
  const start = (async (): Promise<BareStart> => {
    try {
      qmp = await QmpClient.adopt(child.stdio[3] as Duplex, { timeout: 60_000 });
      for (const c of q.setupCommands) await qmp.execute(c.execute, c.arguments);
      await qmp.execute('cont');
      const st = await qmp.execute('query-status') as { status?: string };
      if (st.status !== 'running') throw new Error(`query-status after cont: ${JSON.stringify(st)}`);
    } catch (err) {
      throw new Error(`bare QEMU (${q.root}): ${(err as Error).message}; stderr: ${stderr.trim().slice(-500)}`);
    }
    const ms = performance.now() - t0;
    const vcpu = threadCpuMs(child.pid!, isVcpuThread).part;
    return { ms, qemuCpuMs: processCpuMs(child.pid!) - vcpu, vcpuCpuMs: vcpu };
  })();
  return {
    start,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      await qmp?.close().catch(() => undefined);
    },
  };
}

/** The density protocol on bare QEMU, in this process: `qemus.length` starts `gapMs` apart (each spawned without waiting for the ones before), all taken to "running", then all stopped. */
export async function bareDensityHere(qemus: readonly BareQemuSpec[], gapMs: number): Promise<BareStart[]> {
  const running: RunningBareQemu[] = [];
  try {
    for (const [i, q] of qemus.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
      const r = startBareQemu(q);
      r.start.catch(() => undefined); // awaited below
      running.push(r);
    }
    return await Promise.all(running.map((r) => r.start));
  } finally {
    await Promise.all(running.map((r) => r.stop()));
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  let reply: BareRunReply;
  try {
    const req = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BareRunRequest;
    reply = { starts: await bareDensityHere(req.qemus, req.gapMs) };
  } catch (err) {
    reply = { error: (err as Error).message };
  }
  process.stdout.write(JSON.stringify(reply));
}
