// The evacuation controller's reconcile loop (virt-controller's watch/drain/evacuation): one node
// name in; creates a migration for each VMI to move off the node (candidates.ts), recording
// KubeVirt's events on the VMI. A node's key is queued when the node changes (the drain taint),
// when a VMI on it changes (an eviction marked it; a migration ended) and when migrations or
// launcher pods of its VMIs come and go (a candidate waiting on them becomes free).
import { Events, Kinds, Labels } from '../constants.ts';
import { Expectations } from '../../src/kube/expectations.ts';
import { WorkQueue, type ReconcileResult } from '../../src/kube/workqueue.ts';
import { keyOf } from '../../src/kube/informer.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject } from '../../src/log/logger.ts';
import { activePodCount } from '../pod-state.ts';
import { errorText, type Controller } from '../shell.ts';
import type { ControllerContext } from '../context.ts';
import { Annotations, isFinalMigrationPhase } from '../constants.ts';
import { evacuationCandidates, evacuationMigration } from './candidates.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';

export class EvacuationController implements Controller {
  readonly name = 'evacuation';
  readonly queue = new WorkQueue<string>({ name: 'virt-controller-evacuation', qps: 100, burst: 1000 });
  readonly expectations = new Expectations();
  readonly workers: number;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext, workers = 1) {
    this.ctx = ctx;
    this.workers = workers;
    const { nodes, vmis, migrations, pods } = ctx.informers;
    nodes.on('add', (n) => this.queue.add(keyOf(n)));
    nodes.on('update', (_o, n) => this.queue.add(keyOf(n)));
    nodes.on('delete', (n) => { this.expectations.delete(keyOf(n)); });
    const byVMI = (v: VirtualMachineInstance) => { if (v.status?.nodeName) this.queue.add(v.status.nodeName); };
    vmis.on('add', byVMI);
    vmis.on('update', (o, v) => { byVMI(v); if (o.status?.nodeName !== v.status?.nodeName) byVMI(o); });
    vmis.on('delete', byVMI);
    const byMigration = (m: VirtualMachineInstanceMigration) => {
      const vmi = vmis.get(`${m.metadata?.namespace}/${m.spec.vmiName}`);
      if (vmi) byVMI(vmi);
    };
    migrations.on('add', (m) => {
      const node = m.metadata?.annotations?.[Annotations.EvacuationMigration];
      if (node) { this.expectations.creationObserved(node); this.queue.add(node); }
      byMigration(m);
    });
    migrations.on('update', (o, m) => { if (isFinalMigrationPhase(m.status?.phase) !== isFinalMigrationPhase(o.status?.phase)) byMigration(m); });
    migrations.on('delete', byMigration);
    pods.on('update', (o, p) => { if (o.status?.phase !== p.status?.phase && p.spec?.nodeName) this.queue.add(p.spec.nodeName); });
    pods.on('delete', (p) => { if (p.spec?.nodeName) this.queue.add(p.spec.nodeName); });
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
      activePods: (v) => activePodCount(v.metadata?.uid, pods.filter((p) => p.metadata?.namespace === v.metadata?.namespace && p.metadata?.labels?.[Labels.App] !== undefined)),
      config: this.ctx.config,
      now: this.ctx.now(),
    });
    if (decision.migrate.length === 0) return;
    this.ctx.log.info({ node: nodeName, candidates: decision.migrate.length, notMigratable: decision.notMigratable.length }, 'evacuating VMIs off the node');
    this.expectations.expectCreations(nodeName, decision.migrate.length);
    const errors: string[] = [];
    await Promise.all(decision.migrate.map(async (vmi) => {
      const log = forObject(this.ctx.log, { kind: Kinds.VirtualMachineInstance, namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid });
      try {
        const created = await client.create(Resources.virtualMachineInstanceMigrations, evacuationMigration(vmi, nodeName));
        void recorder.normal(vmi, Events.SuccessfulCreate, `Created Migration ${created.metadata?.name ?? ''}`);
        log.info({ migration: created.metadata?.name, node: nodeName }, 'created an evacuation migration');
      } catch (err) {
        this.expectations.creationObserved(nodeName);
        void recorder.warning(vmi, Events.FailedCreate, `Error creating a Migration: ${errorText(err)}`);
        errors.push(errorText(err));
      }
    }));
    if (errors.length) throw new Error(`creating evacuation migrations off node ${nodeName}: ${errors.join('; ')}`);
  }
}
