// The machine baseline for start benchmarks: QEMU with no qvirt at all. For a VMI, the launcher's own
// converter (planLaunch, as the launcher calls it) builds the argv once per VM ahead of time, with the
// supervisor's additions (-S, -no-shutdown, -pidfile, the fd-3 QMP monitor: supervisedArgv); then a
// start is spawn → QMP greeting and capabilities → the plan's setup commands → `cont` → query-status
// says "running". What this machine can do at all, so qvirt's figures can be read as a ratio to it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import type { Logger } from '../src/log/logger.ts';
import { QmpClient } from '../qmp/client.ts';
import { planLaunch } from '../launcher/launch-plan.ts';
import { diskDirsUnder } from '../launcher/disks/paths.ts';
import { supervisedArgv } from '../launcher/supervise/qemu-process.ts';
import { materializeContainerDisks, type ImageStore } from '../src/local/image-store.ts';
import { isVcpuThread, processCpuMs, threadCpuMs } from './proc-cpu.ts';

/** One QEMU ready to spawn: its binary and full argv, and what to run over QMP before `cont`. */
export interface BareQemu {
  readonly binary: string;
  readonly args: readonly string[];
  /** The container root its paths live under (the launcher pod's root in the local mode). */
  readonly root: string;
  readonly setupCommands: ReadonlyArray<{ execute: string; arguments?: Record<string, unknown> | undefined }>;
  readonly cleanup: () => Promise<void>;
}

/** One bare start: spawn → "running" (ms), and the CPU QEMU spent on it apart from its vCPU threads. */
export interface BareStart { readonly ms: number; readonly qemuCpuMs: number; readonly vcpuCpuMs: number }

/**
 * Prepares `vmi` to run under `root` exactly as the launcher would (kernel-boot files and containerDisks
 * from the image store, then planLaunch) and returns the argv the launcher would spawn QEMU with.
 */
export async function prepareBareQemu(vmi: VirtualMachineInstance, root: string, o: { store: ImageStore; cacheDir: string; log: Logger }): Promise<BareQemu> {
  const dirs = diskDirsUnder(root);
  mkdirSync(dirs.containerDiskDir, { recursive: true });
  await materializeContainerDisks({ volumes: vmi.spec.volumes, kernelBoot: vmi.spec.domain.firmware?.kernelBoot }, o.store, dirs.containerDiskDir);
  const plan = await planLaunch(vmi, {
    dirs, privateVmiDir: join(dirs.privateDir, vmi.metadata!.uid!), qemuBinary: 'qemu-system-x86_64', allowEmulation: true,
    cacheDir: o.cacheDir, ovmfDir: '/usr/share/OVMF', hostDiskView: 'host', log: o.log,
  });
  const pidfile = plan.pidFile ?? join(dirs.privateDir, vmi.metadata!.uid!, 'qemu.pid');
  const { binary, args } = supervisedArgv(plan.argv, { binary: plan.binary, pidfile, debugMonitorSocket: plan.qmpDebugSocket });
  return { binary, args, root, setupCommands: plan.setupCommands ?? [], cleanup: async () => { await plan.cleanup?.(); } };
}

/** A started bare QEMU, to be stopped with `stop`. */
export interface RunningBareQemu { readonly start: Promise<BareStart>; stop(): Promise<void> }

/** Spawns one prepared QEMU and takes it to "running"; `start` rejects with QEMU's stderr if it fails. */
export function startBareQemu(q: BareQemu): RunningBareQemu {
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

/**
 * The density protocol on bare QEMU: `qemus.length` starts `gapMs` apart (each spawned without
 * waiting for the ones before), all taken to "running", then all stopped.
 */
export async function bareDensity(qemus: readonly BareQemu[], gapMs: number): Promise<BareStart[]> {
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

/**
 * Whether two QEMU argvs are the same once each one's container root is replaced by `<root>`:
 * undefined when they are, else the first difference.
 */
export function argvDifference(a: { args: readonly string[]; root: string }, b: { args: readonly string[]; root: string }): string | undefined {
  const norm = (x: { args: readonly string[]; root: string }) => x.args.map((s) => s.split(x.root).join('<root>'));
  const na = norm(a);
  const nb = norm(b);
  for (let i = 0; i < Math.max(na.length, nb.length); i++) {
    if (na[i] !== nb[i]) return `argument ${i}: ${JSON.stringify(na[i])} vs ${JSON.stringify(nb[i])}`;
  }
  return undefined;
}
