// qvirt's virt-controller: the shared informers and every controller's reconcile loop, behind
// leader election on a coordination.k8s.io/v1 Lease. Only the leader watches and reconciles; a
// standby campaigns and takes over when the leader releases the lease (clean stop) or stops
// renewing it (crash). Losing the lease stops the controllers at once.
//
//   const m = new ControllerManager({ client, config, launcherImage, log });
//   await m.start();          // resolves once campaigning has begun
//   await m.leading;          // resolves when this replica leads and its caches are synced
//   await m.stop();           // releases the lease
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { isConflict, isFailedPatchTest, type KubeClient } from '../src/kube/client.ts';
import { Informer } from '../src/kube/informer.ts';
import { EventRecorder } from '../src/kube/events.ts';
import { LeaderElector } from '../src/kube/leader-election.ts';
import { DEFAULT_LEASE_NAME, DEFAULT_LEASE_NAMESPACE } from '../src/kube/controller-lease.ts';
import { runWorkers } from '../src/kube/workqueue.ts';
import { Resources } from '../src/kube/resource.ts';
import type { Logger } from '../src/log/logger.ts';
import type { ClusterConfig } from '../src/api/cluster-config.ts';
import { renderConfigFromClusterConfig } from './vmi/render-config.ts';
import { Label } from '../src/api/constants.ts';
import type { ControllerContext, SharedInformers } from './context.ts';
import type { InstancetypeInformers } from './context.ts';
import type { MigrationPolicy } from '../src/api/migrations/types.ts';
import type { DataVolume } from '../src/api/cdi/types.ts';
import type { KubeObject } from '../src/kube/client.ts';
import type { VirtualMachinePool } from '../src/api/pool/types.ts';
import type { VirtualMachineInstancePreset } from '../src/api/preset/types.ts';
import { poolController } from './pool/controller.ts';
import type { Controller } from './shell.ts';
import { vmController } from './vm/controller.ts';
import { vmiController } from './vmi/controller.ts';
import { replicaSetController } from './replicaset/controller.ts';
import { migrationController } from './migration/controller.ts';
import { nodeController } from './node/controller.ts';
import { evacuationController } from './evacuation/controller.ts';

/** virt-controller's component name in events. */
export const CONTROLLER_COMPONENT = 'virtualmachine-controller';
export const DEFAULT_LAUNCHER_IMAGE = 'qvirt/launcher:latest';
/**
 * Node flags for the controller process's command line: a small young generation and V8's
 * size-optimised mode. At 1 000 VMs the peak RSS goes from ≈ 286 MiB to ≈ 162 MiB for about the
 * same wall time (bench/controllers.bench.ts). `qvirt controller` applies what it can at runtime
 * when they are missing (the semi-space cap), which gets ≈ 209 MiB.
 */
export const CONTROLLER_NODE_FLAGS = ['--max-semi-space-size=2', '--optimize-for-size'] as const;

export interface ManagerOptions {
  readonly client: KubeClient;
  readonly config: ClusterConfig;
  readonly log: Logger;
  readonly launcherImage?: string;
  /** Watch one namespace only (default: all). */
  readonly watchNamespace?: string;
  /** Default true. false: run the controllers at once (single replica, tests). */
  readonly leaderElect?: boolean;
  readonly leaseNamespace?: string;
  readonly leaseName?: string;
  readonly identity?: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  /** Worker counts per controller. */
  readonly workers?: Partial<Record<'vm' | 'vmi' | 'replicaset' | 'migration' | 'node' | 'pool', number>>;
  /** Informer resync period (default 0 = none; KubeVirt resyncs every few minutes). */
  readonly resyncMs?: number;
  readonly now?: () => Date;
}

export class ControllerManager {
  readonly identity: string;
  private readonly o: ManagerOptions;
  private readonly log: Logger;
  private elector?: LeaderElector;
  private informers?: SharedInformers;
  private instancetypeInformers?: InstancetypeInformers;
  private migrationPolicies?: Informer<MigrationPolicy>;
  private dataVolumes?: Informer<DataVolume & KubeObject>;
  private pools?: Informer<VirtualMachinePool>;
  private vmiPresets?: Informer<VirtualMachineInstancePreset>;
  private controllers: Controller[] = [];
  private workersDone?: Promise<unknown>;
  private stopped = false;
  private config: ClusterConfig;
  private ctx?: { config: ClusterConfig; renderConfig: ControllerContext['renderConfig'] };
  private leadingResolve!: () => void;
  /** Resolves once this replica leads and its controllers run on synced caches. */
  readonly leading: Promise<void>;
  /** The live controllers while leading (tests inspect expectations and queues). */
  current?: { controllers: readonly Controller[]; informers: SharedInformers };

  constructor(opts: ManagerOptions) {
    this.o = opts;
    this.config = opts.config;
    this.identity = opts.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    this.log = opts.log.child({ identity: this.identity });
    this.leading = new Promise((r) => { this.leadingResolve = r; });
  }

  get isLeader(): boolean {
    return this.current !== undefined;
  }

  /** The leader's instance type and preference caches (absent on a standby). */
  get instancetypes(): InstancetypeInformers | undefined {
    return this.current ? this.instancetypeInformers : undefined;
  }

  /** Starts campaigning for the lease (or, without leader election, the controllers themselves). */
  async start(): Promise<void> {
    if (this.o.leaderElect === false) {
      await this.lead(new AbortController().signal);
      return;
    }
    this.elector = new LeaderElector(this.o.client, {
      namespace: this.o.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE,
      name: this.o.leaseName ?? DEFAULT_LEASE_NAME,
      identity: this.identity,
      log: this.log,
      ...(this.o.leaseDurationMs !== undefined ? { leaseDurationMs: this.o.leaseDurationMs } : {}),
      ...(this.o.renewDeadlineMs !== undefined ? { renewDeadlineMs: this.o.renewDeadlineMs } : {}),
      ...(this.o.retryPeriodMs !== undefined ? { retryPeriodMs: this.o.retryPeriodMs } : {}),
      onStartedLeading: (signal) => this.lead(signal),
      onStoppedLeading: () => { void this.stopControllers(); },
      onNewLeader: (id) => { if (id !== this.identity) this.log.info({ leader: id }, 'another replica leads'); },
    });
    void this.elector.run();
  }

  private async lead(signal: AbortSignal): Promise<void> {
    if (this.stopped || signal.aborted) return;
    const { client } = this.o;
    const nsOpt = this.o.watchNamespace ? { namespace: this.o.watchNamespace } : {};
    const common = { ...nsOpt, log: this.log, ...(this.o.resyncMs ? { resyncMs: this.o.resyncMs } : {}) };
    const informers: SharedInformers = {
      vms: new Informer(client, Resources.virtualMachines, common),
      vmis: new Informer(client, Resources.virtualMachineInstances, common),
      // virt-controller only watches pods that carry the kubevirt.io label.
      pods: new Informer(client, Resources.pods, { ...common, labelSelector: Label.App }),
      replicaSets: new Informer(client, Resources.virtualMachineInstanceReplicaSets, common),
      migrations: new Informer(client, Resources.virtualMachineInstanceMigrations, common),
      nodes: new Informer(client, Resources.nodes, { log: this.log, ...(this.o.resyncMs ? { resyncMs: this.o.resyncMs } : {}) }),
    };
    // Not awaited: a cluster without the instancetype.kubevirt.io CRDs still runs; reads fall back to the API.
    const instancetypeInformers: InstancetypeInformers = {
      instancetypes: new Informer(client, Resources.virtualMachineInstancetypes, common),
      clusterInstancetypes: new Informer(client, Resources.virtualMachineClusterInstancetypes, { log: this.log }),
      preferences: new Informer(client, Resources.virtualMachinePreferences, common),
      clusterPreferences: new Informer(client, Resources.virtualMachineClusterPreferences, { log: this.log }),
      controllerRevisions: new Informer(client, Resources.controllerRevisions, common),
    };
    // Not awaited either: the migration controller lists policies itself until this one has synced.
    const migrationPolicies = new Informer<MigrationPolicy>(client, Resources.migrationPolicies, { log: this.log });
    // And the pools: a cluster without the pool.kubevirt.io CRD runs the other controllers.
    const pools = new Informer<VirtualMachinePool>(client, Resources.virtualMachinePools, common);
    const vmiPresets = new Informer<VirtualMachineInstancePreset>(client, Resources.virtualMachineInstancePresets, common);
    // CDI's DataVolumes, not awaited: a cluster without CDI runs; VMs with dataVolumeTemplates read them from the API.
    const dataVolumes = new Informer<DataVolume & KubeObject>(client, Resources.dataVolumes, { ...common, retryBaseMs: 2000 });
    const launcherImage = this.o.launcherImage ?? DEFAULT_LAUNCHER_IMAGE;
    const ctx: ControllerContext = {
      instancetypeInformers,
      dataVolumes,
      migrationPolicies,
      vmiPresets,
      client,
      informers,
      recorder: new EventRecorder(client, CONTROLLER_COMPONENT, { host: this.identity, log: this.log }),
      log: this.log,
      config: this.config,
      renderConfig: renderConfigFromClusterConfig(this.config, launcherImage),
      launcherImage,
      now: this.o.now ?? (() => new Date()),
    };
    const w = this.o.workers ?? {};
    this.controllers = [
      vmController(ctx, w.vm ?? 8),
      vmiController(ctx, w.vmi ?? 8),
      replicaSetController(ctx, w.replicaset ?? 2),
      migrationController(ctx, w.migration ?? 2),
      nodeController(ctx, w.node ?? 1),
      evacuationController(ctx, 1),
      poolController(ctx, pools, w.pool ?? 2),
    ];
    this.informers = informers;
    this.ctx = ctx as { config: ClusterConfig; renderConfig: ControllerContext['renderConfig'] };
    for (const i of Object.values(instancetypeInformers) as Informer<never>[]) void i.start();
    void migrationPolicies.start();
    void dataVolumes.start();
    this.dataVolumes = dataVolumes;
    void pools.start();
    void vmiPresets.start();
    this.instancetypeInformers = instancetypeInformers;
    this.vmiPresets = vmiPresets;
    this.migrationPolicies = migrationPolicies;
    this.pools = pools;
    await Promise.all(Object.values(informers).map((i: Informer<never>) => i.start()));
    if (this.stopped || signal.aborted) { await this.stopControllers(); return; }
    this.current = { controllers: this.controllers, informers };
    this.workersDone = Promise.all(this.controllers.map((c) => runWorkers(c.queue, c.workers, (key) => c.sync(key), (key, err, retries, terminal) => {
      if (terminal) { this.log.error({ controller: c.name, key, err: err instanceof Error ? err.message : String(err) }, 'reconcile failed terminally; not retrying'); return; }
      if (isConflict(err) || isFailedPatchTest(err)) { this.log.debug({ controller: c.name, key }, 'conflict: retrying on a fresher cache'); return; }
      this.log.warn({ controller: c.name, key, retries, err: err instanceof Error ? err.message : String(err) }, 'reconcile failed; retrying with backoff');
    })));
    this.log.info({ controllers: this.controllers.map((c) => c.name) }, 'controllers running');
    this.leadingResolve();
  }

  /**
   * A new cluster configuration (the KubeVirt CR changed): the running controllers see it from
   * their next reconcile on, as KubeVirt's controllers read the config store on every sync.
   */
  updateConfig(config: ClusterConfig): void {
    this.config = config;
    if (this.ctx) {
      this.ctx.config = config;
      this.ctx.renderConfig = renderConfigFromClusterConfig(config, this.o.launcherImage ?? DEFAULT_LAUNCHER_IMAGE);
    }
    this.log.info({ useEmulation: config.developerConfiguration.useEmulation, machineType: config.architectureConfiguration.amd64.machineType, cpuModel: config.cpuModel }, 'cluster configuration updated');
  }

  private async stopControllers(): Promise<void> {
    const informers = this.informers;
    const instancetypeInformers = this.instancetypeInformers;
    this.informers = undefined;
    this.instancetypeInformers = undefined;
    this.migrationPolicies?.stop();
    this.dataVolumes?.stop();
    this.dataVolumes = undefined;
    this.migrationPolicies = undefined;
    this.pools?.stop();
    this.pools = undefined;
    this.vmiPresets?.stop();
    this.vmiPresets = undefined;
    this.ctx = undefined;
    this.current = undefined;
    for (const i of Object.values({ ...informers, ...instancetypeInformers }) as Informer<never>[]) i.stop();
    for (const c of this.controllers) c.queue.shutDown();
    this.controllers = [];
    const done = this.workersDone;
    this.workersDone = undefined;
    await done;
  }

  /** Stops the controllers and releases the lease (a standby takes over without waiting for expiry). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.stopControllers();
    await this.elector?.stop();
  }
}
