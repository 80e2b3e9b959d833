// The outgoing side of a live migration, KubeVirt's live-migration-source with QMP: set the
// capabilities and parameters from the handler's MigrationOptions, `migrate` to the unix socket the
// handler forwards to the target node, then watch MIGRATION events and sample `query-migrate`
// every `sampleMs`; convergence decisions (abort on the progress/completion timeouts, post-copy or
// pause) come from convergence.ts. On `completed` it waits until QEMU has the final numbers
// (pitfall: total-time 0 while still finish-migrate), records the end in the migration metadata, marks
// the domain Shutoff/Migrated and stops QEMU. On failure or cancel the guest keeps running here.
// Under TCG the guest is stopped for the copy and, on failure or cancel, continued (accelerator.ts).
// A block migration (block.ts) first mirrors the local disks in the background (MigrateVirtualMachine
// returns at once), migrates once they are in sync, and completes them in pre-switchover.
import type { Logger } from '../../src/log/logger.ts';
import type { MigrationModeValue } from '../../src/api/migration.ts';
import { MigrationAbortStatus, MigrationMode } from '../../src/api/constants.ts';
import type { MigrationMetadata } from '../../src/api/domain/domain.ts';
import type { DomainInput } from '../domain/state.ts';
import { stderrReason, type QemuProcess } from '../supervise/qemu-process.ts';
import { errorMessage, onQmpEvents, type QmpEventStream } from '../supervise/qmp-connection.ts';
import { decideConvergence, initialConvergence, type ConvergenceState } from './convergence.ts';
import { migrationInProgress, nowTimestamp, startedMigration, withAbortStatus, withMode, withResult } from '../domain/migration-metadata.ts';
import { directMigrationUri, migrationTlsSetup, MIGRATION_TLS_CREDS_ID, sourceMigrationSetup, type MigrationOptions } from './options.ts';
import { shortUnixPath } from '../../src/proto/unix-path.ts';
import { copiesStoppedGuest, migrationAccelerator, multifdChannels } from './accelerator.ts';
import { MigrationError, migrationFailureReason } from './migration-error.ts';
import { BlockMirrors, type MigratedDisk, type NbdEndpoint } from './block.ts';

/** What the migration needs from the domain manager. */
export interface MigrationDomainHost {
  readonly log: Logger;
  /** The running QEMU, or undefined. */
  runningQemu(): QemuProcess | undefined;
  applyInput(input: DomainInput): void;
  getMigration(): MigrationMetadata | null;
  /** Stores the metadata and publishes the domain. */
  setMigration(m: MigrationMetadata): void;
}

/** query-migrate's answer (the parts qvirt reads). */
export interface MigrationInfo {
  status?: string;
  'total-time'?: number;
  downtime?: number;
  'expected-downtime'?: number;
  'setup-time'?: number;
  'cpu-throttle-percentage'?: number;
  'error-desc'?: string;
  ram?: {
    total?: number;
    transferred?: number;
    remaining?: number;
    'dirty-pages-rate'?: number;
    'page-size'?: number;
    mbps?: number;
    'dirty-sync-count'?: number;
    'postcopy-bytes'?: number;
  };
}

/** A block migration's disks, where the target's NBD server is, and the data size with the disks. */
export interface BlockMigrationSpec {
  readonly disks: readonly MigratedDisk[];
  /** The pod's block socket (the relay), or the target QEMU's NBD server of a direct migration (blockMigrationEndpoint). */
  readonly endpoint: NbdEndpoint;
  /** The migration's data size (GiB) when the disks add `diskBytes`. */
  readonly dataSizeGiB: (diskBytes: number) => number;
}

export { MigrationError } from './migration-error.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long a migrate_cancel may take before the migration's channels are yanked. */
export const YANK_AFTER_MS = 3000;

/** query-migrate's states in which QEMU still runs a migration (its MigrationStatus before an end). */
const QEMU_MIGRATION_RUNNING: ReadonlySet<string> = new Set(['setup', 'active', 'postcopy-active', 'postcopy-paused', 'postcopy-recover', 'pre-switchover', 'device', 'wait-unplug', 'cancelling', 'colo']);

/** Whether QEMU's migration state (query-migrate `status`, absent before any migration) lets a new one start. */
export function qemuMigrationSettled(status: string | undefined): boolean {
  return status === undefined || !QEMU_MIGRATION_RUNNING.has(status);
}

/** How long a new migration waits for QEMU to finish a previous one before it cancels and yanks it. */
export const SETTLE_MS = 10_000;

/**
 * Before a new migration: QEMU's previous one must have ended in QEMU too. A failed migration is
 * reported on QEMU's `failed` event while QEMU 7.2 may still be tearing its multifd channels down
 * (a target killed mid-migration), and a `migrate-set-capabilities` then fails with "There's a
 * migration process in progress". Waits up to `settleMs`; then `migrate_cancel` and `yank` of the
 * migration's channels, and as long again; throws if QEMU still runs one.
 */
export async function settlePreviousMigration(qmp: { execute(cmd: string, args?: Record<string, unknown>): Promise<unknown> }, log: MigrationDomainHost['log'], settleMs = SETTLE_MS, pollMs = 100): Promise<void> {
  // QEMU's migration yank instance goes in migrate_fd_cleanup, after the status has ended and the multifd
  // threads are joined: until then `migrate` fails with "duplicate yank instance" (seen after a target
  // launcher SIGKILL: status failed, the next migration refused at once). query-yank (QEMU ≥ 6.0) shows it.
  const status = async (): Promise<string | undefined> => {
    const st = ((await qmp.execute('query-migrate')) as MigrationInfo).status;
    if (!qemuMigrationSettled(st)) return st;
    const yank = await qmp.execute('query-yank').catch(() => []) as { type?: string }[];
    return Array.isArray(yank) && yank.some((i) => i.type === 'migration') ? `${st ?? 'none'}, its channels not yet cleaned up` : undefined;
  };
  const settledWithin = async (ms: number): Promise<string | undefined> => {
    const end = Date.now() + ms;
    for (;;) {
      const st = await status();
      if (st === undefined) return undefined;
      if (Date.now() >= end) return st;
      await sleep(pollMs);
    }
  };
  const first = await settledWithin(settleMs);
  if (first === undefined) return;
  log.warn({ status: first, afterMs: settleMs }, 'QEMU still runs a previous migration: cancelling it and yanking its channels');
  await qmp.execute('migrate_cancel').catch(() => undefined);
  await qmp.execute('yank', { instances: [{ type: 'migration' }] }).catch(() => undefined);
  const still = await settledWithin(settleMs);
  if (still !== undefined) throw new MigrationError(`MigrateVirtualMachine: QEMU still runs a previous migration (status ${still}) ${2 * settleMs} ms after it ended here`);
}

export class SourceMigration {
  private readonly host: MigrationDomainHost;
  private readonly proc: QemuProcess;
  /** QEMU's stderr up to the migration's start: what it writes after, it writes about the migration. */
  private readonly stderrMark: number;
  private readonly options: MigrationOptions;
  private readonly sampleMs: number;
  private conv: ConvergenceState;
  private timer: NodeJS.Timeout | undefined;
  private mode: MigrationModeValue = MigrationMode.PreCopy;
  private aborting = false;
  private ended = false;
  private sampling = false;
  private finishing: Promise<void> | undefined;
  /** Block migration: the local disks to copy and the socket to the target's NBD server. */
  private block: BlockMigrationSpec | undefined;
  /** Block migration: the mirrors, once ready (until they completed or were abandoned). */
  private mirrors: BlockMirrors | undefined;
  /** Block migration: `migrate` has not been issued yet (the disks are still being mirrored). */
  private mirroring = false;
  /** Block migration: the pre-switchover work, once started (the event or a sample saw the state). */
  private switching: Promise<void> | undefined;
  private events: QmpEventStream | undefined;
  /** Block migration: the disks' bytes to copy and copied (progress for stats). */
  get diskProgress(): { total: number; processed: number } | undefined {
    if (this.mirrors) return { total: this.mirrors.total, processed: this.mirrors.copied };
    return this.diskDone;
  }
  /** Block migration: the disks' bytes once their mirrors completed. */
  private diskDone: { total: number; processed: number } | undefined;
  /** The last query-migrate answer while running (progress for stats). */
  lastInfo: MigrationInfo | undefined;
  /** The final query-migrate answer of a completed migration. */
  finalInfo: MigrationInfo | undefined;
  /** Settles when the migration has ended (completed, failed or cancelled) and been recorded. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  private constructor(host: MigrationDomainHost, proc: QemuProcess, options: MigrationOptions, dataSizeGiB: number, sampleMs: number) {
    this.host = host;
    this.proc = proc;
    this.stderrMark = proc.stderrMark;
    this.options = options;
    this.sampleMs = sampleMs;
    this.conv = initialConvergence(Date.now(), options, dataSizeGiB);
    this.done = new Promise((r) => { this.resolveDone = r; });
  }

  /**
   * Starts migrating to `uri` (`unix:/path`). Resolves once QEMU accepted `migrate`; the migration
   * then runs on and its outcome lands in the domain's migration metadata.
   */
  static async start(host: MigrationDomainHost, opts: {
    migrationUid: string; socketPath: string; options: MigrationOptions; dataSizeGiB: number; sampleMs?: number;
    /** Block migration: copy these disks over the NBD socket first (see block.ts). */
    block?: BlockMigrationSpec | undefined;
    /** A direct migration (options.direct): QEMU's TLS client credentials are in this directory. */
    tlsDir?: string | undefined;
  }): Promise<SourceMigration> {
    const proc = host.runningQemu();
    if (!proc) throw new MigrationError('MigrateVirtualMachine: the domain is not running');
    if (migrationInProgress(host.getMigration())) throw new MigrationError('MigrateVirtualMachine: a migration of this domain is already in progress');
    const m = new SourceMigration(host, proc, opts.options, opts.dataSizeGiB, opts.sampleMs ?? 500);
    const block = opts.block && opts.block.disks.length > 0 ? opts.block : undefined;
    m.block = block;
    await settlePreviousMigration(proc.qmp, host.log);
    const direct = opts.options.direct;
    if (direct?.TLS && !opts.tlsDir) throw new MigrationError('MigrateVirtualMachine: a direct migration with TLS needs the credentials directory');
    // A previous direct migration's credentials object goes (new credentials each migration).
    if (direct?.TLS) await proc.qmp.execute('object-del', { id: MIGRATION_TLS_CREDS_ID }).catch(() => undefined);
    // Multifd only on KVM, under TCG a stopped guest (accelerator.ts): the target decides the same from its own QEMU.
    const accelerator = await migrationAccelerator(proc.qmp, 'MigrateVirtualMachine');
    m.stopsGuest = copiesStoppedGuest(accelerator);
    const channels = multifdChannels(opts.options.parallelMigrationThreads, accelerator);
    if (channels !== opts.options.parallelMigrationThreads) host.log.info({ requested: opts.options.parallelMigrationThreads, accelerator }, 'live migration: one stream, no multifd channels, as the guest runs under TCG');
    const options = { ...opts.options, parallelMigrationThreads: channels };
    for (const step of [...sourceMigrationSetup(options, block !== undefined), ...migrationTlsSetup('client', direct, opts.tlsDir ?? '')]) {
      try {
        await proc.qmp.execute(step.execute, step.arguments);
      } catch (err) {
        throw new MigrationError(`MigrateVirtualMachine: ${step.execute} failed: ${errorMessage(err)}`, { cause: err });
      }
    }
    let uri: string;
    if (direct) {
      uri = directMigrationUri(direct);
    } else {
      // Multifd channels dial the path again while the migration runs: the short link lives as long.
      const short = shortUnixPath(opts.socketPath);
      m.releasePath = short.release;
      uri = `unix:${short.path}`;
    }
    host.log.info({ uri, options: opts.options, acceptableCompletionSeconds: m.conv.acceptableCompletionSeconds }, 'starting live migration');
    host.setMigration(startedMigration(opts.migrationUid, nowTimestamp()));
    // MIGRATION setup may come before migrate's reply: listen first.
    m.events = onQmpEvents(proc.qmp, ['MIGRATION'], (ev) => m.onStatus(String(ev.data?.status ?? '')), host.log);
    host.applyInput({ kind: 'intent', intent: 'migrate' });
    void proc.exited.then(() => {
      if (!m.ended) void m.finishFailed('QEMU exited during the migration');
    });
    if (block) {
      // The disks are copied first, in the background (it takes as long as the data does): the
      // outcome lands in the migration metadata like any migration failure.
      m.mirroring = true;
      void m.mirrorThenMigrate(uri, block);
      return m;
    }
    try {
      await m.stopGuestForCopy();
      await proc.qmp.execute('migrate', { uri });
    } catch (err) {
      m.stopWatching();
      await m.resumeStoppedGuest();
      const reason = `migrate to ${direct ? uri : opts.socketPath} failed: ${errorMessage(err)}`;
      host.applyInput({ kind: 'migration-ended' });
      host.setMigration(withResult(host.getMigration()!, nowTimestamp(), reason));
      m.ended = true;
      m.resolveDone();
      throw new MigrationError(`MigrateVirtualMachine: ${reason}`, { cause: err });
    }
    m.startSampling();
    return m;
  }

  private startSampling(): void {
    this.timer = setInterval(() => void this.sample(), this.sampleMs);
    this.timer.unref();
  }

  /** Block migration: mirror every local disk to the target, then `migrate` once all are in sync. */
  private async mirrorThenMigrate(uri: string, block: BlockMigrationSpec): Promise<void> {
    try {
      this.mirrors = await BlockMirrors.start(this.proc.qmp, block.disks, block.endpoint, this.host.log, {
        progressTimeoutMs: this.options.progressTimeoutSeconds * 1000,
        speed: this.options.bandwidthBytesPerSecond,
        isAborted: () => this.aborting || this.ended,
        onCreated: (mirrors) => { this.mirrors = mirrors; },
      });
    } catch (err) {
      this.mirroring = false;
      await this.finishFailed(this.aborting ? 'Live migration was cancelled' : errorMessage(err));
      return;
    }
    if (this.aborting || this.ended) {
      this.mirroring = false;
      await this.finishFailed('Live migration was cancelled');
      return;
    }
    // The completion timeout counts the disks too (KubeVirt's data size of a block migration); the
    // RAM's progress is judged from `migrate` on.
    const gib = block.dataSizeGiB(this.mirrors.total);
    this.conv = { ...initialConvergence(this.conv.startMs, this.options, gib), lastProgressMs: Date.now() };
    this.host.log.info({ dataSizeGiB: gib, diskBytes: this.mirrors.total, acceptableCompletionSeconds: this.conv.acceptableCompletionSeconds }, 'block migration: the disks are in sync: migrating the guest');
    try {
      await this.stopGuestForCopy();
      await this.proc.qmp.execute('migrate', { uri });
    } catch (err) {
      this.mirroring = false;
      await this.finishFailed(`migrate to ${uri.slice('unix:'.length)} failed: ${errorMessage(err)}`);
      return;
    }
    this.mirroring = false;
    this.startSampling();
    // A cancel that came while `migrate` was being issued.
    if (this.aborting) {
      await this.proc.qmp.execute('migrate_cancel').catch(() => undefined);
      this.yankUnlessCancelled();
    }
  }

  /**
   * Block migration, QEMU in pre-switchover (the guest is stopped): complete the mirrors, then let
   * the migration send the device state. If the disks cannot be completed the migration is cancelled.
   */
  private async switchover(): Promise<void> {
    try {
      if (this.mirrors) {
        await this.mirrors.complete();
        this.diskDone = { total: this.mirrors.total, processed: this.mirrors.total };
      }
      this.mirrors = undefined;
      await this.proc.qmp.execute('migrate-continue', { state: 'pre-switchover' });
    } catch (err) {
      this.host.log.warn({ err: errorMessage(err) }, 'block migration: completing the disk mirrors failed: cancelling the migration');
      this.timeoutReason = errorMessage(err);
      await this.proc.qmp.execute('migrate_cancel').catch(() => undefined);
    }
  }

  /** Under TCG the guest is stopped while its RAM is copied (accelerator.ts). */
  private stopsGuest = false;
  /** When this migration stopped the guest (it resumes it if the migration fails). */
  private stoppedAtMs: number | undefined;
  /** When the guest came to run again (on the target): a switch to post-copy. */
  private runsAgainAtMs: number | undefined;

  /**
   * Under TCG, right before `migrate`: stop a running guest, so QEMU copies its RAM in one exact pass
   * (accelerator.ts). The migration's mode is Paused. A guest its user paused stays as it is.
   */
  private async stopGuestForCopy(): Promise<void> {
    if (!this.stopsGuest) return;
    const st = await this.proc.qmp.execute('query-status') as { status?: string } | undefined;
    if (st?.status !== 'running') return;
    this.host.applyInput({ kind: 'intent', intent: 'migrate' });
    await this.proc.qmp.execute('stop');
    this.stoppedAtMs = Date.now();
    this.setMode(MigrationMode.Paused);
    this.host.log.info('live migration under TCG: the guest is stopped while its memory is copied');
  }

  /** A failed or cancelled migration: the guest this migration stopped runs again here. */
  private async resumeStoppedGuest(): Promise<void> {
    if (this.stoppedAtMs === undefined || this.proc.hasExited) return;
    this.stoppedAtMs = undefined;
    try {
      await this.proc.qmp.execute('cont');
      this.host.log.info('the migration did not complete: the guest it stopped runs again here');
    } catch (err) {
      this.host.log.error({ err: errorMessage(err) }, 'resuming the guest after the failed migration failed');
    }
  }

  /** How long the guest did not run because this migration stopped it (ms), once it runs on the target. */
  get guestStoppedMs(): number | undefined {
    return this.stoppedAtMs === undefined || this.runsAgainAtMs === undefined ? undefined : this.runsAgainAtMs - this.stoppedAtMs;
  }

  get isRunning(): boolean {
    return !this.ended;
  }

  private releasePath: () => void = () => {};

  private stopWatching(): void {
    this.releasePath();
    clearInterval(this.timer);
    this.timer = undefined;
    this.events?.close();
  }

  private onStatus(status: string): void {
    if (this.ended) return;
    this.host.log.debug({ status }, 'migration status');
    switch (status) {
      case 'postcopy-active':
        this.setMode(MigrationMode.PostCopy);
        break;
      case 'pre-switchover':
        if (this.block) this.switching ??= this.switchover();
        break;
      case 'completed':
        this.finishing ??= this.finishCompleted();
        break;
      case 'failed':
        this.finishing ??= (async () => {
          const info = await this.query().catch(() => undefined);
          await this.finishFailed(migrationFailureReason(info?.['error-desc'], stderrReason(this.proc.stderrSince(this.stderrMark))));
        })();
        break;
      case 'cancelled':
        this.finishing ??= this.finishFailed('Live migration was cancelled');
        break;
      default:
        break;
    }
  }

  private setMode(mode: MigrationModeValue): void {
    if (this.mode === mode) return;
    this.mode = mode;
    const m = this.host.getMigration();
    if (m) this.host.setMigration(withMode(m, mode));
  }

  private query(): Promise<MigrationInfo> {
    return this.proc.qmp.execute('query-migrate', undefined, { timeout: 10_000 }) as Promise<MigrationInfo>;
  }

  private async sample(): Promise<void> {
    if (this.ended || this.sampling || this.finishing) return;
    this.sampling = true;
    try {
      const info = await this.query();
      if (this.ended || this.finishing) return;
      if (info.status === 'active' || info.status === 'postcopy-active' || info.status === 'device' || info.status === 'pre-switchover') {
        this.lastInfo = info;
        // A block migration waits there for its mirrors: in case the event was missed.
        if (info.status === 'pre-switchover') this.onStatus(info.status);
      } else if (info.status === 'completed' || info.status === 'failed' || info.status === 'cancelled') {
        this.onStatus(info.status); // in case the event was missed
        return;
      }
      const { state, action } = decideConvergence(this.conv, { nowMs: Date.now(), remaining: info.ram?.remaining }, { options: this.options, mode: this.mode, aborting: this.aborting });
      this.conv = state;
      switch (action.kind) {
        case 'none':
          break;
        case 'postcopy':
          this.host.log.info({ reason: action.reason }, 'starting post-copy');
          await this.proc.qmp.execute('migrate-start-postcopy');
          this.runsAgainAtMs ??= Date.now();
          this.setMode(MigrationMode.PostCopy);
          break;
        case 'pause':
          this.host.log.info({ reason: action.reason }, 'pausing the guest so the migration completes');
          this.host.applyInput({ kind: 'intent', intent: 'migrate' });
          await this.proc.qmp.execute('stop');
          this.setMode(MigrationMode.Paused);
          break;
        case 'abort':
          this.host.log.warn({ reason: action.reason }, 'aborting the migration');
          await this.abort(action.reason);
          break;
      }
    } catch (err) {
      if (!this.ended) this.host.log.warn({ err: errorMessage(err) }, 'migration progress check failed');
    } finally {
      this.sampling = false;
    }
  }

  private timeoutReason: string | undefined;

  /** migrate_cancel on a timeout: the failure reason is the timeout's. */
  private async abort(reason: string): Promise<void> {
    this.timeoutReason = reason;
    this.aborting = true;
    await this.proc.qmp.execute('migrate_cancel');
    this.yankUnlessCancelled();
  }

  /**
   * QEMU 7.2's migrate_cancel shuts down the main channel only. A multifd thread blocked writing to
   * a channel the target stopped reading (its receive threads wait at a sync point the cancelled
   * source never completes) keeps the migration thread — and the cancel — waiting forever. If the
   * cancel has not taken after YANK_AFTER_MS, `yank` the migration: every channel is shut down.
   */
  private yankUnlessCancelled(): void {
    const timer = setTimeout(() => {
      if (this.ended) return;
      this.host.log.warn({ afterMs: YANK_AFTER_MS }, 'migrate_cancel has not taken: yanking the migration channels');
      this.proc.qmp.execute('yank', { instances: [{ type: 'migration' }] }).catch((err: unknown) => {
        if (!this.ended) this.host.log.warn({ err: errorMessage(err) }, 'yank of the migration failed');
      });
    }, YANK_AFTER_MS);
    timer.unref();
    void this.done.then(() => clearTimeout(timer));
  }

  /**
   * CancelVirtualMachineMigration: AbortStatus Aborting, migrate_cancel; once QEMU says cancelled,
   * AbortStatus Succeeded (the guest keeps running here). Resolves when the migration has ended.
   */
  async cancel(): Promise<void> {
    if (this.ended) throw new MigrationError('CancelVirtualMachineMigration: the migration has already ended');
    if (this.mode === MigrationMode.PostCopy) {
      throw new MigrationError('CancelVirtualMachineMigration: the migration is in post-copy: neither side holds the whole VM, it cannot be aborted');
    }
    const m = this.host.getMigration();
    if (m) this.host.setMigration(withAbortStatus(m, MigrationAbortStatus.Aborting));
    this.aborting = true;
    if (this.mirroring) {
      // Still copying the disks: no QEMU migration to cancel yet; the mirror phase sees `aborting`.
      await this.done;
      return;
    }
    try {
      await this.proc.qmp.execute('migrate_cancel');
    } catch (err) {
      const cur = this.host.getMigration();
      if (cur) this.host.setMigration(withAbortStatus(cur, MigrationAbortStatus.Failed));
      throw new MigrationError(`CancelVirtualMachineMigration: migrate_cancel failed: ${errorMessage(err)}`, { cause: err });
    }
    this.yankUnlessCancelled();
    await this.done;
    const after = this.host.getMigration();
    if (after && after.AbortStatus === MigrationAbortStatus.Aborting) {
      // It completed (or failed on its own) before the cancel took: the abort did not happen.
      this.host.setMigration(withAbortStatus(after, after.Failed ? MigrationAbortStatus.Succeeded : MigrationAbortStatus.Failed));
    }
  }

  private async finishCompleted(): Promise<void> {
    // Pitfall: right on `completed` query-migrate may still say finish-migrate with total-time 0.
    let info: MigrationInfo | undefined;
    for (let i = 0; i < 100; i++) {
      info = await this.query().catch(() => undefined);
      if (info?.status === 'completed' && (info['total-time'] ?? 0) > 0) {
        const st = await this.proc.qmp.execute('query-status').catch(() => undefined) as { status?: string } | undefined;
        if (st?.status === 'postmigrate' || st === undefined) break;
      }
      await sleep(20);
    }
    this.runsAgainAtMs ??= Date.now();
    // A guest stopped for the copy (TCG) was down the whole copy, not just QEMU's last phase.
    const stoppedMs = this.guestStoppedMs;
    this.finalInfo = info && stoppedMs !== undefined ? { ...info, downtime: Math.max(info.downtime ?? 0, stoppedMs) } : info;
    this.ended = true;
    this.stopWatching();
    this.mirrors?.close();
    this.mirrors = undefined;
    this.host.log.info({ totalTimeMs: info?.['total-time'], downtimeMs: this.finalInfo?.downtime, qemuDowntimeMs: info?.downtime, transferred: info?.ram?.transferred, mode: this.mode }, 'live migration completed');
    const m = this.host.getMigration();
    if (m) {
      const done = withResult(m, nowTimestamp());
      this.host.setMigration(m.AbortStatus === MigrationAbortStatus.Aborting ? withAbortStatus(done, MigrationAbortStatus.Failed) : done);
    }
    this.host.applyInput({ kind: 'migrated' });
    this.resolveDone();
    // The guest runs on the target now: this QEMU has nothing left to do.
    await this.proc.terminate({ quitTimeoutMs: 5000, termTimeoutMs: 5000 }).catch((err: unknown) => this.host.log.error({ err: errorMessage(err) }, 'stopping the migrated-away QEMU failed'));
  }

  private async finishFailed(reason: string): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.stopWatching();
    // Block migration: abandon the mirrors (the source's disks are untouched by them).
    const mirrors = this.mirrors;
    this.mirrors = undefined;
    if (mirrors && !this.proc.hasExited) await mirrors.abort();
    else mirrors?.close();
    // Before the outcome is published: whoever reads it finds the guest running here again.
    await this.resumeStoppedGuest();
    const m = this.host.getMigration();
    let why = this.timeoutReason ?? reason;
    if (m && m.AbortStatus === MigrationAbortStatus.Aborting) {
      this.host.setMigration(withAbortStatus(m, MigrationAbortStatus.Succeeded));
      why = reason;
    }
    this.host.log.warn({ reason: why }, 'live migration failed: the guest stays here');
    const cur = this.host.getMigration();
    if (cur) this.host.setMigration(withResult(cur, nowTimestamp(), why));
    this.host.applyInput({ kind: 'migration-ended' });
    this.resolveDone();
  }

  /** Stops watching (the launcher is closing). */
  close(): void {
    this.stopWatching();
  }
}
