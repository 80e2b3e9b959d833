/**
 * `pkg/instancetype/annotations` and `preference/annotations`: the VMI a VM starts names the
 * instance type and preference the VM referenced — `kubevirt.io/instancetype-name` for a namespaced
 * one, `kubevirt.io/cluster-instancetype-name` for a cluster one (also when the kind is empty), and
 * the same for preferences. Pure: `meta` is changed in place.
 */
import type { ObjectMeta } from '../kube.ts';
import type { VirtualMachine } from '../types.ts';
import { InstancetypeAnnotations as A } from './constants.ts';
import { instancetypeKindOf, preferenceKindOf } from './find.ts';

export function setReferenceAnnotations(vm: VirtualMachine, meta: ObjectMeta): void {
  const it = vm.spec.instancetype;
  if (it) {
    const which = instancetypeKindOf(it.kind);
    if (which === 'namespaced') (meta.annotations ??= {})[A.Instancetype] = it.name ?? '';
    if (which === 'cluster') (meta.annotations ??= {})[A.ClusterInstancetype] = it.name ?? '';
  }
  const pref = vm.spec.preference;
  if (pref) {
    const which = preferenceKindOf(pref.kind);
    if (which === 'namespaced') (meta.annotations ??= {})[A.Preference] = pref.name ?? '';
    if (which === 'cluster') (meta.annotations ??= {})[A.ClusterPreference] = pref.name ?? '';
  }
}
