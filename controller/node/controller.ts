// The node controller's reconcile loop (virt-controller's watch/node): one node name in; a node
// whose virt-handler heartbeat went stale is marked unschedulable for VMIs and the VMIs stranded on
// it (no live launcher pod) are failed; healthy nodes are looked at again every minute.
import { ConditionReason, Kind, Label } from '../../src/api/constants.ts';
import { NODE_RECHECK_INTERVAL_MS } from '../constants.ts';
import type { ReconcileResult } from '../../src/kube/workqueue.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { errorText, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';
import type { ControllerContext } from '../context.ts';
import { checkNode, failVMIPatch, HeartbeatParseError, vmiNodeUnresponsiveMessage } from './heartbeat.ts';

/** The node controller: a node's key queued by the node itself and by each VMI that lands on it. */
export function nodeController(ctx: ControllerContext, workers = 1): Controller {
  const { nodes, vmis } = ctx.informers;
  return controllerFor('node', { queue: { name: 'virt-controller-node', qps: 100, burst: 1000 }, workers })
    .watches(nodes)
    .watchesMapped(vmis, (v) => v.metadata?.labels?.[Label.NodeName] || undefined, { events: ['add'] })
    .complete(new NodeReconciler(ctx));
}

export class NodeReconciler implements Reconciler {
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async sync(nodeName: string): Promise<ReconcileResult | void> {
    const { client, informers, recorder } = this.ctx;
    const node = informers.nodes.get(nodeName);
    let decision: ReturnType<typeof checkNode>;
    try {
      decision = checkNode({
      nodeName,
      node,
      vmisOnNode: informers.vmis.list().filter((v) => v.metadata?.labels?.[Label.NodeName] === nodeName),
      podsOnNode: informers.pods.list().filter((p) => p.spec?.nodeName === nodeName),
      now: this.ctx.now(),
      });
    } catch (err) {
      // An unreadable heartbeat: KubeVirt leaves the node alone; so do we, and look again later.
      if (err instanceof HeartbeatParseError) { this.ctx.log.warn({ node: nodeName, err: err.message }, 'cannot read the node heartbeat'); return { requeueAfterMs: NODE_RECHECK_INTERVAL_MS }; }
      throw err;
    }
    if (decision.markUnschedulable && node) {
      await client.patch(Resources.nodes, undefined, nodeName, { metadata: { labels: { [Label.NodeSchedulable]: 'false' } } }, 'strategic');
      if (decision.nodeEvent) void recorder.normal(node, decision.nodeEvent.reason, decision.nodeEvent.message);
    }
    for (const vmi of decision.failVMIs) {
      try {
        await client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, failVMIPatch(), 'json');
        void recorder.normal(vmi, ConditionReason.NodeUnresponsive, vmiNodeUnresponsiveMessage(vmi));
      } catch (err) {
        if (!isNotFound(err)) this.ctx.log.warn({ kind: Kind.VirtualMachineInstance, namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid, err: errorText(err) }, 'could not fail the VMI of an unresponsive node');
      }
    }
    return decision.requeueAfterMs !== undefined ? { requeueAfterMs: decision.requeueAfterMs } : undefined;
  }
}
