/**
 * The ControllerRevisions that pin what a VM was started with (`pkg/instancetype/revision`): one per
 * referenced instance type or preference, named `<vm>-<object>-<version>-<object uid>-<generation>`,
 * owned (controller) by the VM, labelled with the object's kind, name, uid, generation and version,
 * carrying the object itself with its metadata stripped of labels, annotations, finalizers, owner
 * references and managed fields. The VM's `status.instancetypeRef` / `status.preferenceRef` name
 * it (`syncStatusWithMatcher`). Pure.
 */
import type { ObjectMeta, OwnerReference } from '../kube.ts';
import type { InstancetypeStatusRef, VirtualMachine } from '../types.ts';
import { INSTANCETYPE_API_VERSION, INSTANCETYPE_VERSION, InstancetypeKind, InstancetypeMessages as M, RevisionLabels } from './constants.ts';
import { parseInstancetypeObject } from './parse.ts';
import type { PreferenceObject, InstancetypeObject, VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from './types.ts';

/** `apps/v1` ControllerRevision, as much of it as qvirt writes and reads. */
export interface ControllerRevision {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  /** The embedded object (RawExtension): here an instance type or preference with its apiVersion and kind. */
  data?: unknown;
  revision?: number;
}

/** `revision.GenerateName`. */
export function revisionName(vmName: string, objectName: string, version: string, uid: string, generation: number): string {
  return `${vmName}-${objectName}-${version}-${uid}-${generation}`;
}

/** `HasControllerRevisionRef`. */
export const hasControllerRevisionRef = (ref: InstancetypeStatusRef | undefined): boolean => !!ref?.controllerRevisionRef?.name;

/** `CreateControllerRevision`: the revision pinning `object` (of `kind`) for `vm`. */
export function controllerRevisionFor(vm: VirtualMachine, kind: InstancetypeKind, object: InstancetypeObject | PreferenceObject): ControllerRevision {
  const meta = structuredClone(object.metadata ?? {});
  delete meta.labels;
  delete meta.annotations;
  delete meta.finalizers;
  delete meta.ownerReferences;
  delete meta.managedFields;
  const name = meta.name ?? '';
  const uid = meta.uid ?? '';
  const generation = meta.generation ?? 0;
  const owner: OwnerReference = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: vm.metadata?.name ?? '', uid: vm.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(vm.metadata?.name ?? '', name, INSTANCETYPE_VERSION, uid, generation),
      ...(vm.metadata?.namespace !== undefined ? { namespace: vm.metadata.namespace } : {}),
      ownerReferences: [owner],
      labels: {
        [RevisionLabels.ObjectGeneration]: String(generation),
        [RevisionLabels.ObjectKind]: kind,
        [RevisionLabels.ObjectName]: name,
        [RevisionLabels.ObjectUID]: uid,
        [RevisionLabels.ObjectVersion]: INSTANCETYPE_VERSION,
      },
    },
    data: { apiVersion: INSTANCETYPE_API_VERSION, kind, metadata: meta, spec: structuredClone(object.spec) },
    revision: 0,
  };
}

export class RevisionDataError extends Error {
  override name = 'RevisionDataError';
}

type Decoded =
  | { kind: 'VirtualMachineInstancetype' | 'VirtualMachineClusterInstancetype'; spec: VirtualMachineInstancetypeSpec }
  | { kind: 'VirtualMachinePreference' | 'VirtualMachineClusterPreference'; spec: VirtualMachinePreferenceSpec };

/** `compatibility.Decode`: the object a revision carries (v1beta1 only: the version KubeVirt stores). */
export function decodeRevision(revision: ControllerRevision): Decoded {
  const data = revision.data as { apiVersion?: unknown; kind?: unknown } | undefined;
  const apiVersion = typeof data?.apiVersion === 'string' ? data.apiVersion : '';
  const kind = typeof data?.kind === 'string' ? data.kind : '';
  if (!data || typeof data !== 'object') throw new RevisionDataError(M.decodeRevision('Object \'Kind\' is missing in \'null\''));
  if (!kind) throw new RevisionDataError(M.decodeRevision(`Object 'Kind' is missing in '${JSON.stringify(data)}'`));
  const known = (Object.values(InstancetypeKind) as string[]).includes(kind);
  if (apiVersion !== INSTANCETYPE_API_VERSION || !known) {
    throw new RevisionDataError(M.decodeRevision(`no kind "${kind}" is registered for version "${apiVersion}" in scheme`));
  }
  const r = parseInstancetypeObject(kind as InstancetypeKind, data);
  if (!r.value) throw new RevisionDataError(M.decodeRevision(r.errors.map((e) => `${e.field}: ${e.reason}`).join('; ')));
  return { kind, spec: r.value.spec } as Decoded;
}

const goType = (kind: string) => `*${INSTANCETYPE_VERSION}.${kind}`;

/** `compatibility.GetInstancetypeSpec`. */
export function instancetypeSpecFromRevision(revision: ControllerRevision): VirtualMachineInstancetypeSpec {
  const d = decodeRevision(revision);
  if (d.kind === 'VirtualMachineInstancetype' || d.kind === 'VirtualMachineClusterInstancetype') return d.spec;
  throw new RevisionDataError(M.unexpectedRevisionType(goType(d.kind)));
}

/** `compatibility.GetPreferenceSpec`. */
export function preferenceSpecFromRevision(revision: ControllerRevision): VirtualMachinePreferenceSpec {
  const d = decodeRevision(revision);
  if (d.kind === 'VirtualMachinePreference' || d.kind === 'VirtualMachineClusterPreference') return d.spec;
  throw new RevisionDataError(M.unexpectedRevisionType(goType(d.kind)));
}

const canonical = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

/** `revision.Compare`: the two carry the same spec (of the same kind). */
export function sameRevisionData(a: ControllerRevision, b: ControllerRevision): boolean {
  const da = decodeRevision(a);
  const db = decodeRevision(b);
  return da.kind === db.kind && canonical(da.spec) === canonical(db.spec);
}

/** The fields of a matcher `syncStatusWithMatcher` reads (InstancetypeMatcher and PreferenceMatcher alike). */
export interface Matcher {
  name?: string;
  kind?: string;
  revisionName?: string;
  inferFromVolume?: string;
  inferFromVolumeFailurePolicy?: InstancetypeStatusRef['inferFromVolumeFailurePolicy'];
}

/**
 * `syncStatusWithMatcher` without its I/O: the status ref the matcher leads to, and whether a
 * revision must be stored (then its name goes into `controllerRevisionRef`). A changed name, kind or
 * inferFromVolume drops the old revision ref; a matcher's revisionName wins.
 */
export function syncStatusRef(matcher: Matcher, current: InstancetypeStatusRef | undefined): { ref: InstancetypeStatusRef; needsRevision: boolean } {
  const ref: InstancetypeStatusRef = structuredClone(current ?? {});
  let clear = false;
  if (matcher.name && matcher.name !== ref.name) { ref.name = matcher.name; clear = true; }
  if (matcher.kind && matcher.kind !== ref.kind) { ref.kind = matcher.kind; clear = true; }
  if (matcher.inferFromVolume && matcher.inferFromVolume !== ref.inferFromVolume) { ref.inferFromVolume = matcher.inferFromVolume; clear = true; }
  if (clear) delete ref.controllerRevisionRef;
  if (matcher.inferFromVolumeFailurePolicy !== undefined && ref.inferFromVolumeFailurePolicy !== matcher.inferFromVolumeFailurePolicy) {
    ref.inferFromVolumeFailurePolicy = matcher.inferFromVolumeFailurePolicy;
  }
  if (matcher.revisionName && ref.controllerRevisionRef?.name !== matcher.revisionName) ref.controllerRevisionRef = { name: matcher.revisionName };
  return { ref, needsRevision: ref.controllerRevisionRef === undefined };
}
