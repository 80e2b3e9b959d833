/**
 * The instance types, preferences and ControllerRevisions the VM admitter reads, from the embedded
 * API server's store (its admission plugins run synchronously over it). An object that does not
 * parse as its kind reads as absent, as the API would not have stored it.
 */
import { INSTANCETYPE_GROUP, InstancetypeKind, InstancetypeResources } from '../api/instancetype/constants.ts';
import type { InstancetypeSource } from '../api/instancetype/find.ts';
import { parseInstancetypeObject } from '../api/instancetype/parse.ts';
import type { ControllerRevision } from '../api/instancetype/revision.ts';
import type { AdmissionApi } from '../kube/admission.ts';

export function admissionApiInstancetypeSource(api: AdmissionApi): InstancetypeSource {
  const read = <K extends InstancetypeKind>(kind: K, namespace: string, name: string) => {
    const raw = api.get(INSTANCETYPE_GROUP, InstancetypeResources[kind].plural, namespace, name);
    return raw === undefined ? undefined : parseInstancetypeObject(kind, raw).value;
  };
  return {
    instancetype: (ns, name) => read(InstancetypeKind.VirtualMachineInstancetype, ns, name),
    clusterInstancetype: (name) => read(InstancetypeKind.VirtualMachineClusterInstancetype, '', name),
    preference: (ns, name) => read(InstancetypeKind.VirtualMachinePreference, ns, name),
    clusterPreference: (name) => read(InstancetypeKind.VirtualMachineClusterPreference, '', name),
    controllerRevision: (ns, name) => api.get('apps', 'controllerrevisions', ns, name) as ControllerRevision | undefined,
  };
}
