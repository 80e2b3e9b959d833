// The VirtualMachineInstanceMigration controller's reconcile loop (virt-controller's
// watch/migration): one migration key in; its finalizer, the target pod (throttled, timed out when
// it cannot be scheduled), the hand-off of the VMI to the target node, the phase machine written
// through the status subresource, and garbage collection of old finished migrations of the VMI.
import { EventReason, Finalizer, Kind, Label, MigrationPhase, isFinalMigrationPhase } from '../../src/api/constants.ts';
import { EventMessages } from '../constants.ts';
import { Expectations } from '../../src/kube/expectations.ts';
import type { ReconcileResult } from '../../src/kube/workqueue.ts';
import { keyOf, type Informer } from '../../src/kube/informer.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject, type Logger } from '../../src/log/logger.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import type { MigrationPolicy } from '../../src/api/migrations/types.ts';
import { resolveMigrationConfiguration } from './policy.ts';
import { activePodCount, currentVMIPod } from '../pod-state.ts';
import { errorText, jsonEqual, optimisticSectionPatch, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';
import type { ControllerContext } from '../context.ts';
import { finalizedMigrationsToCollect, findRunningMigrations, migrationStatusUpdate, migrationSyncAction } from './phase.ts';
import { renderMigrationTargetPod } from './target-pod.ts';
import { claimNames, lookupClaims } from '../vmi/pvc-lookup.ts';
import type { Pod } from '../pod.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';

/** The migrations whose target pod `pod` is (by the migration job UID label). */
function migrationsOfPod(migrations: Informer<VirtualMachineInstanceMigration>, pod: Pod): VirtualMachineInstanceMigration[] {
  const uid = pod.metadata?.labels?.[Label.MigrationJobUID];
  return uid ? migrations.list().filter((m) => m.metadata?.uid === uid) : [];
}

/**
 * The migration controller: a migration's key queued by the migration, by its target pod (whose
 * creation it expects) and by each change of its VMI while it is not final.
 */
export function migrationController(ctx: ControllerContext, workers = 2): Controller {
  const { migrations, pods, vmis } = ctx.informers;
  const r = new MigrationReconciler(ctx);
  const byVMI = (vmi: VirtualMachineInstance) => migrations.list()
    .filter((m) => m.metadata?.namespace === vmi.metadata?.namespace && m.spec.vmiName === vmi.metadata?.name && !isFinalMigrationPhase(m.status?.phase))
    .map((m) => keyOf(m));
  return controllerFor('migration', { queue: { name: 'virt-controller-migration', qps: 1000, burst: 10_000 }, workers })
    .withExpectations(r.expectations)
    .watches(migrations)
    .owns(pods, (p) => migrationsOfPod(migrations, p).map((m) => keyOf(m)), { deletions: 'none' })
    .watchesMapped(vmis, byVMI, { events: ['update', 'delete'] })
    .complete(r);
}

export class MigrationReconciler implements Reconciler {
  readonly expectations = new Expectations();
  private readonly ctx: ControllerContext;
  private readonly handedOff = new Set<string>();
  private pendingCreations = 0;

  private policiesSynced = false;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    void ctx.migrationPolicies?.hasSynced.then(() => { this.policiesSynced = true; });
    const { migrations, pods } = ctx.informers;
    migrations.on('delete', (m) => { this.handedOff.delete(m.metadata?.uid ?? ''); });
    // A target pod seen: one creation fewer pending across all migrations (the parallel-migrations throttle).
    pods.on('add', (p) => { const n = migrationsOfPod(migrations, p).length; if (n) this.pendingCreations = Math.max(0, this.pendingCreations - n); });
  }

  private podsOfVMI(vmi: VirtualMachineInstance): Pod[] {
    const uid = vmi.metadata?.uid;
    return this.ctx.informers.pods.list().filter((p) => p.metadata?.namespace === vmi.metadata?.namespace && p.metadata?.ownerReferences?.some((r) => r.uid === uid));
  }

  private targetPodOf(m: VirtualMachineInstanceMigration): Pod | undefined {
    const uid = m.metadata?.uid;
    return this.ctx.informers.pods.list().find((p) => p.metadata?.namespace === m.metadata?.namespace && p.metadata?.labels?.[Label.MigrationJobUID] === uid);
  }

  /**
   * `matchMigrationPolicy` at the hand-off: the MigrationPolicy that matches the VMI's and its
   * namespace's labels overrides the cluster's configuration in `status.migrationState` and is named
   * in `migrationPolicyName`. The namespace is read as KubeVirt reads it (a GET); the policies from
   * the informer once synced, listed otherwise (none when the CRD is not installed).
   */
  private async withMigrationPolicy(vmi: VirtualMachineInstance, log: Logger): Promise<VirtualMachineInstance> {
    const state = vmi.status?.migrationState;
    if (!state) return vmi;
    const ns = await this.ctx.client.get<KubeObject>(Resources.namespaces, undefined, vmi.metadata?.namespace ?? '');
    let policies: MigrationPolicy[];
    if (this.policiesSynced && this.ctx.migrationPolicies) policies = this.ctx.migrationPolicies.list();
    else {
      policies = await this.ctx.client.list<MigrationPolicy>(Resources.migrationPolicies).then((l) => l.items, (err: unknown) => {
        if (isNotFound(err)) return [];
        throw err;
      });
    }
    const base = state.migrationConfiguration ?? {};
    const resolved = resolveMigrationConfiguration(base, policies, vmi.metadata?.labels, ns.metadata?.labels);
    const next = structuredClone(vmi);
    const nextState = next.status!.migrationState!;
    nextState.migrationConfiguration = resolved.configuration;
    if (resolved.policy) {
      nextState.migrationPolicyName = resolved.policy.metadata?.name ?? '';
      log.info({ migrationPolicy: nextState.migrationPolicyName }, `migration is updated by migration policy named ${nextState.migrationPolicyName}.`);
    } else {
      delete nextState.migrationPolicyName;
    }
    return next;
  }

  async sync(key: string): Promise<ReconcileResult | void> {
    const m = this.ctx.informers.migrations.get(key);
    if (!m) { this.expectations.delete(key); return; }
    const { client, informers, recorder } = this.ctx;
    const log = forObject(this.ctx.log, { kind: Kind.VirtualMachineInstanceMigration, namespace: m.metadata?.namespace, name: m.metadata?.name, uid: m.metadata?.uid });
    const ns = m.metadata?.namespace;
    const name = m.metadata!.name!;
    const now = this.ctx.now();

    // What KubeVirt's VMIM create mutator does: the finalizer and the `kubevirt.io/vmi-name` label
    // (`qvirt migrate-cancel` / virtctl find a VMI's migrations by it).
    const needsFinalizer = !(m.metadata?.finalizers ?? []).includes(Finalizer.Migration);
    const needsLabel = m.metadata?.labels?.[Label.MigrationSelector] !== m.spec.vmiName;
    if (!isFinalMigrationPhase(m.status?.phase) && m.metadata?.deletionTimestamp == null && (needsFinalizer || needsLabel)) {
      await client.patch(Resources.virtualMachineInstanceMigrations, ns, name, {
        metadata: {
          ...(needsFinalizer ? { finalizers: [...(m.metadata?.finalizers ?? []), Finalizer.Migration] } : {}),
          ...(needsLabel ? { labels: { [Label.MigrationSelector]: m.spec.vmiName } } : {}),
        },
      }, 'merge');
      return;
    }
    const vmi = informers.vmis.get(`${ns}/${m.spec.vmiName}`);
    const allInNs = informers.migrations.list().filter((x) => x.metadata?.namespace === ns);
    const vmiPods = vmi ? this.podsOfVMI(vmi) : [];
    // The source is the VMI's current pod on its node — possibly the target pod of an earlier
    // migration (it keeps that migration's label) — never this migration's own target pod.
    const sourcePod = vmi ? currentVMIPod(vmi.metadata?.uid, vmi.status?.nodeName, vmiPods.filter((p) => p.metadata?.labels?.[Label.MigrationJobUID] !== m.metadata?.uid)) : undefined;
    const targetPod = this.targetPodOf(m);
    let requeueAfterMs: number | undefined;
    let syncError: Error | undefined;

    const action = migrationSyncAction({
      migration: m,
      vmi,
      targetPod,
      sourcePod,
      migrations: allInNs,
      handedOffEarlier: this.handedOff.has(m.metadata?.uid ?? ''),
      now,
      migrationConfiguration: this.ctx.config.migrations,
      throttle: {
        pendingPodCreations: this.pendingCreations,
        vmiActivePods: vmi ? activePodCount(vmi.metadata?.uid, vmiPods) : 0,
        runningMigrations: findRunningMigrations(informers.migrations.list(), (x) => informers.vmis.get(`${x.metadata?.namespace}/${x.spec.vmiName}`), (x) => this.targetPodOf(x) !== undefined),
        parallelMigrationsPerCluster: this.ctx.config.migrations.parallelMigrationsPerCluster,
        parallelOutboundMigrationsPerNode: this.ctx.config.migrations.parallelOutboundMigrationsPerNode,
      },
    });
    switch (action.type) {
      case 'create-target-pod': {
        if (!vmi || !sourcePod || !this.expectations.satisfied(key)) break;
        try {
          const node = sourcePod.spec?.nodeName ? informers.nodes.get(sourcePod.spec.nodeName) : undefined;
          // The VMI's claims, as the VMI controller renders its first pod with (KubeVirt's template
          // service reads the PVC store for both): without them a claim-backed VMI never migrates.
          const pvcs = claimNames(vmi).length > 0 ? await lookupClaims(client, vmi) : undefined;
          const pod = renderMigrationTargetPod(vmi, m, sourcePod, this.ctx.renderConfig, {
            ...(pvcs ? { pvcs } : {}),
            sourceNodeLabels: node?.metadata?.labels ?? {},
            ...(this.ctx.config.migrations.matchSELinuxLevelOnMigration !== undefined ? { matchSELinuxLevel: this.ctx.config.migrations.matchSELinuxLevelOnMigration } : {}),
          });
          this.expectations.expectCreations(key, 1);
          this.pendingCreations++;
          const created = await client.create(Resources.pods, pod);
          void recorder.normal(m, EventReason.SuccessfulCreate, EventMessages.createdTargetPod(created.metadata?.name ?? ''));
          log.info({ pod: created.metadata?.name }, 'created the migration target pod');
        } catch (err) {
          this.expectations.lowerExpectations(key, 1, 0);
          this.pendingCreations = Math.max(0, this.pendingCreations - 1);
          syncError = err instanceof Error ? err : new Error(String(err));
          void recorder.warning(m, EventReason.FailedCreate, EventMessages.failedCreatePod(errorText(err)));
        }
        break;
      }
      case 'wait':
      case 'recheck':
        requeueAfterMs = action.afterMs;
        break;
      case 'delete-target-pod':
        if (targetPod) {
          await client.delete(Resources.pods, ns, targetPod.metadata!.name!).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
          void recorder.normal(m, EventReason.SuccessfulDelete, action.message);
        }
        break;
      case 'handoff':
        if (vmi) {
          const next = await this.withMigrationPolicy(action.vmi, log);
          const ops = optimisticSectionPatch(vmi as unknown as Record<string, unknown>, next as unknown as Record<string, unknown>, ['metadata', 'status']);
          if (ops.length > 0) await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, ops, 'json');
          this.handedOff.add(m.metadata?.uid ?? '');
          void recorder.normal(m, EventReason.SuccessfulHandOver, EventMessages.handedOff);
        }
        break;
      case 'mark-failed-on-vmi':
      case 'abort-on-vmi':
        if (vmi) {
          await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, [
            { op: 'test', path: '/status/migrationState/migrationUid', value: m.metadata?.uid },
            { op: 'replace', path: '/status/migrationState', value: action.migrationState },
          ], 'json');
        }
        break;
      case 'error':
        syncError = new Error(action.message);
        break;
      case 'none':
        break;
    }

    const upd = migrationStatusUpdate({
      migration: m,
      vmi,
      targetPod,
      sourcePodName: sourcePod?.metadata?.name,
      migrations: allInNs,
      handedOffEarlier: this.handedOff.has(m.metadata?.uid ?? ''),
      syncError,
      now,
    });
    for (const ev of upd.events) void recorder.record(m, ev.type, ev.reason, ev.message);
    if (!jsonEqual(upd.migration.status, m.status)) {
      await client.updateStatus(Resources.virtualMachineInstanceMigrations, { ...m, status: upd.migration.status }).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    }
    if (!jsonEqual(upd.migration.metadata?.finalizers, m.metadata?.finalizers)) {
      await client.patch(Resources.virtualMachineInstanceMigrations, ns, name, { metadata: { finalizers: upd.migration.metadata?.finalizers ?? null } }, 'merge')
        .catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    }
    if (isFinalMigrationPhase(upd.migration.status?.phase) && !isFinalMigrationPhase(m.status?.phase) && vmi) {
      const gc = finalizedMigrationsToCollect(allInNs.filter((x) => x.spec.vmiName === vmi.metadata?.name).map((x) => (x.metadata?.uid === m.metadata?.uid ? upd.migration : x)));
      for (const d of gc.delete) {
        if (d.pod) await client.delete(Resources.pods, ns, d.pod).catch(() => undefined);
        await client.delete(Resources.virtualMachineInstanceMigrations, ns, d.migration).catch(() => undefined);
      }
    }
    // A failed migration's target pod has nothing left to run (its launcher ended with the migration):
    // remove it, so it counts against no throttle and a next migration of the VMI can start.
    if (upd.migration.status?.phase === MigrationPhase.Failed && targetPod && targetPod.metadata?.deletionTimestamp == null
      && targetPod.status?.phase !== 'Succeeded' && targetPod.status?.phase !== 'Failed') {
      await client.delete(Resources.pods, ns, targetPod.metadata!.name!).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
      void recorder.normal(m, EventReason.SuccessfulDelete, `Deleted migration target pod ${targetPod.metadata?.name} of the failed migration`);
    }
    if (syncError) log.warn({ err: syncError.message }, 'migration sync failed');
    if (upd.migration.status?.phase === MigrationPhase.Failed && m.status?.phase !== MigrationPhase.Failed) log.info('migration failed');
    return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
  }
}
