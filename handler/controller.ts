// virt-handler's VirtualMachineController: reconciles the VMIs scheduled to this node
// (`kubevirt.io/nodeName=<node>`) against the domains their launchers report. One key per VMI
// (`namespace/name`); each pass reads the VMI and the cached domain, asks handler/decide for the
// action, carries it out over the launcher's Cmd socket, then writes the VMI status
// (handler/status; VMIs have no status subresource, so it is a plain Update).
//
// Container disks: a ContainerDiskSource makes each containerDisk/kernelBoot image visible in the
// launcher pod's `container-disks` emptyDir before Sync — on a cluster KubeVirt's container-disk
// mounts (handler/container-disk/mounter.ts), in the local mode the one the local mode passes in.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Label, SyncEvent, VMIPhase, isFinalVMIPhase } from '../src/api/constants.ts';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { isNotFound } from '../src/kube/client.ts';
import { guestPanicCounter } from './metrics/guest-panic.ts';
import type { EventRecorder } from '../src/kube/events.ts';
import { Informer, keyOf } from '../src/kube/informer.ts';
import { Resources } from '../src/kube/resource.ts';
import { WorkQueue, runWorkers, type ReconcileResult } from '../src/kube/workqueue.ts';
import { forObject, type Logger } from '../src/log/logger.ts';
import { ContainerDiskNotReadyError, type ContainerDiskSource } from './container-disk/source.ts';

/** The VMI's images are not on the node yet (being pulled); the sync is retried. */
class WaitingForImages extends Error {
  override name = 'WaitingForImages';
}
import { ContainerDiskMounter } from './container-disk/mounter.ts';
import { claimDeviceOwnership } from './device-ownership.ts';
import { statusOnlyUpdate } from '../src/kube/status-only-update.ts';
import { decide } from './decide.ts';
import { DomainCache } from './launcher/domain-cache.ts';
import type { Domain } from '../src/api/domain/domain.ts';
import { LifeCycle } from '../src/api/domain/lifecycle.ts';
import { LauncherSocketWatch } from './launcher/socket-watch.ts';
import { LAUNCHER_INIT_TIMEOUT_MS, launcherInit } from './launcher/init.ts';
import { GhostRecords, LauncherNotFoundError, findLauncher, launcherPathsForPod, podUidOfSocket } from './launcher/sockets.ts';
import { phaseFromDomain } from './phase-from-domain.ts';
import { readPodNetworkStatus, setupPodNetwork } from './network/setup.ts';
import { passtRecordToWrite, withPasstRecord } from './network/passt-record.ts';
import { computeStatus, type PodInterfaceStatus } from './status.ts';
import { accessCredentialEvent } from './access-credentials.ts';
import { LiveUpdates } from './hotplug/volumes.ts';
import { volumeStatusEvents } from './hotplug/status.ts';
import { MigrationSource } from './migration/source.ts';
import { MigrationTarget } from './migration/target.ts';
import type { MigrationTls } from './migration/tls.ts';
import { RELAY_RECORDS_DIR, RelayRecords } from './migration/relay-records.ts';
import { vmiReference } from './vmi-reference.ts';

/** The events virt-handler records on a VMI: type, v1.SyncEvent reason, message. */
export const HandlerEvent = {
  Created: ['Normal', SyncEvent.Created, 'VirtualMachineInstance defined.'],
  Started: ['Normal', SyncEvent.Started, 'VirtualMachineInstance started.'],
  ShuttingDown: ['Normal', SyncEvent.ShuttingDown, 'Signaled Graceful Shutdown'],
  Deleted: ['Normal', SyncEvent.Deleted, 'VirtualMachineInstance stopping'],
  Stopped: ['Normal', SyncEvent.Stopped, 'The VirtualMachineInstance was shut down.'],
  Crashed: ['Warning', SyncEvent.Stopped, 'The VirtualMachineInstance crashed.'],
  SyncFailed: ['Warning', SyncEvent.SyncFailed, ''],
} as const;

/**
 * VMI reconcile workers (KubeVirt's threadiness). A VMI's first SyncVirtualMachine does not hold one
 * while the launcher prepares disks and starts QEMU: the worker is free for other VMIs' status, and the
 * Sync's end re-queues the key. Same as `qvirt handler --workers`.
 */
export const DEFAULT_WORKERS = 10;

export interface HandlerControllerOptions {
  /** Where the host's root filesystem is visible to the handler (default `/`): container disks' image layers are found there. */
  readonly hostFs?: string;
  readonly client: KubeClient;
  readonly nodeName: string;
  readonly podsDir: string;
  readonly stateDir: string;
  readonly recorder: EventRecorder;
  readonly log: Logger;
  /**
   * Where container disks come from, when not from their containers (the local mode's image store);
   * it serves the migration target too. Default: bind mounts from the container-disk containers.
   */
  readonly containerDiskSource?: ContainerDiskSource | undefined;
  /**
   * The local mode: how long a VMI waits, silently, for an image the pod runner is still pulling
   * before the sync fails (default one minute: virt-handler's ContainerDisksReady waits as long).
   */
  readonly containerDiskReadyTimeoutMs?: number;
  readonly workers?: number;
  readonly watchdogTimeoutMs?: number;
  /** How long a launcher may take to create its command socket before it counts as unresponsive (default KubeVirt's 3 min). */
  readonly launcherInitTimeoutMs?: number;
  readonly resyncMs?: number;
  /** Live migration: this node's migration address and the handlers' TLS (used unless a migration carries disableTLS). */
  readonly migration?: { readonly address: string; readonly tls: MigrationTls | undefined } | undefined;
  /** Called at each milestone of a VMI's start (the benchmark's per-step breakdown). */
  readonly onStartStep?: (key: string, step: StartStep) => void;
}

/** Milestones of Scheduled → Running as the handler lives them. */
export type StartStep = 'informer' | 'launcherFound' | 'syncSent' | 'syncDone' | 'domainRunning' | 'statusRunning';

export class HandlerController {
  readonly o: HandlerControllerOptions;
  readonly informer: Informer<VirtualMachineInstance>;
  readonly cache: DomainCache;
  readonly ghosts: GhostRecords;
  /** Hotplug volumes and live updates of running domains. */
  readonly live: LiveUpdates;
  private readonly queue = new WorkQueue<string>({ name: 'virt-handler-vm' });
  private workers?: Promise<void>;
  /** key → when the first ShutdownVirtualMachine went out (ms). */
  private readonly shutdownStarted = new Map<string, number>();
  /** key → VMI uid already synced (the domain was defined by this handler or found running). */
  private readonly synced = new Map<string, string>();
  /**
   * key → a VMI's first SyncVirtualMachine, sent and not yet consumed by a pass: while it is out the
   * key's passes write status only; its end (success or the failure a pass then reports) re-queues it.
   * With 40 VMs starting, QEMU's start took seconds per VMI, and Syncs holding all workers kept
   * Running VMIs' status waiting (the density bench's 'toRunning').
   */
  private readonly starting = new Map<string, { readonly uid: string; finished: boolean; failure?: unknown }>();
  private readonly startsInFlight = new Set<Promise<void>>();
  private stopping = false;
  private readonly syncErrors = new Map<string, string>();
  /** The local mode: since when each VMI (by key, with its uid) has waited for images still being pulled. */
  private readonly imageWaits = new Map<string, { uid: string; since: number }>();
  /** Starting launchers' sockets, seen the moment they appear (not at the next 1 s requeue). */
  private readonly socketWatch = new LauncherSocketWatch((key) => this.queue.add(key));
  /** key → since when the handler has waited for a launcher's command socket (KubeVirt's NotInitializedSince). */
  private readonly notInitialized = new Map<string, { uid: string; sinceMs: number }>();
  /** key → the pod network set up for the VMI's interfaces (status.interfaces reports the pod's IPs). */
  private readonly podNetworks = new Map<string, ReadonlyMap<string, PodInterfaceStatus>>();
  private readonly migrationSource: MigrationSource | undefined;
  readonly migrationTarget: MigrationTarget | undefined;
  /** The migration relays' processes on disk: a restarted agent ends those its predecessor left. */
  private readonly relayRecords: RelayRecords | undefined;
  /** Where the VMIs' container disks come from (on a real node: bind mounts from their containers). */
  readonly containerDisks: ContainerDiskSource;

  constructor(o: HandlerControllerOptions) {
    this.o = o;
    this.ghosts = new GhostRecords(o.stateDir);
    this.live = new LiveUpdates({ client: o.client, podsDir: o.podsDir, stateDir: o.stateDir, log: o.log, ...(o.hostFs ? { hostFs: o.hostFs } : {}) });
    this.containerDisks = o.containerDiskSource ?? new ContainerDiskMounter({ stateDir: o.stateDir, log: o.log, ...(o.hostFs ? { hostFs: o.hostFs } : {}) });
    if (o.migration) {
      this.relayRecords = new RelayRecords(join(o.stateDir, RELAY_RECORDS_DIR));
      const m = { client: o.client, nodeName: o.nodeName, stateDir: o.stateDir, recorder: o.recorder, log: o.log, tls: o.migration.tls, relayRecords: this.relayRecords };
      this.migrationSource = new MigrationSource(m);
      this.migrationTarget = new MigrationTarget({ ...m, address: o.migration.address, podsDir: o.podsDir, containerDisks: o.containerDiskSource });
    }
    this.informer = new Informer<VirtualMachineInstance>(o.client, Resources.virtualMachineInstances, { labelSelector: `${Label.NodeName}=${o.nodeName}`, log: o.log });
    this.cache = new DomainCache({
      ghosts: this.ghosts,
      stateDir: o.stateDir,
      log: o.log,
      onChange: (key) => {
        guestPanicCounter().observe(this.cache.get(key)?.domain);
        if (this.o.onStartStep && this.cache.get(key)?.domain?.Status.Status === LifeCycle.Running && this.informer.get(key)?.status?.phase === VMIPhase.Scheduled) this.o.onStartStep(key, 'domainRunning');
        // A domain that comes and goes while its sync keeps failing must not undo the backoff.
        this.queue.addUnlessBackingOff(key);
      },
      onK8sEvent: (key, ev) => {
        const vmi = this.informer.get(key);
        if (vmi) void o.recorder.record(vmi, ev.type === 'Warning' ? 'Warning' : 'Normal', ev.reason, ev.message);
      },
      ...(o.watchdogTimeoutMs !== undefined ? { watchdogTimeoutMs: o.watchdogTimeoutMs } : {}),
      ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
    });
  }

  async start(): Promise<void> {
    await this.relayRecords?.reapOrphans(this.o.log);
    // A restarted handler first re-adopts every launcher its ghost records name.
    const { records, broken } = await this.ghosts.load();
    if (broken.length) this.o.log.warn({ broken }, 'unreadable ghost records skipped');
    for (const r of records) {
      const podUid = podUidOfSocket(this.o.podsDir, r.socketFile);
      if (!podUid) continue;
      const paths = launcherPathsForPod(this.o.podsDir, podUid, r.uid);
      await this.cache.attach(`${r.namespace}/${r.name}`, r.uid, paths);
      this.synced.set(`${r.namespace}/${r.name}`, r.uid);
    }
    await this.cleanupMounts(new Set(records.filter((r) => podUidOfSocket(this.o.podsDir, r.socketFile)).map((r) => r.uid)));
    const enqueue = (vmi: VirtualMachineInstance) => this.queue.add(keyOf(vmi));
    // A status-only update (the handler's own write of a failing sync's condition, whose message
    // changes with QEMU's timestamps) must not undo the key's backoff; a spec, label or deletion
    // change is reconciled at once.
    const onUpdate = (o: VirtualMachineInstance, n: VirtualMachineInstance) => (statusOnlyUpdate(o, n) ? this.queue.addUnlessBackingOff(keyOf(n)) : enqueue(n));
    this.informer.on('add', (vmi) => { this.o.onStartStep?.(keyOf(vmi), 'informer'); enqueue(vmi); }).on('update', onUpdate).on('delete', enqueue);
    await this.informer.start();
    await this.informer.hasSynced;
    this.cache.start();
    for (const k of this.cache.keys()) this.queue.add(k);
    this.workers = runWorkers(this.queue, this.o.workers ?? DEFAULT_WORKERS, (key) => this.execute(key), (key, err, retries) => {
      this.o.log.warn({ key, retries, err: err instanceof Error ? err.message : String(err) }, 'VMI sync failed; retrying');
    });
    await this.migrationTarget?.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.socketWatch.closeAll();
    await this.migrationTarget?.stop();
    await this.migrationSource?.stop();
    this.queue.shutDown();
    this.informer.stop();
    await this.workers;
    await Promise.all(this.startsInFlight);
    await this.cache.stop();
  }

  /** On start: unmount the container disks and hotplugged volumes of every recorded VMI whose launcher was not re-adopted. */
  private async cleanupMounts(adopted: ReadonlySet<string>): Promise<void> {
    const uids = new Set([...(await this.containerDisks.load()), ...(await this.live.attached.load())].map((r) => r.uid));
    for (const uid of uids) {
      if (adopted.has(uid)) continue;
      await this.releaseMounts(uid, this.o.log.child({ uid })).catch((err: unknown) => this.o.log.warn({ uid, err: (err as Error).message }, 'unmount of a gone VMI\'s disks failed'));
    }
  }

  /** KubeVirt's unmount on cleanup: the VMI's container disks and hotplugged volumes leave the node. */
  private async releaseMounts(uid: string, log: Logger): Promise<void> {
    await this.containerDisks.unmount(uid, log);
    await this.live.attached.unmount(uid, log);
  }

  /** The launcher client of a VMI on this node, for the REST endpoints. */
  launcherOf(namespace: string, name: string) {
    return this.cache.get(`${namespace}/${name}`);
  }

  private async execute(key: string): Promise<ReconcileResult | void> {
    const vmi = this.informer.get(key);
    const uid = vmi?.metadata?.uid ?? '';
    let entry = this.cache.get(key);
    // A launcher of an older VMI with the same name: forget it, start over.
    if (vmi && entry && entry.uid !== uid) {
      await this.releaseMounts(entry.uid, log0(this.o.log, key));
      await this.cache.detach(key);
      this.synced.delete(key);
      this.starting.delete(key);
      this.live.forget(key);
      entry = undefined;
    }
    const wantsLauncher = vmi !== undefined && !isFinalVMIPhase(vmi.status?.phase) && !vmi.metadata?.deletionTimestamp;
    if (!wantsLauncher) { this.socketWatch.unwatch(key); this.notInitialized.delete(key); }
    // A final VMI whose launcher is gone: its container disks and hotplugged volumes are unmounted (KubeVirt's Unmount on cleanup).
    if (!wantsLauncher && !entry && (this.containerDisks.has(uid) || this.live.attached.has(uid))) await this.releaseMounts(uid, log0(this.o.log, key));
    // The watchdog's marker beside the socket, or no socket at all for a Running VMI: that launcher is unresponsive.
    let markedUnresponsive = false;
    if (vmi && !entry && wantsLauncher) {
      try {
        const paths = findLauncher(vmi, this.o.nodeName, this.o.podsDir);
        // A Running VMI whose launcher socket is gone (the pod's directories removed) lost its
        // launcher: KubeVirt's IsSocketUnresponsive says the same for a missing socket.
        if (existsSync(paths.unresponsiveMarker) || (vmi.status?.phase === VMIPhase.Running && !existsSync(paths.socket))) {
          markedUnresponsive = true;
        } else if (existsSync(paths.socket)) {
          this.socketWatch.unwatch(key);
          this.notInitialized.delete(key);
          entry = await this.cache.attach(key, uid, paths);
          this.o.onStartStep?.(key, 'launcherFound');
        } else {
          // A launcher that never created its socket (killed while starting) fails the VMI after the init timeout.
          let waiting = this.notInitialized.get(key);
          if (waiting?.uid !== uid) this.notInitialized.set(key, waiting = { uid, sinceMs: Date.now() });
          const init = launcherInit({ socketExists: false, notInitializedSinceMs: waiting.sinceMs, nowMs: Date.now(), timeoutMs: this.o.launcherInitTimeoutMs ?? LAUNCHER_INIT_TIMEOUT_MS });
          if (init === 'unresponsive') {
            markedUnresponsive = true;
            forObject(this.o.log, { namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid }).warn({ socket: paths.socket, waitedMs: Date.now() - waiting.sinceMs }, 'launcher never created its command socket: unresponsive');
          } else {
            this.socketWatch.watch(key, paths.socket, this.o.podsDir);
          }
        }
      } catch (err) {
        if (!(err instanceof LauncherNotFoundError)) throw err;
      }
    }
    let domain: Domain | undefined = entry?.domain;
    // A launcher whose socket is gone has exited: its domain is gone too (as refresh() records it),
    // and the launcher counts as unresponsive (KubeVirt's IsSocketUnresponsive).
    const socketGone = entry !== undefined && !existsSync(entry.paths.socket);
    const launcherState = entry ? (socketGone ? 'unresponsive' : this.cache.launcherState(key)) : markedUnresponsive ? 'unresponsive' : 'initializing';
    const domainGone = domain?.ObjectMeta.deletionTimestamp !== undefined || socketGone;
    // The phase still comes from a gone domain's last state when that state was final (Shutoff, Crashed).
    const phaseDomain = domain && (!domainGone || domain.Status.Status === LifeCycle.Shutoff || domain.Status.Status === LifeCycle.Crashed) ? domain : undefined;
    if (domainGone) domain = undefined;
    const log = vmi ? forObject(this.o.log, { namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid }) : this.o.log.child({ key });

    const phase = vmi?.status?.phase ?? '';
    const decision = phaseFromDomain(
      phaseDomain,
      { phase, terminationGracePeriodSeconds: vmi?.spec.terminationGracePeriodSeconds },
      launcherState,
    );
    const scheduledAt = vmi?.status?.phaseTransitionTimestamps?.find((t) => t.phase === VMIPhase.Scheduled)?.phaseTransitionTimestamp;
    let action = domainGone && entry
      ? { action: 'delete' as const }
      : decide(
        vmi ? { phase, deleting: !!vmi.metadata?.deletionTimestamp, scheduledAtMs: scheduledAt ? Date.parse(scheduledAt) : undefined } : undefined,
        domain,
        vmi ? decision.phase : undefined,
        Date.now(),
      );
    let requeueAfterMs: number | undefined = decision.requeueAfterMs;
    let syncFailure: unknown;
    if (this.migrationSource) {
      const mig = await this.migrationSource.reconcile(key, vmi, entry, domain, log);
      // A domain that migrated away stays until the target has the VMI.
      if (mig.holdDomain && action.action === 'delete') action = { action: 'none' };
      if (mig.requeueAfterMs !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, mig.requeueAfterMs);
    }

    switch (action.action) {
      case 'shutdown': {
        if (!entry) break;
        const grace = vmi?.spec.terminationGracePeriodSeconds ?? domain?.Spec.Metadata.KubeVirt.GracePeriod?.DeletionGracePeriodSeconds ?? 30;
        const started = this.shutdownStarted.get(key);
        const now = Date.now();
        if (grace <= 0 || (started !== undefined && now - started >= grace * 1000)) {
          await entry.client.killVirtualMachine(vmi ?? vmiReference(key, entry.uid));
          if (vmi) this.event(vmi, HandlerEvent.Deleted);
          log.info({ grace }, 'grace period over: killed the domain');
          requeueAfterMs = 1000;
        } else {
          await entry.client.shutdownVirtualMachine(vmi ?? vmiReference(key, entry.uid));
          if (started === undefined) {
            this.shutdownStarted.set(key, now);
            if (vmi) this.event(vmi, HandlerEvent.ShuttingDown);
            log.info({ grace }, 'signaled graceful shutdown');
          }
          const elapsed = now - (this.shutdownStarted.get(key) ?? now);
          requeueAfterMs = Math.max(100, Math.min(5000, grace * 1000 - elapsed));
        }
        break;
      }
      case 'forceShutdown':
        if (entry) await entry.client.killVirtualMachine(vmi);
        break;
      case 'delete':
        if (entry) {
          if (!domainGone) await entry.client.deleteVirtualMachine(vmi ?? vmiReference(key, entry.uid)).catch(() => undefined);
          // Keep the client until the launcher reports the domain gone, so that event is seen.
          if (domainGone || !entry.domain || entry.unresponsive || !existsSync(entry.paths.socket)) {
            await this.releaseMounts(entry.uid, log);
            await this.cache.detach(key);
            this.synced.delete(key);
            this.starting.delete(key);
            this.imageWaits.delete(key);
            this.live.forget(key);
            this.shutdownStarted.delete(key);
            this.podNetworks.delete(key);
          } else {
            requeueAfterMs = 1000;
          }
        }
        break;
      case 'update': {
        const start = this.starting.get(key);
        if (start?.uid === uid) {
          // The first Sync is out: status only until it ends (its end queues this key again).
          if (!start.finished) break;
          this.starting.delete(key);
          if (start.failure !== undefined) { syncFailure = start.failure; break; }
        }
        if (vmi && entry && this.synced.get(key) !== uid && !domain) syncFailure = await this.syncDomain(key, vmi, entry.paths.containerDisksDir, log).then(() => undefined, (err: unknown) => err);
        // The local mode: an image the pod runner is still pulling is waited for (as virt-handler
        // waits for container disks to be ready), not a failed sync with growing backoff.
        if (syncFailure instanceof WaitingForImages) { log.info({ reason: syncFailure.message }, 'waiting for the container disk images'); syncFailure = undefined; requeueAfterMs = 1000; }
        else if (vmi && entry && domain) requeueAfterMs = (await this.syncLive(key, vmi, entry, domain, log)) ?? requeueAfterMs;
        else if (vmi && !entry) requeueAfterMs = 1000;
        break;
      }
      case 'requeue':
        requeueAfterMs = action.afterMs;
        break;
      case 'none':
        break;
    }

    // A domain this handler did not start (after a restart or a migration): learn its pod network.
    if (vmi && entry && domain && !this.podNetworks.has(key)) {
      const net = await readPodNetworkStatus(vmi, entry.paths.podDir, dirname(entry.paths.privateVmiDir)).catch(() => undefined);
      if (net) this.podNetworks.set(key, net);
    }
    if (vmi && !isFinalVMIPhase(phase)) await this.updateStatus(vmi, domain, decision.phase, log);
    // A failed sync is retried with backoff, after its Synchronized=False condition is written.
    if (syncFailure !== undefined) throw syncFailure;
    // A start still out: its end queues the key, and only a start that succeeded ends the backoff.
    return { requeueAfterMs, keepBackoff: this.starting.get(key)?.finished === false };
  }

  /** Prepares the node side and defines + starts the domain; any failure becomes the VMI's Synchronized=False. */
  private async syncDomain(key: string, vmi: VirtualMachineInstance, containerDisksDir: string, log: Logger): Promise<void> {
    try {
      await this.defineDomain(key, vmi, containerDisksDir, log);
      this.imageWaits.delete(key);
    } catch (err) {
      if (err instanceof ContainerDiskNotReadyError) {
        // Silently for a while, as virt-handler's ContainerDisksReady ("still not ready after one minute").
        const uid = vmi.metadata?.uid ?? '';
        const w = this.imageWaits.get(key);
        const since = w?.uid === uid ? w.since : Date.now();
        this.imageWaits.set(key, { uid, since });
        if (Date.now() - since < (this.o.containerDiskReadyTimeoutMs ?? 60_000)) throw new WaitingForImages(err.message);
      }
      this.recordSyncFailure(key, vmi, err);
      throw err;
    }
  }

  /** A failed sync: the VMI's SyncFailed event (once per message) and its Synchronized=False condition's message. */
  private recordSyncFailure(key: string, vmi: VirtualMachineInstance, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (this.syncErrors.get(key) !== message) this.event(vmi, HandlerEvent.SyncFailed, message);
    this.syncErrors.set(key, message);
  }

  private async defineDomain(key: string, vmi: VirtualMachineInstance, containerDisksDir: string, log: Logger): Promise<void> {
    const entry = this.cache.get(key)!;
    await this.containerDisks.mount(vmi, containerDisksDir, log);
    // Privileged network setup in the launcher pod's namespace, before QEMU starts (KubeVirt's netpod).
    const net = await setupPodNetwork({ vmi, podDir: entry.paths.podDir, privateDir: dirname(entry.paths.privateVmiDir), log });
    if (net) this.podNetworks.set(key, net.interfaces);
    await claimDeviceOwnership(entry.paths.podDir, vmi.status?.runtimeUser ?? 0, log);
    this.o.onStartStep?.(key, 'syncSent');
    // Sent without holding this worker: the launcher starts QEMU meanwhile (see `starting`).
    const uid = vmi.metadata!.uid!;
    const start: { readonly uid: string; finished: boolean; failure?: unknown } = { uid, finished: false };
    this.starting.set(key, start);
    const done = (async () => {
      const res = await entry.client.syncVirtualMachine(vmi, undefined, { timeoutMs: 120_000 });
      this.o.onStartStep?.(key, 'syncDone');
      if (!res.success) throw new Error(`SyncVirtualMachine: ${res.message}`);
      // The VMI went (or was replaced) while its Sync was out: nothing of it to record.
      if (this.starting.get(key) !== start) return;
      this.syncErrors.delete(key);
      this.synced.set(key, uid);
      // The launcher has this VMI: the live path has nothing to re-send until it changes.
      this.live.markSynced(key, vmi);
      this.event(vmi, HandlerEvent.Created);
      log.info('domain defined and started');
      await this.cache.refresh(entry);
    })().catch((err: unknown) => {
      start.failure = err;
      if (this.starting.get(key) === start) this.recordSyncFailure(key, vmi, err);
    }).finally(() => {
      start.finished = true;
      this.startsInFlight.delete(done);
      if (!this.stopping) this.queue.add(key);
    });
    this.startsInFlight.add(done);
  }

  /**
   * A running domain: mount hotplug claims, ask the launcher for a memory dump in progress, and SyncVirtualMachine again when the live-relevant part
   * of the VMI (volumes, disks, interfaces, CPU, memory) or the mounts changed. Returns a requeue
   * delay after a failure, or while a hotplug volume waits for its attachment pod.
   */
  private async syncLive(key: string, vmi: VirtualMachineInstance, entry: NonNullable<ReturnType<DomainCache['get']>>, domain: Domain, log: Logger): Promise<number | undefined> {
    const mounts = await this.live.reconcileMounts(key, vmi, entry.paths.podUid, domain, log);
    const dumps = await this.live.requestMemoryDumps(vmi, (path) => entry.client.virtualMachineMemoryDump(vmi, path), log)
      .catch((err: unknown) => { log.warn({ err: (err as Error).message }, 'memory dump request failed'); return 5000; });
    const again = mounts === undefined ? dumps : dumps === undefined ? mounts : Math.min(mounts, dumps);
    if (!this.live.needsSync(key, vmi)) return again;
    const res = await entry.client.syncVirtualMachine(this.live.vmiForLauncher(key, vmi, domain), undefined, { timeoutMs: 60_000 });
    if (!res.success) {
      if (this.syncErrors.get(key) !== res.message) this.event(vmi, HandlerEvent.SyncFailed, res.message);
      this.syncErrors.set(key, res.message);
      log.warn({ err: res.message }, 'live SyncVirtualMachine failed');
      return 5000;
    }
    this.syncErrors.delete(key);
    this.live.markSynced(key, vmi);
    return again;
  }

  private async updateStatus(vmi: VirtualMachineInstance, domain: Domain | undefined, phase: string, log: Logger): Promise<void> {
    const key = keyOf(vmi);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const status = this.live.applyStatus(key, computeStatus({ vmi, domain, phase, syncError: this.syncErrors.get(key), podNetwork: this.podNetworks.get(key), now }), vmi, domain, now);
    // A passt guest's first-pod addresses go with the status, so the VMI has them before it is Running.
    const passtRecord = passtRecordToWrite(vmi, this.podNetworks.get(key));
    if (!passtRecord && JSON.stringify(status) === JSON.stringify(vmi.status ?? {})) return;
    try {
      await this.o.client.update(Resources.virtualMachineInstances, { ...vmi, ...(passtRecord ? { metadata: withPasstRecord(vmi, passtRecord) } : {}), status });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    for (const ev of volumeStatusEvents(vmi.status?.volumeStatus, status.volumeStatus)) this.event(vmi, ['Normal', ev.reason, ev.message]);
    const credentials = accessCredentialEvent(vmi.status?.conditions, status.conditions);
    if (credentials) this.event(vmi, [credentials.type, credentials.reason, credentials.message]);
    const old = vmi.status?.phase;
    if (old !== phase) {
      log.info({ from: old, to: phase }, 'VMI phase');
      if (phase === VMIPhase.Running) { this.o.onStartStep?.(key, 'statusRunning'); this.event(vmi, HandlerEvent.Started); }
      if (phase === VMIPhase.Succeeded) this.event(vmi, HandlerEvent.Stopped);
      if (phase === VMIPhase.Failed) this.event(vmi, HandlerEvent.Crashed);
    }
  }

  private event(vmi: VirtualMachineInstance, ev: readonly [string, string, string], message?: string): void {
    void this.o.recorder.record(vmi, ev[0] as 'Normal' | 'Warning', ev[1], message ?? ev[2]).catch(() => undefined);
  }
}

/** The logger of a key before the VMI's own logger exists. */
function log0(log: Logger, key: string): Logger {
  const [namespace, name] = key.split('/');
  return log.child({ namespace, name });
}
