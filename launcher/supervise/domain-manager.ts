// The launcher's domain manager (KubeVirt's DomainManager, with QEMU instead of libvirt): defines
// and starts the VM's QEMU, keeps the domain state from QMP events through the pure state
// machine, and carries out the handler's commands — pause/unpause, graceful shutdown (guest agent
// when connected, else ACPI), kill (quit → SIGTERM → SIGKILL), reset, soft reboot, filesystem
// freeze, guest information. Every change of what the handler sees is published as a domain event
// ('domain'); Kubernetes events (IO errors, guest panics) as 'k8s-event'. Listeners run
// synchronously on the domain's QMP event loop, so they must only enqueue (the notifier does).
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { GUEST_AGENT_PORT_NAME } from '../domain/constants.ts';
import { LifeCycle, FSFreezeStatus, domainName } from '../../src/api/domain/lifecycle.ts';
import { INITIAL_EVENT_MEMORY, guestPanicInfo, k8sEventsFor, type EventMemory } from '../domain/k8s-events.ts';
import { buildDomain, gracePeriodMetadata } from '../domain/domain.ts';
import type { AccessCredentialMetadata, Domain, GuestPanicInfo, GracePeriodMetadata, GuestOSInfo, InterfaceStatus, MigrationMetadata } from '../../src/api/domain/domain.ts';
import { INITIAL_DOMAIN_STATE, isAlive, isFinal, nextDomainState, sameLifecycle, type DomainInput, type DomainState } from '../domain/state.ts';
import { QemuProcess, QemuStartError, type QemuExit } from './qemu-process.ts';
import { explainImageLock, lockableDisks } from './image-lock.ts';
import { GuestAgentClient } from './guest-agent.ts';
import { domainOSInfo, guestAgentInfo, guestFilesystems, guestUsers } from './guest-info.ts';
import { collectDomainStats } from './domain-stats.ts';
import { tapInterfaces } from './net-stats.ts';
import { errorMessage, onQmpEvents, type QmpEventMessage } from './qmp-connection.ts';
import { SourceMigration, MigrationError, type MigrationDomainHost } from '../migration/source.ts';
import { incomingArgv, listenForMigration, watchIncomingMigration } from '../migration/target.ts';
import { migrationDataSizeGiB, type MigrationOptions } from '../migration/options.ts';
import { domainJobInfo } from '../migration/metadata.ts';
import { migratedDisks, resumeAfterBlockMigration, startBlockExports } from '../migration/block.ts';
import type { PlanDevice } from '../convert/plan.ts';
import type { PreparedLaunch } from './prepared-launch.ts';
import { DomainHotplug, hotplugDomainSpec } from './hotplug.ts';
import { MemoryDumper } from './memory-dump.ts';
import { AccessCredentialManager } from '../access-credentials/manager.ts';

export interface VmiRef { namespace: string; name: string; uid: string }

export interface DomainManagerOptions {
  vmiRef: VmiRef;
  /** Private directory for the pidfile (and anything else per QEMU). */
  runDir: string;
  log: Logger;
  /** The VMI's termination grace period when the VMI does not say (KubeVirt default 30). */
  graceSeconds?: number | undefined;
  /** Turns a VMI into a launch plan (convert + disks). */
  start: (vmi: VirtualMachineInstance) => Promise<PreparedLaunch>;
  /** QMP greeting deadline after spawn. */
  qmpTimeoutMs?: number | undefined;
  /** Guest agent reply timeout. */
  agentTimeoutMs?: number | undefined;
  /** Extra QEMU environment. */
  qemuBinary?: string | undefined;
  /** Access credential check interval (default KubeVirt's 15 s). */
  accessCredentialCheckMs?: number | undefined;
}

export type DomainEventType = 'ADDED' | 'MODIFIED';
export interface DomainEvent { type: DomainEventType; domain: Domain }
export interface LauncherK8sEvent { type: 'Normal' | 'Warning'; reason: string; message: string }

export interface DomainManagerEvents {
  domain: [ev: DomainEvent];
  'k8s-event': [ev: LauncherK8sEvent];
  'qemu-exit': [exit: QemuExit, state: DomainState];
}

/** A command could not be carried out; the message says what and why. */
export class DomainOperationError extends Error {
  override readonly name = 'DomainOperationError';
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class DomainManager extends EventEmitter<DomainManagerEvents> {
  readonly vmiRef: VmiRef;
  private readonly opts: DomainManagerOptions;
  private readonly log: Logger;
  private state: DomainState = INITIAL_DOMAIN_STATE;
  private defined = false;
  private proc: QemuProcess | undefined;
  private plan: PreparedLaunch | undefined;
  private agent: GuestAgentClient | undefined;
  private agentConnected = false;
  private gracePeriod: GracePeriodMetadata | null = null;
  private osInfo: GuestOSInfo | undefined;
  private interfaces: InterfaceStatus[] | undefined;
  private fsFreezeStatus: string | undefined;
  private deletionTimestamp: string | undefined;
  private creationTimestamp: string | undefined;
  private acpi = true;
  private uuid = '';
  private eventMemory: EventMemory = INITIAL_EVENT_MEMORY;
  private panicInfo: GuestPanicInfo | null = null;
  private unfreezeTimer: NodeJS.Timeout | undefined;
  private exitProcessed: Promise<void> = Promise.resolve();
  private migration: MigrationMetadata | null = null;
  private outgoing: SourceMigration | undefined;
  /** This QEMU waits for an incoming migration that has not completed yet. */
  private incomingPending = false;
  private lock: Promise<unknown> = Promise.resolve();
  private closed = false;
  private hotplug: DomainHotplug | undefined;
  private readonly dumper: MemoryDumper;
  private credentials: AccessCredentialManager | undefined;
  private accessCredential: AccessCredentialMetadata | null = null;

  constructor(opts: DomainManagerOptions) {
    super();
    this.opts = opts;
    this.vmiRef = opts.vmiRef;
    this.log = opts.log;
    this.dumper = new MemoryDumper({
      log: opts.log,
      onChange: () => { if (this.defined) this.publish('MODIFIED'); },
      // QEMU stops a running guest for the dump: that STOP is the dump's (libvirt: Paused/Dump).
      beforeDump: () => { if (this.state.status === LifeCycle.Running) this.apply({ kind: 'intent', intent: 'dump' }); },
    });
  }

  // ———————————————————————————————————————————————————————— what the handler sees

  /** The domain, or undefined when none is defined (before SyncVirtualMachine, after Delete). */
  getDomain(): Domain | undefined {
    if (!this.defined && !this.deletionTimestamp) return undefined;
    if (!this.defined) return undefined;
    return this.buildDomain();
  }

  /** The lifecycle state (also after deletion). */
  get domainState(): DomainState {
    return this.state;
  }

  /** The running QEMU, if any (for passthrough and tests). */
  get qemu(): QemuProcess | undefined {
    return this.proc;
  }

  get isAgentConnected(): boolean {
    return this.agentConnected;
  }

  private buildDomain(): Domain {
    const hot = this.hotplug ? hotplugDomainSpec(this.hotplug.report()) : {};
    const extras = { ...hot, ...(this.plan?.domain?.spec ?? {}) };
    const devices = { ...((hot.Devices as Record<string, unknown> | undefined) ?? {}), ...((this.plan?.domain?.spec?.Devices as Record<string, unknown> | undefined) ?? {}) };
    if (this.plan?.guestAgentSocket) {
      devices.Channels = [{
        Type: 'unix',
        Source: { Mode: 'bind', Path: this.plan.guestAgentSocket },
        Target: { Name: GUEST_AGENT_PORT_NAME, Type: 'virtio', Address: '', Port: 0, State: this.agentConnected ? 'connected' : 'disconnected' },
      }];
    }
    extras.Devices = devices;
    return buildDomain({
      namespace: this.vmiRef.namespace,
      name: this.vmiRef.name,
      uid: this.vmiRef.uid,
      uuid: this.uuid,
      hypervisor: this.plan?.domain?.hypervisor,
      memoryBytes: this.plan?.domain?.memoryBytes,
      acpi: this.acpi,
      status: this.state.status,
      reason: this.state.reason,
      gracePeriod: this.gracePeriod,
      osInfo: this.osInfo,
      interfaces: this.interfaces,
      fsFreezeStatus: this.fsFreezeStatus,
      panicCount: this.state.panicCount,
      migration: this.migration,
      memoryDump: this.dumper.metadata,
      accessCredential: this.accessCredential,
      panicInfo: this.state.panicCount > 0 ? (this.panicInfo ?? guestPanicInfo(undefined)) : null,
      deletionTimestamp: this.deletionTimestamp,
      creationTimestamp: this.creationTimestamp,
      specExtras: extras,
    });
  }

  private publish(type: DomainEventType): void {
    const domain = this.buildDomain();
    this.log.info({ event: type, status: domain.Status.Status, reason: domain.Status.Reason, deleted: Boolean(domain.ObjectMeta.deletionTimestamp) }, 'domain event');
    this.emit('domain', { type, domain });
  }

  private k8sEvent(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.log.info({ reason, message }, 'kubernetes event');
    this.emit('k8s-event', { type, reason, message });
  }

  /** Feeds the state machine; publishes MODIFIED when status or reason changed. */
  private apply(input: DomainInput): DomainState {
    const prev = this.state;
    const next = nextDomainState(prev, input);
    this.state = next;
    if (this.defined && !sameLifecycle(prev, next)) {
      this.log.info({ from: `${prev.status}/${prev.reason}`, to: `${next.status}/${next.reason}`, input: input.kind === 'qmp' ? input.event : input.kind }, 'domain state changed');
      this.publish('MODIFIED');
    }
    return prev;
  }

  private withLock<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run.catch((err: unknown) => {
      throw err instanceof DomainOperationError ? err : new DomainOperationError(`${what} failed: ${errorMessage(err)}`, { cause: err });
    });
  }

  private requireQemu(what: string): QemuProcess {
    const p = this.proc;
    if (!this.defined || !p) throw new DomainOperationError(`${what}: domain ${domainName(this.vmiRef.namespace, this.vmiRef.name)} is not defined`);
    if (p.hasExited || isFinal(this.state)) {
      throw new DomainOperationError(`${what}: domain ${domainName(this.vmiRef.namespace, this.vmiRef.name)} is not running (${this.state.status}/${this.state.reason})`);
    }
    return p;
  }

  // ———————————————————————————————————————————————————————— starting

  /**
   * SyncVirtualMachine: defines and starts the domain if it does not run yet; a running domain is
   * left alone. Resolves once QEMU runs (or stays paused for startStrategy Paused).
   */
  sync(vmi: VirtualMachineInstance): Promise<void> {
    return this.withLock('SyncVirtualMachine', async () => {
      if (this.closed) throw new DomainOperationError('SyncVirtualMachine: the launcher is shutting down');
      const uid = vmi.metadata?.uid;
      if (uid && this.vmiRef.uid && uid !== this.vmiRef.uid) {
        throw new DomainOperationError(`SyncVirtualMachine: VMI uid ${uid} is not this launcher's VMI (${this.vmiRef.uid})`);
      }
      if (this.defined && !isFinal(this.state)) {
        // Running: bring hotplugged devices, vCPUs and memory in line with the VMI (not while
        // migrating: both QEMUs must keep identical devices).
        const migrating = this.outgoing?.isRunning === true || this.incomingPending;
        if (this.hotplug && this.proc && !this.proc.hasExited && !migrating) await this.hotplug.sync(vmi);
        return;
      }
      const phase = vmi.status?.phase;
      if (this.defined && isFinal(this.state) && (phase === 'Running' || phase === 'Succeeded' || phase === 'Failed')) return;
      await this.exitProcessed;
      await this.startQemu(vmi);
    });
  }

  private async startQemu(vmi: VirtualMachineInstance, incoming?: { socketPath: string; blockSocketPath?: string | undefined }): Promise<void> {
    const plan = await this.opts.start(vmi);
    const grace = vmi.spec.terminationGracePeriodSeconds ?? this.opts.graceSeconds ?? 30;
    this.plan = plan;
    this.gracePeriod = gracePeriodMetadata(grace);
    this.acpi = plan.domain?.acpi ?? (vmi.spec.domain.features?.acpi?.enabled ?? true);
    this.uuid = plan.domain?.uuid ?? vmi.spec.domain.firmware?.uuid ?? '';
    this.osInfo = undefined;
    this.fsFreezeStatus = undefined;
    this.agentConnected = false;
    this.eventMemory = INITIAL_EVENT_MEMORY;
    this.panicInfo = null;
    this.migration = null;
    this.incomingPending = incoming !== undefined;
    // Block migration: the source mirrors the local disks into NBD exports of this QEMU's disks.
    const blockDisks = incoming?.blockSocketPath ? migratedDisks(vmi, this.planDevices()) : [];
    const proc = await QemuProcess.start({
      argv: incoming ? incomingArgv(plan.argv, blockDisks.length > 0) : plan.argv,
      binary: plan.binary ?? this.opts.qemuBinary,
      pidfile: plan.pidFile ?? join(this.opts.runDir, 'qemu.pid'),
      debugMonitorSocket: plan.qmpDebugSocket,
      env: plan.env,
      log: this.log,
      qmpTimeoutMs: this.opts.qmpTimeoutMs,
    }).catch((err: unknown) => {
      // An image another QEMU holds: say which of the VMI's volumes, not QEMU's -device JSON.
      const held = err instanceof QemuStartError ? explainImageLock(err.exit?.stderrTail ?? err.message, lockableDisks(plan.argv, this.planDevices(), vmi.spec.volumes ?? [])) : undefined;
      if (held) this.log.warn({ err: errorMessage(err) }, held);
      throw held ? new DomainOperationError(held, { cause: err }) : err;
    });
    this.proc = proc;
    this.defined = true;
    this.deletionTimestamp = undefined;
    this.creationTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.state = nextDomainState(INITIAL_DOMAIN_STATE, { kind: 'started' });
    if (plan.guestAgentSocket) this.agent = new GuestAgentClient(plan.guestAgentSocket, { log: this.log, timeoutMs: this.opts.agentTimeoutMs });
    this.hotplug?.close();
    this.hotplug = undefined;
    if (plan.hotplug) {
      this.hotplug = new DomainHotplug(proc.qmp, plan.hotplug, {
        log: this.log,
        unplugAckTimeoutMs: plan.unplugAckTimeoutMs,
        onChange: () => { if (this.defined && isAlive(this.state)) this.publish('MODIFIED'); },
      });
      this.hotplug.recordColdDevices(vmi);
    }
    // The domain's one event loop: every QMP event, in order, into the state machine.
    onQmpEvents(proc.qmp, undefined, (ev) => this.onQmpEvent(ev), this.log);
    this.exitProcessed = proc.exited.then((exit) => this.onQemuExit(proc, exit));
    this.publish('ADDED');
    try {
      for (const c of plan.setupCommands ?? []) {
        try {
          await proc.qmp.execute(c.execute, c.arguments);
        } catch (err) {
          throw new DomainOperationError(`pre-start QMP ${c.execute} (${c.reason}) failed: ${errorMessage(err)}`, { cause: err });
        }
      }
      if (plan.preStart) await plan.preStart(proc.qmp);
      if (incoming) {
        // The target keeps the credentials in step once the guest runs here (KubeVirt's preStartHook
        // starts the propagation on migration targets too).
        watchIncomingMigration(proc.qmp, this.migrationHost(), (ok) => { if (ok) { this.incomingPending = false; this.startAccessCredentials(vmi, plan); } });
        if (blockDisks.length > 0) {
          // With the disks copied the guest may run here (it waits, -S, for the exports to go).
          resumeAfterBlockMigration(proc.qmp, blockDisks, this.log);
          await startBlockExports(proc.qmp, blockDisks, incoming.blockSocketPath!, this.log);
        }
        await listenForMigration(proc.qmp, vmi, incoming.socketPath);
        const st = await proc.qmp.execute('query-status') as { status?: unknown };
        if (typeof st.status === 'string') this.apply({ kind: 'run-state', status: st.status });
        this.log.info({ socket: incoming.socketPath }, 'migration target listening');
        return;
      }
      const status = await proc.qmp.execute('query-status') as { status?: unknown };
      if (typeof status.status === 'string') this.apply({ kind: 'run-state', status: status.status });
      this.startAccessCredentials(vmi, plan);
      if (plan.startPaused ?? vmi.spec.startStrategy === 'Paused') {
        this.log.info('startStrategy Paused: QEMU stays paused until unpaused');
        this.apply({ kind: 'start-paused' });
      } else {
        await proc.qmp.execute('cont');
      }
    } catch (err) {
      this.log.error({ err: errorMessage(err) }, 'starting the domain failed: stopping QEMU');
      this.apply({ kind: 'intent', intent: 'destroy' });
      await proc.terminate({ quitTimeoutMs: 2000, termTimeoutMs: 2000 });
      await this.exitProcessed;
      throw new DomainOperationError(`starting QEMU failed: ${errorMessage(err)}`, { cause: err });
    }
  }

  // ———————————————————————————————————————————————————————— QMP events and exit

  private onQmpEvent(ev: QmpEventMessage): void {
    const data = ev.data ?? {};
    // Before the state publishes the panic: the domain it reports carries the panic's details.
    if (ev.event === 'GUEST_PANICKED') this.panicInfo = guestPanicInfo(data.info);
    const prev = this.apply({ kind: 'qmp', event: ev.event, data });
    const next = this.state;
    const reported = k8sEventsFor(ev.event, data, this.hotplug?.devices() ?? this.planDevices(), this.eventMemory, { softRebootRequested: prev.rebooting !== undefined });
    this.eventMemory = reported.memory;
    for (const e of reported.events) this.k8sEvent(e.type, e.reason, e.message);
    const proc = this.proc;
    switch (ev.event) {
      case 'VSERPORT_CHANGE': {
        const channelId = this.plan?.guestAgentChannelId ?? 'channel0';
        if (data.id === channelId) {
          const open = data.open === true;
          if (open !== this.agentConnected) {
            this.agentConnected = open;
            this.log.info({ connected: open }, 'guest agent channel changed');
            if (open) void this.refreshGuestOSInfo();
            if (this.defined) this.publish('MODIFIED');
          }
        }
        break;
      }
      default:
        break;
    }
    if (ev.event === 'SHUTDOWN' && next.rebooting === 'resetting' && prev.rebooting !== 'resetting' && proc) {
      // Soft reboot via ACPI: the guest powered off; bring it back like libvirt's fake reboot.
      void (async () => {
        try {
          await proc.qmp.execute('system_reset');
          await proc.qmp.execute('cont');
          this.log.info('soft reboot: guest powered off, reset and continued');
        } catch (err) {
          this.log.error({ err: errorMessage(err) }, 'soft reboot: reset after power-off failed');
        }
      })();
    }
    if (isFinal(next) && !isFinal(prev) && proc && !proc.hasExited) {
      // Guest power-off under -no-shutdown, or a panic: the domain has ended, QEMU goes too
      // (libvirt's on_poweroff/on_crash = destroy).
      this.log.info({ status: next.status, reason: next.reason }, 'domain ended: stopping QEMU');
      void proc.terminate().catch((err: unknown) => this.log.error({ err: errorMessage(err) }, 'stopping QEMU failed'));
    }
  }

  private async onQemuExit(proc: QemuProcess, exit: QemuExit): Promise<void> {
    if (this.incomingPending) {
      this.incomingPending = false;
      this.log.warn({ code: exit.code, signal: exit.signal }, 'the migration target QEMU ended before the incoming migration completed');
      this.apply({ kind: 'incoming-failed' });
    }
    this.apply({ kind: 'exit', code: exit.code, signal: exit.signal });
    if (exit.code !== 0 || exit.signal) {
      this.log.warn({ code: exit.code, signal: exit.signal, stderr: exit.stderrTail.slice(-2000) }, 'QEMU ended abnormally');
    }
    this.agent?.close();
    this.agent = undefined;
    this.agentConnected = false;
    void this.credentials?.stop();
    this.credentials = undefined;
    this.hotplug?.close();
    clearTimeout(this.unfreezeTimer);
    proc.cleanupFiles();
    try {
      await this.plan?.cleanup?.();
    } catch (err) {
      this.log.error({ err: errorMessage(err) }, 'cleanup after QEMU exit failed');
    }
    this.emit('qemu-exit', exit, this.state);
  }

  /**
   * KubeVirt's HandleQemuAgentAccessCredentials: the VMI's qemuGuestAgent credentials are
   * propagated into the guest and kept in step with their Secrets while this QEMU runs.
   */
  private startAccessCredentials(vmi: VirtualMachineInstance, plan: PreparedLaunch): void {
    void this.credentials?.stop();
    this.credentials = undefined;
    this.accessCredential = null;
    if (!plan.accessCredentialDir) return;
    const m = new AccessCredentialManager({
      vmi,
      secretDir: plan.accessCredentialDir,
      agent: () => (this.agentConnected ? this.agent : undefined),
      log: this.log,
      checkIntervalMs: this.opts.accessCredentialCheckMs,
      onResult: (r) => {
        if (this.accessCredential?.Succeeded === r.Succeeded && this.accessCredential.Message === r.Message) return;
        this.accessCredential = r;
        if (this.defined && isAlive(this.state)) this.publish('MODIFIED');
      },
      onEvent: (type, reason, message) => this.k8sEvent(type, reason, message),
    });
    if (!m.hasWork) return;
    this.credentials = m;
    m.start();
  }

  private async refreshGuestOSInfo(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      this.osInfo = domainOSInfo(await agent.execute('guest-get-osinfo'));
      if (this.defined && isAlive(this.state)) this.publish('MODIFIED');
    } catch (err) {
      this.log.debug({ err: errorMessage(err) }, 'guest-get-osinfo failed');
    }
  }

  // ———————————————————————————————————————————————————————— live migration

  private migrationHost(): MigrationDomainHost {
    return {
      log: this.log,
      runningQemu: () => (this.proc && !this.proc.hasExited && this.defined && !isFinal(this.state) ? this.proc : undefined),
      applyInput: (input) => { this.apply(input); },
      getMigration: () => this.migration,
      setMigration: (m) => {
        this.migration = m;
        if (this.defined) this.publish('MODIFIED');
      },
    };
  }

  /**
   * The running plan's guest devices, as planned at start (the hotplug environment starts from the
   * same array; devices hotplugged later are in DomainHotplug's own state, not here).
   */
  private planDevices(): readonly PlanDevice[] {
    return this.plan?.devices ?? [];
  }

  /** The domain's migration metadata (null before any migration). */
  get migrationMetadata(): MigrationMetadata | null {
    return this.migration;
  }

  /** The outgoing migration, while one exists (progress for stats and tests). */
  get outgoingMigration(): SourceMigration | undefined {
    return this.outgoing;
  }

  /**
   * SyncMigrationTarget: start this VMI's QEMU as a migration target listening on `socketPath`. A
   * target that is already defined and alive is left alone.
   */
  syncMigrationTarget(vmi: VirtualMachineInstance, socketPath: string, blockSocketPath?: string): Promise<void> {
    return this.withLock('SyncMigrationTarget', async () => {
      if (this.closed) throw new DomainOperationError('SyncMigrationTarget: the launcher is shutting down');
      const uid = vmi.metadata?.uid;
      if (uid && this.vmiRef.uid && uid !== this.vmiRef.uid) {
        throw new DomainOperationError(`SyncMigrationTarget: VMI uid ${uid} is not this launcher's VMI (${this.vmiRef.uid})`);
      }
      if (this.defined && !isFinal(this.state)) return;
      await this.exitProcessed;
      await this.startQemu(vmi, { socketPath, blockSocketPath });
    });
  }

  /** MigrateVirtualMachine: start migrating to the unix socket `socketPath`; resolves once the migration runs. */
  migrate(vmi: VirtualMachineInstance, socketPath: string, options: MigrationOptions, sampleMs?: number, blockSocketPath?: string): Promise<void> {
    return this.withLock('MigrateVirtualMachine', async () => {
      if (this.outgoing?.isRunning) {
        this.log.info('MigrateVirtualMachine: the migration is already running');
        return;
      }
      const disks = blockSocketPath ? migratedDisks(vmi, this.planDevices()) : [];
      this.outgoing = await SourceMigration.start(this.migrationHost(), {
        migrationUid: vmi.status?.migrationState?.migrationUid ?? '',
        socketPath,
        options,
        dataSizeGiB: migrationDataSizeGiB(vmi),
        block: disks.length > 0 ? { disks, socketPath: blockSocketPath!, dataSizeGiB: (diskBytes) => migrationDataSizeGiB(vmi, diskBytes) } : undefined,
        ...(sampleMs !== undefined ? { sampleMs } : {}),
      });
    });
  }

  /** CancelVirtualMachineMigration: abort the running outgoing migration. */
  async cancelMigration(): Promise<void> {
    const m = this.outgoing;
    if (!m || !m.isRunning) throw new MigrationError('CancelVirtualMachineMigration: no migration of this domain is running');
    await m.cancel();
  }

  /**
   * FinalizeVirtualMachineMigration (target): the guest runs here; bring its clock up to date
   * through the guest agent when there is one (KubeVirt's finalizeMigrationTarget sets the time).
   */
  async finalizeMigration(): Promise<void> {
    this.requireQemu('FinalizeVirtualMachineMigration');
    if (this.agentConnected && this.agent) {
      await this.agent.execute('guest-set-time', undefined, { timeoutMs: 5000 }).catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, 'guest-set-time after migration failed'));
    }
  }

  // ———————————————————————————————————————————————————————— commands

  /** PauseVirtualMachine: `stop` if running (a paused domain stays paused). */
  pause(): Promise<void> {
    return this.withLock('PauseVirtualMachine', async () => {
      const proc = this.requireQemu('PauseVirtualMachine');
      if (this.state.status !== LifeCycle.Running) {
        this.log.info({ status: this.state.status }, 'pause: domain is not running, nothing to do');
        return;
      }
      this.apply({ kind: 'intent', intent: 'pause' });
      await proc.qmp.execute('stop');
    });
  }

  /** UnpauseVirtualMachine: `cont` if paused (also from startStrategy Paused). */
  unpause(): Promise<void> {
    return this.withLock('UnpauseVirtualMachine', async () => {
      const proc = this.requireQemu('UnpauseVirtualMachine');
      if (this.state.status !== LifeCycle.Paused) {
        this.log.info({ status: this.state.status }, 'unpause: domain is not paused, nothing to do');
        return;
      }
      await proc.qmp.execute('cont');
    });
  }

  /**
   * ShutdownVirtualMachine: ask the guest to power off — the guest agent's guest-shutdown when its
   * channel is connected, else the ACPI power button — and record the first request's time in the
   * grace period metadata. The handler re-sends and kills after the grace period.
   */
  signalShutdown(): Promise<void> {
    return this.withLock('ShutdownVirtualMachine', async () => {
      const proc = this.proc;
      if (!this.defined || !proc || proc.hasExited || !isAlive(this.state)) return;
      if (this.gracePeriod && !this.gracePeriod.DeletionTimestamp) {
        this.gracePeriod = { ...this.gracePeriod, DeletionTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') };
        this.publish('MODIFIED');
      }
      await this.powerButton(proc, 'powerdown');
    });
  }

  /** The guest has powered off or QEMU is ending: a power-button request has nothing left to do. */
  private guestGoingDown(proc: QemuProcess): boolean {
    return proc.hasExited || !isAlive(this.state);
  }

  private async powerButton(proc: QemuProcess, mode: 'powerdown' | 'reboot'): Promise<'agent' | 'acpi'> {
    if (this.agentConnected && this.agent) {
      try {
        await this.agent.execute('guest-shutdown', { mode }, { noReplyOnSuccess: true, timeoutMs: 2000 });
        this.log.info({ mode }, 'guest agent asked the guest to shut down');
        return 'agent';
      } catch (err) {
        // guest-shutdown answers nothing on success; a guest that is already going down closes the
        // agent channel (and QEMU may be quitting) before our wait is over. That is success.
        if (this.guestGoingDown(proc)) {
          this.log.info({ mode, err: errorMessage(err) }, 'the guest went down while the agent request was in flight');
          return 'agent';
        }
        this.log.warn({ err: errorMessage(err) }, 'guest agent shutdown failed: falling back to ACPI');
      }
    }
    if (this.guestGoingDown(proc)) return 'acpi';
    try {
      await proc.qmp.execute('system_powerdown');
    } catch (err) {
      if (this.guestGoingDown(proc)) return 'acpi';
      throw err;
    }
    this.log.info({ mode }, 'ACPI power button pressed');
    return 'acpi';
  }

  /**
   * KillVirtualMachine: destroy QEMU (quit, then SIGTERM, then SIGKILL). Resolves once QEMU has
   * exited and its exit has been recorded.
   */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.hasExited) {
      await this.exitProcessed;
      return;
    }
    this.apply({ kind: 'intent', intent: 'destroy' });
    await proc.terminate();
    await this.exitProcessed;
  }

  /**
   * DeleteVirtualMachine: undefine the domain (killing QEMU first if it still runs). The domain is
   * published one last time with `ObjectMeta.deletionTimestamp`; afterwards GetDomain has none.
   */
  async delete(): Promise<void> {
    if (!this.defined) return;
    await this.kill();
    this.deletionTimestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.apply({ kind: 'undefined' });
    this.publish('MODIFIED');
    this.defined = false;
  }

  /** ResetVirtualMachine: hard reset (`system_reset`). */
  reset(): Promise<void> {
    return this.withLock('ResetVirtualMachine', async () => {
      await this.requireQemu('ResetVirtualMachine').qmp.execute('system_reset');
    });
  }

  /**
   * SoftRebootVirtualMachine: the guest agent's guest-shutdown mode=reboot when connected; else
   * the ACPI power button, turning the guest's power-off into reset + cont.
   */
  softReboot(): Promise<void> {
    return this.withLock('SoftRebootVirtualMachine', async () => {
      const proc = this.requireQemu('SoftRebootVirtualMachine');
      if (this.state.status !== LifeCycle.Running) {
        throw new DomainOperationError(`SoftRebootVirtualMachine: domain is ${this.state.status}/${this.state.reason}, not Running`);
      }
      if (!this.agentConnected && !this.acpi) {
        throw new DomainOperationError('SoftRebootVirtualMachine: the guest has neither a connected guest agent nor ACPI');
      }
      if (!this.agentConnected) this.apply({ kind: 'intent', intent: 'reboot' });
      const via = await this.powerButton(proc, 'reboot');
      if (via === 'acpi' && this.state.rebooting === undefined) this.apply({ kind: 'intent', intent: 'reboot' });
    });
  }

  private requireAgent(what: string): GuestAgentClient {
    this.requireQemu(what);
    if (!this.agent || !this.agentConnected) throw new DomainOperationError(`${what}: the guest agent is not connected`);
    return this.agent;
  }

  /** FreezeVirtualMachine: guest-fsfreeze-freeze; thawed again after `unfreezeTimeoutSeconds` (> 0). */
  freeze(unfreezeTimeoutSeconds: number): Promise<void> {
    return this.withLock('FreezeVirtualMachine', async () => {
      const agent = this.requireAgent('FreezeVirtualMachine');
      const frozen = await agent.execute<number>('guest-fsfreeze-freeze', undefined, { timeoutMs: 30_000 });
      this.log.info({ filesystems: frozen }, 'guest filesystems frozen');
      this.fsFreezeStatus = FSFreezeStatus.Frozen;
      this.publish('MODIFIED');
      clearTimeout(this.unfreezeTimer);
      if (unfreezeTimeoutSeconds > 0) {
        this.unfreezeTimer = setTimeout(() => {
          this.log.warn({ unfreezeTimeoutSeconds }, 'unfreeze timeout reached: thawing guest filesystems');
          this.unfreeze().catch((err: unknown) => this.log.error({ err: errorMessage(err) }, 'automatic thaw failed'));
        }, unfreezeTimeoutSeconds * 1000);
        this.unfreezeTimer.unref();
      }
    });
  }

  /** UnfreezeVirtualMachine: guest-fsfreeze-thaw. */
  unfreeze(): Promise<void> {
    return this.withLock('UnfreezeVirtualMachine', async () => {
      clearTimeout(this.unfreezeTimer);
      const agent = this.requireAgent('UnfreezeVirtualMachine');
      await agent.execute('guest-fsfreeze-thaw', undefined, { timeoutMs: 30_000 });
      this.fsFreezeStatus = FSFreezeStatus.Thawed;
      this.publish('MODIFIED');
    });
  }

  /**
   * VirtualMachineMemoryDump: dump the guest's memory to `path` (launcher/supervise/memory-dump.ts).
   * Returns once the dump started (or was found already made); its end is in the domain's metadata.
   */
  memoryDump(path: string): Promise<void> {
    return this.withLock('VirtualMachineMemoryDump', async () => {
      this.dumper.request(this.requireQemu('VirtualMachineMemoryDump').qmp, path);
    });
  }

  /** The memory dump under way, if any. */
  get memoryDumpInProgress(): Promise<void> | undefined {
    return this.dumper.current;
  }

  /** GetGuestInfo: v1.VirtualMachineInstanceGuestAgentInfo JSON (empty parts without an agent). */
  async guestInfo(): Promise<Record<string, unknown>> {
    const agent = this.agentConnected ? this.agent : undefined;
    if (!agent) return guestAgentInfo({ fsFreezeStatus: this.fsFreezeStatus });
    const get = (cmd: string) => agent.execute(cmd).catch((err: unknown) => {
      this.log.debug({ command: cmd, err: errorMessage(err) }, 'guest agent query failed');
      return undefined;
    });
    const info = await get('guest-info');
    const osinfo = await get('guest-get-osinfo');
    const hostname = await get('guest-get-host-name');
    const timezone = await get('guest-get-timezone');
    const users = await get('guest-get-users');
    const fsinfo = await get('guest-get-fsinfo');
    const freeze = await get('guest-fsfreeze-status');
    if (osinfo !== undefined) this.osInfo = domainOSInfo(osinfo);
    return guestAgentInfo({ info, osinfo, hostname, timezone, users, fsinfo, fsFreezeStatus: typeof freeze === 'string' ? freeze : this.fsFreezeStatus });
  }

  /** GetUsers: VirtualMachineInstanceGuestOSUserList JSON. */
  async users(): Promise<Record<string, unknown>> {
    const agent = this.agentConnected ? this.agent : undefined;
    const items = agent ? guestUsers(await agent.execute('guest-get-users').catch(() => [])) : [];
    return { metadata: {}, items };
  }

  /** GetFilesystems: VirtualMachineInstanceFileSystemList JSON. */
  async filesystems(): Promise<Record<string, unknown>> {
    const agent = this.agentConnected ? this.agent : undefined;
    const items = agent ? guestFilesystems(await agent.execute('guest-get-fsinfo').catch(() => [])) : [];
    return { metadata: {}, items };
  }

  /** GuestPing: guest-ping within `timeoutSeconds`. */
  async guestPing(timeoutSeconds: number): Promise<void> {
    const agent = this.requireAgent('GuestPing');
    await agent.execute('guest-ping', undefined, { timeoutMs: Math.max(1, timeoutSeconds || 10) * 1000 });
  }

  /**
   * Exec: runs a command in the guest through the agent (guest-exec + guest-exec-status),
   * waiting up to `timeoutSeconds`. Resolves with the exit code and standard output.
   */
  async exec(command: string, args: string[], timeoutSeconds: number): Promise<{ exitCode: number; stdout: string }> {
    const agent = this.requireAgent('Exec');
    const started = await agent.execute<{ pid?: number }>('guest-exec', { path: command, arg: args, 'capture-output': true });
    const pid = started?.pid;
    if (typeof pid !== 'number') throw new DomainOperationError(`Exec: guest-exec of ${command} returned no pid`);
    const deadline = Date.now() + Math.max(1, timeoutSeconds || 10) * 1000;
    for (;;) {
      const st = await agent.execute<{ exited?: boolean; exitcode?: number; signal?: number; 'out-data'?: string }>('guest-exec-status', { pid });
      if (st?.exited) {
        const stdout = st['out-data'] ? Buffer.from(st['out-data'], 'base64').toString('utf8') : '';
        return { exitCode: st.exitcode ?? (st.signal !== undefined ? 128 + st.signal : 0), stdout };
      }
      if (Date.now() > deadline) throw new DomainOperationError(`Exec: ${command} did not finish within ${timeoutSeconds} s`);
      await sleep(100);
    }
  }

  /** GetQemuVersion: `major.minor.micro` from query-version. */
  async qemuVersion(): Promise<string> {
    const v = await this.requireQemu('GetQemuVersion').qmp.execute('query-version') as { qemu?: { major?: number; minor?: number; micro?: number } };
    return `${v.qemu?.major ?? 0}.${v.qemu?.minor ?? 0}.${v.qemu?.micro ?? 0}`;
  }

  /** GetDomainStats: stats.DomainStats JSON. */
  async stats(): Promise<Record<string, unknown>> {
    const proc = this.requireQemu('GetDomainStats');
    const devices = this.planDevices();
    const balloon = devices.find((d) => d.kind === 'balloon');
    const memoryBytes = this.plan?.domain?.memoryBytes;
    const stats = await collectDomainStats(proc.qmp, proc.pid, domainName(this.vmiRef.namespace, this.vmiRef.name), this.uuid, {
      balloonPath: balloon ? `/machine/peripheral/${balloon.qemuId}` : undefined,
      memoryKiB: memoryBytes !== undefined ? Math.floor(memoryBytes / 1024) : undefined,
      taps: tapInterfaces(this.plan?.argv ?? [], devices),
    });
    const job = this.outgoing?.isRunning ? domainJobInfo(this.outgoing.lastInfo, this.outgoing.diskProgress) : undefined;
    return job ? { ...stats, MigrateDomainJobInfo: job } : stats;
  }

  /**
   * The launcher got SIGTERM: mark the domain for graceful shutdown (the handler then shuts the
   * guest down) and publish it.
   */
  markForGracefulShutdown(): void {
    if (!this.defined) return;
    const gp = this.gracePeriod ?? gracePeriodMetadata(this.opts.graceSeconds ?? 30);
    if (gp.MarkedForGracefulShutdown === true) return;
    this.gracePeriod = { ...gp, MarkedForGracefulShutdown: true };
    this.publish('MODIFIED');
  }

  /**
   * The launcher's own graceful stop: power button (re-sent every `resendMs`), and after
   * `graceSeconds` a hard stop. Resolves once QEMU has exited.
   */
  async gracefulStop(graceSeconds: number, resendMs = 5000): Promise<void> {
    const deadline = Date.now() + graceSeconds * 1000;
    while (this.proc && !this.proc.hasExited && Date.now() < deadline) {
      if (isAlive(this.state)) await this.signalShutdown().catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, 'shutdown signal failed'));
      await this.proc.waitExit(Math.min(resendMs, Math.max(0, deadline - Date.now())));
    }
    if (this.proc && !this.proc.hasExited) {
      this.log.warn({ graceSeconds }, 'grace period over: destroying QEMU');
      await this.kill();
    }
    await this.exitProcessed;
  }

  /** Waits until the current QEMU (if any) has exited and its exit was recorded. */
  async waitQemuExit(): Promise<void> {
    await this.exitProcessed;
  }

  /** Stops everything this manager started: QEMU (hard), the agent client. */
  async close(): Promise<void> {
    this.closed = true;
    this.outgoing?.close();
    await this.kill();
    await this.credentials?.stop();
    this.agent?.close();
    clearTimeout(this.unfreezeTimer);
  }
}
