// KubeVirt's v1.NewVMIReferenceWithUUID: the VMI virt-handler hands a launcher when the VMI itself
// is no longer in its cache (deleted, or moved to another node by a migration) — name, namespace
// and uid, and the empty spec a Go struct serializes to. The launcher's Cmd server refuses a VMI
// without a spec, so a bare metadata object made DeleteVirtualMachine of a migrated-away domain fail
// silently and the source launcher waited out its 15 s final-notify timeout.
import type { VirtualMachineInstance } from '../src/api/types.ts';

export function vmiReference(key: string, uid: string): VirtualMachineInstance {
  const [namespace, name] = key.split('/');
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: name ?? '', namespace: namespace ?? '', uid }, spec: { domain: { devices: {} } } } as VirtualMachineInstance;
}
