// The launcher's domain manager (KubeVirt's DomainManager, with QEMU instead of libvirt): defines
// and starts the VM's QEMU (also as a migration target, for launcher/migration), keeps the domain
// the handler sees — its state fed by the QMP event loop (domain-event-loop.ts) through the pure
// state machine — and carries out the handler's commands: pause/unpause, graceful shutdown (guest
// agent when connected, else ACPI), kill (quit → SIGTERM → SIGKILL), reset, soft reboot, memory
// dump, stats; the guest agent's commands are guest-agent-commands.ts. Every change of what the
// handler sees is published as a domain event ('domain'); Kubernetes events (IO errors, guest
// panics) as 'k8s-event'. Listeners run synchronously on the event loop, so they must only enqueue
// (the notifier does).
import { EventEmitter } from 'node:events';
import { dirname, join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import { rfc3339 } from '../../src/log/iso-time.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { GUEST_AGENT_PORT_NAME } from '../domain/constants.ts';
import { LifeCycle, domainName } from '../../src/api/domain/lifecycle.ts';
import { guestPanicInfo } from '../domain/k8s-events.ts';
import { buildDomain, gracePeriodMetadata } from '../domain/domain.ts';
import type { AccessCredentialMetadata, Domain, GracePeriodMetadata, InterfaceStatus, MigrationMetadata } from '../../src/api/domain/domain.ts';
import { INITIAL_DOMAIN_STATE, isAlive, isFinal, nextDomainState, sameLifecycle, type DomainInput, type DomainState } from '../domain/state.ts';
import { QemuProcess, QemuStartError, stderrReason, type QemuExit } from './qemu-process.ts';
import { incomingFailed, incomingFailureReason, nowTimestamp } from '../domain/migration-metadata.ts';
import { explainImageLock, lockableDisks } from './image-lock.ts';
import { GuestAgentCommands } from './guest-agent-commands.ts';
import { DomainEventLoop } from './domain-event-loop.ts';
import { collectDomainStats } from './domain-stats.ts';
import { tapInterfaces } from './net-stats.ts';
import { errorMessage, type QmpConnection } from './qmp-connection.ts';
import type { PlanDevice } from '../convert/plan.ts';
import type { PreparedLaunch } from './prepared-launch.ts';
import { DomainHotplug, hotplugDomainSpec } from './hotplug.ts';
import { MemoryDumper } from './memory-dump.ts';
import { takeScreenshot, type Screenshot } from './screenshot.ts';
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

/** What the domain manager asks of the live migration glue (launcher/migration/domain-migration.ts). */
export interface LiveMigrationJob {
  /** An outgoing migration runs (live changes wait: both QEMUs must keep identical devices). */
  readonly outgoingRunning: boolean;
  /** The running outgoing migration's progress for the domain's stats (MigrateDomainJobInfo). */
  jobInfo(): Record<string, unknown> | undefined;
  close(): void;
}

/** Starting QEMU as a migration target: its argv, and what it does instead of `cont`. */
export interface IncomingMigration {
  /** QEMU's argv to receive with, from the plan's. */
  argv(plan: PreparedLaunch): readonly string[];
  /** After the setup commands and preStart: make QEMU receive; `received(ok)` once the migration ended. */
  receive(qmp: QmpConnection, received: (ok: boolean) => void): Promise<void>;
}

/** A command could not be carried out; the message says what and why. */
export class DomainOperationError extends Error {
  override readonly name = 'DomainOperationError';
}

export class DomainManager extends EventEmitter<DomainManagerEvents> {
  readonly vmiRef: VmiRef;
  private readonly opts: DomainManagerOptions;
  private readonly log: Logger;
  private state: DomainState = INITIAL_DOMAIN_STATE;
  private defined = false;
  private proc: QemuProcess | undefined;
  private plan: PreparedLaunch | undefined;
  /** The guest agent's commands (GetGuestInfo, Freeze, Exec, ...). */
  readonly guestAgent: GuestAgentCommands;
  private gracePeriod: GracePeriodMetadata | null = null;
  private interfaces: InterfaceStatus[] | undefined;
  private deletionTimestamp: string | undefined;
  private creationTimestamp: string | undefined;
  private acpi = true;
  private uuid = '';
  private events: DomainEventLoop | undefined;
  private exitProcessed: Promise<void> = Promise.resolve();
  private migration: MigrationMetadata | null = null;
  private liveMigration: LiveMigrationJob | undefined;
  /** This QEMU waits for an incoming migration that has not completed yet. */
  private incomingPending = false;
  /** That migration's UID (status.migrationState.migrationUid of the VMI it was started for). */
  private incomingUid = '';
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
    this.guestAgent = new GuestAgentCommands({
      log: opts.log,
      requireQemu: (what) => { this.requireQemu(what); },
      exclusive: (what, fn) => this.exclusive(what, fn),
      error: (message) => new DomainOperationError(message),
      publish: () => this.publish('MODIFIED'),
      publishIfAlive: () => { if (this.defined && isAlive(this.state)) this.publish('MODIFIED'); },
      publishIfDefined: () => { if (this.defined) this.publish('MODIFIED'); },
    });
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
    return this.guestAgent.connected;
  }

  private buildDomain(): Domain {
    const hot = this.hotplug ? hotplugDomainSpec(this.hotplug.report()) : {};
    const extras = { ...hot, ...(this.plan?.domain?.spec ?? {}) };
    const devices = { ...((hot.Devices as Record<string, unknown> | undefined) ?? {}), ...((this.plan?.domain?.spec?.Devices as Record<string, unknown> | undefined) ?? {}) };
    if (this.plan?.guestAgentSocket) {
      devices.Channels = [{
        Type: 'unix',
        Source: { Mode: 'bind', Path: this.plan.guestAgentSocket },
        Target: { Name: GUEST_AGENT_PORT_NAME, Type: 'virtio', Address: '', Port: 0, State: this.guestAgent.connected ? 'connected' : 'disconnected' },
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
      osInfo: this.guestAgent.osInfo,
      interfaces: this.interfaces,
      fsFreezeStatus: this.guestAgent.fsFreezeStatus,
      panicCount: this.state.panicCount,
      migration: this.migration,
      memoryDump: this.dumper.metadata,
      accessCredential: this.accessCredential,
      panicInfo: this.state.panicCount > 0 ? (this.events?.panicInfo ?? guestPanicInfo(undefined)) : null,
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

  /** Runs `fn` after the commands before it; a failure becomes `<what> failed: ...` (DomainOperationError). */
  exclusive<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run.catch((err: unknown) => {
      throw err instanceof DomainOperationError ? err : new DomainOperationError(`${what} failed: ${errorMessage(err)}`, { cause: err });
    });
  }

  /** The running QEMU; throws (DomainOperationError) unless the domain runs. */
  requireQemu(what: string): QemuProcess {
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
    return this.exclusive('SyncVirtualMachine', async () => {
      if (this.closed) throw new DomainOperationError('SyncVirtualMachine: the launcher is shutting down');
      const uid = vmi.metadata?.uid;
      if (uid && this.vmiRef.uid && uid !== this.vmiRef.uid) {
        throw new DomainOperationError(`SyncVirtualMachine: VMI uid ${uid} is not this launcher's VMI (${this.vmiRef.uid})`);
      }
      if (this.defined && !isFinal(this.state)) {
        // Running: bring hotplugged devices, vCPUs and memory in line with the VMI (not while
        // migrating: both QEMUs must keep identical devices).
        const migrating = this.liveMigration?.outgoingRunning === true || this.incomingPending;
        if (this.hotplug && this.proc && !this.proc.hasExited && !migrating) await this.hotplug.sync(vmi);
        return;
      }
      const phase = vmi.status?.phase;
      if (this.defined && isFinal(this.state) && (phase === 'Running' || phase === 'Succeeded' || phase === 'Failed')) return;
      await this.exitProcessed;
      await this.startQemu(vmi);
    });
  }

  /**
   * SyncMigrationTarget (launcher/migration): start this VMI's QEMU to receive a migration. A
   * target that is already defined and alive is left alone.
   */
  startMigrationTarget(vmi: VirtualMachineInstance, incoming: IncomingMigration): Promise<void> {
    return this.exclusive('SyncMigrationTarget', async () => {
      if (this.closed) throw new DomainOperationError('SyncMigrationTarget: the launcher is shutting down');
      const uid = vmi.metadata?.uid;
      if (uid && this.vmiRef.uid && uid !== this.vmiRef.uid) {
        throw new DomainOperationError(`SyncMigrationTarget: VMI uid ${uid} is not this launcher's VMI (${this.vmiRef.uid})`);
      }
      if (this.defined && !isFinal(this.state)) return;
      await this.exitProcessed;
      await this.startQemu(vmi, incoming);
    });
  }

  private async startQemu(vmi: VirtualMachineInstance, incoming?: IncomingMigration): Promise<void> {
    const plan = await this.opts.start(vmi);
    const grace = vmi.spec.terminationGracePeriodSeconds ?? this.opts.graceSeconds ?? 30;
    this.plan = plan;
    this.gracePeriod = gracePeriodMetadata(grace);
    this.acpi = plan.domain?.acpi ?? (vmi.spec.domain.features?.acpi?.enabled ?? true);
    this.uuid = plan.domain?.uuid ?? vmi.spec.domain.firmware?.uuid ?? '';
    this.events = undefined;
    this.migration = null;
    this.incomingPending = incoming !== undefined;
    this.incomingUid = vmi.status?.migrationState?.migrationUid ?? '';
    const manager = this;
    const proc = await QemuProcess.start({
      argv: incoming ? incoming.argv(plan) : plan.argv,
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
    this.creationTimestamp = rfc3339(Date.now());
    this.state = nextDomainState(INITIAL_DOMAIN_STATE, { kind: 'started' });
    this.guestAgent.attach(proc.qmp, plan.guestAgentSocket, plan.guestAgentChannelId ?? 'channel0', this.opts.agentTimeoutMs);
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
    this.events = new DomainEventLoop(proc, {
      log: this.log,
      apply: (input) => this.apply(input),
      get state() { return manager.state; },
      devices: () => this.hotplug?.devices() ?? this.planDevices(),
      k8sEvent: (type, reason, message) => this.k8sEvent(type, reason, message),
    });
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
        await incoming.receive(proc.qmp, (ok) => { if (ok) { this.incomingPending = false; this.startAccessCredentials(vmi, plan); } });
        const st = await proc.qmp.execute('query-status') as { status?: unknown };
        if (typeof st.status === 'string') this.apply({ kind: 'run-state', status: st.status });
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

  // ———————————————————————————————————————————————————————— exit

  private async onQemuExit(proc: QemuProcess, exit: QemuExit): Promise<void> {
    if (this.incomingPending) {
      this.incomingPending = false;
      const reason = incomingFailureReason(exit, stderrReason(exit.stderrTail));
      this.log.warn({ code: exit.code, signal: exit.signal, reason }, 'the migration target QEMU ended before the incoming migration completed');
      // Why, in the domain's migration metadata, unless this launcher ended it (the migration had
      // failed, the pod is going): the target's node agent adds it to the migration's failure
      // reason when the target was the cause (handler/migration/state.ts).
      if (!this.state.destroying) this.migration = incomingFailed(this.migration, this.incomingUid, nowTimestamp(), reason);
      this.apply({ kind: 'incoming-failed' });
    }
    this.apply({ kind: 'exit', code: exit.code, signal: exit.signal });
    if (exit.code !== 0 || exit.signal) {
      this.log.warn({ code: exit.code, signal: exit.signal, stderr: exit.stderrTail.slice(-2000) }, 'QEMU ended abnormally');
    }
    this.guestAgent.detach();
    void this.credentials?.stop();
    this.credentials = undefined;
    this.hotplug?.close();
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
      agent: () => this.guestAgent.available(),
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

  // ———————————————————————————————————————————————————————— live migration

  /** The running QEMU, if the domain is defined and has not ended. */
  runningQemu(): QemuProcess | undefined {
    return this.proc && !this.proc.hasExited && this.defined && !isFinal(this.state) ? this.proc : undefined;
  }

  /** Feeds the state machine from outside (a migration's intent and end). */
  applyInput(input: DomainInput): void {
    this.apply(input);
  }

  /** Stores the domain's migration metadata and publishes the domain. */
  setMigrationMetadata(m: MigrationMetadata): void {
    this.migration = m;
    if (this.defined) this.publish('MODIFIED');
  }

  /** The live migration glue (launcher/migration/domain-migration.ts) registers itself. */
  useMigration(job: LiveMigrationJob): void {
    this.liveMigration = job;
  }

  /**
   * The running plan's guest devices, as planned at start (the hotplug environment starts from the
   * same array; devices hotplugged later are in DomainHotplug's own state, not here).
   */
  planDevices(): readonly PlanDevice[] {
    return this.plan?.devices ?? [];
  }

  /** The domain's migration metadata (null before any migration). */
  get migrationMetadata(): MigrationMetadata | null {
    return this.migration;
  }

  // ———————————————————————————————————————————————————————— commands

  /** PauseVirtualMachine: `stop` if running (a paused domain stays paused). */
  pause(): Promise<void> {
    return this.exclusive('PauseVirtualMachine', async () => {
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
    return this.exclusive('UnpauseVirtualMachine', async () => {
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
    return this.exclusive('ShutdownVirtualMachine', async () => {
      const proc = this.proc;
      if (!this.defined || !proc || proc.hasExited || !isAlive(this.state)) return;
      if (this.gracePeriod && !this.gracePeriod.DeletionTimestamp) {
        this.gracePeriod = { ...this.gracePeriod, DeletionTimestamp: rfc3339(Date.now()) };
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
    // A paused guest cannot answer its agent (the request would only time out, and hold this
    // command that long): the ACPI button, as KubeVirt presses it, waits in the guest's ACPI
    // status until it runs again.
    if (this.guestAgent.available() && this.state.status !== LifeCycle.Paused) {
      try {
        await this.guestAgent.shutdown(mode);
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
    this.deletionTimestamp = rfc3339(Date.now());
    this.apply({ kind: 'undefined' });
    this.publish('MODIFIED');
    this.defined = false;
  }

  /** ResetVirtualMachine: hard reset (`system_reset`). */
  reset(): Promise<void> {
    return this.exclusive('ResetVirtualMachine', async () => {
      await this.requireQemu('ResetVirtualMachine').qmp.execute('system_reset');
    });
  }

  /**
   * SoftRebootVirtualMachine: the guest agent's guest-shutdown mode=reboot when connected; else
   * the ACPI power button, turning the guest's power-off into reset + cont.
   */
  softReboot(): Promise<void> {
    return this.exclusive('SoftRebootVirtualMachine', async () => {
      const proc = this.requireQemu('SoftRebootVirtualMachine');
      if (this.state.status !== LifeCycle.Running) {
        throw new DomainOperationError(`SoftRebootVirtualMachine: domain is ${this.state.status}/${this.state.reason}, not Running`);
      }
      if (!this.guestAgent.connected && !this.acpi) {
        throw new DomainOperationError('SoftRebootVirtualMachine: the guest has neither a connected guest agent nor ACPI');
      }
      if (!this.guestAgent.connected) this.apply({ kind: 'intent', intent: 'reboot' });
      const via = await this.powerButton(proc, 'reboot');
      if (via === 'acpi' && this.state.rebooting === undefined) this.apply({ kind: 'intent', intent: 'reboot' });
    });
  }

  /**
   * VirtualMachineMemoryDump: dump the guest's memory to `path` (launcher/supervise/memory-dump.ts).
   * Returns once the dump started (or was found already made); its end is in the domain's metadata.
   */
  memoryDump(path: string): Promise<void> {
    return this.exclusive('VirtualMachineMemoryDump', async () => {
      this.dumper.request(this.requireQemu('VirtualMachineMemoryDump').qmp, path);
    });
  }

  /** The memory dump under way, if any. */
  get memoryDumpInProgress(): Promise<void> | undefined {
    return this.dumper.current;
  }

  /** GetScreenshot: the primary display as a PNG (screenshot.ts); a VMI without graphics has no display. */
  async screenshot(): Promise<Screenshot> {
    const proc = this.requireQemu('GetScreenshot');
    const vnc = this.plan?.vncSocket;
    if (!vnc) throw new DomainOperationError('GetScreenshot: the VMI has no display (spec.domain.devices.autoattachGraphicsDevice is false)');
    return takeScreenshot(proc.qmp, dirname(vnc));
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
    const job = this.liveMigration?.jobInfo();
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

  /** Stops everything this manager started: an outgoing migration, QEMU (hard), the agent client. */
  async close(): Promise<void> {
    this.closed = true;
    this.liveMigration?.close();
    await this.kill();
    await this.credentials?.stop();
    this.guestAgent.close();
  }
}
