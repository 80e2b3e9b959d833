// One VM on this machine with no Kubernetes: what a kubelet and a node agent would do for a single
// VMI, around the very launcher a cluster runs. It makes the launcher's directories under a private
// root, makes container disks visible, starts the launcher process, syncs the VMI to it, turns
// domain events into VMI phases (handler/phase-from-domain), shuts the guest down gracefully on
// request (ShutdownVirtualMachine, re-sent every 5 s, KillVirtualMachine after the grace period), and
// deletes the domain once it has stopped so the launcher can exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { VirtualMachineInstance } from '../api/types.ts';
import type { Logger } from '../log/logger.ts';
import { CmdClient } from '../proto/launcher-client.ts';
import type { K8sEvent } from '../proto/notify.ts';
import { NotifyServer } from '../../handler/launcher/notify-server.ts';
import type { Domain } from '../api/domain/domain.ts';
import { phaseFromDomain } from '../../handler/phase-from-domain.ts';
import { ImageStore, materializeContainerDisks } from './image-store.ts';
import { pullVmiImages, type RegistryOptions } from './image-pull.ts';
import { launcherArgv } from './launcher-command.ts';
import { isFinalVMIPhase } from '../api/constants.ts';

export interface SingleVmOptions {
  readonly vmi: VirtualMachineInstance;
  /** A private directory standing in for the launcher pod's filesystem. Keep it short: unix sockets live under it. */
  readonly root: string;
  readonly allowEmulation: boolean;
  readonly imageStore: ImageStore;
  readonly log: Logger;
  /** Where the launcher's log goes: a file path, or 'inherit' (this process's stderr). */
  readonly launcherLog: string | 'inherit';
  readonly cacheDir?: string;
  /** Remove the root when done (default true). */
  readonly cleanup?: boolean;
  /** How registries are reached when an image the VMI needs is pulled (its pull policy says when). */
  readonly registries?: RegistryOptions;
}

export interface SingleVmPaths {
  readonly shareDir: string;
  readonly launcherSocket: string;
  readonly privateVmiDir: string;
  readonly serialSocket: string;
  readonly serialLog: string;
  readonly qmpDebugSocket: string;
}

export interface SingleVmEvents {
  phase: [phase: string, detail: string];
  domain: [domain: Domain];
  event: [event: K8sEvent];
}

export interface SingleVmResult {
  readonly phase: string;
  readonly launcherExitCode: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SingleVm extends EventEmitter<SingleVmEvents> {
  readonly vmi: VirtualMachineInstance;
  readonly paths: SingleVmPaths;
  private readonly o: SingleVmOptions;
  private launcher?: ChildProcess;
  private launcherExit?: Promise<number | null>;
  private notify?: NotifyServer;
  private cmd?: CmdClient;
  private phase = 'Pending';
  private domain?: Domain;
  private shuttingDown?: Promise<void>;
  private deleted = false;
  private finish!: (r: SingleVmResult) => void;
  readonly done: Promise<SingleVmResult>;

  constructor(o: SingleVmOptions) {
    super();
    this.o = o;
    this.vmi = o.vmi;
    const uid = o.vmi.metadata?.uid;
    if (!uid) throw new Error('the VMI needs metadata.uid');
    const shareDir = join(o.root, 'var/run/kubevirt');
    const privateVmiDir = join(o.root, 'var/run/kubevirt-private', uid);
    this.paths = {
      shareDir,
      launcherSocket: join(shareDir, 'sockets/launcher-sock'),
      privateVmiDir,
      serialSocket: join(privateVmiDir, 'virt-serial0'),
      serialLog: join(privateVmiDir, 'virt-serial0-log'),
      qmpDebugSocket: join(privateVmiDir, 'qmp-debug.sock'),
    };
    this.done = new Promise((r) => { this.finish = r; });
  }

  /** The launcher process id (while it runs). */
  get launcherPid(): number | undefined {
    return this.launcher?.pid;
  }

  get currentPhase(): string {
    return this.phase;
  }

  get currentDomain(): Domain | undefined {
    return this.domain;
  }

  get client(): CmdClient {
    if (!this.cmd) throw new Error('the launcher is not connected yet');
    return this.cmd;
  }

  private setPhase(phase: string, detail: string): void {
    if (phase === this.phase) return;
    this.phase = phase;
    this.o.log.info({ phase, detail }, 'VMI phase');
    this.emit('phase', phase, detail);
  }

  private get graceSeconds(): number {
    return this.vmi.spec.terminationGracePeriodSeconds ?? 30;
  }

  /** Starts the launcher and the VM; resolves once the launcher accepted the VMI. */
  async start(): Promise<void> {
    const { vmi, o } = this;
    const meta = vmi.metadata!;
    await mkdir(join(this.paths.shareDir, 'sockets'), { recursive: true });
    await pullVmiImages(vmi.spec, o.imageStore, { registries: o.registries, event: (type, reason, message) => this.emit('event', { type, reason, message } as K8sEvent) });
    await materializeContainerDisks({ volumes: vmi.spec.volumes, kernelBoot: vmi.spec.domain.firmware?.kernelBoot }, o.imageStore, join(o.root, 'var/run/kubevirt/container-disks'));
    this.notify = await NotifyServer.start(join(this.paths.shareDir, 'domain-notify-pipe.sock'), {
      domainEvent: (_type, domain) => this.onDomain(domain),
      k8sEvent: (ev) => { this.emit('event', ev); },
    });

    const args = [
      ...launcherArgv(),
      '--name', meta.name!, '--uid', meta.uid!, '--namespace', meta.namespace ?? 'default',
      '--root', o.root,
      '--grace-period-seconds', String(this.graceSeconds + 15),
      ...(o.allowEmulation ? ['--allow-emulation'] : []),
      ...(o.cacheDir ? ['--cache-dir', o.cacheDir] : []),
    ];
    const out = o.launcherLog === 'inherit' ? 'inherit' : 'pipe';
    const child = spawn(process.execPath, args, { stdio: ['ignore', out, out], env: process.env });
    this.launcher = child;
    if (o.launcherLog !== 'inherit') {
      const file = createWriteStream(o.launcherLog, { flags: 'a' });
      child.stdout?.pipe(file);
      child.stderr?.pipe(file);
    }
    this.launcherExit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    void this.launcherExit.then((code) => this.onLauncherExit(code));

    // The launcher publishes launcher-sock when it serves (KubeVirt's markReady).
    for (let i = 0; !existsSync(this.paths.launcherSocket); i++) {
      if (child.exitCode !== null || i > 300) throw new Error(`the launcher did not come up (exit code ${child.exitCode ?? 'none'}; see ${o.launcherLog})`);
      await sleep(20);
    }
    this.cmd = new CmdClient(this.paths.launcherSocket, { timeoutMs: 60_000 });
    this.setPhase('Scheduled', 'launcher is ready');
    const res = await this.cmd.syncVirtualMachine(vmi);
    if (!res.success) {
      this.setPhase('Failed', `SyncVirtualMachine failed: ${res.message}`);
      child.kill('SIGTERM');
      throw new Error(res.message);
    }
  }

  private onDomain(domain: Domain): void {
    this.domain = domain;
    this.emit('domain', domain);
    const deleted = domain.ObjectMeta.deletionTimestamp !== undefined;
    if (domain.Spec.Metadata.KubeVirt.GracePeriod?.MarkedForGracefulShutdown && !this.shuttingDown && !deleted) void this.shutdown();
    if (deleted) return;
    const next = phaseFromDomain(
      domain,
      { phase: this.phase, terminationGracePeriodSeconds: this.vmi.spec.terminationGracePeriodSeconds },
      'responsive',
    );
    this.setPhase(next.phase, `domain ${domain.Status.Status} (${domain.Status.Reason})`);
    if (isFinalVMIPhase(next.phase) && !this.deleted) {
      // The domain has stopped: delete it, so the launcher sends its last event and exits.
      this.deleted = true;
      void this.cmd?.deleteVirtualMachine(this.vmi).catch(() => undefined);
    }
  }

  private async onLauncherExit(code: number | null): Promise<void> {
    if (!isFinalVMIPhase(this.phase)) this.setPhase('Failed', `the launcher exited (code ${code}) before the VM stopped`);
    this.cmd?.close();
    await this.notify?.stop();
    if (this.o.cleanup !== false) await rm(this.o.root, { recursive: true, force: true }).catch(() => undefined);
    this.finish({ phase: this.phase, launcherExitCode: code });
  }

  /**
   * Graceful shutdown as virt-handler does it: ShutdownVirtualMachine (ACPI or the guest agent),
   * re-sent every 5 s, then KillVirtualMachine once the grace period is over.
   */
  shutdown(): Promise<void> {
    if (this.shuttingDown) return this.shuttingDown;
    this.shuttingDown = (async () => {
      const deadline = Date.now() + this.graceSeconds * 1000;
      const cmd = this.cmd;
      if (!cmd) { this.launcher?.kill('SIGTERM'); return; }
      while (!isFinalVMIPhase(this.phase) && this.launcher?.exitCode === null) {
        if (Date.now() >= deadline) {
          this.o.log.warn({ graceSeconds: this.graceSeconds }, 'grace period over: killing the VM');
          await cmd.killVirtualMachine(this.vmi).catch(() => undefined);
          break;
        }
        await cmd.shutdownVirtualMachine(this.vmi).catch(() => undefined);
        const wait = Math.min(5000, Math.max(0, deadline - Date.now()));
        await Promise.race([this.waitFinal(), sleep(wait)]);
      }
    })();
    return this.shuttingDown;
  }

  private waitFinal(): Promise<void> {
    if (isFinalVMIPhase(this.phase)) return Promise.resolve();
    return new Promise((resolve) => {
      const on = (p: string) => { if (isFinalVMIPhase(p)) { this.off('phase', on); resolve(); } };
      this.on('phase', on);
    });
  }

  /** Last resort: stop the launcher process (it destroys QEMU on its way out). */
  async kill(): Promise<void> {
    if (this.launcher && this.launcher.exitCode === null) {
      this.launcher.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const exited = await Promise.race([this.launcherExit!.then(() => true), new Promise<boolean>((r) => { timer = setTimeout(() => r(false), 20_000); })]);
      clearTimeout(timer);
      if (!exited) this.launcher.kill('SIGKILL');
    }
    await this.done;
  }
}
