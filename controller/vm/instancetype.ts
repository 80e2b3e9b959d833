// The VM controller's instance types and preferences (KubeVirt's pkg/instancetype/controller/vm,
// `Sync` under the default `reference` policy): a matcher naming a volume is resolved from the
// volume's labels and written into the VM (qvirt has no mutating webhook to do it at admission);
// the instance type and preference the VM names must exist (else the sync fails with
// FailedFindInstancetype / FailedFindPreference and the API's NotFound message, and the VM does not
// start); each is pinned in a ControllerRevision owned by the VM, named in
// status.instancetypeRef / status.preferenceRef; the specs found go to `vmiForStart`. The decisions
// are src/api/instancetype's; this shell reads (informers, else the API) and writes.
import { EventReason } from '../../src/api/constants.ts';
import { isAlreadyExists, isConflict, isFailedPatchTest, isNotFound, KubeApiError, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { Informer } from '../../src/kube/informer.ts';
import type { ControllerContext, InstancetypeInformers } from '../context.ts';
import type { KeyMap } from '../builder.ts';
import type { forObject } from '../../src/log/logger.ts';
import type { SyncError } from './conditions.ts';
import type { InstancetypeStatusRef, VirtualMachine } from '../../src/api/types.ts';
import { InstancetypeKind, InstancetypeMessages as M, InstancetypeReasons } from '../../src/api/instancetype/constants.ts';
import { decodeInstancetypeObject } from '../../src/api/instancetype/parse.ts';
import {
  findInstancetype,
  findInstancetypeSpec,
  findPreference,
  findPreferenceSpec,
  InstancetypeFindError,
  referencedObjects,
  referenceKey,
  sourceFromFetched,
  type ReferencedObject,
} from '../../src/api/instancetype/find.ts';
import { controllerRevisionFor, sameRevisionData, syncStatusRef, type ControllerRevision } from '../../src/api/instancetype/revision.ts';
import { applyToVMISpec } from '../../src/api/instancetype/apply.ts';
import { ConflictsError } from '../../src/api/instancetype/conflict.ts';
import { TEMPLATE_SPEC_PATH } from '../../src/api/instancetype/expand.ts';
import { InferenceError, inferMatchers, needsInference, type InferSource } from '../../src/api/instancetype/infer.ts';
import type { VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from '../../src/api/instancetype/types.ts';

type Log = ReturnType<typeof forObject>;

/** The informers of instancetype.kubevirt.io and ControllerRevisions (reads fall back to the API on a miss). */

export type InstancetypeSyncResult =
  /** The VM names neither. */
  | { readonly type: 'none' }
  /** The VM's spec was rewritten (inference): the update comes back through the informer. */
  | { readonly type: 'patched' }
  /** The sync fails with this error; the VM does not start. */
  | { readonly type: 'failed'; readonly error: SyncError }
  /** Found (and pinned): the status refs to record and the specs to start with. */
  | {
    readonly type: 'ok';
    readonly instancetypeRef: InstancetypeStatusRef | undefined;
    readonly preferenceRef: InstancetypeStatusRef | undefined;
    readonly instancetype: VirtualMachineInstancetypeSpec | undefined;
    readonly preference: VirtualMachinePreferenceSpec | undefined;
  };

/** The API server's own message (its Status), without the client's method and path. */
function apiMessage(err: unknown): string {
  if (err instanceof KubeApiError) {
    const m = (err.status as { message?: unknown } | undefined)?.message;
    if (typeof m === 'string' && m) return m;
  }
  return err instanceof Error ? err.message : String(err);
}

export class VMInstancetypeHandler {
  private readonly ctx: ControllerContext;
  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  private get informers(): InstancetypeInformers | undefined {
    return this.ctx.instancetypeInformers;
  }

  /** Not found → undefined; any other failure throws. */
  private async orNone<T>(read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One referenced object: from its informer, else from the API (KubeVirt's finders do the same). */
  private async fetch(r: ReferencedObject): Promise<unknown> {
    const { client } = this.ctx;
    const inf = this.informers;
    const ns = 'namespace' in r ? r.namespace : '';
    const key = ns ? `${ns}/${r.name}` : r.name;
    let raw: unknown;
    switch (r.resource) {
      case 'controllerrevisions':
        raw = inf?.controllerRevisions.get(key) ?? await this.orNone(() => client.get(Resources.controllerRevisions, ns, r.name));
        return raw;
      case 'virtualmachineinstancetypes':
        raw = inf?.instancetypes.get(key) ?? await this.orNone(() => client.get(Resources.virtualMachineInstancetypes, ns, r.name));
        return raw && decodeInstancetypeObject(InstancetypeKind.VirtualMachineInstancetype, raw);
      case 'virtualmachineclusterinstancetypes':
        raw = inf?.clusterInstancetypes.get(key) ?? await this.orNone(() => client.get(Resources.virtualMachineClusterInstancetypes, undefined, r.name));
        return raw && decodeInstancetypeObject(InstancetypeKind.VirtualMachineClusterInstancetype, raw);
      case 'virtualmachinepreferences':
        raw = inf?.preferences.get(key) ?? await this.orNone(() => client.get(Resources.virtualMachinePreferences, ns, r.name));
        return raw && decodeInstancetypeObject(InstancetypeKind.VirtualMachinePreference, raw);
      case 'virtualmachineclusterpreferences':
        raw = inf?.clusterPreferences.get(key) ?? await this.orNone(() => client.get(Resources.virtualMachineClusterPreferences, undefined, r.name));
        return raw && decodeInstancetypeObject(InstancetypeKind.VirtualMachineClusterPreference, raw);
    }
  }

  /** Everything `vm` can make the finders read (key: `referenceKey`), beside what `known` already holds. */
  async fetched(vm: VirtualMachine, known: ReadonlyMap<string, unknown> = new Map()): Promise<Map<string, unknown>> {
    const refs = referencedObjects(vm).filter((r) => !known.has(referenceKey(r)));
    const values = await Promise.all(refs.map((r) => this.fetch(r)));
    const out = new Map(known);
    refs.forEach((r, i) => { if (values[i]) out.set(referenceKey(r), values[i]); });
    return out;
  }

  private inferSource(): InferSource {
    const { client } = this.ctx;
    return {
      persistentVolumeClaim: (ns, name) => this.orNone(() => client.get(Resources.persistentVolumeClaims, ns, name)),
      // CDI's objects: qvirt serves no CDI API, so there are none.
      dataVolume: async () => undefined,
      dataSource: async () => undefined,
      volumeSnapshot: async () => undefined,
    };
  }

  /** `Sync`: see the file's head. */
  async sync(vm: VirtualMachine, log: Log): Promise<InstancetypeSyncResult> {
    if (!vm.spec.instancetype && !vm.spec.preference) return { type: 'none' };

    if (needsInference(vm)) {
      let inferred: VirtualMachine;
      try {
        inferred = await inferMatchers(vm, this.inferSource());
      } catch (err) {
        if (!(err instanceof InferenceError)) throw err;
        const reason = vm.spec.instancetype?.inferFromVolume ? InstancetypeReasons.FailedFindInstancetype : InstancetypeReasons.FailedFindPreference;
        return { type: 'failed', error: { reason, message: err.message } };
      }
      const ops: object[] = [{ op: 'test', path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }];
      for (const f of ['instancetype', 'preference'] as const) {
        if (inferred.spec[f]) ops.push({ op: vm.spec[f] ? 'replace' : 'add', path: `/spec/${f}`, value: inferred.spec[f] });
        else if (vm.spec[f]) ops.push({ op: 'remove', path: `/spec/${f}` });
      }
      if (vm.spec.template.spec?.domain.memory && !inferred.spec.template.spec?.domain.memory) ops.push({ op: 'remove', path: '/spec/template/spec/domain/memory' });
      try {
        await this.ctx.client.patch(Resources.virtualMachines, vm.metadata?.namespace, vm.metadata!.name!, ops, 'json');
      } catch (err) {
        // A stale VM: the next sync has the fresh one. Refused (the VM admitter, e.g. a conflict with
        // the inferred instance type): KubeVirt would have refused the VM itself; here the VM says so.
        if (isConflict(err) || isFailedPatchTest(err) || !(err instanceof KubeApiError)) throw err;
        return { type: 'failed', error: { reason: InstancetypeReasons.FailedCreate, message: apiMessage(err) } };
      }
      log.info({ instancetype: inferred.spec.instancetype, preference: inferred.spec.preference }, 'inferred the instance type and preference from the volume');
      return { type: 'patched' };
    }

    // checkResourcesExist.
    const fetched = await this.fetched(vm);
    const source = sourceFromFetched(fetched);
    try {
      findInstancetypeSpec(vm, source);
    } catch (err) {
      if (err instanceof InstancetypeFindError) return { type: 'failed', error: { reason: InstancetypeReasons.FailedFindInstancetype, message: err.message } };
      throw err;
    }
    try {
      findPreferenceSpec(vm, source);
    } catch (err) {
      if (err instanceof InstancetypeFindError) return { type: 'failed', error: { reason: InstancetypeReasons.FailedFindPreference, message: err.message } };
      throw err;
    }

    // Store: a ControllerRevision of each, named in the status refs (the two written at once).
    let instancetypeRef = vm.status?.instancetypeRef;
    let preferenceRef = vm.status?.preferenceRef;
    const stored = new Map<string, ControllerRevision>();
    try {
      const toStore: ControllerRevision[] = [];
      if (vm.spec.instancetype) {
        const { ref, needsRevision } = syncStatusRef(vm.spec.instancetype, instancetypeRef);
        if (needsRevision) {
          const { kind, object } = findInstancetype(vm, source);
          // The instance type may have changed since the VM was admitted: check once more.
          const applied = applyToVMISpec(TEMPLATE_SPEC_PATH, object.spec, undefined, vm.spec.template.spec ?? { domain: { devices: {} } }, vm.spec.template.metadata);
          if (applied.conflicts.length) throw new ConflictsError(applied.conflicts);
          const rev = controllerRevisionFor(vm, kind, object);
          toStore.push(rev);
          ref.controllerRevisionRef = { name: rev.metadata!.name! };
        }
        instancetypeRef = ref;
      }
      if (vm.spec.preference) {
        const { ref, needsRevision } = syncStatusRef(vm.spec.preference, preferenceRef);
        if (needsRevision) {
          const { kind, object } = findPreference(vm, source);
          const rev = controllerRevisionFor(vm, kind, object);
          toStore.push(rev);
          ref.controllerRevisionRef = { name: rev.metadata!.name! };
        }
        preferenceRef = ref;
      }
      const results = await Promise.allSettled(toStore.map((rev) => this.storeRevision(rev, log)));
      for (const r of results) if (r.status === 'rejected') throw r.reason;
      for (const rev of toStore) stored.set(`controllerrevisions/${rev.metadata?.namespace ?? ''}/${rev.metadata!.name!}`, rev);
    } catch (err) {
      if (!(err instanceof InstancetypeFindError) && !(err instanceof ConflictsError) && !(err instanceof KubeApiError) && !(err instanceof StoreError)) throw err;
      const message = M.storeRevisions(err instanceof KubeApiError ? M.failedCreateRevision(apiMessage(err)) : err.message);
      void this.ctx.recorder.warning(vm, EventReason.FailedCreate, message);
      log.warn({ err: message }, 'could not store the instance type and preference revisions');
      return { type: 'failed', error: { reason: InstancetypeReasons.FailedCreate, message } };
    }

    // What the VM starts with: through the revisions now named (those just stored are at hand).
    const pinned: VirtualMachine = { ...vm, status: { ...(vm.status ?? {}), ...(instancetypeRef ? { instancetypeRef } : {}), ...(preferenceRef ? { preferenceRef } : {}) } };
    const pinnedSource = sourceFromFetched(await this.fetched(pinned, new Map([...fetched, ...stored])));
    try {
      return {
        type: 'ok',
        instancetypeRef,
        preferenceRef,
        instancetype: findInstancetypeSpec(pinned, pinnedSource),
        preference: findPreferenceSpec(pinned, pinnedSource),
      };
    } catch (err) {
      if (!(err instanceof InstancetypeFindError)) throw err;
      return { type: 'failed', error: { reason: InstancetypeReasons.FailedCreate, message: err.message } };
    }
  }

  /** Creates the revision; one already there must carry the same object (`storeControllerRevision`). */
  private async storeRevision(rev: ControllerRevision, log: Log): Promise<string> {
    const { client } = this.ctx;
    const name = rev.metadata!.name!;
    try {
      await client.create(Resources.controllerRevisions, rev as KubeObject);
      log.info({ revision: name }, 'stored the ControllerRevision of an instance type or preference');
      return name;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const existing = await client.get<KubeObject & ControllerRevision>(Resources.controllerRevisions, rev.metadata?.namespace, name);
    let same = false;
    try {
      same = sameRevisionData(rev, existing);
    } catch (err) {
      throw new StoreError(err instanceof Error ? err.message : String(err));
    }
    if (!same) throw new StoreError(M.unexpectedRevisionData(name));
    return name;
  }
}

class StoreError extends Error {
  override name = 'StoreError';
}

/**
 * A VM waiting for a missing instance type, preference or revision starts once it appears: each
 * added or changed one maps to the VMs whose matchers name it — the VM controller's builder chain
 * watches these (`watchesMapped`, adds and updates).
 */
export function instancetypeWatches(ctx: ControllerContext): { informer: Informer<KubeObject>; vms: KeyMap<KubeObject> }[] {
  const inf = ctx.instancetypeInformers;
  if (!inf) return [];
  const naming = (matches: (vm: VirtualMachine, ns: string | undefined, name: string | undefined) => boolean): KeyMap<KubeObject> => (o) =>
    ctx.informers.vms.list().filter((vm) => matches(vm, o.metadata?.namespace, o.metadata?.name)).map((vm) => `${vm.metadata?.namespace ?? ''}/${vm.metadata?.name ?? ''}`);
  const sameNs = (vm: VirtualMachine, ns: string | undefined) => (vm.metadata?.namespace ?? '') === (ns ?? '');
  return [
    { informer: inf.instancetypes, vms: naming((vm, ns, name) => sameNs(vm, ns) && vm.spec.instancetype?.name === name) },
    { informer: inf.clusterInstancetypes, vms: naming((vm, _ns, name) => vm.spec.instancetype?.name === name) },
    { informer: inf.preferences, vms: naming((vm, ns, name) => sameNs(vm, ns) && vm.spec.preference?.name === name) },
    { informer: inf.clusterPreferences, vms: naming((vm, _ns, name) => vm.spec.preference?.name === name) },
    { informer: inf.controllerRevisions, vms: naming((vm, ns, name) => sameNs(vm, ns) && (vm.spec.instancetype?.revisionName === name || vm.spec.preference?.revisionName === name)) },
  ];
}
