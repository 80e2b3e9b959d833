// The target node's part of a live migration (virt-handler's migration-target.go): VMIs labelled
// `kubevirt.io/migrationTargetNodeName=<this node>` are prepared like a start (container disks into
// the target pod), the target launcher is told to SyncMigrationTarget (QEMU waits with -incoming on
// the pod's migration socket), a TLS listener on this node's migration address forwards to it and
// its address and port are published in status.migrationState. The target launcher's domain is
// watched through its own domain cache; once it runs and reports the migration's end, the VMI
// moves here (status.nodeName, the kubevirt.io/nodeName label), FinalizeVirtualMachineMigration,
// and `completed`. Then the node's main controller adopts the launcher. A failed migration's
// target domain is deleted so the target launcher exits.
// The direct transport (transport.ts, chosen here before SyncMigrationTarget): no listener of the
// node agent; the target QEMU listens on the target pod's address itself with QEMU's TLS on
// credentials issued here for this migration (direct-credentials.ts), and that address and port are
// published under qvirt's key TARGET_QEMU_MIGRATION_PORT; the credentials go when the migration ends.
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { Label } from '../../src/api/constants.ts';
import { migrationSocketPath, migrationTlsDir, BLOCK_MIGRATION_PORT, DIRECT_MIGRATION_PORT, DIRECT_MIGRATION_TARGET_ANNOTATION, MULTIFD_MIGRATION_PORT, TARGET_QEMU_BLOCK_MIGRATION_PORT, TARGET_QEMU_MIGRATION_PORT, type DirectMigration, type MigrationTransportSetting } from '../../src/api/migration.ts';
import { isBlockMigration } from '../../src/api/block-migration.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { isNotFound, type KubeObject } from '../../src/kube/client.ts';
import type { EventRecorder } from '../../src/kube/events.ts';
import { Informer, keyOf } from '../../src/kube/informer.ts';
import { Resources } from '../../src/kube/resource.ts';
import { WorkQueue, runWorkers } from '../../src/kube/workqueue.ts';
import { forObject, type Logger } from '../../src/log/logger.ts';
import type { ContainerDiskSource } from '../container-disk/source.ts';
import { DomainCache } from '../launcher/domain-cache.ts';
import { setupPodNetwork } from '../network/setup.ts';
import { GhostRecords, LauncherNotFoundError, findLauncher } from '../launcher/sockets.ts';
import { TargetListener } from './proxy.ts';
import { completedOnTarget, failureReasonWithTarget, migrationFinished, targetStep } from './state.ts';
import type { MigrationTls } from './tls.ts';
import { relayTlsFor } from './relay-tls.ts';
import type { RelayRecords } from './relay-records.ts';
import { chooseMigrationTransport, parseTransportSetting, TRANSPORT_ENV } from './transport.ts';
import { issueMigrationCredentials, migrationClientIdentity, removeMigrationCredentials, writeMigrationCredentials } from './direct-credentials.ts';
import { freePort } from './free-port.ts';
import { LifeCycle, Reason } from '../../src/api/domain/lifecycle.ts';

export interface MigrationTargetOptions {
  readonly client: KubeClient;
  readonly nodeName: string;
  /** The IP this node's migration listeners bind to and advertise. */
  readonly address: string;
  readonly podsDir: string;
  readonly stateDir: string;
  readonly recorder: EventRecorder;
  readonly log: Logger;
  /** The handlers' TLS (undefined: none; then only migrations with disableTLS can go; relay-tls.ts). */
  readonly tls: MigrationTls | undefined;
  /**
   * Where the target pod's container disks come from (the local mode's image store). Without one
   * the target pod's container disks are not mounted (KubeVirt's migration target mounts them).
   */
  readonly containerDisks?: ContainerDiskSource | undefined;
  /** Where the relay processes are recorded (a restarted node agent ends those left behind). */
  readonly relayRecords?: RelayRecords | undefined;
  /** The transport setting (transport.ts; default QVIRT_MIGRATION_TRANSPORT, else `auto`). */
  readonly transport?: MigrationTransportSetting | undefined;
}

/** What the target reads of its target pod: its addresses (transport.ts). */
interface TargetPod extends KubeObject {
  status?: { podIP?: string; hostIP?: string };
}

export class MigrationTargetError extends Error {
  override readonly name = 'MigrationTargetError';
}

const nowTs = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export class MigrationTarget {
  private readonly o: MigrationTargetOptions;
  readonly informer: Informer<VirtualMachineInstance>;
  private readonly cache: DomainCache;
  private readonly queue = new WorkQueue<string>();
  private workers?: Promise<void>;
  /** key → migration UID SyncMigrationTarget succeeded for. */
  private readonly synced = new Map<string, string>();
  /** key → the migration UID whose failure reason got the target's (failureReasonWithTarget). */
  private readonly targetReasonAdded = new Map<string, string>();
  /** key → the migration's listener, and a block migration's second one (the disks' NBD stream). */
  private readonly listeners = new Map<string, { migrationUid: string; listener: TargetListener; blockListener?: TargetListener | undefined }>();
  /** key → a direct migration's listening QEMU (its address, port, TLS) and its credentials' directory. */
  private readonly direct = new Map<string, { migrationUid: string; migration: DirectMigration; tlsDir: string }>();
  private readonly transport: MigrationTransportSetting;
  /**
   * key → the migration UID whose launcher this side handed to the node's main controller. Until the
   * informer shows the VMI it patched, a stale view (the migration not yet completed) must not attach
   * again: that re-synced a running guest's launcher and, on the cleanup after, removed the notify
   * socket the main controller had just made — the guest's domain events were lost for good.
   */
  private readonly handedOver = new Map<string, string>();

  constructor(o: MigrationTargetOptions) {
    this.o = o;
    this.transport = o.transport ?? parseTransportSetting(process.env[TRANSPORT_ENV]) ?? 'auto';
    this.informer = new Informer<VirtualMachineInstance>(o.client, Resources.virtualMachineInstances, { labelSelector: `${Label.MigrationTargetNodeName}=${o.nodeName}`, log: o.log });
    this.cache = new DomainCache({
      ghosts: new GhostRecords(join(o.stateDir, 'migration-target')),
      stateDir: o.stateDir,
      log: o.log,
      onChange: (key) => this.queue.add(key),
      watchdogTimeoutMs: 30_000,
    });
  }

  async start(): Promise<void> {
    const enqueue = (vmi: VirtualMachineInstance) => this.queue.add(keyOf(vmi));
    this.informer.on('add', enqueue).on('update', (_o, n) => enqueue(n)).on('delete', enqueue);
    await this.informer.start();
    await this.informer.hasSynced;
    this.cache.start();
    this.workers = runWorkers(this.queue, 2, (key) => this.execute(key), (key, err, retries) => {
      this.o.log.warn({ key, retries, err: err instanceof Error ? err.message : String(err) }, 'migration target sync failed; retrying');
    });
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    this.informer.stop();
    await this.workers;
    for (const k of new Set([...this.listeners.keys(), ...this.direct.keys()])) await this.closeListener(k);
    await this.cache.stop();
  }

  private async closeListener(key: string): Promise<void> {
    const l = this.listeners.get(key);
    this.listeners.delete(key);
    await l?.listener.close();
    await l?.blockListener?.close();
    const d = this.direct.get(key);
    this.direct.delete(key);
    if (d) await removeMigrationCredentials(d.tlsDir);
  }

  private async release(key: string): Promise<void> {
    await this.closeListener(key);
    await this.cache.detach(key);
    this.synced.delete(key);
    this.targetReasonAdded.delete(key);
  }

  private async execute(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const vmi = this.informer.get(key);
    const ms = vmi?.status?.migrationState;
    if (this.handedOver.has(key) && (this.handedOver.get(key) !== ms?.migrationUid || migrationFinished(ms))) this.handedOver.delete(key);
    if (ms?.migrationUid && this.handedOver.get(key) === ms.migrationUid) return { requeueAfterMs: 500 };
    if (!vmi || !ms?.migrationUid || ms.targetNode !== this.o.nodeName) {
      await this.release(key);
      return;
    }
    const log = forObject(this.o.log, { namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid });
    const uid = vmi.metadata?.uid ?? '';
    let entry = this.cache.get(key);
    if (entry && entry.uid !== uid) { await this.release(key); entry = undefined; }
    if (!entry && !ms.completed && !ms.failed) {
      let paths;
      try {
        paths = findLauncher(vmi, this.o.nodeName, this.o.podsDir);
      } catch (err) {
        if (err instanceof LauncherNotFoundError) return { requeueAfterMs: 1000 };
        throw err;
      }
      if (!existsSync(paths.socket)) return { requeueAfterMs: 500 };
      entry = await this.cache.attach(key, uid, paths);
    }
    const direct = this.direct.get(key)?.migrationUid === ms.migrationUid ? this.direct.get(key) : undefined;
    const listening = this.listeners.get(key)?.migrationUid === ms.migrationUid || direct !== undefined;
    const d = entry?.domain && !entry.domain.ObjectMeta.deletionTimestamp ? entry.domain : undefined;
    const step = targetStep(vmi, this.o.nodeName, {
      synced: this.synced.get(key) === ms.migrationUid,
      listening,
      domain: d ? { status: d.Status.Status, migrationEnd: Boolean(d.Spec.Metadata.KubeVirt.Migration?.EndTimestamp) } : undefined,
    });
    switch (step.kind) {
      case 'wait':
        return { requeueAfterMs: 2000 };
      case 'sync': {
        if (!entry) return { requeueAfterMs: 1000 };
        await this.o.containerDisks?.mount(vmi, entry.paths.containerDisksDir, log);
        // The same pod network setup as on the source (idempotent): the guest keeps its address.
        await setupPodNetwork({ vmi, podDir: entry.paths.podDir, privateDir: dirname(entry.paths.privateVmiDir), log });
        const planned = await this.planDirect(key, vmi, dirname(entry.paths.notifySocket), log);
        const sent = planned ? { ...vmi, metadata: { ...vmi.metadata, annotations: { ...(vmi.metadata?.annotations ?? {}), [DIRECT_MIGRATION_TARGET_ANNOTATION]: JSON.stringify(planned.migration) } } } : vmi;
        const res = await entry.client.call('SyncMigrationTarget', { vmi: { vmiJson: Buffer.from(JSON.stringify(sent)) }, options: null }, { timeoutMs: 120_000 });
        if (!res.success) {
          if (planned) await removeMigrationCredentials(planned.tlsDir);
          void this.o.recorder.record(vmi, 'Warning', 'SyncFailed', res.message).catch(() => undefined);
          throw new Error(`SyncMigrationTarget: ${res.message}`);
        }
        this.synced.set(key, ms.migrationUid);
        if (planned) this.direct.set(key, { migrationUid: ms.migrationUid, ...planned });
        log.info(planned ? { address: planned.migration.Address, port: planned.migration.Port, tls: planned.migration.TLS } : {}, 'migration target prepared: QEMU waits for the incoming migration');
        this.queue.add(key);
        return;
      }
      case 'listen': {
        if (direct) {
          // The target QEMU listens itself: publish its address and port under qvirt's key.
          const ports: Record<string, number> = { [String(direct.migration.Port)]: TARGET_QEMU_MIGRATION_PORT };
          if (direct.migration.BlockPort !== undefined) ports[String(direct.migration.BlockPort)] = TARGET_QEMU_BLOCK_MIGRATION_PORT;
          await this.patch(vmi, [
            { op: 'add', path: '/status/migrationState/targetNodeAddress', value: direct.migration.Address },
            { op: 'add', path: '/status/migrationState/targetDirectMigrationNodePorts', value: ports },
          ]);
          void this.o.recorder.record(vmi, 'Normal', 'PreparingTarget', `Migration Target is listening at ${direct.migration.Address}, on ports: ${direct.migration.Port} (direct, ${direct.migration.TLS ? 'QEMU TLS' : 'no TLS'})`).catch(() => undefined);
          return { requeueAfterMs: 2000 };
        }
        if (!entry) return { requeueAfterMs: 1000 };
        // Idempotent: a VMI from the cache that does not show the address yet (the patch below has
        // not come back through the informer) must not replace the listener the source may already
        // be dialing — only publish its address again.
        let cur = listening ? this.listeners.get(key) : undefined;
        const fresh = !cur;
        if (!cur) {
          await this.closeListener(key);
          // TLS or not: what the migration carries (the source reads the same value, relay-tls.ts).
          const relayTls = relayTlsFor(ms, this.o.tls);
          if (!relayTls.ok) throw new MigrationTargetError(`migration target for ${key}: ${relayTls.reason}`);
          const tls = relayTls.tls;
          const shareDir = dirname(entry.paths.notifySocket);
          const listener = await TargetListener.start({ address: this.o.address, unixPath: migrationSocketPath(shareDir, uid), tls, log, records: this.o.relayRecords });
          cur = { migrationUid: ms.migrationUid, listener };
          this.listeners.set(key, cur);
          if (isBlockMigration(vmi)) {
            // Block migration: a second listener for the disks, to the target launcher's NBD server.
            try {
              cur.blockListener = await TargetListener.start({ address: this.o.address, unixPath: migrationSocketPath(shareDir, uid, BLOCK_MIGRATION_PORT), tls, log, channels: 'any-order', records: this.o.relayRecords });
            } catch (err) {
              await this.closeListener(key);
              throw err;
            }
          }
        }
        const ports: Record<string, number> = { [String(cur.listener.port)]: DIRECT_MIGRATION_PORT };
        if (cur.listener.multifdPort !== undefined) ports[String(cur.listener.multifdPort)] = MULTIFD_MIGRATION_PORT;
        if (cur.blockListener) ports[String(cur.blockListener.port)] = BLOCK_MIGRATION_PORT;
        await this.patch(vmi, [
          { op: 'add', path: '/status/migrationState/targetNodeAddress', value: this.o.address },
          { op: 'add', path: '/status/migrationState/targetDirectMigrationNodePorts', value: ports },
        ]);
        if (fresh) void this.o.recorder.record(vmi, 'Normal', 'PreparingTarget', `Migration Target is listening at ${this.o.address}, on ports: ${Object.keys(ports).join(',')}`).catch(() => undefined);
        return { requeueAfterMs: 2000 };
      }
      case 'detected': {
        const ops: unknown[] = [{ op: 'add', path: '/status/migrationState/targetNodeDomainDetected', value: true }];
        if (step.ready) ops.push({ op: 'add', path: '/status/migrationState/targetNodeDomainReadyTimestamp', value: nowTs() });
        await this.patch(vmi, ops);
        return { requeueAfterMs: 2000 };
      }
      case 'complete': {
        // Hand the launcher to the node's main controller: it listens on the same notify socket.
        const client = entry!.client;
        await this.closeListener(key);
        const next = completedOnTarget(vmi, this.o.nodeName, nowTs());
        const fin = await client.call('FinalizeVirtualMachineMigration', { vmi: { vmiJson: Buffer.from(JSON.stringify(next)) }, options: null }, { timeoutMs: 30_000 });
        if (!fin.success) log.warn({ err: fin.message }, 'FinalizeVirtualMachineMigration failed');
        await this.cache.detach(key);
        this.synced.delete(key);
        await this.patch(vmi, [
          { op: 'replace', path: '/status/migrationState', value: next.status!.migrationState },
          { op: 'add', path: '/status/nodeName', value: this.o.nodeName },
          { op: 'add', path: '/status/migrationTransport', value: 'Unix' },
          { op: 'replace', path: '/metadata/labels', value: next.metadata!.labels },
          ...(vmi.status?.evacuationNodeName ? [{ op: 'remove', path: '/status/evacuationNodeName' }] : []),
        ]);
        this.handedOver.set(key, ms.migrationUid!);
        log.info({ node: this.o.nodeName }, 'the VMI migrated to this node');
        void this.o.recorder.record(vmi, 'Normal', 'Migrated', `The VirtualMachineInstance migrated to node ${this.o.nodeName}.`).catch(() => undefined);
        return;
      }
      case 'cleanup': {
        // The target's own reason, while its launcher still reports it (before the domain goes).
        const withTarget = this.targetReasonAdded.get(key) === ms.migrationUid ? undefined : failureReasonWithTarget(ms, entry?.domain?.Spec.Metadata.KubeVirt.Migration);
        if (withTarget !== undefined) {
          log.warn({ reason: withTarget }, 'the migration failed on this node\'s target: its reason added to the migration\'s');
          await this.patch(vmi, [{ op: 'add', path: '/status/migrationState/failureReason', value: withTarget }]);
          this.targetReasonAdded.set(key, ms.migrationUid);
          void this.o.recorder.record(vmi, 'Warning', 'Migrated', `VirtualMachineInstance migration uid ${ms.migrationUid} failed on the target node ${this.o.nodeName}. reason:${entry!.domain!.Spec.Metadata.KubeVirt.Migration!.FailureReason}`).catch(() => undefined);
        }
        if (ms.failed && entry && (entry.domain === undefined || (entry.domain.Status.Status !== LifeCycle.Running && entry.domain.Status.Status !== LifeCycle.Paused) || entry.domain.Status.Reason === Reason.Migration)) {
          // The target QEMU of a failed migration: remove its domain so the launcher exits.
          await entry.client.call('DeleteVirtualMachine', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: null }, { timeoutMs: 30_000 }).catch(() => undefined);
          if (existsSync(entry.paths.socket)) return { requeueAfterMs: 1000 };
        }
        await this.release(key);
        return;
      }
    }
  }

  /**
   * Whether this migration goes direct (transport.ts), and if so where the target QEMU listens and,
   * with TLS, its credentials written into the target pod. Undefined: the relay.
   */
  private async planDirect(key: string, vmi: VirtualMachineInstance, shareDir: string, log: Logger): Promise<{ migration: DirectMigration; tlsDir: string } | undefined> {
    const ms = vmi.status!.migrationState!;
    const relayTls = relayTlsFor(ms, this.o.tls);
    let pod: TargetPod | undefined;
    if (ms.targetPod) {
      try {
        pod = await this.o.client.get<TargetPod>(Resources.pods, vmi.metadata?.namespace, ms.targetPod);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const choice = chooseMigrationTransport({
      annotations: vmi.metadata?.annotations, setting: this.transport, targetPod: pod?.status,
      passt: (vmi.spec.domain.devices.interfaces ?? []).some((i) => i.passtBinding !== undefined || i.passt !== undefined),
      tls: !relayTls.ok || relayTls.tls !== undefined, canIssue: this.o.tls?.caKey !== undefined,
    });
    log.info({ transport: choice.kind, why: choice.why }, 'migration transport chosen');
    if (choice.kind === 'relay') return undefined;
    const tls = relayTls.ok ? relayTls.tls : undefined;
    const address = choice.address ?? this.o.address;
    const port = choice.port ?? await freePort(address);
    // A block migration's disks go to the target QEMU's NBD server: KubeVirt's block migration port
    // on a pod of its own, another free port of the node's address otherwise.
    let blockPort: number | undefined;
    if (isBlockMigration(vmi)) {
      blockPort = choice.port !== undefined ? BLOCK_MIGRATION_PORT : await freePort(address);
      while (blockPort === port) blockPort = await freePort(address);
    }
    const tlsDir = migrationTlsDir(shareDir, vmi.metadata!.uid!);
    if (tls?.caKey) {
      await writeMigrationCredentials(tlsDir, issueMigrationCredentials({ ca: { certPem: tls.ca, keyPem: tls.caKey }, endpoint: 'server', migrationUid: ms.migrationUid!, podName: ms.targetPod ?? key, addresses: [address] }));
    }
    // The source node agent names its certificate after the same pod (source.ts).
    const authz = tls ? { TLSAuthz: migrationClientIdentity(ms.migrationUid!, ms.sourcePod ?? vmi.metadata!.name!) } : {};
    return { migration: { Address: address, Port: port, TLS: tls !== undefined, ...authz, ...(blockPort !== undefined ? { BlockPort: blockPort } : {}) }, tlsDir };
  }

  private async patch(vmi: VirtualMachineInstance, ops: unknown[]): Promise<void> {
    try {
      await this.o.client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, [
        { op: 'test', path: '/metadata/uid', value: vmi.metadata?.uid },
        { op: 'test', path: '/status/migrationState/migrationUid', value: vmi.status?.migrationState?.migrationUid },
        ...ops,
      ], 'json');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
