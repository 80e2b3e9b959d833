// The VM controller's own finalizer on the VM (vm.go sync): while the VM lives it carries
// `kubevirt.io/virtualMachineControllerFinalize`; once deleted, the VMI is deleted first and the
// finalizer comes off only when the VMI is gone (or the VM is deleted with orphaned dependents).
import { Finalizer } from '../../src/api/constants.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

/** `metav1.FinalizerOrphanDependents`: `kubectl delete --cascade=orphan`. */
export const FINALIZER_ORPHAN_DEPENDENTS = 'orphan';

export type VMFinalizerDecision =
  /** Not deleting: make sure the finalizer is there, then go on with the run strategy. */
  | { readonly type: 'ensure-finalizer'; readonly add: boolean; readonly proceed: true }
  /** Deleting, VMI gone or orphaned: remove our finalizer; nothing else this round. */
  | { readonly type: 'remove-finalizer'; readonly remove: boolean; readonly proceed: false }
  /** Deleting, VMI still there: delete it (no-op if it is already going); nothing else this round. */
  | { readonly type: 'delete-vmi'; readonly uid: string | undefined; readonly alreadyDeleting: boolean; readonly proceed: false };

export function vmFinalizerDecision(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): VMFinalizerDecision {
  const finalizers = vm.metadata?.finalizers ?? [];
  const has = finalizers.includes(Finalizer.VirtualMachineController);
  if (vm.metadata?.deletionTimestamp == null) return { type: 'ensure-finalizer', add: !has, proceed: true };
  if (!vmi || finalizers.includes(FINALIZER_ORPHAN_DEPENDENTS)) return { type: 'remove-finalizer', remove: has, proceed: false };
  return { type: 'delete-vmi', uid: vmi.metadata?.uid, alreadyDeleting: vmi.metadata?.deletionTimestamp != null, proceed: false };
}
