// The instance types, preferences and ControllerRevisions a VM can make KubeVirt's finders read
// (src/api/instancetype/find.ts referencedObjects), fetched through the API — for those that look
// them up at request time, as KubeVirt's webhooks and virt-api do (no informers): the VM admitter
// behind a real kube-apiserver and virt-api's expand-spec. Not found reads as absent; any other
// failure is thrown.
import { InstancetypeKind } from '../api/instancetype/constants.ts';
import { referencedObjects, referenceKey, sourceFromFetched, type InstancetypeSource, type ReferencedObject } from '../api/instancetype/find.ts';
import { decodeInstancetypeObject } from '../api/instancetype/parse.ts';
import type { VirtualMachine } from '../api/types.ts';
import { isNotFound, type KubeClient } from './client.ts';
import { Resources } from './resource.ts';

async function fetchOne(client: KubeClient, r: ReferencedObject): Promise<unknown> {
  const ns = 'namespace' in r ? r.namespace : undefined;
  try {
    switch (r.resource) {
      case 'controllerrevisions':
        return await client.get(Resources.controllerRevisions, ns, r.name);
      case 'virtualmachineinstancetypes':
        return decodeInstancetypeObject(InstancetypeKind.VirtualMachineInstancetype, await client.get(Resources.virtualMachineInstancetypes, ns, r.name));
      case 'virtualmachineclusterinstancetypes':
        return decodeInstancetypeObject(InstancetypeKind.VirtualMachineClusterInstancetype, await client.get(Resources.virtualMachineClusterInstancetypes, undefined, r.name));
      case 'virtualmachinepreferences':
        return decodeInstancetypeObject(InstancetypeKind.VirtualMachinePreference, await client.get(Resources.virtualMachinePreferences, ns, r.name));
      case 'virtualmachineclusterpreferences':
        return decodeInstancetypeObject(InstancetypeKind.VirtualMachineClusterPreference, await client.get(Resources.virtualMachineClusterPreferences, undefined, r.name));
    }
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** A finder source holding what `vm` references, read now through `client`. */
export async function fetchInstancetypeSource(client: KubeClient, vm: VirtualMachine): Promise<InstancetypeSource> {
  const refs = referencedObjects(vm);
  const values = await Promise.all(refs.map((r) => fetchOne(client, r)));
  const fetched = new Map<string, unknown>();
  refs.forEach((r, i) => { if (values[i] !== undefined) fetched.set(referenceKey(r), values[i]); });
  return sourceFromFetched(fetched);
}
