// Block migration with QMP (what libvirt's NBD storage migration does for KubeVirt's
// MIGRATE_NON_SHARED_INC, without libvirt): the disks that live only in the launcher pod
// (src/api/block-migration.ts) are copied to the target QEMU while the guest runs.
//
// Target, before the source starts: `nbd-server-start` on the pod's block migration socket
// (KubeVirt's port 49153 proxy key, which the node agents forward) — or, a direct migration, on the
// target pod's address (KubeVirt's port 49153 there, a free port on the node's network) with the
// migration's TLS credentials and authz (NbdEndpoint) — and per disk a writable
// `block-export-add` of the disk's top node (the empty overlay the target launcher created over
// the same base image). The target QEMU keeps `-S` (it does not run the guest by itself): once the
// incoming migration completed, or switched to post-copy, `block-export-del` + `nbd-server-stop`,
// then `cont` — while an export still holds the node, the disk device could not take back its
// exclusive write permission when the guest starts (QEMU reports a permission conflict).
//
// Source: per disk `blockdev-add` of an NBD client node on the source pod's block socket (direct:
// the target's address and NBD port, the migration's TLS and tls-hostname) and
// `blockdev-mirror sync=top` of the disk's top node onto it (only the top image: the base image is
// the same on both nodes); every mirror must report BLOCK_JOB_READY before `migrate`. The
// migration runs with `pause-before-switchover`: when QEMU has stopped the guest for the last
// RAM pass (or for the switch to post-copy) it waits in `pre-switchover`; then each ready mirror
// gets `block-job-cancel`, which for a ready mirror copies what is still dirty and completes
// (BLOCK_JOB_COMPLETED: the target holds the disk as of that moment, and the guest cannot write
// anymore), the NBD nodes are deleted, and `migrate-continue` lets the device state go.
//
// Why that is safe: the guest can run on the target only after the source sent the device state
// (or post-copy's switch), which happens only after every mirror completed while the guest was
// stopped: every write the guest made — acknowledged or in flight when it stopped (vm_stop drains
// them) — is on the target before the guest can run there, and nothing writes to the target's
// disks afterwards (the source's NBD nodes are gone). No write-blocking copy mode is needed
// (KubeVirt does not ask libvirt for synchronous writes either); the price is that the mirrors'
// last dirty blocks are copied within the downtime.
// On failure or cancel before that point: force-cancel the jobs and delete the NBD nodes; the
// guest keeps running on the source with its disks untouched.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { disksToMigrate } from '../../src/api/block-migration.ts';
import { shortUnixPath } from '../../src/proto/unix-path.ts';
import type { PlanDevice } from '../convert/plan.ts';
import { errorMessage, onQmpEvents, type QmpConnection, type QmpEventMessage, type QmpEventStream } from '../supervise/qmp-connection.ts';
import { MIGRATION_TLS_AUTHZ_ID, MIGRATION_TLS_CREDS_ID, type QmpStep } from './options.ts';
import type { DirectMigration } from '../../src/api/migration.ts';

/** A disk the block migration copies: its KubeVirt name and the QEMU node its device writes to. */
export interface MigratedDisk {
  readonly name: string;
  /** The top node of the disk's chain (the device's `drive`: `libvirt-N-format`, or `-storage` for raw). */
  readonly node: string;
}

export class BlockMigrationError extends Error {
  override readonly name = 'BlockMigrationError';
}

/**
 * The disks of `vmi` a block migration copies, with their top nodes from the launch plan's devices.
 * Empty when the migration is not a block migration. A disk to copy without a node is an error.
 */
export function migratedDisks(vmi: Pick<VirtualMachineInstance, 'spec' | 'status'>, devices: readonly PlanDevice[]): MigratedDisk[] {
  return disksToMigrate(vmi).map((name) => {
    const dev = devices.find((d) => d.alias === name && (d.kind === 'disk' || d.kind === 'lun'));
    const node = dev?.nodeNames?.[0];
    if (!node) throw new BlockMigrationError(`block migration: disk "${name}" has no block node in this domain`);
    return { name, node };
  });
}

/** The NBD export of a disk: its KubeVirt name (the same on both ends; each maps it to its own node). */
export const exportName = (d: MigratedDisk): string => d.name;
const exportId = (i: number) => `migration-export-${i}`;
const nbdNode = (i: number) => `migration-nbd-${i}`;
const mirrorJob = (i: number) => `migration-mirror-${i}`;

/**
 * Where the disks go: the pod's block migration socket (the node agents relay it), or — a direct
 * migration — the target QEMU's own NBD server on the target pod's address, with QEMU's TLS (the
 * migration's credentials object; on the server the same authz as the migration's, on the client
 * the same tls-hostname).
 */
export type NbdEndpoint =
  | { readonly kind: 'unix'; readonly path: string }
  | { readonly kind: 'inet'; readonly host: string; readonly port: number; readonly tls?: { readonly creds: string; readonly hostname?: string | undefined; readonly authz?: string | undefined } | undefined };

/**
 * Where a block migration's disks go: the pod's block socket (the relay), or the target QEMU's NBD
 * server of a direct migration, with the migration's TLS (the target's authz, the source's hostname).
 * Undefined: a direct migration that names no NBD port (an older target: it cannot take the disks).
 */
export function blockMigrationEndpoint(direct: DirectMigration | undefined, socketPath: string, endpoint: 'server' | 'client'): NbdEndpoint | undefined {
  if (!direct) return { kind: 'unix', path: socketPath };
  if (direct.BlockPort === undefined) return undefined;
  const tls = direct.TLS
    ? { creds: MIGRATION_TLS_CREDS_ID, ...(endpoint === 'client' && direct.TLSHostname ? { hostname: direct.TLSHostname } : {}), ...(endpoint === 'server' && direct.TLSAuthz !== undefined ? { authz: MIGRATION_TLS_AUTHZ_ID } : {}) }
    : undefined;
  return { kind: 'inet', host: direct.Address, port: direct.BlockPort, ...(tls ? { tls } : {}) };
}

/** QEMU's SocketAddress (nbd-server-start's `addr`, legacy form) of an endpoint. */
function serverAddr(e: NbdEndpoint): Record<string, unknown> {
  return e.kind === 'unix' ? { type: 'unix', data: { path: e.path } } : { type: 'inet', data: { host: e.host, port: String(e.port) } };
}

/** Target: the NBD server on `endpoint` and a writable export of each disk's top node. */
export function targetExportSteps(disks: readonly MigratedDisk[], endpoint: NbdEndpoint): QmpStep[] {
  const tls = endpoint.kind === 'inet' && endpoint.tls ? { 'tls-creds': endpoint.tls.creds, ...(endpoint.tls.authz ? { 'tls-authz': endpoint.tls.authz } : {}) } : {};
  return [
    { execute: 'nbd-server-start', arguments: { addr: serverAddr(endpoint), ...tls } },
    ...disks.map((d, i) => ({ execute: 'block-export-add', arguments: { type: 'nbd', id: exportId(i), 'node-name': d.node, writable: true, name: exportName(d) } })),
  ];
}

/** Target, after the incoming migration: the exports (with any client still connected) and the server go. */
export function targetExportTeardown(disks: readonly MigratedDisk[]): QmpStep[] {
  return [
    ...disks.map((_, i) => ({ execute: 'block-export-del', arguments: { id: exportId(i), mode: 'hard' } })),
    { execute: 'nbd-server-stop', arguments: {} },
  ];
}

/**
 * Source: the NBD client node of each disk on `endpoint`, then its mirror job (top image only).
 * `speed` (bytes/s, 0 = unlimited): the migration's bandwidth, which libvirt gives its mirrors too.
 */
export function sourceMirrorSteps(disks: readonly MigratedDisk[], endpoint: NbdEndpoint, speed = 0): QmpStep[] {
  const server = endpoint.kind === 'unix' ? { type: 'unix', path: endpoint.path } : { type: 'inet', host: endpoint.host, port: String(endpoint.port) };
  const tls = endpoint.kind === 'inet' && endpoint.tls ? { 'tls-creds': endpoint.tls.creds, ...(endpoint.tls.hostname ? { 'tls-hostname': endpoint.tls.hostname } : {}) } : {};
  return [
    ...disks.map((d, i) => ({
      execute: 'blockdev-add',
      arguments: { driver: 'nbd', 'node-name': nbdNode(i), server, export: exportName(d), ...tls, discard: 'unmap', 'detect-zeroes': 'unmap' },
    })),
    ...disks.map((d, i) => ({
      execute: 'blockdev-mirror',
      arguments: { 'job-id': mirrorJob(i), device: d.node, target: nbdNode(i), sync: 'top', 'auto-finalize': true, 'auto-dismiss': true, ...(speed > 0 ? { speed } : {}) },
    })),
  ];
}

/** Source: `block-job-cancel` of each ready mirror, which completes it with the target in sync. */
export function sourceMirrorCompletion(disks: readonly MigratedDisk[]): QmpStep[] {
  return disks.map((_, i) => ({ execute: 'block-job-cancel', arguments: { device: mirrorJob(i) } }));
}

/** Source, on failure: force-cancel the mirrors (abandoning the copy). */
export function sourceMirrorAbort(disks: readonly MigratedDisk[]): QmpStep[] {
  return disks.map((_, i) => ({ execute: 'block-job-cancel', arguments: { device: mirrorJob(i), force: true } }));
}

/** Source: the NBD client nodes go once no job uses them. */
export function sourceNodeRemoval(disks: readonly MigratedDisk[]): QmpStep[] {
  return disks.map((_, i) => ({ execute: 'blockdev-del', arguments: { 'node-name': nbdNode(i) } }));
}

/** An endpoint for the logs. */
function describeEndpoint(e: NbdEndpoint): Record<string, unknown> {
  return e.kind === 'unix' ? { socket: e.path } : { address: e.host, port: e.port, tls: e.tls !== undefined };
}

// ———————————————————————————————————————————————————————— target shell

/** Starts the target's NBD exports. The server's socket is bound once this returns. */
export async function startBlockExports(qmp: QmpConnection, disks: readonly MigratedDisk[], endpoint: NbdEndpoint, log: Logger): Promise<void> {
  let short: { path: string; release: () => void } | undefined;
  if (endpoint.kind === 'unix') {
    mkdirSync(dirname(endpoint.path), { recursive: true });
    rmSync(endpoint.path, { force: true });
    short = shortUnixPath(endpoint.path);
  }
  try {
    for (const step of targetExportSteps(disks, short ? { kind: 'unix', path: short.path } : endpoint)) {
      try {
        await qmp.execute(step.execute, step.arguments);
      } catch (err) {
        throw new BlockMigrationError(`SyncMigrationTarget: ${step.execute} for the block migration failed: ${errorMessage(err)}`, { cause: err });
      }
    }
  } finally {
    short?.release();
  }
  log.info({ ...describeEndpoint(endpoint), disks: disks.map((d) => `${d.name}=${d.node}`) }, 'block migration: NBD exports of the local disks ready');
}

/** Removes the target's NBD exports and server; failures are logged, not thrown (the guest runs here). */
export async function stopBlockExports(qmp: QmpConnection, disks: readonly MigratedDisk[], log: Logger): Promise<void> {
  for (const step of targetExportTeardown(disks)) {
    await qmp.execute(step.execute, step.arguments).catch((err: unknown) => log.warn({ err: errorMessage(err), command: step.execute }, 'block migration: removing the NBD export failed'));
  }
  log.info('block migration: NBD exports removed');
}

/**
 * Target: lets the guest run once the disks are in (a MIGRATION subscription of its own): when the incoming migration
 * completed, or switched to post-copy (the source completed its mirrors in pre-switchover, before
 * it sent the switch), the exports go and `cont` lets the guest run (during post-copy's incoming
 * state `cont` only marks it to start when the source says run). Once.
 */
export function resumeAfterBlockMigration(qmp: QmpConnection, disks: readonly MigratedDisk[], log: Logger, resume = true): QmpEventStream {
  const sub: QmpEventStream = onQmpEvents(qmp, ['MIGRATION'], (ev) => {
    if (ev.data?.status !== 'completed' && ev.data?.status !== 'postcopy-active') return;
    sub.close();
    void stopBlockExports(qmp, disks, log)
      .then(async () => {
        if (resume) await qmp.execute('cont');
        else log.info('block migration: the exports went; the guest stays paused, as its user paused it');
      })
      .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'block migration: resuming the migrated guest failed'));
  }, log);
  return sub;
}

// ———————————————————————————————————————————————————————— source shell

interface JobState { ready: boolean; ended: boolean; error?: string | undefined; cancelled?: boolean }
interface BlockJobInfo { device?: string; len?: number; offset?: number; ready?: boolean }

/** The source's mirror jobs of one block migration. */
export class BlockMirrors {
  readonly disks: readonly MigratedDisk[];
  private readonly qmp: QmpConnection;
  private readonly log: Logger;
  private readonly jobs = new Map<string, JobState>();
  private events: QmpEventStream | undefined;
  private wake: (() => void) | undefined;
  /** An event came while no nap was waiting: the next nap returns at once. */
  private woken = false;
  private releasePath: () => void = () => {};
  private closed = false;
  /** Bytes the mirrors have to copy and have copied (query-block-jobs), last seen. */
  total = 0;
  copied = 0;

  private constructor(qmp: QmpConnection, disks: readonly MigratedDisk[], log: Logger) {
    this.qmp = qmp;
    this.disks = disks;
    this.log = log;
    disks.forEach((_, i) => this.jobs.set(mirrorJob(i), { ready: false, ended: false }));
  }

  private onEvent(ev: QmpEventMessage): void {
    const id = typeof ev.data?.device === 'string' ? ev.data.device : undefined;
    const job = id ? this.jobs.get(id) : undefined;
    if (!job) return;
    switch (ev.event) {
      case 'BLOCK_JOB_READY': job.ready = true; break;
      case 'BLOCK_JOB_COMPLETED':
        job.ended = true;
        if (typeof ev.data?.error === 'string') job.error = ev.data.error;
        break;
      case 'BLOCK_JOB_CANCELLED': job.ended = true; job.cancelled = true; break;
      case 'BLOCK_JOB_ERROR': job.error = `${String(ev.data?.operation ?? 'I/O')} error`; break;
      default: return;
    }
    if (this.wake) this.wake();
    else this.woken = true;
  }

  /**
   * Connects to the target's exports and starts mirroring; resolves when every mirror is READY.
   * Fails (after undoing everything) when a job fails, or when the copy makes no progress for
   * `progressTimeoutMs` (0: never).
   */
  static async start(qmp: QmpConnection, disks: readonly MigratedDisk[], endpoint: NbdEndpoint, log: Logger, o: {
    progressTimeoutMs: number; isAborted?: () => boolean;
    /** Bytes/s per mirror (0 or absent: unlimited). */
    speed?: number;
    /** Called with the mirrors as soon as they exist (their progress while they copy). */
    onCreated?: (m: BlockMirrors) => void;
  }): Promise<BlockMirrors> {
    const m = new BlockMirrors(qmp, disks, log);
    o.onCreated?.(m);
    m.events = onQmpEvents(qmp, ['BLOCK_JOB_READY', 'BLOCK_JOB_COMPLETED', 'BLOCK_JOB_CANCELLED', 'BLOCK_JOB_ERROR'], (ev) => m.onEvent(ev), log);
    // QEMU connects the NBD nodes at blockdev-add; the short link stays until they are deleted.
    let target = endpoint;
    if (endpoint.kind === 'unix') {
      const short = shortUnixPath(endpoint.path);
      m.releasePath = short.release;
      target = { kind: 'unix', path: short.path };
    }
    try {
      for (const step of sourceMirrorSteps(disks, target, o.speed ?? 0)) {
        try {
          await qmp.execute(step.execute, step.arguments, { timeout: 30_000 });
        } catch (err) {
          throw new BlockMigrationError(`block migration: ${step.execute} ${JSON.stringify(step.arguments['job-id'] ?? step.arguments['node-name'])} failed: ${errorMessage(err)}`, { cause: err });
        }
      }
      log.info({ disks: disks.map((d) => `${d.name}=${d.node}`), ...describeEndpoint(endpoint) }, 'block migration: mirroring the local disks to the target');
      await m.waitReady(o.progressTimeoutMs, o.isAborted ?? (() => false));
      log.info({ bytes: m.total }, 'block migration: every disk mirror is ready');
      return m;
    } catch (err) {
      await m.abort();
      throw err;
    }
  }

  private async poll(): Promise<void> {
    const jobs = await this.qmp.execute('query-block-jobs', undefined, { timeout: 10_000 }) as BlockJobInfo[];
    let total = 0;
    let copied = 0;
    for (const [id, st] of this.jobs) {
      const j = jobs.find((x) => x.device === id);
      if (!j) { st.ended = true; continue; }
      if (j.ready) st.ready = true;
      total += j.len ?? 0;
      copied += j.offset ?? 0;
    }
    this.total = total;
    this.copied = copied;
  }

  private failure(): string | undefined {
    for (const [id, st] of this.jobs) {
      if (st.error) return `block migration: mirror job ${id} failed: ${st.error}`;
      if (st.ended && !st.ready) return `block migration: mirror job ${id} ended before the disk was in sync`;
    }
    return undefined;
  }

  /** Waits for an event (or returns at once if one came since the last nap) or `ms`. */
  private nap(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((r) => {
      const t = setTimeout(() => { this.wake = undefined; r(); }, ms);
      this.wake = () => { clearTimeout(t); this.wake = undefined; r(); };
    });
  }

  private async waitReady(progressTimeoutMs: number, isAborted: () => boolean): Promise<void> {
    let lastCopied = -1;
    let progressAt = Date.now();
    for (;;) {
      if (isAborted()) throw new BlockMigrationError('block migration: cancelled while mirroring the disks');
      const f = this.failure();
      if (f) throw new BlockMigrationError(f);
      if ([...this.jobs.values()].every((j) => j.ready)) {
        await this.poll().catch(() => undefined);
        return;
      }
      await this.poll().catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, 'query-block-jobs failed'));
      if (this.copied > lastCopied) { lastCopied = this.copied; progressAt = Date.now(); }
      if (progressTimeoutMs > 0 && Date.now() - progressAt > progressTimeoutMs) {
        throw new BlockMigrationError(`block migration: the disk mirrors made no progress for ${Math.round(progressTimeoutMs / 1000)} s (${this.copied} of ${this.total} bytes copied)`);
      }
      await this.nap(500);
    }
  }

  /**
   * The guest is stopped (pre-switchover): complete every mirror (the target gets what is still
   * dirty) and delete the NBD nodes. Throws when a mirror does not complete cleanly.
   */
  async complete(timeoutMs = 60_000): Promise<void> {
    for (const step of sourceMirrorCompletion(this.disks)) {
      try {
        await this.qmp.execute(step.execute, step.arguments);
      } catch (err) {
        throw new BlockMigrationError(`block migration: ${step.execute} ${String(step.arguments.device)} failed: ${errorMessage(err)}`, { cause: err });
      }
    }
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = [...this.jobs].find(([, j]) => j.ended && (j.error || j.cancelled));
      if (f) throw new BlockMigrationError(`block migration: mirror job ${f[0]} did not complete: ${f[1].error ?? 'cancelled before it was in sync'}`);
      if ([...this.jobs.values()].every((j) => j.ended)) break;
      if (Date.now() > deadline) throw new BlockMigrationError(`block migration: the disk mirrors did not complete within ${timeoutMs / 1000} s`);
      await this.nap(200);
      // A missed event: a job that is gone from query-block-jobs has ended (auto-dismiss).
      await this.poll().catch(() => undefined);
    }
    await this.removeNodes();
    this.close();
    this.log.info({ bytes: this.total }, 'block migration: disk mirrors completed, the target holds the disks');
  }

  private async removeNodes(): Promise<void> {
    for (const step of sourceNodeRemoval(this.disks)) {
      await this.qmp.execute(step.execute, step.arguments).catch((err: unknown) => this.log.debug({ err: errorMessage(err), node: step.arguments['node-name'] }, 'blockdev-del of an NBD node failed'));
    }
  }

  /** Abandons the copy: force-cancel the jobs still running, delete the NBD nodes. Never throws. */
  async abort(): Promise<void> {
    if (this.closed) return;
    for (const step of sourceMirrorAbort(this.disks)) {
      const st = this.jobs.get(String(step.arguments.device));
      if (st?.ended) continue;
      await this.qmp.execute(step.execute, step.arguments).catch(() => undefined);
    }
    const deadline = Date.now() + 10_000;
    while (![...this.jobs.values()].every((j) => j.ended) && Date.now() < deadline) {
      await this.nap(200);
      try { await this.poll(); } catch { break; }
    }
    await this.removeNodes();
    this.close();
    this.log.info('block migration: disk mirrors abandoned');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.releasePath();
    this.events?.close();
    this.wake?.();
  }
}
