// The VirtualMachinePool controller's reconcile loop (virt-controller's watch/pool): one pool key
// in; the pool finalizer, orphans adopted and strays released, VMs created (`<pool>-<index>`, pinned
// to a ControllerRevision of the pool spec) or deleted per the pure plan (expectations guard against
// a stale cache), outdated VMs updated in place and their VMIs restarted within maxUnavailable,
// unused revisions pruned, status through the status subresource (replicas, readyReplicas and the
// labelSelector the scale subresource reads). A pool being deleted releases its VMs' finalizers and
// its own; the garbage collector deletes the VMs through their owner reference.
import { randomInt } from 'node:crypto';
import { Expectations } from '../../src/kube/expectations.ts';
import type { ReconcileResult } from '../../src/kube/workqueue.ts';
import type { Informer } from '../../src/kube/informer.ts';
import { isAlreadyExists, isNotFound, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject } from '../../src/log/logger.ts';
import { controllerOf } from '../pod-state.ts';
import { labelSelectorAsSelector as compileLabelSelector, selectorMatches } from '../../src/api/label-selector.ts';
import { errorText, ownerKey, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';
import type { ControllerContext } from '../context.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import { POOL_FINALIZER, POOL_REVISION_LABEL, VirtualMachinePoolResource, type VirtualMachinePool, type VirtualMachinePoolSpec } from '../../src/api/pool/types.ts';
import {
  claimPoolVMs,
  invalidPoolSpec,
  isOutdatedVM,
  planPoolScale,
  planProactiveUpdate,
  poolOwnerRef,
  PoolReasons,
  poolRevisionName,
  poolStatus,
  poolVM,
  unusedRevisions,
  updateCandidates,
  updatedPoolVM,
  type PoolSyncError,
} from './decisions.ts';

interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision?: number;
}

const POOL_KIND = VirtualMachinePoolResource.kind;
/** KubeVirt's defaultRetryDelay: a proactive update held back by maxUnavailable is looked at again after this. */
const RETRY_DELAY_MS = 3000;

async function parallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const run = async () => { while (next < items.length) await fn(items[next++]!); };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
}

const ignoreNotFound = (err: unknown) => { if (!isNotFound(err)) throw err; };

/**
 * The pool controller: a pool's key queued by the pool, by its VMs (whose creations and deletions
 * it expects; a VM counts as deleted once, when marked or else when gone), by their VMIs (one whose
 * revision differs from its VM's may have to be updated) and by the ControllerRevisions it makes.
 */
export function poolController(ctx: ControllerContext, pools: Informer<VirtualMachinePool>, workers = 2): Controller {
  const { vms, vmis } = ctx.informers;
  const r = new PoolReconciler(ctx, pools);
  const byVMI = (vmi: VirtualMachineInstance) => {
    const ref = controllerOf(vmi.metadata);
    if (!ref || ref.kind !== 'VirtualMachine') return undefined;
    const vm = vms.get(`${vmi.metadata?.namespace ?? ''}/${ref.name}`);
    return vm && vm.metadata?.uid === ref.uid ? ownerKey(vm, POOL_KIND) : undefined;
  };
  const b = controllerFor('pool', { queue: { qps: 1000, burst: 10_000 }, workers })
    .withExpectations(r.expectations)
    .watches(pools)
    .owns(vms, POOL_KIND, { deletions: 'once', includeOld: true })
    .watchesMapped(vmis, byVMI, { events: ['add', 'update'] });
  if (r.revisions) b.owns(r.revisions, POOL_KIND, { events: ['add'] });
  return b.complete(r);
}

export class PoolReconciler implements Reconciler {
  readonly expectations = new Expectations();
  private readonly ctx: ControllerContext;
  private readonly pools: Informer<VirtualMachinePool>;
  readonly revisions: Informer<ControllerRevision> | undefined;
  private readonly rnd: (n: number) => number;

  constructor(ctx: ControllerContext, pools: Informer<VirtualMachinePool>, rnd: (n: number) => number = (n) => randomInt(n)) {
    this.ctx = ctx;
    this.pools = pools;
    this.rnd = rnd;
    this.revisions = ctx.instancetypeInformers?.controllerRevisions as Informer<ControllerRevision> | undefined;
  }

  private revisionSpec(ns: string | undefined, name: string): VirtualMachinePoolSpec | undefined {
    const cr = this.revisions?.get(`${ns ?? ''}/${name}`);
    const data = cr?.data;
    if (data && typeof data === 'object' && 'virtualMachineTemplate' in data) return data as VirtualMachinePoolSpec;
    return undefined;
  }

  /** `ensureControllerRevision`: `<pool>-<generation>` holding the pool spec. */
  private async ensureRevision(pool: VirtualMachinePool, key: string): Promise<string> {
    const name = poolRevisionName(pool);
    if (this.revisionSpec(pool.metadata?.namespace, name)) return name;
    const cr: ControllerRevision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name, namespace: pool.metadata?.namespace, ownerReferences: [poolOwnerRef(pool)] },
      data: structuredClone(pool.spec),
      revision: pool.metadata?.generation ?? 0,
    };
    if (this.revisions) this.expectations.expectCreations(key, 1);
    try {
      await this.ctx.client.create(Resources.controllerRevisions, cr);
    } catch (err) {
      if (this.revisions) this.expectations.lowerExpectations(key, 1, 0);
      if (!isAlreadyExists(err)) throw err;
    }
    return name;
  }

  private async removeVMFinalizer(vm: VirtualMachine): Promise<void> {
    const f = vm.metadata?.finalizers ?? [];
    if (!f.includes(POOL_FINALIZER)) return;
    await this.ctx.client.patch(Resources.virtualMachines, vm.metadata?.namespace, vm.metadata!.name!, [
      { op: 'test', path: '/metadata/finalizers', value: f },
      { op: 'replace', path: '/metadata/finalizers', value: f.filter((x) => x !== POOL_FINALIZER) },
    ], 'json').catch(ignoreNotFound);
  }

  async sync(key: string): Promise<ReconcileResult | void> {
    const pool = this.pools.get(key);
    if (!pool) { this.expectations.delete(key); return; }
    const { client, recorder } = this.ctx;
    const log = forObject(this.ctx.log, { kind: POOL_KIND, namespace: pool.metadata?.namespace, name: pool.metadata?.name, uid: pool.metadata?.uid });
    const invalid = invalidPoolSpec(pool);
    if (invalid) { log.error({ why: invalid }, `${invalid}, will not re-enqueue.`); return; }
    const ns = pool.metadata?.namespace;
    const name = pool.metadata!.name!;
    const inNamespace = this.ctx.informers.vms.list().filter((v) => v.metadata?.namespace === ns);
    const claim = claimPoolVMs(pool, inNamespace);
    const ref = poolOwnerRef(pool);
    for (const vm of claim.adopt) {
      await client.patch(Resources.virtualMachines, ns, vm.metadata!.name!, { metadata: { ownerReferences: [...(vm.metadata?.ownerReferences ?? []), ref], uid: vm.metadata?.uid } }, 'merge').catch(ignoreNotFound);
    }
    for (const vm of claim.release) {
      const refs = (vm.metadata?.ownerReferences ?? []).filter((r) => r.uid !== pool.metadata?.uid);
      await client.patch(Resources.virtualMachines, ns, vm.metadata!.name!, { metadata: { ownerReferences: refs.length ? refs : null, uid: vm.metadata?.uid } }, 'merge').catch(ignoreNotFound);
    }
    const vms = claim.claimed;
    const vmiOf = (vm: VirtualMachine) => this.ctx.informers.vmis.get(`${ns ?? ''}/${vm.metadata?.name ?? ''}`);
    const revision = (n: string) => this.revisionSpec(ns, n);
    const deleting = pool.metadata?.deletionTimestamp != null;

    if (!deleting && !(pool.metadata?.finalizers ?? []).includes(POOL_FINALIZER)) {
      const f = pool.metadata?.finalizers ?? [];
      await client.patch(Resources.virtualMachinePools, ns, name, [
        { op: 'test', path: '/metadata/finalizers', value: f.length ? f : null },
        { op: f.length ? 'replace' : 'add', path: '/metadata/finalizers', value: [...f, POOL_FINALIZER] },
      ], 'json').catch(ignoreNotFound);
    }

    let syncError: PoolSyncError | undefined;
    let requeueAfterMs: number | undefined;
    if (deleting) {
      const sel = compileLabelSelector(pool.spec.selector);
      for (const vm of inNamespace) if (selectorMatches(sel, vm.metadata?.labels)) await this.removeVMFinalizer(vm);
      const f = pool.metadata?.finalizers ?? [];
      if (f.includes(POOL_FINALIZER)) {
        await client.patch(Resources.virtualMachinePools, ns, name, [
          { op: 'test', path: '/metadata/finalizers', value: f },
          { op: 'replace', path: '/metadata/finalizers', value: f.filter((x) => x !== POOL_FINALIZER) },
        ], 'json').catch(ignoreNotFound);
      }
      return;
    } else if (this.expectations.satisfied(key) && pool.spec.paused !== true) {
      const plan = planPoolScale(pool, vms, { exists: (n) => this.ctx.informers.vms.get(`${ns ?? ''}/${n}`) !== undefined, rnd: this.rnd });
      try {
        if (plan.create.length) {
          const rev = await this.ensureRevision(pool, key);
          this.expectations.expectCreations(key, plan.create.length);
          let failed: unknown;
          await parallel(plan.create, 32, async (vmName) => {
            try {
              const created = await client.create(Resources.virtualMachines, poolVM(pool, vmName, rev));
              void recorder.normal(pool, PoolReasons.SuccessfulCreate, `Created VM ${ns ?? ''}/${created.metadata?.name ?? vmName}`);
            } catch (err) {
              this.expectations.lowerExpectations(key, 1, 0);
              failed ??= err;
            }
          });
          if (failed) {
            void recorder.warning(pool, PoolReasons.FailedCreate, `Error creating VM: ${errorText(failed)}`);
            syncError = { reason: PoolReasons.FailedScaleOut, message: `error during scale out: ${errorText(failed)}` };
          }
        } else if (plan.delete.length) {
          log.info(`Removing ${plan.delete.length} VMs from pool`);
          this.expectations.expectDeletions(key, plan.delete.length);
          let failed: unknown;
          await parallel(plan.delete, 32, async (vm) => {
            try {
              await client.delete(Resources.virtualMachines, ns, vm.metadata!.name!);
            } catch (err) {
              this.expectations.lowerExpectations(key, 0, 1);
              if (isNotFound(err)) return;
              void recorder.warning(pool, PoolReasons.FailedDelete, `Error deleting virtual machine ${ns ?? ''}/${vm.metadata?.name ?? ''}: ${errorText(err)}`);
              failed ??= err;
              return;
            }
            await this.removeVMFinalizer(vm);
            void recorder.normal(pool, PoolReasons.SuccessfulDelete, `Deleted VM ${ns ?? ''}/${vm.metadata?.name ?? ''} with uid ${vm.metadata?.uid ?? ''} from pool`);
          });
          if (failed) syncError = { reason: PoolReasons.FailedScaleIn, message: `error during scale in: ${errorText(failed)}` };
        } else {
          for (const vm of plan.release) await this.removeVMFinalizer(vm);
        }
        const scaleStable = plan.diff === 0;
        if (!syncError && scaleStable && this.expectations.satisfied(key)) {
          const r = await this.update(pool, key, vms, vmiOf, revision);
          syncError = r.error;
          requeueAfterMs = r.requeueAfterMs;
          if (!syncError && r.stable && this.expectations.satisfied(key)) {
            const mine = (this.revisions?.list() ?? []).filter((cr) => cr.metadata?.namespace === ns && controllerOf(cr.metadata as never)?.uid === pool.metadata?.uid).map((cr) => cr.metadata!.name!);
            for (const n of unusedRevisions(mine, vms, vmiOf)) await client.delete(Resources.controllerRevisions, ns, n).catch(ignoreNotFound);
          }
        }
      } catch (err) {
        syncError ??= { reason: plan.create.length ? PoolReasons.FailedScaleOut : PoolReasons.FailedScaleIn, message: errorText(err) };
      }
    }

    const st = poolStatus(pool, vms, syncError, this.ctx.now());
    for (const e of st.events) void recorder.record(pool, e.type, e.reason, e.message);
    // KubeVirt also writes while not all replicas are ready (their readiness is read from the VMs).
    if (st.changed) await client.updateStatus(Resources.virtualMachinePools, { ...pool, status: st.status }).catch(ignoreNotFound);
    if (syncError) log.warn({ reason: syncError.reason, err: syncError.message }, 'pool sync failed');
    return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
  }

  /** `update`: outdated VMs rewritten from the pool's template; then (unless opportunistic) their VMIs restarted within maxUnavailable. */
  private async update(
    pool: VirtualMachinePool,
    key: string,
    vms: readonly VirtualMachine[],
    vmiOf: (vm: VirtualMachine) => VirtualMachineInstance | undefined,
    revision: (n: string) => VirtualMachinePoolSpec | undefined,
  ): Promise<{ error?: PoolSyncError; stable: boolean; requeueAfterMs?: number }> {
    const { client, recorder } = this.ctx;
    const ns = pool.metadata?.namespace;
    const candidates = updateCandidates(pool, vms);
    if (pool.spec.updateStrategy?.unmanaged !== undefined) return { stable: true };
    const outdated = candidates.filter((vm) => isOutdatedVM(pool, vm, revision));
    const upToDate = candidates.filter((vm) => !outdated.includes(vm));
    try {
      if (outdated.length) {
        const rev = await this.ensureRevision(pool, key);
        await parallel(outdated, 32, async (vm) => {
          try {
            await client.update(Resources.virtualMachines, updatedPoolVM(pool, vm, rev));
            void recorder.normal(pool, PoolReasons.SuccessfulUpdate, `Updated VM ${ns ?? ''}/${vm.metadata?.name ?? ''}`);
          } catch (err) {
            void recorder.warning(pool, PoolReasons.FailedUpdate, `Error updating virtual machine ${vm.metadata?.name ?? ''}/${ns ?? ''}: ${errorText(err)}`);
            throw err;
          }
        });
      }
      let requeueAfterMs: number | undefined;
      if (pool.spec.updateStrategy?.opportunistic === undefined) {
        const plan = planProactiveUpdate(pool, upToDate, vmiOf, revision, this.rnd);
        for (const u of plan.updates) {
          const what = `${ns ?? ''}/${u.vm.metadata?.name ?? ''}`;
          try {
            if (u.type === 'restart') await client.delete(Resources.virtualMachineInstances, ns, u.vmi.metadata!.name!).catch(ignoreNotFound);
            else if (u.type === 'vm-delete') await client.delete(Resources.virtualMachines, ns, u.vm.metadata!.name!, { propagationPolicy: 'Foreground' }).catch(ignoreNotFound);
            else {
              const labels = { ...(u.vmi.metadata?.labels ?? {}), [POOL_REVISION_LABEL]: u.vm.metadata?.labels?.[POOL_REVISION_LABEL] ?? '' };
              await client.patch(Resources.virtualMachineInstances, ns, u.vmi.metadata!.name!, u.vmi.metadata?.labels
                ? [{ op: 'test', path: '/metadata/labels', value: u.vmi.metadata.labels }, { op: 'replace', path: '/metadata/labels', value: labels }]
                : [{ op: 'add', path: '/metadata/labels', value: labels }], 'json');
            }
            void recorder.normal(pool, PoolReasons.SuccessfulDelete, `Successfully updated resource ${what}`);
          } catch (err) {
            void recorder.warning(pool, PoolReasons.FailedUpdate, `Error updating resource ${what}: ${errorText(err)}`);
            throw err;
          }
        }
        if (plan.delayed) requeueAfterMs = RETRY_DELAY_MS;
      }
      return { stable: outdated.length === 0, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
    } catch (err) {
      return { error: { reason: PoolReasons.FailedUpdate, message: `error during VM update: ${errorText(err)}` }, stable: false };
    }
  }
}
