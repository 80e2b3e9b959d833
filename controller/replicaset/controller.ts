// The VirtualMachineInstanceReplicaSet controller's reconcile loop (virt-controller's
// watch/replicaset): one replica set key in; orphans adopted and strays released, VMIs created or
// deleted per the pure scale plan (expectations guard against a stale cache), status written
// through the status subresource (replicas, readyReplicas, labelSelector for the scale subresource).
import { EventReason, Kind } from '../../src/api/constants.ts';
import { EventMessages } from '../constants.ts';
import { Expectations } from '../../src/kube/expectations.ts';
import type { ReconcileResult } from '../../src/kube/workqueue.ts';
import { keyOf } from '../../src/kube/informer.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject } from '../../src/log/logger.ts';
import { controllerOf } from '../pod-state.ts';
import { labelSelectorAsSelector as compileLabelSelector, selectorMatches } from '../../src/api/label-selector.ts';
import { errorText, ownerKey, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';
import type { ControllerContext } from '../context.ts';
import { claimVMIs, invalidReplicaSetSpec, partitionVMIs, planScale, replicaSetOwnerRef, replicaSetStatus } from './scale.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../src/api/types.ts';

/** Runs `fn` over `items`, at most `limit` at a time (KubeVirt creates a burst in parallel). */
async function parallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const run = async () => { while (next < items.length) await fn(items[next++]!); };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
}

/**
 * The replica set controller: a replica set's key queued by the replica set and by its VMIs (whose
 * creations and deletions it expects; a VMI marked for deletion counts as deleted at once) — an
 * orphan VMI by every replica set of its namespace whose selector matches it.
 */
export function replicaSetController(ctx: ControllerContext, workers = 2): Controller {
  const { replicaSets, vmis } = ctx.informers;
  const r = new ReplicaSetReconciler(ctx);
  const owners = (vmi: VirtualMachineInstance): string[] => {
    const k = ownerKey(vmi, Kind.VirtualMachineInstanceReplicaSet);
    if (k) return [k];
    if (controllerOf(vmi.metadata)) return [];
    // An orphan: every replica set of its namespace whose selector matches may adopt it.
    return replicaSets.list()
      .filter((rs) => rs.metadata?.namespace === vmi.metadata?.namespace && rs.spec.selector && selectorMatches(compileLabelSelector(rs.spec.selector), vmi.metadata?.labels))
      .map((rs) => keyOf(rs));
  };
  return controllerFor('replicaset', { queue: { name: 'virt-controller-replicaset', qps: 1000, burst: 10_000 }, workers })
    .withExpectations(r.expectations)
    .watches(replicaSets)
    .owns(vmis, owners, { deletions: 'on-mark-and-delete', includeOld: true })
    .complete(r);
}

export class ReplicaSetReconciler implements Reconciler {
  readonly expectations = new Expectations();
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async sync(key: string): Promise<ReconcileResult | void> {
    const rs = this.ctx.informers.replicaSets.get(key);
    if (!rs) { this.expectations.delete(key); return; }
    const { client, recorder } = this.ctx;
    const log = forObject(this.ctx.log, { kind: Kind.VirtualMachineInstanceReplicaSet, namespace: rs.metadata?.namespace, name: rs.metadata?.name, uid: rs.metadata?.uid });
    const invalid = invalidReplicaSetSpec(rs);
    if (invalid) { log.error({ why: invalid }, 'invalid replica set: not acting on it'); return; }
    const ns = rs.metadata?.namespace;
    const inNamespace = this.ctx.informers.vmis.list().filter((v) => v.metadata?.namespace === ns);
    const claim = claimVMIs(rs, inNamespace);
    const ref = replicaSetOwnerRef(rs);
    for (const vmi of claim.adopt) {
      await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, {
        metadata: { ownerReferences: [...(vmi.metadata?.ownerReferences ?? []), ref], uid: vmi.metadata?.uid },
      }, 'merge').catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    }
    for (const vmi of claim.release) {
      const refs = (vmi.metadata?.ownerReferences ?? []).filter((r) => r.uid !== rs.metadata?.uid);
      await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, { metadata: { ownerReferences: refs.length ? refs : null, uid: vmi.metadata?.uid } }, 'merge')
        .catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    }
    const partition = partitionVMIs(claim.claimed);
    const plan = planScale(rs, partition, { expectationsSatisfied: this.expectations.satisfied(key) });
    let scaleError: Error | undefined;
    if (plan.create.length > 0) {
      this.expectations.expectCreations(key, plan.create.length);
      await parallel(plan.create, 32, async (vmi) => {
        try {
          const created = await client.create(Resources.virtualMachineInstances, vmi);
          void recorder.normal(rs, EventReason.SuccessfulCreate, EventMessages.startedVMI(created.metadata?.name ?? ''));
        } catch (err) {
          this.expectations.lowerExpectations(key, 1, 0);
          scaleError = new Error(`failed to create virtual machine instance: ${errorText(err)}`);
          void recorder.warning(rs, EventReason.FailedCreate, EventMessages.failedCreateVMI(errorText(err)));
        }
      });
    }
    const byName = new Map(claim.claimed.map((v) => [v.metadata?.name ?? '', v]));
    const deletions = [...plan.deleteActive.map((n) => ({ n, finished: false })), ...plan.cleanup.map((n) => ({ n, finished: true }))];
    if (deletions.length > 0) {
      this.expectations.expectDeletions(key, deletions.length);
      await parallel(deletions, 32, async ({ n, finished }) => {
        const vmi = byName.get(n);
        try {
          await client.delete(Resources.virtualMachineInstances, ns, n);
          void recorder.normal(rs, EventReason.SuccessfulDelete, finished ? EventMessages.deletedFinishedVMI(vmi?.metadata?.uid ?? '') : EventMessages.stoppedVMI(vmi?.metadata?.uid ?? ''));
        } catch (err) {
          this.expectations.lowerExpectations(key, 0, 1);
          if (isNotFound(err)) return;
          scaleError = new Error(`failed to delete virtual machine instance ${n}: ${errorText(err)}`);
          void recorder.warning(rs, EventReason.FailedDelete, EventMessages.failedDeleteVMI(n, errorText(err)));
        }
      });
    }
    const st = replicaSetStatus(rs, partition.active, scaleError, this.ctx.now());
    if (st.changed) {
      await client.updateStatus(Resources.virtualMachineInstanceReplicaSets, { ...rs, status: st.status }).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
      if (st.event) void recorder.normal(rs, st.event.reason, st.event.message);
    }
    if (scaleError) throw scaleError;
  }
}
