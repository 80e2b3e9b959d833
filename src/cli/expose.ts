// `qvirt expose TYPE NAME --name SERVICE [--port N] ...`: virtctl's expose. Reads the VM, VMI or
// VMI replica set, and creates the Service virtctl would (expose-service.ts), owned by it.
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../api/types.ts';
import { KubeApiError, type KubeObject } from '../kube/client.ts';
import { Resources, type ResourceType } from '../kube/resource.ts';
import { UsageError } from '../flags/flags.ts';
import { kubeError, statusMessage } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { parseVerb } from './verb.ts';
import {
  convertIPFamily, convertIPFamilyPolicy, convertProtocol, convertServiceType, exposeKind, exposeService, podNetworkPorts, replicaSetSelector, vmiSelector,
  type ExposedOwner, type PortsSpec, type ServicePort,
} from './expose-service.ts';

const LONG = `Looks up a virtual machine instance, virtual machine or virtual machine instance replica set by name and use its selector as the selector for a new service on the specified port.
A virtual machine instance replica set will be exposed as a service only if its selector is convertible to a selector that service supports, i.e. when the selector contains only the matchLabels component.
Note that if no port is specified via --port and the exposed resource has multiple ports, all will be re-used by the new service.

Possible types are (case insensitive, both single and plurant forms):

virtualmachineinstance (vmi), virtualmachine (vm), virtualmachineinstancereplicaset (vmirs)`;

const EXAMPLES = `  # Expose SSH to a virtual machine instance called 'myvm' on each node via a NodePort service:
  qvirt expose vmi myvm --port=22 --name=myvm-ssh --type=NodePort

  # Expose all defined pod-network ports of a virtual machine instance replicaset on a service:
  qvirt expose vmirs myvmirs --name=vmirs-service

  # Expose port 8080 as port 80 from a virtual machine instance replicaset on a service:
  qvirt expose vmirs myvmirs --port=80 --target-port=8080 --name=vmirs-service`;

async function read<T>(ctx: ClusterContext, r: ResourceType, name: string): Promise<T> {
  try {
    return await ctx.client.get<T & KubeObject>(r, ctx.namespace, name);
  } catch (err) {
    throw kubeError(err, { kind: r.kind, name, namespace: ctx.namespace }, ctx.server);
  }
}

export async function main(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt expose (TYPE NAME) [flags]',
    summary: LONG,
    flags: {
      name: { type: 'string', value: 'NAME', help: 'name of the service created for the exposure of the VM (required)' },
      'cluster-ip': { type: 'string', value: 'IP', help: 'ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to \'None\' to create a headless service.' },
      'external-ip': { type: 'string', value: 'IP', help: 'additional external IP address (not managed by the cluster) to accept for the service' },
      port: { type: 'number', value: 'PORT', help: 'the port that the service should serve on' },
      protocol: { type: 'string', value: 'TCP|UDP', default: 'TCP', help: 'the network protocol for the service to be created' },
      'target-port': { type: 'string', value: 'PORT', help: 'name or number for the port on the VM that the service should direct traffic to' },
      type: { type: 'string', value: 'TYPE', default: 'ClusterIP', help: 'type for this service: ClusterIP, NodePort, or LoadBalancer' },
      'port-name': { type: 'string', value: 'NAME', help: 'name of the port' },
      'ip-family': { type: 'string', value: 'FAMILY', help: 'IP family over which the service will be exposed: IPv4, IPv6, IPv4,IPv6 or IPv6,IPv4' },
      'ip-family-policy': { type: 'string', value: 'POLICY', help: 'whether the service can use IPv4, IPv6, or both: SingleStack, PreferDualStack or RequireDualStack' },
    },
    args: ['TYPE', 'NAME'],
    examples: EXAMPLES,
  }, argv);
  if (!v) return 0;
  const f = v.flags;
  const typeText = v.args[0]!.toLowerCase();
  const name = v.args[1]!;
  if (!f.name) throw new UsageError('required flag(s) "name" not set: give --name SERVICE, the name of the Service to create');
  const port = f.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: must be a port number 1..65535, got ${port}`);
  const protocol = convertProtocol(f.protocol ?? 'TCP');
  const type = convertServiceType(f.type ?? 'ClusterIP');
  const ipFamilies = convertIPFamily(f['ip-family'] ?? '');
  const ipFamilyPolicy = convertIPFamilyPolicy(f['ip-family-policy'] ?? '', ipFamilies);
  const kind = exposeKind(typeText);
  const serviceName = f.name;
  return withCluster(f, async (ctx) => {
    let owner: ExposedOwner;
    let selector: Record<string, string>;
    let found: ServicePort[] | undefined;
    const ownerOf = (o: { apiVersion?: string; metadata?: { name?: string; uid?: string } }, k: ExposedOwner['kind']): ExposedOwner => ({ apiVersion: 'kubevirt.io/v1', kind: k, name: o.metadata?.name ?? name, uid: o.metadata?.uid ?? '' });
    if (kind === 'vmi') {
      const vmi = await read<VirtualMachineInstance>(ctx, Resources.virtualMachineInstances, name);
      owner = ownerOf(vmi, 'VirtualMachineInstance');
      selector = vmiSelector(name);
      found = podNetworkPorts(vmi.spec as PortsSpec);
    } else if (kind === 'vm') {
      const vm = await read<VirtualMachine>(ctx, Resources.virtualMachines, name);
      owner = ownerOf(vm, 'VirtualMachine');
      selector = vmiSelector(name);
      found = podNetworkPorts(vm.spec.template?.spec as PortsSpec | undefined);
    } else {
      const rs = await read<VirtualMachineInstanceReplicaSet>(ctx, Resources.virtualMachineInstanceReplicaSets, name);
      owner = ownerOf(rs, 'VirtualMachineInstanceReplicaSet');
      found = podNetworkPorts(rs.spec.template?.spec as PortsSpec | undefined);
      selector = replicaSetSelector(rs.spec.selector as Parameters<typeof replicaSetSelector>[0]);
    }
    const service = exposeService({
      serviceName, namespace: ctx.namespace, port, portName: f['port-name'] ?? '', protocol, targetPort: f['target-port'] ?? '', type,
      clusterIP: f['cluster-ip'] ?? '', externalIP: f['external-ip'] ?? '', ipFamilies, ipFamilyPolicy,
    }, owner, selector, found);
    try {
      await ctx.client.create(Resources.services, service);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) {
        throw new UserError(`service creation failed: ${statusMessage(err)}; choose another --name, or delete it first (kubectl delete service ${serviceName} -n ${ctx.namespace})`);
      }
      if (err instanceof KubeApiError && err.code !== 401 && err.code !== 403) throw new UserError(`service creation failed: ${statusMessage(err)}`);
      throw kubeError(err, undefined, ctx.server);
    }
    process.stdout.write(`Service ${serviceName} successfully created for ${typeText} ${name}\n`);
    return 0;
  });
}
