// The Service `virtctl expose` creates for a VM, VMI or VMI replica set (pkg/virtctl/expose), as
// pure decisions: the flags' conversions with virtctl's messages, the ports found on the pod
// network's interface, the selector (the VMI id label the launcher pod carries, or the replica
// set's matchLabels), and the object itself, field for field as virtctl's Go client sends it
// (e.g. `targetPort: ""` for --port without --target-port, `targetPort: 0` for found ports).
import { UsageError } from '../flags/flags.ts';
import { UserError } from '../kube/user-error.ts';
import { Label } from '../api/constants.ts';
import { virtualMachineInstanceID } from '../api/vmi-id.ts';

export type ExposeKind = 'vmi' | 'vm' | 'vmirs';

/** virtctl's accepted spellings of the three types (lowercased first). */
export function exposeKind(text: string): ExposeKind {
  switch (text.toLowerCase()) {
    case 'vmi': case 'vmis': case 'virtualmachineinstance': case 'virtualmachineinstances': return 'vmi';
    case 'vm': case 'vms': case 'virtualmachine': case 'virtualmachines': return 'vm';
    case 'vmirs': case 'vmirss': case 'virtualmachineinstancereplicaset': case 'virtualmachineinstancereplicasets': return 'vmirs';
  }
  throw new UsageError(`unsupported resource type: ${text.toLowerCase()}; use vmi, vm or vmirs (virtualmachineinstance, virtualmachine, virtualmachineinstancereplicaset)`);
}

export type ServiceProtocol = 'TCP' | 'UDP';
export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer';
export type IPFamily = 'IPv4' | 'IPv6';
export type IPFamilyPolicy = 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';

export function convertProtocol(s: string): ServiceProtocol {
  switch (s.toLowerCase()) {
    case 'tcp': return 'TCP';
    case 'udp': return 'UDP';
  }
  throw new UsageError(`unknown protocol: ${s}; --protocol is TCP or UDP`);
}

export function convertServiceType(s: string): ServiceType {
  switch (s.toLowerCase()) {
    case 'clusterip': return 'ClusterIP';
    case 'nodeport': return 'NodePort';
    case 'loadbalancer': return 'LoadBalancer';
    case 'externalname': throw new UsageError(`type: ${s} not supported; --type is ClusterIP, NodePort or LoadBalancer`);
  }
  throw new UsageError(`unknown service type: ${s}; --type is ClusterIP, NodePort or LoadBalancer`);
}

export function convertIPFamily(s: string): IPFamily[] {
  switch (s.toLowerCase()) {
    case '': return [];
    case 'ipv4': return ['IPv4'];
    case 'ipv6': return ['IPv6'];
    case 'ipv4,ipv6': return ['IPv4', 'IPv6'];
    case 'ipv6,ipv4': return ['IPv6', 'IPv4'];
  }
  throw new UsageError(`unknown IPFamily/s: ${s}; --ip-family is IPv4, IPv6, IPv4,IPv6 or IPv6,IPv4`);
}

/** An empty policy with two families is PreferDualStack; otherwise it stays unset. */
export function convertIPFamilyPolicy(s: string, families: readonly IPFamily[]): IPFamilyPolicy | '' {
  switch (s.toLowerCase()) {
    case '': return families.length > 1 ? 'PreferDualStack' : '';
    case 'singlestack': return 'SingleStack';
    case 'preferdualstack': return 'PreferDualStack';
    case 'requiredualstack': return 'RequireDualStack';
  }
  throw new UsageError(`unknown IPFamilyPolicy/s: ${s}; --ip-family-policy is SingleStack, PreferDualStack or RequireDualStack`);
}

/** apimachinery's intstr.Parse: a number when strconv.Atoi reads one, else the string (so "" stays ""). */
export function parseIntOrString(s: string): number | string {
  if (/^[+-]?\d+$/.test(s)) {
    const n = Number(s);
    if (Number.isSafeInteger(n)) return n;
  }
  return s;
}

export interface ServicePort {
  name?: string;
  protocol?: string;
  port: number;
  targetPort: number | string;
}

/** The parts of a VMI spec the port introspection reads (loosely typed: it is the user's object). */
export interface PortsSpec {
  readonly networks?: ReadonlyArray<{ readonly name?: string; readonly pod?: unknown }>;
  readonly domain?: { readonly devices?: { readonly interfaces?: ReadonlyArray<{ readonly name?: string; readonly ports?: ReadonlyArray<{ readonly port?: number; readonly protocol?: string }> }> } };
}

/** podNetworkPorts: the ports of the interface on the pod network, named port-1, port-2, ...; undefined without one. */
export function podNetworkPorts(spec: PortsSpec | undefined): ServicePort[] | undefined {
  const podNetwork = spec?.networks?.find((n) => n.pod !== undefined && n.pod !== null)?.name;
  if (!podNetwork) return undefined;
  const iface = spec?.domain?.devices?.interfaces?.find((i) => i.name === podNetwork);
  if (!iface) return undefined;
  return (iface.ports ?? []).map((p, i) => ({ name: `port-${i + 1}`, ...(p.protocol ? { protocol: p.protocol } : {}), port: p.port ?? 0, targetPort: 0 }));
}

/** The selector of a VM's or VMI's launcher pod: its VMI id label. */
export function vmiSelector(name: string): Record<string, string> {
  return { [Label.VirtualMachineInstanceID]: virtualMachineInstanceID(name) };
}

/** A replica set's selector: matchLabels only (a Service has nothing else). */
export function replicaSetSelector(selector: { matchLabels?: Record<string, string>; matchExpressions?: readonly unknown[] } | undefined): Record<string, string> {
  if (!selector || !selector.matchLabels || Object.keys(selector.matchLabels).length === 0) throw new UserError('cannot expose VirtualMachineInstanceReplicaSet without any selector labels');
  if (selector.matchExpressions && selector.matchExpressions.length > 0) throw new UserError('cannot expose VirtualMachineInstanceReplicaSet with match expressions: a Service selects by labels only');
  return { ...selector.matchLabels };
}

export interface ExposeOptions {
  readonly serviceName: string;
  readonly namespace: string;
  /** --port; 0: the ports found on the resource. */
  readonly port: number;
  readonly portName: string;
  readonly protocol: ServiceProtocol;
  readonly targetPort: string;
  readonly type: ServiceType;
  readonly clusterIP: string;
  readonly externalIP: string;
  readonly ipFamilies: readonly IPFamily[];
  readonly ipFamilyPolicy: IPFamilyPolicy | '';
}

export interface ExposedOwner {
  readonly apiVersion: string;
  readonly kind: 'VirtualMachine' | 'VirtualMachineInstance' | 'VirtualMachineInstanceReplicaSet';
  readonly name: string;
  readonly uid: string;
}

export interface ServiceObject {
  apiVersion: 'v1';
  kind: 'Service';
  metadata: { name: string; namespace: string; ownerReferences: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller: true; blockOwnerDeletion: false }> };
  spec: {
    ports: ServicePort[];
    selector: Record<string, string>;
    clusterIP?: string;
    type: ServiceType;
    externalIPs?: string[];
    ipFamilies?: IPFamily[];
    ipFamilyPolicy?: IPFamilyPolicy;
  };
  /** Empty, as Go's client sends a Service's zero status. */
  status: { loadBalancer: Record<string, never> };
}

/** The Service, or a refusal when no port is known. */
export function exposeService(o: ExposeOptions, owner: ExposedOwner, selector: Record<string, string>, foundPorts: readonly ServicePort[] | undefined): ServiceObject {
  const ports: ServicePort[] = o.port !== 0
    ? [{ ...(o.portName ? { name: o.portName } : {}), protocol: o.protocol, port: o.port, targetPort: parseIntOrString(o.targetPort) }]
    : [...(foundPorts ?? [])];
  if (ports.length === 0) throw new UserError(`couldn't find port via --port flag or introspection: the ${owner.kind} declares no ports on its pod network interface; give --port`);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: o.serviceName,
      namespace: o.namespace,
      ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: false }],
    },
    spec: {
      ports,
      selector,
      ...(o.clusterIP ? { clusterIP: o.clusterIP } : {}),
      type: o.type,
      ...(o.externalIP ? { externalIPs: [o.externalIP] } : {}),
      ...(o.ipFamilies.length ? { ipFamilies: [...o.ipFamilies] } : {}),
      ...(o.ipFamilyPolicy ? { ipFamilyPolicy: o.ipFamilyPolicy } : {}),
    },
    status: { loadBalancer: {} },
  };
}
