// The VirtualMachineInstance controller's reconcile loop (virt-controller's watch/vmi): one VMI key
// in. A VMI seen without a phase is defaulted (KubeVirt's mutating webhook, done here, idempotently,
// by mutate-new.ts; the VM controller creates its VMIs mutated already); then its launcher pod is
// created or its pods deleted, the phase machine advances,
// the pod's readiness gate is written and the VMI is written back — updated whole while the
// controller owns it, JSON-patched field by field once the node agent does (Scheduled/Running).
// The VMI CRD has no status subresource, as in KubeVirt. Volumes hotplugged into a running VMI get
// their attachment pod here (controller/vmi/attachment-pod.ts), under the same expectations.
import { ConditionReason, EventReason, Kind, isFinalVMIPhase } from '../../src/api/constants.ts';
import { EventMessages } from '../constants.ts';
import { Expectations } from '../../src/kube/expectations.ts';
import type { ReconcileResult } from '../../src/kube/workqueue.ts';
import { keyOf } from '../../src/kube/informer.ts';
import { isNotFound, type KubeObject } from '../../src/kube/client.ts';
import type { DataVolume } from '../../src/api/cdi/types.ts';
import { dataVolumeNames, dataVolumesReadyForPod } from './data-volumes.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject, type Logger } from '../../src/log/logger.ts';
import { mutateNewVMI } from './mutate-new.ts';
import { controllerOf, currentVMIPod } from '../pod-state.ts';
import { errorText, jsonEqual, ownerKey, optimisticSectionPatch, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';
import type { ControllerContext } from '../context.ts';
import { podAction, updateVMIStatus } from './phase.ts';
import { renderLaunchManifest } from './launcher-pod.ts';
import { claimNames, lookupClaims, withClaimInfo, type ClaimFacts } from './pvc-lookup.ts';
import { attachmentPodVMIKey, isAttachmentPod, planAttachmentPods, renderAttachmentPod, withAttachmentVolumeStatus, type AttachmentPlan, type HotplugVolume } from './attachment-pod.ts';
import { PvcNotFoundError } from './volumes.ts';
import type { SyncError } from '../vm/conditions.ts';
import type { Pod } from '../pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { deschedulerAnnotationsPatch } from './descheduler.ts';

/**
 * The VMI controller: a VMI's key queued by the VMI, by its launcher and attachment pods (whose
 * creations and deletions it expects; a pod marked for graceful deletion counts as deleted, as
 * client-go counts it) and by the deletion of its VM.
 */
export function vmiController(ctx: ControllerContext, workers = 8): Controller {
  const { vmis, pods, vms } = ctx.informers;
  const r = new VMIReconciler(ctx);
  return controllerFor('vmi', { queue: { name: 'virt-controller-vmi', qps: 1000, burst: 10_000 }, workers })
    .withExpectations(r.expectations)
    .watches(vmis)
    .owns(pods, (pod) => ownerKey(pod, Kind.VirtualMachineInstance) ?? attachmentPodVMIKey(pod), { deletions: 'on-mark-and-delete' })
    // A VM going away lets the VMI controller drop the VM controller's finalizer of a final VMI.
    .watchesMapped(vms, (vm) => (vmis.get(keyOf(vm)) ? keyOf(vm) : undefined), { events: ['delete'] })
    .complete(r);
}

export class VMIReconciler implements Reconciler {
  readonly expectations = new Expectations();
  private readonly ctx: ControllerContext;
  /**
   * Pods by the UID of their controller — a VMI's launcher pods, a launcher pod's attachment pods:
   * no scan of all pods per sync.
   */
  private readonly podsByOwner = new Map<string, Map<string, Pod>>();

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    const index = (pod: Pod, present: boolean) => {
      const uid = controllerOf(pod.metadata)?.uid;
      if (!uid) return;
      let m = this.podsByOwner.get(uid);
      if (present) {
        if (!m) this.podsByOwner.set(uid, (m = new Map()));
        m.set(keyOf(pod), pod);
      } else if (m) {
        m.delete(keyOf(pod));
        if (m.size === 0) this.podsByOwner.delete(uid);
      }
    };
    const { pods } = ctx.informers;
    pods.on('add', (pod) => index(pod, true));
    pods.on('update', (_old, pod) => index(pod, true));
    pods.on('delete', (pod) => index(pod, false));
  }

  podsOf(vmi: VirtualMachineInstance): Pod[] {
    const m = this.podsByOwner.get(vmi.metadata?.uid ?? '');
    return m ? [...m.values()] : [];
  }

  /** The attachment pods a launcher pod owns. */
  attachmentPodsOf(launcher: Pod): Pod[] {
    const m = this.podsByOwner.get(launcher.metadata?.uid ?? '');
    return m ? [...m.values()].filter(isAttachmentPod) : [];
  }

  private hasOwnerVM(vmi: VirtualMachineInstance): boolean {
    const ref = controllerOf(vmi.metadata);
    if (!ref || ref.kind !== Kind.VirtualMachine) return false;
    const vm = this.ctx.informers.vms.get(`${vmi.metadata?.namespace}/${ref.name}`);
    return vm !== undefined && vm.metadata?.uid === ref.uid;
  }

  async sync(key: string): Promise<ReconcileResult | void> {
    const vmi = this.ctx.informers.vmis.get(key);
    if (!vmi) { this.expectations.delete(key); return; }
    const { client } = this.ctx;
    const log = forObject(this.ctx.log, { kind: Kind.VirtualMachineInstance, namespace: vmi.metadata?.namespace, name: vmi.metadata?.name, uid: vmi.metadata?.uid });

    // A VMI created unmutated (not by the VM controller): what KubeVirt's VMI mutating webhook would have done at create.
    if (!vmi.status?.phase && vmi.metadata?.deletionTimestamp == null) {
      const m = mutateNewVMI(this.ctx, vmi, (err) => {
        log.warn({ err: err.message }, 'presets not applied');
        void this.ctx.recorder.warning(vmi, 'FailedPresets', err.message);
      });
      for (const n of m.notes) log.warn(n);
      if (m.applied.length) log.info({ presets: m.applied }, 'applied VirtualMachineInstancePresets');
      await client.update(Resources.virtualMachineInstances, m.vmi).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
      log.debug('defaulted the new VMI');
      return;
    }

    const pods = this.podsOf(vmi);
    const current = currentVMIPod(vmi.metadata?.uid, vmi.status?.nodeName, pods);
    const claims = claimNames(vmi).length > 0 && !isFinalVMIPhase(vmi.status?.phase) ? await lookupClaims(client, vmi) : new Map<string, ClaimFacts>();
    let syncError: SyncError | undefined;
    let attachments: AttachmentPlan | undefined;
    // DataVolumes still populating hold the launcher pod back; a failed one fails the VMI.
    let dataVolumes: ReturnType<typeof dataVolumesReadyForPod> = { ready: true, failed: false };
    if (this.expectations.satisfied(key)) {
      const action = podAction(vmi, current, pods);
      if (action.type === 'create-pod' && dataVolumeNames(vmi).length > 0) dataVolumes = dataVolumesReadyForPod(vmi, await this.dataVolumeLookup(vmi));
      if (!dataVolumes.ready) log.debug({ dataVolume: dataVolumes.waitingFor }, 'delaying pod creation while the DataVolume populates');
      else if (action.type === 'create-pod') syncError = await this.createPod(vmi, claims, log);
      else if (action.type === 'delete-pods') syncError = await this.deletePods(vmi, action.names, log);
      attachments = planAttachmentPods(vmi, current, pods.map((p) => ({ launcher: p, attachmentPods: this.attachmentPodsOf(p) })), claims);
      if (attachments.create && current) {
        const made = await this.createAttachmentPod(vmi, current, attachments.create, claims, log);
        if ('pod' in made) attachments = { ...attachments, current: made.pod };
        else syncError ??= made.error;
      }
      syncError ??= await this.deletePods(vmi, attachments.delete, log, 'attachment');
    }
    // KubeVirt re-enqueues on its PVC informer's events; without one, look again shortly.
    const requeue: ReconcileResult | undefined = syncError?.reason === ConditionReason.FailedPvcNotFound || attachments?.waiting || (!dataVolumes.ready && !dataVolumes.failed) ? { requeueAfterMs: 1000 } : undefined;

    const upd = updateVMIStatus(vmi, {
      pod: current,
      ownedPods: pods,
      now: this.ctx.now(),
      launcherImage: this.ctx.launcherImage,
      syncError,
      hasOwnerVM: this.hasOwnerVM(vmi),
      hasFailedDataVolume: dataVolumes.failed,
    });
    const deschedulerOps = current ? deschedulerAnnotationsPatch(vmi, current) : [];
    if (deschedulerOps.length > 0 && current) {
      await client.patch(Resources.pods, current.metadata?.namespace, current.metadata!.name!, deschedulerOps, 'json')
        .catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    }
    if (upd.podCondition && current) {
      await client.patch(Resources.pods, current.metadata?.namespace, current.metadata!.name!, { status: { conditions: [upd.podCondition] } }, 'strategic', 'status')
        .catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    }
    // What the launcher needs to know about the VMI's claims (KubeVirt's updateVolumeStatus), and
    // where its hotplugged ones are attached.
    let next = upd.vmi;
    if (claims.size > 0 && !isFinalVMIPhase(next.status?.phase)) {
      const volumeStatus = withClaimInfo(next, claims);
      if (volumeStatus) next = { ...next, status: { ...next.status, volumeStatus } };
      if (current && attachments) {
        const hot = withAttachmentVolumeStatus(next, current, attachments, claims);
        if (hot.volumeStatus) next = { ...next, status: { ...next.status, volumeStatus: hot.volumeStatus } };
        for (const ev of hot.events) void this.ctx.recorder.normal(vmi, ev.reason, ev.message);
      }
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

  /** The VMI's DataVolumes by name: the informer's copies, else (not synced: no CDI yet) from the API. */
  private async dataVolumeLookup(vmi: VirtualMachineInstance): Promise<(name: string) => DataVolume | undefined> {
    const ns = vmi.metadata?.namespace;
    const found = new Map<string, DataVolume>();
    for (const name of dataVolumeNames(vmi)) {
      const cached = this.ctx.dataVolumes?.get(`${ns ?? ''}/${name}`);
      if (cached) { found.set(name, cached); continue; }
      try { found.set(name, await this.ctx.client.get<DataVolume & KubeObject>(Resources.dataVolumes, ns, name)); } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return (name) => found.get(name);
  }

  private async createPod(vmi: VirtualMachineInstance, claims: ReadonlyMap<string, ClaimFacts>, log: Logger): Promise<SyncError | undefined> {
    const key = keyOf(vmi);
    let pod: Pod;
    try {
      pod = renderLaunchManifest(vmi, this.ctx.renderConfig, { pvcs: claims });
    } catch (err) {
      if (err instanceof PvcNotFoundError) {
        // KubeVirt's areDataVolumesReady: a Normal event and the sync error, waiting for the claim to appear
        // (recorded once while the VMI already says so: this controller looks again every second).
        const message = EventMessages.pvcNotFound(err.namespace, err.claimName);
        const said = vmi.status?.conditions?.some((c) => c.type === 'Synchronized' && c.reason === err.reason && c.message === message);
        if (!said) void this.ctx.recorder.normal(vmi, EventReason.FailedPvcNotFound, message);
        return { reason: err.reason, message };
      }
      void this.ctx.recorder.warning(vmi, EventReason.FailedCreate, EventMessages.failedCreatePod(errorText(err)));
      return { reason: EventReason.FailedCreate, message: errorText(err) };
    }
    this.expectations.expectCreations(key, 1);
    try {
      const created = await this.ctx.client.create(Resources.pods, pod);
      void this.ctx.recorder.normal(vmi, EventReason.SuccessfulCreate, EventMessages.createdPod(created.metadata?.name ?? ''));
      log.info({ pod: created.metadata?.name }, 'created the launcher pod');
      return undefined;
    } catch (err) {
      this.expectations.lowerExpectations(key, 1, 0);
      void this.ctx.recorder.warning(vmi, EventReason.FailedCreate, EventMessages.failedCreatePod(errorText(err)));
      log.warn({ err: errorText(err) }, 'could not create the launcher pod');
      return { reason: EventReason.FailedCreate, message: errorText(err) };
    }
  }

  /** Deletes launcher pods, or attachment pods (without a grace period, as KubeVirt's deleteAttachmentPod). */
  private async deletePods(vmi: VirtualMachineInstance, names: readonly string[], log: Logger, kind: 'launcher' | 'attachment' = 'launcher'): Promise<SyncError | undefined> {
    const key = keyOf(vmi);
    const attachment = kind === 'attachment';
    let failure: SyncError | undefined;
    for (const name of names) {
      this.expectations.expectDeletions(key, 1);
      try {
        await this.ctx.client.delete(Resources.pods, vmi.metadata?.namespace, name, attachment ? { gracePeriodSeconds: 0 } : {});
        void this.ctx.recorder.normal(vmi, EventReason.SuccessfulDelete, attachment ? EventMessages.deletedAttachmentPod(name) : EventMessages.deletedPod(name));
        log.info({ pod: name }, `deleted the ${kind} pod`);
      } catch (err) {
        this.expectations.lowerExpectations(key, 0, 1);
        if (isNotFound(err)) continue;
        void this.ctx.recorder.warning(vmi, EventReason.FailedDelete, attachment ? EventMessages.failedDeleteAttachmentPod(name) : EventMessages.failedDeletePod(name));
        failure = { reason: EventReason.FailedDelete, message: errorText(err) };
      }
    }
    return failure;
  }

  /** handleHotplugVolumes' createAttachmentPod: the created pod, or the sync error (FailedCreate). */
  private async createAttachmentPod(vmi: VirtualMachineInstance, launcher: Pod, volumes: readonly HotplugVolume[], claims: ReadonlyMap<string, ClaimFacts>, log: Logger): Promise<{ pod: Pod } | { error: SyncError }> {
    const key = keyOf(vmi);
    const pod = renderAttachmentPod(vmi, launcher, volumes, claims, this.ctx.renderConfig);
    this.expectations.expectCreations(key, 1);
    try {
      const created = await this.ctx.client.create(Resources.pods, pod);
      void this.ctx.recorder.normal(vmi, EventReason.SuccessfulCreate, EventMessages.createdAttachmentPod(created.metadata?.name ?? ''));
      log.info({ pod: created.metadata?.name, volumes: volumes.map((v) => v.name) }, 'created the attachment pod');
      return { pod: created };
    } catch (err) {
      this.expectations.lowerExpectations(key, 1, 0);
      void this.ctx.recorder.warning(vmi, EventReason.FailedCreate, EventMessages.failedCreateAttachmentPod(errorText(err)));
      log.warn({ err: errorText(err) }, 'could not create the attachment pod');
      return { error: { reason: EventReason.FailedCreate, message: `Error creating attachment pod ${errorText(err)}` } };
    }
  }
}
