// The source node's part of a live migration (virt-handler's migration-source.go), run from the
// node agent's reconcile of a VMI on its node: once the target published its address and port, a
// unix socket in the source launcher's pod is proxied (TLS) to it and the launcher is told to
// MigrateVirtualMachine with the options from the VMI's migration configuration; afterwards the
// domain's migration metadata is copied into status.migrationState; abortRequested becomes
// CancelVirtualMachineMigration. The source domain that ended Shutoff/Migrated is kept until the
// target has taken the VMI over (completed), then the usual cleanup removes it.
// When the target published its QEMU's own port (the direct transport, transport.ts) there is no
// proxy: the source launcher's QEMU connects to the target QEMU with QEMU's TLS, on client
// credentials issued here for this migration and removed when it ends.
import { dirname } from 'node:path';
import { BLOCK_MIGRATION_PORT, MIGRATION_PROGRESS_ANNOTATION, migrationSocketPath, migrationTlsDir, type DirectMigration, type MigrationProgress } from '../../src/api/migration.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigrationState } from '../../src/api/types.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { isNotFound } from '../../src/kube/client.ts';
import type { EventRecorder } from '../../src/kube/events.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { LauncherEntry } from '../launcher/domain-cache.ts';
import type { Domain } from '../../src/api/domain/domain.ts';
import { LifeCycle, Reason } from '../../src/api/domain/lifecycle.ts';
import { SourceListener } from './proxy.ts';
import { migrationOptionsFor, sourceAction, sourceStateFromDomain } from './state.ts';
import type { MigrationTls } from './tls.ts';
import { relayTlsFor } from './relay-tls.ts';
import type { RelayRecords } from './relay-records.ts';
import { issueMigrationCredentials, migrationTlsHostname, removeMigrationCredentials, writeMigrationCredentials } from './direct-credentials.ts';
import { parseDomainStats, type DomainStats } from '../metrics/domain-stats.ts';

export interface MigrationSourceOptions {
  readonly client: KubeClient;
  readonly nodeName: string;
  readonly stateDir: string;
  readonly recorder: EventRecorder;
  readonly log: Logger;
  /** The handlers' TLS (undefined: none; then only migrations with disableTLS can go; relay-tls.ts). */
  readonly tls: MigrationTls | undefined;
  /** Where the relay processes are recorded (a restarted node agent ends those left behind). */
  readonly relayRecords?: RelayRecords | undefined;
}

export class MigrationSource {
  private readonly o: MigrationSourceOptions;
  /** key → the migration UID MigrateVirtualMachine was sent for, and its proxy (relay) or credentials (direct). */
  private readonly running = new Map<string, { migrationUid: string; proxy?: SourceListener | undefined; blockProxy?: SourceListener | undefined; tlsDir?: string | undefined }>();

  constructor(o: MigrationSourceOptions) {
    this.o = o;
  }

  /**
   * One reconcile. Returns whether the (Shutoff/Migrated) domain must be kept for now, and when to
   * look again.
   */
  async reconcile(key: string, vmi: VirtualMachineInstance | undefined, entry: LauncherEntry | undefined, domain: Domain | undefined, log: Logger): Promise<{ holdDomain: boolean; requeueAfterMs?: number }> {
    const ms = vmi?.status?.migrationState;
    const cur = this.running.get(key);
    if (!vmi || !ms) {
      if (cur) await this.cleanup(key);
      return { holdDomain: false };
    }
    const dm = domain?.Spec.Metadata.KubeVirt.Migration;
    const started = cur !== undefined && cur.migrationUid === ms.migrationUid;
    const action = sourceAction(vmi, this.o.nodeName, dm, started);
    let requeueAfterMs: number | undefined;
    switch (action.kind) {
      case 'migrate': {
        if (!entry) return { holdDomain: false, requeueAfterMs: 1000 };
        if (cur) await this.cleanup(key);
        // TLS or not: what the migration carries (the target read the same value, relay-tls.ts).
        const relayTls = relayTlsFor(ms, this.o.tls);
        if (!relayTls.ok) {
          log.warn({ reason: relayTls.reason }, 'live migration cannot start');
          await this.failMigration(vmi, ms, relayTls.reason);
          return { holdDomain: false };
        }
        const shareDir = dirname(entry.paths.notifySocket);
        let direct: DirectMigration | undefined;
        if ('direct' in action) {
          const ready = await this.prepareDirect(key, vmi, ms, shareDir, action, relayTls.tls);
          if (!ready.ok) {
            await this.failMigration(vmi, ms, ready.reason);
            return { holdDomain: false };
          }
          direct = ready.direct;
        } else {
          await this.startRelay(key, vmi, ms, shareDir, action, relayTls.tls, log);
        }
        const options = direct ? { ...migrationOptionsFor(vmi), DirectMigration: direct } : migrationOptionsFor(vmi);
        const res = await entry.client.call('MigrateVirtualMachine', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: Buffer.from(JSON.stringify(options)) }, { timeoutMs: 60_000 });
        if (!res.success) {
          await this.cleanup(key);
          log.warn({ err: res.message }, 'MigrateVirtualMachine failed');
          await this.failMigration(vmi, ms, res.message);
          return { holdDomain: false };
        }
        log.info({ target: `${action.host}:${action.port}`, options }, 'live migration started');
        void this.o.recorder.record(vmi, 'Normal', 'Migrating', `VirtualMachineInstance is migrating to node ${ms.targetNode}.`).catch(() => undefined);
        requeueAfterMs = 1000;
        break;
      }
      case 'cancel': {
        if (!entry) break;
        log.info('migration abort requested: cancelling');
        const res = await entry.client.call('CancelVirtualMachineMigration', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) } }, { timeoutMs: 60_000 });
        if (!res.success) log.warn({ err: res.message }, 'CancelVirtualMachineMigration failed');
        else void this.o.recorder.record(vmi, 'Normal', 'Migrating', 'Live migration aborted').catch(() => undefined);
        break;
      }
      case 'cleanup':
        if (cur) await this.cleanup(key);
        break;
      case 'none':
        break;
    }
    const next = ms ? sourceStateFromDomain(ms, dm) : undefined;
    if (next) {
      await this.patchState(vmi, next);
      if (next.failed && !ms.failed) {
        log.warn({ reason: next.failureReason }, 'live migration failed');
        void this.o.recorder.record(vmi, 'Warning', 'Migrated', `VirtualMachineInstance migration uid ${ms.migrationUid} failed. reason:${next.failureReason ?? ''}`).catch(() => undefined);
      }
    }
    if (started && entry && !ms.completed && !ms.failed) {
      await this.reportProgress(vmi, entry, ms.migrationUid!);
      requeueAfterMs = Math.min(requeueAfterMs ?? 1000, 1000);
    }
    // A domain that left for the target stays until the target took the VMI over.
    const holdDomain = domain?.Status.Status === LifeCycle.Shutoff && domain.Status.Reason === Reason.Migrated && ms.completed !== true && ms.failed !== true;
    if (holdDomain) requeueAfterMs = 1000;
    return requeueAfterMs !== undefined ? { holdDomain, requeueAfterMs } : { holdDomain };
  }

  /**
   * A direct migration (transport.ts): no proxy; with TLS, this migration's client credentials in
   * the source pod (issued here from the handlers' CA, removed in cleanup).
   */
  private async prepareDirect(key: string, vmi: VirtualMachineInstance, ms: VirtualMachineInstanceMigrationState, shareDir: string, target: { host: string; port: number; blockPort?: number | undefined }, tls: MigrationTls | undefined): Promise<{ ok: true; direct: DirectMigration } | { ok: false; reason: string }> {
    if (tls && !tls.caKey) return { ok: false, reason: 'the target listens for a direct migration with TLS, but this node agent has no CA key to issue its credentials' };
    const tlsDir = migrationTlsDir(shareDir, vmi.metadata!.uid!);
    if (tls?.caKey) {
      const files = issueMigrationCredentials({ ca: { certPem: tls.ca, keyPem: tls.caKey }, endpoint: 'client', migrationUid: ms.migrationUid!, podName: ms.sourcePod ?? vmi.metadata!.name! });
      try {
        await writeMigrationCredentials(tlsDir, files);
      } catch (err) {
        await removeMigrationCredentials(tlsDir);
        throw err;
      }
    }
    // Recorded once in place: a retry after a failure above starts over.
    this.running.set(key, { migrationUid: ms.migrationUid!, tlsDir });
    return { ok: true, direct: { Address: target.host, Port: target.port, TLS: tls !== undefined, ...(tls ? { TLSHostname: migrationTlsHostname(ms.migrationUid!) } : {}), ...(target.blockPort !== undefined ? { BlockPort: target.blockPort } : {}) } };
  }

  /** The relay (proxy.ts): the pod's migration socket (and a block migration's second one) to the target node agent's listeners. */
  private async startRelay(key: string, vmi: VirtualMachineInstance, ms: VirtualMachineInstanceMigrationState, shareDir: string, action: { host: string; port: number; multifdPort?: number; blockPort?: number }, tls: MigrationTls | undefined, log: Logger): Promise<void> {
    const unixPath = migrationSocketPath(shareDir, vmi.metadata!.uid!);
    const proxy = await SourceListener.start({ unixPath, host: action.host, port: action.port, multifdPort: action.multifdPort, tls, log, records: this.o.relayRecords });
    this.running.set(key, { migrationUid: ms.migrationUid!, proxy });
    if (action.blockPort !== undefined) {
      // Block migration: the launcher's disk mirrors connect here (the target's NBD server).
      const blockPath = migrationSocketPath(shareDir, vmi.metadata!.uid!, BLOCK_MIGRATION_PORT);
      try {
        const blockProxy = await SourceListener.start({ unixPath: blockPath, host: action.host, port: action.blockPort, tls, log, records: this.o.relayRecords });
        this.running.set(key, { migrationUid: ms.migrationUid!, proxy, blockProxy });
      } catch (err) {
        await this.cleanup(key);
        throw err;
      }
    }
  }

  /** A migration that failed before it ran: migrationState failed with the reason, and KubeVirt's Warning event. */
  private async failMigration(vmi: VirtualMachineInstance, ms: VirtualMachineInstanceMigrationState, reason: string): Promise<void> {
    await this.patchState(vmi, { ...ms, failed: true, failureReason: reason, endTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
    void this.o.recorder.record(vmi, 'Warning', 'Migrated', `VirtualMachineInstance migration uid ${ms.migrationUid} failed. reason:${reason}`).catch(() => undefined);
  }

  private async patchState(vmi: VirtualMachineInstance, ms: VirtualMachineInstanceMigrationState): Promise<void> {
    try {
      await this.o.client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, [
        { op: 'test', path: '/metadata/uid', value: vmi.metadata?.uid },
        { op: 'test', path: '/status/migrationState/migrationUid', value: ms.migrationUid },
        { op: 'replace', path: '/status/migrationState', value: ms },
      ], 'json');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** The source launcher's MigrateDomainJobInfo → the VMI's progress annotation (for `qvirt migrate --watch`). */
  private readonly lastReport = new Map<string, number>();

  private async reportProgress(vmi: VirtualMachineInstance, entry: LauncherEntry, migrationUid: string): Promise<void> {
    // At most once a second: each report is a VMI update, which comes back here.
    const key = `${vmi.metadata?.namespace}/${vmi.metadata?.name}`;
    if (Date.now() - (this.lastReport.get(key) ?? 0) < 900) return;
    this.lastReport.set(key, Date.now());
    let job: DomainStats['migration'];
    try {
      const r = await entry.client.getDomainStats({ timeoutMs: 2000 });
      if (!r.response?.success || !r.domainStats) return;
      job = parseDomainStats(r.domainStats).migration;
    } catch {
      return;
    }
    if (!job) return;
    const progress: MigrationProgress = {
      migrationUid, total: job.DataTotal ?? 0, transferred: job.DataProcessed ?? 0, remaining: job.DataRemaining ?? 0,
      dirtyRate: job.MemDirtyRate ?? 0, throughput: job.MemoryBps ?? 0, at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    await this.o.client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, { metadata: { annotations: { [MIGRATION_PROGRESS_ANNOTATION]: JSON.stringify(progress) } } }, 'merge').catch(() => undefined);
  }

  private async cleanup(key: string): Promise<void> {
    const cur = this.running.get(key);
    this.running.delete(key);
    this.lastReport.delete(key);
    await cur?.proxy?.close();
    await cur?.blockProxy?.close();
    if (cur?.tlsDir) await removeMigrationCredentials(cur.tlsDir);
  }

  async stop(): Promise<void> {
    for (const k of [...this.running.keys()]) await this.cleanup(k);
  }
}

