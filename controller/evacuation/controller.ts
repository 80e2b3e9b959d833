// The evacuation controller's reconcile loop (virt-controller's watch/drain/evacuation): one node
// name in; creates a migration for each VMI to move off the node (candidates.ts), recording
// KubeVirt's events on the VMI. A node's key is queued when the node changes (the drain taint),
// when a VMI on it changes (an eviction marked it; a migration ended) and when migrations or
// launcher pods of its VMIs come and go (a candidate waiting on them becomes free).
import { Expectations } from '../../src/kube/expectations.ts';
import type { ReconcileResult } from '../../src/kube/workqueue.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject } from '../../src/log/logger.ts';
import { activePodCount } from '../pod-state.ts';
import { errorText, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';
import type { ControllerContext } from '../context.ts';
import { Annotation, isFinalMigrationPhase, EventReason, Kind, Label } from '../../src/api/constants.ts';
import { evacuationCandidates, evacuationMigration } from './candidates.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';

/**
 * The evacuation controller: a node's key queued when the node changes (the drain taint), when a
 * VMI on it changes (an eviction marked it; a migration ended), when a migration of one of its
 * VMIs is made or ends (the evacuation migrations it created are its expectations) and when a
 * launcher pod on it changes phase or goes.
 */
export function evacuationController(ctx: ControllerContext, workers = 1): Controller {
  const { nodes, vmis, migrations, pods } = ctx.informers;
  const r = new EvacuationReconciler(ctx);
  const vmiNode = (v: VirtualMachineInstance) => v.status?.nodeName || undefined;
  const migrationNode = (m: VirtualMachineInstanceMigration) => {
    const vmi = vmis.get(`${m.metadata?.namespace}/${m.spec.vmiName}`);
    return vmi ? vmiNode(vmi) : undefined;
  };
  return controllerFor('evacuation', { queue: { name: 'virt-controller-evacuation', qps: 100, burst: 1000 }, workers })
    .withExpectations(r.expectations)
    .watches(nodes)
    .watchesMapped(vmis, vmiNode, { includeOld: true })
    .owns(migrations, (m) => m.metadata?.annotations?.[Annotation.EvacuationMigration] || undefined, { events: ['add'] })
    .watchesMapped(migrations, migrationNode, { when: (o, m) => isFinalMigrationPhase(m.status?.phase) !== isFinalMigrationPhase(o.status?.phase) })
    .watchesMapped(pods, (p) => p.spec?.nodeName || undefined, { events: ['update', 'delete'], when: (o, p) => o.status?.phase !== p.status?.phase })
    .complete(r);
}

export class EvacuationReconciler implements Reconciler {
  readonly expectations = new Expectations();
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async sync(nodeName: string): Promise<ReconcileResult | void> {
    const { client, informers, recorder } = this.ctx;
    const node = informers.nodes.get(nodeName);
    if (!node) { this.expectations.delete(nodeName); return; }
    if (!this.expectations.satisfied(nodeName)) return;
    const pods = informers.pods.list();
    const decision = evacuationCandidates({
      node,
      vmisOnNode: informers.vmis.list().filter((v) => v.status?.nodeName === nodeName),
      migrations: informers.migrations.list(),
      activePods: (v) => activePodCount(v.metadata?.uid, pods.filter((p) => p.metadata?.namespace === v.metadata?.namespace && p.metadata?.labels?.[Label.App] !== undefined)),
      config: this.ctx.config,
      now: this.ctx.now(),
    });
    if (decision.migrate.length === 0) return;
    this.ctx.log.info({ node: nodeName, candidates: decision.migrate.length, notMigratable: decision.notMigratable.length }, 'evacuating VMIs off the node');
    this.expectations.expectCreations(nodeName, decision.migrate.length);
    const errors: string[] = [];
    await Promise.all(decision.migrate.map(async (vmi) => {
      const log = forObject(this.ctx.log, { kind: Kind.VirtualMachineInstance, namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid });
      try {
        const created = await client.create(Resources.virtualMachineInstanceMigrations, evacuationMigration(vmi, nodeName));
        void recorder.normal(vmi, EventReason.SuccessfulCreate, `Created Migration ${created.metadata?.name ?? ''}`);
        log.info({ migration: created.metadata?.name, node: nodeName }, 'created an evacuation migration');
      } catch (err) {
        this.expectations.creationObserved(nodeName);
        void recorder.warning(vmi, EventReason.FailedCreate, `Error creating a Migration: ${errorText(err)}`);
        errors.push(errorText(err));
      }
    }));
    if (errors.length) throw new Error(`creating evacuation migrations off node ${nodeName}: ${errors.join('; ')}`);
  }
}
