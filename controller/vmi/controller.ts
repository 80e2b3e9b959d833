// The VirtualMachineInstance controller's reconcile loop (virt-controller's watch/vmi): one VMI key
// in. A VMI seen for the first time is defaulted (KubeVirt's mutating webhook, done here,
// idempotently); then its launcher pod is created or its pods deleted, the phase machine advances,
// the pod's readiness gate is written and the VMI is written back — updated whole while the
// controller owns it, JSON-patched field by field once the node agent does (Scheduled/Running).
// The VMI CRD has no status subresource, as in KubeVirt.
import { randomUUID } from 'node:crypto';
import { Events, EventMessages, Kinds, Reasons } from '../constants.ts';
import { Expectations } from '../../src/kube/expectations.ts';
import { WorkQueue, type ReconcileResult } from '../../src/kube/workqueue.ts';
import { keyOf } from '../../src/kube/informer.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject, type Logger } from '../../src/log/logger.ts';
import { defaultNewVirtualMachineInstance } from '../../src/api/defaults.ts';
import { controllerOf, currentVMIPod } from '../pod-state.ts';
import { errorText, jsonEqual, ownerKey, optimisticSectionPatch, type Controller } from '../shell.ts';
import type { ControllerContext } from '../context.ts';
import { podAction, updateVMIStatus } from './phase.ts';
import { renderLaunchManifest } from './launcher-pod.ts';
import { claimNames, lookupClaims, withClaimInfo } from './pvc-lookup.ts';
import { PvcNotFoundError } from './volumes.ts';
import type { SyncError } from '../vm/conditions.ts';
import type { Pod } from '../pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

export class VMIController implements Controller {
  readonly name = 'vmi';
  readonly queue = new WorkQueue<string>({ qps: 1000, burst: 10_000 });
  readonly expectations = new Expectations();
  readonly workers: number;
  private readonly ctx: ControllerContext;
  /** Pods by the UID of the VMI controlling them: no scan of all pods per sync. */
  private readonly podsByVMI = new Map<string, Map<string, Pod>>();

  constructor(ctx: ControllerContext, workers = 8) {
    this.ctx = ctx;
    this.workers = workers;
    const { vmis, pods, vms } = ctx.informers;
    vmis.on('add', (vmi) => this.queue.add(keyOf(vmi)));
    vmis.on('update', (_o, vmi) => this.queue.add(keyOf(vmi)));
    vmis.on('delete', (vmi) => { this.expectations.delete(keyOf(vmi)); this.queue.add(keyOf(vmi)); });
    const index = (pod: Pod, present: boolean) => {
      const uid = controllerOf(pod.metadata)?.uid;
      if (!uid) return;
      let m = this.podsByVMI.get(uid);
      if (present) {
        if (!m) this.podsByVMI.set(uid, (m = new Map()));
        m.set(keyOf(pod), pod);
      } else if (m) {
        m.delete(keyOf(pod));
        if (m.size === 0) this.podsByVMI.delete(uid);
      }
    };
    const vmiKey = (pod: Pod) => ownerKey(pod, Kinds.VirtualMachineInstance);
    pods.on('add', (pod) => {
      index(pod, true);
      const k = vmiKey(pod);
      if (!k) return;
      this.expectations.creationObserved(k);
      this.queue.add(k);
    });
    pods.on('update', (old, pod) => {
      index(pod, true);
      const k = vmiKey(pod);
      if (!k) return;
      // A pod marked for graceful deletion counts as deleted for expectations (client-go does the same).
      if (old.metadata?.deletionTimestamp == null && pod.metadata?.deletionTimestamp != null) this.expectations.deletionObserved(k);
      this.queue.add(k);
    });
    pods.on('delete', (pod) => {
      index(pod, false);
      const k = vmiKey(pod);
      if (!k) return;
      this.expectations.deletionObserved(k);
      this.queue.add(k);
    });
    // A VM going away lets the VMI controller drop the VM controller's finalizer of a final VMI.
    vms.on('delete', (vm) => { if (vmis.get(keyOf(vm))) this.queue.add(keyOf(vm)); });
  }

  podsOf(vmi: VirtualMachineInstance): Pod[] {
    const m = this.podsByVMI.get(vmi.metadata?.uid ?? '');
    return m ? [...m.values()] : [];
  }

  private hasOwnerVM(vmi: VirtualMachineInstance): boolean {
    const ref = controllerOf(vmi.metadata);
    if (!ref || ref.kind !== Kinds.VirtualMachine) return false;
    const vm = this.ctx.informers.vms.get(`${vmi.metadata?.namespace}/${ref.name}`);
    return vm !== undefined && vm.metadata?.uid === ref.uid;
  }

  async sync(key: string): Promise<ReconcileResult | void> {
    const vmi = this.ctx.informers.vmis.get(key);
    if (!vmi) { this.expectations.delete(key); return; }
    const { client } = this.ctx;
    const log = forObject(this.ctx.log, { kind: Kinds.VirtualMachineInstance, namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid });

    // First sight: what KubeVirt's VMI mutating webhook would have done at create.
    if (!vmi.status?.phase && vmi.metadata?.deletionTimestamp == null) {
      const defaulted = defaultNewVirtualMachineInstance(vmi, { config: this.ctx.config, now: this.ctx.now, randomUUID });
      await client.update(Resources.virtualMachineInstances, defaulted).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
      log.debug('defaulted the new VMI');
      return;
    }

    const pods = this.podsOf(vmi);
    const current = currentVMIPod(vmi.metadata?.uid, vmi.status?.nodeName, pods);
    let syncError: SyncError | undefined;
    if (this.expectations.satisfied(key)) {
      const action = podAction(vmi, current, pods);
      if (action.type === 'create-pod') syncError = await this.createPod(vmi, log);
      else if (action.type === 'delete-pods') syncError = await this.deletePods(vmi, action.names, log);
    }
    // KubeVirt re-enqueues on its PVC informer's events; without one, look again shortly.
    const requeue: ReconcileResult | undefined = syncError?.reason === Reasons.FailedPvcNotFound ? { requeueAfterMs: 1000 } : undefined;

    const upd = updateVMIStatus(vmi, {
      pod: current,
      ownedPods: pods,
      now: this.ctx.now(),
      launcherImage: this.ctx.launcherImage,
      syncError,
      hasOwnerVM: this.hasOwnerVM(vmi),
    });
    if (upd.podCondition && current) {
      await client.patch(Resources.pods, current.metadata?.namespace, current.metadata!.name!, { status: { conditions: [upd.podCondition] } }, 'strategic', 'status')
        .catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    }
    // What the launcher needs to know about the VMI's claims (KubeVirt's updateVolumeStatus).
    let next = upd.vmi;
    if (claimNames(vmi).length > 0 && next.status?.phase !== 'Succeeded' && next.status?.phase !== 'Failed') {
      const volumeStatus = withClaimInfo(next, await lookupClaims(client, vmi));
      if (volumeStatus) next = { ...next, status: { ...next.status, volumeStatus } };
    }
    if (jsonEqual(next, vmi)) return requeue;
    try {
      if (upd.write === 'update') {
        await client.update(Resources.virtualMachineInstances, next);
      } else {
        const ops = optimisticSectionPatch(vmi as unknown as Record<string, unknown>, next as unknown as Record<string, unknown>, ['metadata', 'status']);
        if (ops.length > 0) await client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, ops, 'json');
      }
    } catch (err) {
      if (isNotFound(err)) return requeue;
      throw err;
    }
    if (next.status?.phase !== vmi.status?.phase) log.info({ from: vmi.status?.phase, to: next.status?.phase }, 'VMI phase changed');
    return requeue;
  }

  private async createPod(vmi: VirtualMachineInstance, log: Logger): Promise<SyncError | undefined> {
    const key = keyOf(vmi);
    let pod: Pod;
    try {
      pod = renderLaunchManifest(vmi, this.ctx.renderConfig, { pvcs: await lookupClaims(this.ctx.client, vmi) });
    } catch (err) {
      if (err instanceof PvcNotFoundError) return { reason: err.reason, message: err.message };
      void this.ctx.recorder.warning(vmi, Events.FailedCreate, EventMessages.failedCreatePod(errorText(err)));
      return { reason: Events.FailedCreate, message: errorText(err) };
    }
    this.expectations.expectCreations(key, 1);
    try {
      const created = await this.ctx.client.create(Resources.pods, pod);
      void this.ctx.recorder.normal(vmi, Events.SuccessfulCreate, EventMessages.createdPod(created.metadata?.name ?? ''));
      log.info({ pod: created.metadata?.name }, 'created the launcher pod');
      return undefined;
    } catch (err) {
      this.expectations.lowerExpectations(key, 1, 0);
      void this.ctx.recorder.warning(vmi, Events.FailedCreate, EventMessages.failedCreatePod(errorText(err)));
      log.warn({ err: errorText(err) }, 'could not create the launcher pod');
      return { reason: Events.FailedCreate, message: errorText(err) };
    }
  }

  private async deletePods(vmi: VirtualMachineInstance, names: readonly string[], log: Logger): Promise<SyncError | undefined> {
    const key = keyOf(vmi);
    let failure: SyncError | undefined;
    for (const name of names) {
      this.expectations.expectDeletions(key, 1);
      try {
        await this.ctx.client.delete(Resources.pods, vmi.metadata?.namespace, name);
        void this.ctx.recorder.normal(vmi, Events.SuccessfulDelete, EventMessages.deletedPod(name));
        log.info({ pod: name }, 'deleted the launcher pod');
      } catch (err) {
        this.expectations.lowerExpectations(key, 0, 1);
        if (isNotFound(err)) continue;
        void this.ctx.recorder.warning(vmi, Events.FailedDelete, EventMessages.failedDeletePod(name));
        failure = { reason: Events.FailedDelete, message: errorText(err) };
      }
    }
    return failure;
  }
}
