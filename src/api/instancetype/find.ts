/**
 * Which instance type and preference a VM uses (`pkg/instancetype/find`, `preference/find`): the
 * ControllerRevision its matcher's `revisionName` names, else the one its status ref names (when
 * that revision is of the object the matcher names), else the object itself — the namespaced kind
 * when the matcher's kind is its singular or plural name, the cluster kind when the kind is empty or
 * the cluster kind's name. Errors carry KubeVirt's words (the API server's NotFound message for a
 * missing object).
 *
 * Pure over a synchronous `InstancetypeSource`; `referencedObjects` lists what a VM can make `find`
 * read, so a shell that reads asynchronously fetches those first (`sourceFromFetched`).
 */
import type { VirtualMachine } from '../types.ts';
import { InstancetypeKind, InstancetypeMessages as M, InstancetypeResources, RevisionLabels } from './constants.ts';
import { instancetypeSpecFromRevision, preferenceSpecFromRevision, RevisionDataError, type ControllerRevision } from './revision.ts';
import type {
  VirtualMachineClusterInstancetype,
  VirtualMachineClusterPreference,
  VirtualMachineInstancetype,
  VirtualMachineInstancetypeSpec,
  VirtualMachinePreference,
  VirtualMachinePreferenceSpec,
} from './types.ts';

/** The objects `find` reads; undefined means not found (the source throws for any other failure). */
export interface InstancetypeSource {
  instancetype(namespace: string, name: string): VirtualMachineInstancetype | undefined;
  clusterInstancetype(name: string): VirtualMachineClusterInstancetype | undefined;
  preference(namespace: string, name: string): VirtualMachinePreference | undefined;
  clusterPreference(name: string): VirtualMachineClusterPreference | undefined;
  controllerRevision(namespace: string, name: string): ControllerRevision | undefined;
}

/** A lookup failed the way KubeVirt's does: `message` is KubeVirt's error text. */
export class InstancetypeFindError extends Error {
  override name = 'InstancetypeFindError';
  /** The object was not there (the API's NotFound). */
  readonly notFound: boolean;
  constructor(message: string, notFound = false) {
    super(message);
    this.notFound = notFound;
  }
}

type Which = 'namespaced' | 'cluster' | 'unexpected';

/** The matcher's kind, compared lower-cased as KubeVirt does. */
function whichKind(kind: string | undefined, namespaced: InstancetypeKind, cluster: InstancetypeKind): Which {
  const k = (kind ?? '').toLowerCase();
  const n = InstancetypeResources[namespaced];
  const c = InstancetypeResources[cluster];
  if (k === n.singular || k === n.plural) return 'namespaced';
  if (k === '' || k === c.singular || k === c.plural) return 'cluster';
  return 'unexpected';
}

export const instancetypeKindOf = (kind: string | undefined): Which => whichKind(kind, InstancetypeKind.VirtualMachineInstancetype, InstancetypeKind.VirtualMachineClusterInstancetype);
export const preferenceKindOf = (kind: string | undefined): Which => whichKind(kind, InstancetypeKind.VirtualMachinePreference, InstancetypeKind.VirtualMachineClusterPreference);

function revision(source: InstancetypeSource, namespace: string, name: string): ControllerRevision {
  const r = source.controllerRevision(namespace, name);
  if (!r) throw new InstancetypeFindError(M.revisionNotFound(name), true);
  return r;
}

/** `revisionFinder.Find`: the revision the matcher or the status ref names, if it applies. */
function revisionFor(
  vm: VirtualMachine,
  matcher: { name?: string; revisionName?: string } | undefined,
  refRevision: string | undefined,
  source: InstancetypeSource,
): ControllerRevision | undefined {
  const ns = vm.metadata?.namespace ?? '';
  if (matcher?.revisionName) return revision(source, ns, matcher.revisionName);
  if (refRevision) {
    const r = revision(source, ns, refRevision);
    // Only the revision of the object the matcher names now.
    if (r.metadata?.labels?.[RevisionLabels.ObjectName] === (matcher?.name ?? '')) return r;
  }
  return undefined;
}

const decode = <T>(f: () => T): T => {
  try {
    return f();
  } catch (err) {
    if (err instanceof RevisionDataError) throw new InstancetypeFindError(err.message);
    throw err;
  }
};

/** `specFinder.Find`: the instance type spec the VM uses, or undefined when it names none. */
export function findInstancetypeSpec(vm: VirtualMachine, source: InstancetypeSource): VirtualMachineInstancetypeSpec | undefined {
  const m = vm.spec.instancetype;
  if (!m) return undefined;
  const rev = revisionFor(vm, m, vm.status?.instancetypeRef?.controllerRevisionRef?.name, source);
  if (rev) return decode(() => instancetypeSpecFromRevision(rev));
  return findInstancetype(vm, source).object.spec;
}

/** The (cluster) instance type object the matcher names (no revision involved). */
export function findInstancetype(vm: VirtualMachine, source: InstancetypeSource): { kind: InstancetypeKind; object: VirtualMachineInstancetype | VirtualMachineClusterInstancetype } {
  const m = vm.spec.instancetype!;
  const name = m.name ?? '';
  switch (instancetypeKindOf(m.kind)) {
    case 'namespaced': {
      const o = source.instancetype(vm.metadata?.namespace ?? '', name);
      if (!o) throw new InstancetypeFindError(M.notFound(InstancetypeResources.VirtualMachineInstancetype.plural, name), true);
      return { kind: InstancetypeKind.VirtualMachineInstancetype, object: o };
    }
    case 'cluster': {
      const o = source.clusterInstancetype(name);
      if (!o) throw new InstancetypeFindError(M.notFound(InstancetypeResources.VirtualMachineClusterInstancetype.plural, name), true);
      return { kind: InstancetypeKind.VirtualMachineClusterInstancetype, object: o };
    }
    default:
      throw new InstancetypeFindError(M.unexpectedInstancetypeKind(m.kind ?? ''));
  }
}

/** `preference specFinder.FindPreference`. */
export function findPreferenceSpec(vm: VirtualMachine, source: InstancetypeSource): VirtualMachinePreferenceSpec | undefined {
  const m = vm.spec.preference;
  if (!m) return undefined;
  const rev = revisionFor(vm, m, vm.status?.preferenceRef?.controllerRevisionRef?.name, source);
  if (rev) return decode(() => preferenceSpecFromRevision(rev));
  return findPreference(vm, source).object.spec;
}

/** The (cluster) preference object the matcher names. */
export function findPreference(vm: VirtualMachine, source: InstancetypeSource): { kind: InstancetypeKind; object: VirtualMachinePreference | VirtualMachineClusterPreference } {
  const m = vm.spec.preference!;
  const name = m.name ?? '';
  switch (preferenceKindOf(m.kind)) {
    case 'namespaced': {
      const o = source.preference(vm.metadata?.namespace ?? '', name);
      if (!o) throw new InstancetypeFindError(M.notFound(InstancetypeResources.VirtualMachinePreference.plural, name), true);
      return { kind: InstancetypeKind.VirtualMachinePreference, object: o };
    }
    case 'cluster': {
      const o = source.clusterPreference(name);
      if (!o) throw new InstancetypeFindError(M.notFound(InstancetypeResources.VirtualMachineClusterPreference.plural, name), true);
      return { kind: InstancetypeKind.VirtualMachineClusterPreference, object: o };
    }
    default:
      throw new InstancetypeFindError(M.unexpectedPreferenceKind(m.kind ?? ''));
  }
}

/** One object `find` may read for a VM. */
export type ReferencedObject =
  | { readonly resource: 'controllerrevisions'; readonly namespace: string; readonly name: string }
  | { readonly resource: 'virtualmachineinstancetypes' | 'virtualmachinepreferences'; readonly namespace: string; readonly name: string }
  | { readonly resource: 'virtualmachineclusterinstancetypes' | 'virtualmachineclusterpreferences'; readonly name: string };

/** Everything `findInstancetypeSpec` / `findPreferenceSpec` / `findInstancetype` / `findPreference` can read for `vm`. */
export function referencedObjects(vm: VirtualMachine): ReferencedObject[] {
  const ns = vm.metadata?.namespace ?? '';
  const out: ReferencedObject[] = [];
  const add = (matcher: { name?: string; kind?: string; revisionName?: string } | undefined, refRevision: string | undefined, isInstancetype: boolean) => {
    if (!matcher) return;
    if (matcher.revisionName) out.push({ resource: 'controllerrevisions', namespace: ns, name: matcher.revisionName });
    if (refRevision) out.push({ resource: 'controllerrevisions', namespace: ns, name: refRevision });
    const which = isInstancetype ? instancetypeKindOf(matcher.kind) : preferenceKindOf(matcher.kind);
    const name = matcher.name ?? '';
    if (!name) return;
    if (which === 'namespaced') out.push({ resource: isInstancetype ? 'virtualmachineinstancetypes' : 'virtualmachinepreferences', namespace: ns, name });
    if (which === 'cluster') out.push({ resource: isInstancetype ? 'virtualmachineclusterinstancetypes' : 'virtualmachineclusterpreferences', name });
  };
  add(vm.spec.instancetype, vm.status?.instancetypeRef?.controllerRevisionRef?.name, true);
  add(vm.spec.preference, vm.status?.preferenceRef?.controllerRevisionRef?.name, false);
  return out;
}

export const referenceKey = (r: ReferencedObject): string => `${r.resource}/${'namespace' in r ? r.namespace : ''}/${r.name}`;

/** A source over objects fetched beforehand (key: `referenceKey`; a missing key reads as not found). */
export function sourceFromFetched(fetched: ReadonlyMap<string, unknown>): InstancetypeSource {
  const get = <T>(resource: ReferencedObject['resource'], namespace: string, name: string) => fetched.get(`${resource}/${namespace}/${name}`) as T | undefined;
  return {
    instancetype: (ns, name) => get('virtualmachineinstancetypes', ns, name),
    clusterInstancetype: (name) => get('virtualmachineclusterinstancetypes', '', name),
    preference: (ns, name) => get('virtualmachinepreferences', ns, name),
    clusterPreference: (name) => get('virtualmachineclusterpreferences', '', name),
    controllerRevision: (ns, name) => get('controllerrevisions', ns, name),
  };
}
