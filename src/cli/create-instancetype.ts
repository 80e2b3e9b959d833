// `qvirt create instancetype` and `qvirt create preference`: virtctl's, printing a
// VirtualMachine(Cluster)Instancetype or VirtualMachine(Cluster)Preference manifest (KubeVirt's
// pkg/virtctl/create/instancetype and .../preference). Client-side only. -n makes either namespaced.
import {
  checkRequired, CreateError, flagErr, mapParams, QuantityFormatError, quantity, randString,
  type CreateFlags, type ParsedCreateFlags,
} from './create-params.ts';

const API_VERSION = 'instancetype.kubevirt.io/v1beta1';

export const INSTANCETYPE_FLAGS = {
  cpu: { type: 'uint32', help: 'Specify the count of CPUs of the Instancetype.' },
  gpu: { type: 'stringArray', help: 'Specify the list of vGPUs to passthrough. Can be provided multiple times.' },
  hostdevice: { type: 'stringArray', help: 'Specify list of HostDevices to passthrough. Can be provided multiple times.' },
  iothreadspolicy: { type: 'string', help: 'Specify IOThreadsPolicy to be used. Only valid values are "auto" and "shared".' },
  memory: { type: 'string', help: 'Specify the amount of memory of the Instancetype.' },
  name: { type: 'string', help: 'Specify the name of the Instancetype.' },
  namespaced: { type: 'bool', help: 'Specify if VirtualMachineInstancetype should be created. By default VirtualMachineClusterInstancetype is created.' },
} as const satisfies CreateFlags;

export const INSTANCETYPE_EXAMPLES = `  # Create a manifest for a ClusterInstancetype with a random name:
  qvirt create instancetype --cpu 2 --memory 256Mi

  # Create a manifest for a ClusterInstancetype with a specified name:
  qvirt create instancetype --name my-instancetype --cpu 2 --memory 256Mi

  # Create a manifest for a ClusterInstancetype with a specified gpu:
  qvirt create instancetype --cpu 2 --memory 256Mi --gpu name:gpu1,devicename:nvidia

  # Create a manifest for a Instancetype with a specified name and cpu:
  qvirt create instancetype --namespaced --name my-instancetype --cpu 2 --memory 256Mi`;

function str(f: ParsedCreateFlags, name: string): string {
  return f.values.get(name) as string;
}
function list(f: ParsedCreateFlags, name: string): string[] {
  return f.values.get(name) as string[];
}

function devices(f: ParsedCreateFlags, flag: 'gpu' | 'hostdevice'): { name: string; deviceName: string }[] {
  return list(f, flag).map((p) => {
    const o = mapParams(flag, p, { name: 'string', devicename: 'string' });
    if (!o.name) throw flagErr(flag, 'name must be specified');
    if (!o.devicename) throw flagErr(flag, 'deviceName must be specified');
    return { name: o.name as string, deviceName: o.devicename as string };
  });
}

/** The instance type virtctl prints for these flags. */
export function createInstancetype(f: ParsedCreateFlags, random: () => number = Math.random): Record<string, unknown> {
  checkRequired(['cpu', 'memory'], f.changed);
  const namespace = f.changed.has('namespace') ? str(f, 'namespace') : '';
  const namespaced = namespace !== '' || f.values.get('namespaced') === true || f.changed.has('namespace');
  const name = f.changed.has('name') ? str(f, 'name') : `${namespaced ? 'instancetype' : 'clusterinstancetype'}-${randString(5, random)}`;
  let memory: string;
  try {
    memory = quantity(str(f, 'memory'));
  } catch (err) {
    if (err instanceof QuantityFormatError) throw new CreateError(err.message);
    throw err;
  }
  const cpu = f.values.get('cpu') as number;
  if (cpu <= 0) throw new CreateError('cpu value must be greater than zero');
  const spec: Record<string, unknown> = { cpu: { guest: cpu }, memory: { guest: memory } };
  if (f.changed.has('gpu')) { const g = devices(f, 'gpu'); if (g.length) spec.gpus = g; }
  if (f.changed.has('hostdevice')) { const h = devices(f, 'hostdevice'); if (h.length) spec.hostDevices = h; }
  if (f.changed.has('iothreadspolicy')) {
    const p = str(f, 'iothreadspolicy');
    if (p !== 'auto' && p !== 'shared') throw flagErr('iothreadspolicy', 'IOThread must be of value auto or shared');
    spec.ioThreadsPolicy = p;
  }
  const metadata: Record<string, unknown> = { name };
  if (namespaced && namespace) metadata.namespace = namespace;
  return { apiVersion: API_VERSION, kind: namespaced ? 'VirtualMachineInstancetype' : 'VirtualMachineClusterInstancetype', metadata, spec };
}

export const PREFERENCE_FLAGS = {
  'cpu-topology': { type: 'string', help: 'Defines the preferred guest visible CPU topology.' },
  'machine-type': { type: 'string', help: 'Defines the preferred machine type to use.' },
  name: { type: 'string', help: 'Specify the name of the Preference.' },
  namespaced: { type: 'bool', help: 'Specify if VirtualMachinePreference should be created. By default VirtualMachineClusterPreference is created.' },
  'volume-storage-class': { type: 'string', help: 'Defines the preferred storage class' },
} as const satisfies CreateFlags;

export const PREFERENCE_EXAMPLES = `  # Create a manifest for a ClusterPreference with a random name:
  qvirt create preference

  # Create a manifest for a ClusterPreference with a specified CPU topology:
  qvirt create preference --cpu-topology sockets

  # Create a manifest for a Preference with a specified CPU topology:
  qvirt create preference --cpu-topology sockets --namespaced`;

/** KubeVirt's preferred CPU topologies (validation.IsPreferredTopologySupported), old spellings included. */
const TOPOLOGIES = ['preferSockets', 'preferCores', 'preferThreads', 'preferSpread', 'preferAny', 'sockets', 'cores', 'threads', 'spread', 'any'];

/** The preference virtctl prints for these flags. */
export function createPreference(f: ParsedCreateFlags, random: () => number = Math.random): Record<string, unknown> {
  const namespace = f.changed.has('namespace') ? str(f, 'namespace') : '';
  const namespaced = f.values.get('namespaced') === true || f.changed.has('namespace');
  const name = f.changed.has('name') ? str(f, 'name') : `${namespaced ? 'preference' : 'clusterpreference'}-${randString(5, random)}`;
  const spec: Record<string, unknown> = {};
  if (f.changed.has('volume-storage-class')) spec.volumes = { preferredStorageClassName: str(f, 'volume-storage-class') || undefined };
  if (f.changed.has('machine-type')) spec.machine = { preferredMachineType: str(f, 'machine-type') || undefined };
  if (f.changed.has('cpu-topology')) {
    const t = str(f, 'cpu-topology');
    if (!TOPOLOGIES.includes(t)) throw flagErr('cpu-topology', 'CPU topology must have a value of sockets, cores, threads or spread');
    spec.cpu = { preferredCPUTopology: t };
  }
  const metadata: Record<string, unknown> = { name };
  if (namespaced && namespace) metadata.namespace = namespace;
  return { apiVersion: API_VERSION, kind: namespaced ? 'VirtualMachinePreference' : 'VirtualMachineClusterPreference', metadata, spec };
}
