// The machine baseline for start benchmarks: QEMU with no qvirt at all. For a VMI, the launcher's own
// converter (planLaunch, as the launcher calls it) builds the argv once per VM ahead of time, with the
// supervisor's additions (-S, -no-shutdown, -pidfile, the fd-3 QMP monitor: supervisedArgv); then a
// start is spawn → QMP greeting and capabilities → the plan's setup commands → `cont` → query-status
// says "running". What this machine can do at all, so qvirt's figures can be read as a ratio to it.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import type { Logger } from '../src/log/logger.ts';
import { planLaunch } from '../launcher/launch-plan.ts';
import { diskDirsUnder } from '../launcher/disks/paths.ts';
import { supervisedArgv } from '../launcher/supervise/qemu-process.ts';
import { materializeContainerDisks, type ImageStore } from '../src/local/image-store.ts';
import type { BareQemuSpec, BareRunReply, BareRunRequest, BareStart } from './bare-qemu-run.ts';

const RUNNER = new URL('./bare-qemu-run.ts', import.meta.url).pathname;

/** One QEMU ready to spawn (its root is the launcher pod's root in the local mode), and how to remove what was prepared for it. */
export interface BareQemu extends BareQemuSpec {
  /** The converter's argv before the supervisor's additions (what QemuProcess.start takes), and its binary. */
  readonly planArgv: readonly string[];
  readonly planBinary: string | undefined;
  readonly pidfile: string;
  readonly cleanup: () => Promise<void>;
}

export type { BareStart } from './bare-qemu-run.ts';

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
  return { binary, args, root, setupCommands: plan.setupCommands ?? [], planArgv: plan.argv, planBinary: plan.binary, pidfile, cleanup: async () => { await plan.cleanup?.(); } };
}

/**
 * The density protocol on bare QEMU: `qemus.length` starts `gapMs` apart (each spawned without
 * waiting for the ones before), all taken to "running", then all stopped. Run by a small process of
 * its own (bare-qemu-run.ts), as a bare QEMU deployment spawns from a shell or an init system: a fork
 * copies the parent's page tables, and from this harness (the local mode in it, ~270 MiB) each spawn
 * blocked its event loop ~25 ms under load (1 s of the 40 starts' QMP handling in one run's profile),
 * which slowed the baseline qvirt's starts are compared with. The pod runner spawns from a small
 * process for the same reason (src/local/pod-runner/spawner.ts).
 */
export async function bareDensity(qemus: readonly BareQemu[], gapMs: number): Promise<BareStart[]> {
  const child = spawn(process.execPath, [RUNNER], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-8192); });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.stdin!.end(JSON.stringify({ gapMs, qemus: qemus.map(({ binary, args, root, setupCommands }) => ({ binary, args, root, setupCommands })) } satisfies BareRunRequest));
  const code = await exited;
  const reply = (() => { try { return JSON.parse(out) as BareRunReply; } catch { return undefined; } })();
  if (code !== 0 || !reply) throw new Error(`the bare QEMU runner exited with ${code}: ${err.trim() || out.trim() || 'no output'}`);
  if ('error' in reply) throw new Error(reply.error);
  return reply.starts;
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
