// The local Node object: what kubelet registers for its machine — name, hostname/arch/os labels,
// capacity and allocatable (CPU, memory, pods, and the device-plugin resources KubeVirt's launcher
// pods request: devices.kubevirt.io/kvm, tun, vhost-net), the Ready condition and addresses.
// KubeVirt's own node labels are the handler's business and are kept as found.
import { cpus, hostname, totalmem, arch as osArch } from 'node:os';
import { isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';

export const DEVICE_PLUGIN_RESOURCES = ['devices.kubevirt.io/kvm', 'devices.kubevirt.io/tun', 'devices.kubevirt.io/vhost-net'] as const;
export const DEVICE_PLUGIN_CAPACITY = '1k';

export interface NodeObject extends KubeObject {
  spec?: { unschedulable?: boolean };
  status?: Record<string, unknown>;
}

const goArch = (a: string): string => ({ x64: 'amd64', arm64: 'arm64', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[a] ?? a;

/** The node's status as kubelet reports it (pure apart from the facts passed in). */
export function localNodeStatus(facts: { cpus: number; memoryBytes: number; ip: string; hostname: string; now: string; heartbeat?: string; kubeletPort?: number }): Record<string, unknown> {
  const cap: Record<string, string> = { cpu: String(facts.cpus), memory: `${Math.floor(facts.memoryBytes / 1024)}Ki`, pods: '110', 'ephemeral-storage': '100Gi' };
  for (const r of DEVICE_PLUGIN_RESOURCES) cap[r] = DEVICE_PLUGIN_CAPACITY;
  return {
    capacity: cap,
    allocatable: { ...cap },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: facts.heartbeat ?? facts.now, lastTransitionTime: facts.now }],
    addresses: [{ type: 'InternalIP', address: facts.ip }, { type: 'Hostname', address: facts.hostname }],
    // Where the API server reaches this node's kubelet endpoint (pods/log).
    ...(facts.kubeletPort ? { daemonEndpoints: { kubeletEndpoint: { Port: facts.kubeletPort } } } : {}),
    nodeInfo: { architecture: goArch(osArch()), operatingSystem: 'linux', kubeletVersion: 'qvirt-local', containerRuntimeVersion: 'qvirt-local://processes' },
  };
}

/** Creates or updates the local Node (labels merged: labels others set, e.g. KubeVirt's, are kept). */
export async function registerLocalNode(opts: { client: KubeClient; nodeName: string; ip?: string; labels?: Record<string, string>; kubeletPort?: number }): Promise<NodeObject> {
  const { client, nodeName } = opts;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const labels = { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/arch': goArch(osArch()), 'kubernetes.io/os': 'linux', ...(opts.labels ?? {}) };
  const status = localNodeStatus({ cpus: cpus().length, memoryBytes: totalmem(), ip: opts.ip ?? '127.0.0.1', hostname: hostname(), now, ...(opts.kubeletPort ? { kubeletPort: opts.kubeletPort } : {}) });
  let node: NodeObject;
  try {
    node = await client.get<NodeObject>(Resources.nodes, undefined, nodeName);
    node = await client.patch<NodeObject>(Resources.nodes, undefined, nodeName, { metadata: { labels } });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    node = await client.create<NodeObject>(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, labels }, spec: {} });
  }
  const prevReady = ((node.status?.conditions ?? []) as Array<{ type: string; status: string; lastTransitionTime?: string }>).find((c) => c.type === 'Ready');
  if (prevReady?.status === 'True' && prevReady.lastTransitionTime) ((status.conditions as Array<Record<string, unknown>>)[0]!).lastTransitionTime = prevReady.lastTransitionTime;
  return client.updateStatus<NodeObject>(Resources.nodes, { ...node, status: { ...(node.status ?? {}), ...status } });
}
