// The node controller's reconcile loop (virt-controller's watch/node): one node name in; a node
// whose virt-handler heartbeat went stale is marked unschedulable for VMIs and the VMIs stranded on
// it (no live launcher pod) are failed; healthy nodes are looked at again every minute.
import { Kinds, Labels, NODE_RECHECK_INTERVAL_MS, Reasons } from '../constants.ts';
import { WorkQueue, type ReconcileResult } from '../../src/kube/workqueue.ts';
import { keyOf } from '../../src/kube/informer.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { errorText, type Controller } from '../shell.ts';
import type { ControllerContext } from '../context.ts';
import { checkNode, failVMIPatch, HeartbeatParseError, vmiNodeUnresponsiveMessage } from './heartbeat.ts';

export class NodeController implements Controller {
  readonly name = 'node';
  readonly queue = new WorkQueue<string>({ name: 'virt-controller-node', qps: 100, burst: 1000 });
  readonly workers: number;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext, workers = 1) {
    this.ctx = ctx;
    this.workers = workers;
    const { nodes, vmis } = ctx.informers;
    nodes.on('add', (n) => this.queue.add(keyOf(n)));
    nodes.on('update', (_o, n) => this.queue.add(keyOf(n)));
    nodes.on('delete', (n) => this.queue.add(keyOf(n)));
    vmis.on('add', (v) => { const n = v.metadata?.labels?.[Labels.NodeName]; if (n) this.queue.add(n); });
  }

  async sync(nodeName: string): Promise<ReconcileResult | void> {
    const { client, informers, recorder } = this.ctx;
    const node = informers.nodes.get(nodeName);
    let decision: ReturnType<typeof checkNode>;
    try {
      decision = checkNode({
      nodeName,
      node,
      vmisOnNode: informers.vmis.list().filter((v) => v.metadata?.labels?.[Labels.NodeName] === nodeName),
      podsOnNode: informers.pods.list().filter((p) => p.spec?.nodeName === nodeName),
      now: this.ctx.now(),
      });
    } catch (err) {
      // An unreadable heartbeat: KubeVirt leaves the node alone; so do we, and look again later.
      if (err instanceof HeartbeatParseError) { this.ctx.log.warn({ node: nodeName, err: err.message }, 'cannot read the node heartbeat'); return { requeueAfterMs: NODE_RECHECK_INTERVAL_MS }; }
      throw err;
    }
    if (decision.markUnschedulable && node) {
      await client.patch(Resources.nodes, undefined, nodeName, { metadata: { labels: { [Labels.NodeSchedulable]: 'false' } } }, 'strategic');
      if (decision.nodeEvent) void recorder.normal(node, decision.nodeEvent.reason, decision.nodeEvent.message);
    }
    for (const vmi of decision.failVMIs) {
      try {
        await client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, failVMIPatch(), 'json');
        void recorder.normal(vmi, Reasons.NodeUnresponsive, vmiNodeUnresponsiveMessage(vmi));
      } catch (err) {
        if (!isNotFound(err)) this.ctx.log.warn({ kind: Kinds.VirtualMachineInstance, namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid, err: errorText(err) }, 'could not fail the VMI of an unresponsive node');
      }
    }
    return decision.requeueAfterMs !== undefined ? { requeueAfterMs: decision.requeueAfterMs } : undefined;
  }
}
