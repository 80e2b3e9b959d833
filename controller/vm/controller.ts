// The VirtualMachine controller's reconcile loop (virt-controller's watch/vm/vm.go): one VM key
// in; the VM's finalizer, its VMI started or stopped per run strategy, and its status written
// through the status subresource. Decisions are the pure functions next to this file.
import { EventMessages } from '../constants.ts';
import { Expectations } from '../../src/kube/expectations.ts';
import type { ReconcileResult } from '../../src/kube/workqueue.ts';
import { keyOf } from '../../src/kube/informer.ts';
import { isConflict, isFailedPatchTest, isNotFound } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject } from '../../src/log/logger.ts';
import { controllerOf } from '../pod-state.ts';
import { errorText, jsonEqual, ownerKey, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';
import type { ControllerContext } from '../context.ts';
import { isSetToStart, syncRunStrategy } from './run-strategy.ts';
import { tryEffectiveRunStrategy } from '../../src/api/run-strategy.ts';
import { computeVMStatus } from './status.ts';
import { vmiForStart, type StartInstancetypes } from './vmi-from-vm.ts';
import { mutateNewVMI } from '../vmi/mutate-new.ts';
import { PresetConflictError } from '../../src/api/preset/apply.ts';
import { DefaultingError } from '../../src/api/defaults.ts';
import { instancetypeWatches, VMInstancetypeHandler, type InstancetypeSyncResult } from './instancetype.ts';
import { InstancetypeApplyError } from '../../src/api/instancetype/apply.ts';
import { InstancetypeMessages } from '../../src/api/instancetype/constants.ts';
import { vmFinalizerDecision } from './finalizer.ts';
import { planVolumeRequests } from './volume-requests.ts';
import { MemoryDumpErrorReason, claimAnnotationPatch, planMemoryDump } from './memory-dump.ts';
import { planLiveUpdate } from './live-update.ts';
import { isVMRolloutStrategyLiveUpdate } from '../../src/api/cluster-config.ts';
import { toRFC3339Seconds } from './backoff.ts';
import { findCondition, removeCondition, updateCondition } from '../condition-list.ts';
import { VMConditionType, API_VERSION, ConditionReason, EventReason, Finalizer, Kind } from '../../src/api/constants.ts';
import type { SyncError } from './conditions.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import type { DataVolume } from '../../src/api/cdi/types.ts';
import { isAlreadyExists } from '../../src/kube/client.ts';
import { DataVolumeEvents, dataVolumeError, dataVolumeProvisioning, immediateDataVolumeCreation, planDataVolumes, type DataVolumeLookup } from './datavolumes.ts';

/** How soon a VM whose instance type or preference could not be found or pinned is looked at again. */
const INSTANCETYPE_RETRY_MS = 5000;

/**
 * The VM controller: a VM's key queued by the VM, by its VMI (whose creation and deletion it
 * expects), by its DataVolumes and by the instance types, preferences and revisions it names.
 */
export function vmController(ctx: ControllerContext, workers = 8): Controller {
  const { vms, vmis } = ctx.informers;
  const r = new VMReconciler(ctx);
  const b = controllerFor('vm', { queue: { name: 'virt-controller-vm', qps: 1000, burst: 10_000 }, workers })
    .withExpectations(r.expectations)
    .watches(vms)
    .owns(vmis, Kind.VirtualMachine);
  // A VM's DataVolumes (their phases decide when it starts and its printable status).
  if (ctx.dataVolumes) b.watchesMapped(ctx.dataVolumes, (dv) => ownerKey(dv, Kind.VirtualMachine));
  for (const w of instancetypeWatches(ctx)) b.watchesMapped(w.informer, w.vms, { events: ['add', 'update'] });
  return b.complete(r);
}

export class VMReconciler implements Reconciler {
  readonly expectations = new Expectations();
  private readonly ctx: ControllerContext;
  private readonly instancetypes: VMInstancetypeHandler;
  /** namespace/claim → the memory dump annotation last written (no read of the claim on every sync of a failed dump). */
  private readonly annotatedClaims = new Map<string, string>();
  private dataVolumesSynced = false;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
    this.instancetypes = new VMInstancetypeHandler(ctx);
    void ctx.dataVolumes?.hasSynced.then(() => { this.dataVolumesSynced = true; });
  }

  /** The VMI of this VM: same name, controlled by the VM (an orphan of that name counts too, as KubeVirt adopts it). */
  private vmiOf(vm: VirtualMachine): VirtualMachineInstance | undefined {
    const vmi = this.ctx.informers.vmis.get(keyOf(vm));
    if (!vmi) return undefined;
    const ref = controllerOf(vmi.metadata);
    if (ref && ref.uid !== vm.metadata?.uid) return undefined;
    return vmi;
  }

  async sync(key: string): Promise<ReconcileResult | void> {
    const vm = this.ctx.informers.vms.get(key);
    if (!vm) { this.expectations.delete(key); return; }
    const { client } = this.ctx;
    const log = forObject(this.ctx.log, { kind: Kind.VirtualMachine, namespace: vm.metadata?.namespace, name: vm.metadata?.name, uid: vm.metadata?.uid });
    const vmi = this.vmiOf(vm);
    const ns = vm.metadata?.namespace;
    const now = this.ctx.now();
    let syncError: SyncError | undefined;
    let requeueAfterMs: number | undefined;
    const satisfied = this.expectations.satisfied(key);
    let status = vm.status;

    // An orphan VMI of the VM's name is adopted (KubeVirt's ClaimVirtualMachineInstanceByName).
    if (vmi && !controllerOf(vmi.metadata) && vm.metadata?.deletionTimestamp == null && vmi.metadata?.deletionTimestamp == null) {
      const ref = { apiVersion: API_VERSION, kind: Kind.VirtualMachine, name: vm.metadata!.name!, uid: vm.metadata!.uid!, controller: true, blockOwnerDeletion: true };
      await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, [
        { op: 'test', path: '/metadata/uid', value: vmi.metadata?.uid },
        vmi.metadata?.ownerReferences ? { op: 'add', path: '/metadata/ownerReferences/-', value: ref } : { op: 'add', path: '/metadata/ownerReferences', value: [ref] },
      ], 'json');
      log.info({ vmi: vmi.metadata?.name }, 'adopted an orphan VMI');
      return; // the update comes back through the informer
    }

    const fin = vmFinalizerDecision(vm, vmi);
    if (fin.type === 'ensure-finalizer' && fin.add) {
      await client.patch(Resources.virtualMachines, ns, vm.metadata!.name!, [
        { op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion },
        vm.metadata?.finalizers ? { op: 'add', path: '/metadata/finalizers/-', value: Finalizer.VirtualMachineController } : { op: 'add', path: '/metadata/finalizers', value: [Finalizer.VirtualMachineController] },
      ], 'json');
      return; // the update comes back through the informer
    }
    // Instance types and preferences (instancetype.ts): found and pinned, their refs recorded; a VM
    // naming one that does not exist fails the sync and does not start.
    let instancetypes: InstancetypeSyncResult = { type: 'none' };
    if (fin.type === 'ensure-finalizer') {
      instancetypes = await this.instancetypes.sync(vm, log);
      if (instancetypes.type === 'patched') return;
      // KubeVirt requeues a failed sync (rate limited); a missing object appearing requeues at once (instancetypeWatches).
      if (instancetypes.type === 'failed') { syncError = instancetypes.error; requeueAfterMs = INSTANCETYPE_RETRY_MS; }
      if (instancetypes.type === 'ok') {
        const { instancetypeRef, preferenceRef } = instancetypes;
        status = { ...(status ?? {}), ...(instancetypeRef ? { instancetypeRef } : {}), ...(preferenceRef ? { preferenceRef } : {}) };
      }
    }
    const startWith: StartInstancetypes | undefined = instancetypes.type === 'ok' ? { instancetype: instancetypes.instancetype, preference: instancetypes.preference, config: this.ctx.config } : undefined;

    // DataVolumes of dataVolumeTemplates (handleDataVolumes): created and owned by the VM; the VM
    // does not start until each is ready (a Halted VM's are still created, as KubeVirt does).
    const dvLookup = await this.dataVolumeLookup(vm);
    let dataVolumesReady = true;
    if (fin.type === 'ensure-finalizer' && instancetypes.type !== 'failed' && (vm.spec.dataVolumeTemplates?.length ?? 0) > 0 && immediateDataVolumeCreation(vm)) {
      const dvErr = await this.handleDataVolumes(vm, dvLookup, log);
      dataVolumesReady = dvErr.ready;
      if (dvErr.error) syncError = dvErr.error;
    }

    if (fin.type === 'remove-finalizer') {
      if (fin.remove) await this.removeFinalizer(vm, Finalizer.VirtualMachineController);
    } else if (fin.type === 'delete-vmi') {
      if (!fin.alreadyDeleting && satisfied && vmi) await this.deleteVMI(vm, vmi, log);
    } else if (satisfied && instancetypes.type !== 'failed' && (dataVolumesReady || tryEffectiveRunStrategy(vm) === 'Halted')) {
      try {
        const decision = syncRunStrategy(vm, vmi, now);
        for (const a of decision.actions) {
          switch (a.type) {
            case 'start': {
              const err = await this.startVMI(vm, log, startWith);
              if (err) syncError = err;
              break;
            }
            case 'delete-vmi':
              if (vmi) await this.deleteVMI(vm, vmi, log);
              break;
            case 'requeue':
              requeueAfterMs = a.afterMs;
              break;
            case 'update-vm':
              await client.patch(Resources.virtualMachines, ns, vm.metadata!.name!, a.patch, 'merge');
              break;
            case 'append-state-change':
              status = { ...(status ?? {}), stateChangeRequests: [...(status?.stateChangeRequests ?? []), a.request] };
              break;
          }
        }
      } catch (err) {
        if (isConflict(err)) throw err;
        syncError = { reason: EventReason.FailedCreate, message: errorText(err) };
        log.warn({ err: errorText(err) }, 'run strategy sync failed');
      }
    }

    // Volume hotplug requests (addvolume/removevolume): into the template and the running VMI.
    if (satisfied && vm.metadata?.deletionTimestamp == null && (status?.volumeRequests?.length ?? 0) > 0) {
      try {
        const vr = planVolumeRequests({ ...vm, ...(status ? { status } : {}) }, vmi);
        if (vr.vmiPatch && vmi) {
          await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, vr.vmiPatch, 'json');
          log.info({ requests: status?.volumeRequests?.length }, 'volume requests applied to the running VMI');
        }
        if (vr.vmPatch) {
          await client.patch(Resources.virtualMachines, ns, vm.metadata!.name!, vr.vmPatch, 'json');
          log.info('volume requests persisted in the VM template');
          return; // the update comes back through the informer; the status is trimmed then
        }
        status = { ...(status ?? {}), volumeRequests: vr.remaining };
        if (vr.remaining.length === 0) delete status.volumeRequests;
      } catch (err) {
        if (isConflict(err)) throw err;
        // A test-guarded patch against an object the informer has not caught up with yet: try again.
        if (isFailedPatchTest(err)) { log.debug({ err: errorText(err) }, 'volume request patch raced the informer; retrying'); return { requeueAfterMs: 100 }; }
        syncError = { reason: ConditionReason.HotPlugVolumeError, message: `Error encountered while handling volume hotplug requests: ${errorText(err)}` };
        log.warn({ err: errorText(err) }, 'volume requests failed');
      }
    }

    // A memory dump request (virt-api's memorydump): the claim as a memoryDump volume of the template
    // and the running VMI; the claim annotated once the dump is done; the volume out again.
    if (satisfied && vm.metadata?.deletionTimestamp == null && status?.memoryDumpRequest) {
      try {
        const md = planMemoryDump({ ...vm, status }, vmi);
        if (md.vmiPatch && vmi) {
          await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, md.vmiPatch, 'json');
          log.info({ claim: status.memoryDumpRequest.claimName, phase: status.memoryDumpRequest.phase }, 'memory dump volume changed in the VMI');
        }
        if (md.annotateClaim) await this.annotateDumpClaim(ns, md.annotateClaim.claimName, md.annotateClaim.value, log);
        if (md.vmPatch) {
          await client.patch(Resources.virtualMachines, ns, vm.metadata!.name!, md.vmPatch, 'json');
          log.info({ claim: status.memoryDumpRequest.claimName, phase: status.memoryDumpRequest.phase }, 'memory dump volume changed in the VM template');
          return; // the update comes back through the informer
        }
      } catch (err) {
        if (isConflict(err)) throw err;
        if (isFailedPatchTest(err)) { log.debug({ err: errorText(err) }, 'memory dump patch raced the informer; retrying'); return { requeueAfterMs: 100 }; }
        syncError = { reason: MemoryDumpErrorReason, message: `Error encountered while handling memory dump request: ${errorText(err)}` };
        log.warn({ err: errorText(err) }, 'memory dump request failed');
      }
    }

    // LiveUpdate of CPU sockets and guest memory; RestartRequired for what cannot be applied live
    // (cleared once the VM has no VMI: the next start takes the template as it is).
    if (!vmi && findCondition(status?.conditions, VMConditionType.RestartRequired)) {
      status = { ...(status ?? {}), conditions: removeCondition(status?.conditions, VMConditionType.RestartRequired) };
    } else if (satisfied && vm.metadata?.deletionTimestamp == null && !findCondition(status?.conditions, VMConditionType.RestartRequired)) {
      const lu = planLiveUpdate(vm, vmi, toRFC3339Seconds(now), isVMRolloutStrategyLiveUpdate(this.ctx.config));
      if (lu.vmiPatch && vmi) {
        try {
          await client.patch(Resources.virtualMachineInstances, ns, vmi.metadata!.name!, lu.vmiPatch, 'json');
          log.info({ cpu: vm.spec.template?.spec?.domain.cpu?.sockets, memory: vm.spec.template?.spec?.domain.memory?.guest }, 'live update sent to the running VMI');
        } catch (err) {
          if (isFailedPatchTest(err)) { log.debug({ err: errorText(err) }, 'volume request patch raced the informer; retrying'); return { requeueAfterMs: 100 }; }
          throw err;
        }
      }
      if (lu.restartRequired) {
        status = { ...(status ?? {}), conditions: updateCondition(status?.conditions, { type: VMConditionType.RestartRequired, status: 'True', message: lu.restartRequired, lastTransitionTime: toRFC3339Seconds(now) }) };
        log.info({ reason: lu.restartRequired }, 'template change needs a restart');
      }
      if (lu.error) requeueAfterMs = 1000;
    }

    // Status, through the status subresource, only when it changed.
    const pending = !this.expectations.satisfied(key);
    const vmiNow = this.vmiOf(vm);
    const result = computeVMStatus({ ...vm, ...(status ? { status } : {}) }, vmiNow, {
      now,
      syncError,
      vmiStartExpected: pending && !vmiNow,
      vmiStopExpected: pending && vmiNow !== undefined,
      unboundPVC: await this.hasUnboundPVC(vm, vmiNow),
      dataVolumeError: dataVolumeError(vm.spec.template?.spec?.volumes, dvLookup) !== undefined,
      dataVolumeProvisioning: dataVolumeProvisioning(vm.spec.template?.spec?.volumes, dvLookup),
    });
    if (!jsonEqual(result.status, vm.status ?? {}) && !(vm.status === undefined && jsonEqual(result.status, {}))) {
      try {
        await client.updateStatus(Resources.virtualMachines, { ...vm, status: result.status });
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
    }
    if (result.removeVMIFinalizer && vmiNow) await this.removeFinalizer(vmiNow, Finalizer.VirtualMachineController, Resources.virtualMachineInstances);
    return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
  }

  /**
   * The VM's DataVolumes by name: from the informer once it has synced, else (no CDI yet, or
   * still listing) read from the API — only for VMs that name any.
   */
  private async dataVolumeLookup(vm: VirtualMachine): Promise<DataVolumeLookup> {
    const ns = vm.metadata?.namespace;
    const inf = this.ctx.dataVolumes;
    if (inf && this.dataVolumesSynced) return (name) => inf.get(`${ns ?? ''}/${name}`);
    const names = new Set<string>([
      ...(vm.spec.dataVolumeTemplates ?? []).map((t) => t.metadata?.name ?? ''),
      ...(vm.spec.template?.spec?.volumes ?? []).flatMap((v) => (v.dataVolume ? [v.dataVolume.name] : [])),
    ]);
    const found = new Map<string, DataVolume>();
    for (const name of names) {
      if (!name) continue;
      try { found.set(name, await this.ctx.client.get<DataVolume & { metadata?: { name?: string } }>(Resources.dataVolumes, ns, name)); } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return (name) => found.get(name);
  }

  /**
   * HasUnboundPVC, for WaitingForVolumeBinding: a claim the template's volumes name exists and is not
   * Bound. Read only while the VM has no VMI past Scheduling (the only time the status can show it).
   */
  private async hasUnboundPVC(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): Promise<boolean> {
    if (!isSetToStart(vm, vmi)) return false;
    const phase = vmi?.status?.phase ?? '';
    if (vmi && phase !== '' && phase !== 'Pending' && phase !== 'Scheduling') return false;
    const names = new Set((vm.spec.template?.spec?.volumes ?? []).flatMap((v) => [v.persistentVolumeClaim?.claimName, v.dataVolume?.name, v.ephemeral?.persistentVolumeClaim?.claimName].filter((n): n is string => !!n)));
    for (const name of names) {
      try {
        const pvc = await this.ctx.client.get<{ status?: { phase?: string } } & { metadata?: { name?: string } }>(Resources.persistentVolumeClaims, vm.metadata?.namespace, name);
        if (pvc.status?.phase !== 'Bound') return true;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return false;
  }

  /** handleDataVolumes: create the missing ones, an event for each failed one; ready when all are. */
  private async handleDataVolumes(vm: VirtualMachine, lookup: DataVolumeLookup, log: ReturnType<typeof forObject>): Promise<{ ready: boolean; error?: SyncError }> {
    const plan = planDataVolumes(vm, lookup);
    for (const a of plan.actions) {
      if (a.type === 'failed') {
        void this.ctx.recorder.warning(vm, DataVolumeEvents.FailedDataVolumeImport, `DataVolume ${a.name} failed to import disk image`);
        continue;
      }
      const name = a.dataVolume.metadata?.name ?? '';
      try {
        await this.ctx.client.create(Resources.dataVolumes, a.dataVolume as never);
        void this.ctx.recorder.normal(vm, DataVolumeEvents.SuccessfulDataVolumeCreate, `Created DataVolume ${name}`);
        log.info({ dataVolume: name }, 'created a DataVolume of the VM\'s dataVolumeTemplates');
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        void this.ctx.recorder.warning(vm, DataVolumeEvents.FailedDataVolumeCreate, `Error creating DataVolume ${name}: ${errorText(err)}`);
        return { ready: false, error: { reason: EventReason.FailedCreate, message: `Error encountered while creating DataVolumes: failed to create DataVolume: ${errorText(err)}` } };
      }
    }
    return { ready: plan.ready };
  }

  /** patchMemoryDumpPVCAnnotation: the claim says where the dump is (or that it failed); a claim gone is an error. */
  private async annotateDumpClaim(ns: string | undefined, claimName: string, value: string, log: ReturnType<typeof forObject>): Promise<void> {
    const key = `${ns ?? ''}/${claimName}`;
    if (this.annotatedClaims.get(key) === value) return;
    let claim;
    try {
      claim = await this.ctx.client.get(Resources.persistentVolumeClaims, ns, claimName);
    } catch (err) {
      if (isNotFound(err)) throw new Error(`Error when trying to update memory dump annotation, pvc ${claimName} not found`);
      throw err;
    }
    const patch = claimAnnotationPatch(claim.metadata?.annotations, value);
    try {
      if (patch) await this.ctx.client.patch(Resources.persistentVolumeClaims, ns, claimName, patch, 'json');
      this.annotatedClaims.set(key, value);
    } catch (err) {
      // As KubeVirt: logged, not a sync error.
      log.warn({ claim: claimName, err: errorText(err) }, 'failed to annotate the memory dump claim');
    }
  }

  private async startVMI(vm: VirtualMachine, log: ReturnType<typeof forObject>, instancetypes?: StartInstancetypes): Promise<SyncError | undefined> {
    const key = keyOf(vm);
    let vmi: VirtualMachineInstance;
    try {
      vmi = vmiForStart(vm, instancetypes);
    } catch (err) {
      if (!(err instanceof InstancetypeApplyError)) throw err;
      void this.ctx.recorder.warning(vm, EventReason.FailedCreate, InstancetypeMessages.failedApplyInstancetype(err.message));
      log.warn({ err: err.message }, 'could not apply the instance type to the VMI');
      return { reason: EventReason.FailedCreate, message: InstancetypeMessages.startingVMIFailure(err.message) };
    }
    // Created mutated, as through KubeVirt's VMI webhook: no second write of the defaults. A VMI the
    // mutation would refuse (conflicting presets, a defaulting error) goes as it is: the VMI controller
    // reports that on the VMI, as for any VMI created unmutated.
    try {
      const m = mutateNewVMI(this.ctx, vmi);
      if (m.applied.length) log.info({ presets: m.applied }, 'applied VirtualMachineInstancePresets to the VMI');
      vmi = m.vmi;
    } catch (err) {
      if (!(err instanceof PresetConflictError) && !(err instanceof DefaultingError)) throw err;
    }
    this.expectations.expectCreations(key, 1);
    try {
      const created = await this.ctx.client.create(Resources.virtualMachineInstances, vmi);
      void this.ctx.recorder.normal(vm, EventReason.SuccessfulCreate, EventMessages.startedVMI(created.metadata?.name ?? ''));
      log.info({ vmi: created.metadata?.name, vmiUID: created.metadata?.uid }, 'started the VM: created its VMI');
      return undefined;
    } catch (err) {
      this.expectations.lowerExpectations(key, 1, 0);
      void this.ctx.recorder.warning(vm, EventReason.FailedCreate, EventMessages.failedCreateVMI(errorText(err)));
      log.warn({ err: errorText(err) }, 'could not create the VMI');
      return { reason: EventReason.FailedCreate, message: errorText(err) };
    }
  }

  private async deleteVMI(vm: VirtualMachine, vmi: VirtualMachineInstance, log: ReturnType<typeof forObject>): Promise<void> {
    if (vmi.metadata?.deletionTimestamp != null) return;
    const key = keyOf(vm);
    this.expectations.expectDeletions(key, 1);
    try {
      await this.ctx.client.delete(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, { preconditions: { uid: vmi.metadata!.uid! } });
      void this.ctx.recorder.normal(vm, EventReason.SuccessfulDelete, EventMessages.stoppedVMI(vmi.metadata?.uid ?? ''));
      log.info({ vmiUID: vmi.metadata?.uid }, 'stopped the VM: deleted its VMI');
    } catch (err) {
      this.expectations.lowerExpectations(key, 0, 1);
      if (isNotFound(err)) return;
      void this.ctx.recorder.warning(vm, EventReason.FailedDelete, EventMessages.failedDeleteVMI(vmi.metadata?.name ?? '', errorText(err)));
      throw err;
    }
  }

  private async removeFinalizer(obj: VirtualMachine | VirtualMachineInstance, finalizer: string, resource = Resources.virtualMachines): Promise<void> {
    const list = obj.metadata?.finalizers ?? [];
    const i = list.indexOf(finalizer);
    if (i < 0) return;
    try {
      await this.ctx.client.patch(resource, obj.metadata?.namespace, obj.metadata!.name!, [
        { op: 'test', path: `/metadata/finalizers/${i}`, value: finalizer },
        { op: 'remove', path: `/metadata/finalizers/${i}` },
      ], 'json');
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
}
