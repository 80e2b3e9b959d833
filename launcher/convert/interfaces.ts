// Network interfaces: the guest NIC (model, MAC, boot order, ROM, ACPI index) with id
// `ua-<name>`, and its host backend `hostua-<name>`. The backend choice lives in one function,
// `networkBackend`: masquerade and bridge interfaces open the tap the node agent made in the pod
// (`-netdev tap,ifname=tap0,script=no,downscript=no`), passtBinding connects to the launcher's
// passt (`-netdev stream` over a unix socket); an interface whose pod network was not set up
// (no `ctx.podNetwork` entry) falls back to QEMU user-mode networking.
import type { Interface, Network, VirtualMachineInstance } from '../../src/api/types.ts';
import { PciOrder, at, json, type DeviceProps, type PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext, type PodNetworkBackend, type QmpSetupCommand } from './plan.ts';
import { NETDEV_PREFIX, USER_ALIAS_PREFIX } from './constants.ts';
import { virtioDriver } from './virtio.ts';
import { sha256 } from './sha256.ts';

const IFACES = 'spec.domain.devices.interfaces';

/** KubeVirt interface model → QEMU NIC driver (models the VMI admitter accepts). */
export function nicDriver(model: string, transitional: boolean, field: string, qemuMajor = 7): string {
  switch (model) {
    case 'virtio': return virtioDriver('virtio-net', transitional);
    case 'e1000': return 'e1000';
    case 'e1000e': return 'e1000e';
    case 'rtl8139': return 'rtl8139';
    case 'pcnet': return 'pcnet';
    case 'ne2k_pci': return 'ne2k_pci';
    case 'igb':
      if (qemuMajor >= 8) return 'igb';
      throw new ConversionError(`${field}.model`, 'the igb NIC model needs QEMU ≥ 8.0; this QEMU does not have it');
    default: throw new ConversionError(`${field}.model`, `unknown interface model "${model}"`);
  }
}

/**
 * A stable MAC for interfaces without `macAddress`: libvirt would pick a random 52:54:00 address;
 * deriving it from the VMI uid and interface name keeps it across restarts and on a migration
 * target, which must present the same MAC.
 */
export function derivedMac(uid: string, ifaceName: string): string {
  const h = sha256(`${uid}/${ifaceName}`);
  const tail = [h[0], h[1], h[2]].map((x) => (x ?? 0).toString(16).padStart(2, '0'));
  return ['52', '54', '00', ...tail].join(':');
}

export type NetworkBackend = { kind: 'user' } | PodNetworkBackend;

/** The one place that decides how an interface reaches the network. */
export function networkBackend(iface: Interface, network: Network, field: string, netField: string, prepared?: PodNetworkBackend): NetworkBackend {
  if (network.multus) throw new ConversionError(`${netField}.multus`, 'Multus secondary networks are not supported by qvirt yet');
  if (network.resourceClaim) throw new ConversionError(`${netField}.resourceClaim`, 'DRA network claims are not supported by qvirt yet');
  if (!network.pod) throw new ConversionError(netField, 'network has no source (pod, multus or resourceClaim)');
  if (iface.sriov) throw new ConversionError(`${field}.sriov`, 'SR-IOV interfaces are not supported by qvirt yet');
  if (iface.macvtap) throw new ConversionError(`${field}.macvtap`, 'macvtap interfaces are not supported by qvirt yet');
  if (iface.binding) throw new ConversionError(`${field}.binding`, `network binding plugins ("${iface.binding.name}") are not supported by qvirt yet`);
  if (prepared?.kind === 'tap' && (iface.bridge || iface.masquerade)) return prepared;
  if (prepared?.kind === 'passt' && (iface.passtBinding || iface.passt)) return prepared;
  if (iface.bridge || iface.masquerade || iface.passtBinding || iface.passt || iface.slirp) return { kind: 'user' };
  throw new ConversionError(field, 'interface has no binding method (bridge, masquerade, passtBinding, ...)');
}

const bindingName = (i: Interface): string =>
  i.bridge ? 'bridge' : i.masquerade ? 'masquerade' : i.passtBinding ? 'passtBinding' : i.passt ? 'passt' : i.slirp ? 'slirp' : 'none';

export interface NicPlan {
  /** -netdev / netdev_add arguments. */
  netdev: Record<string, unknown>;
  /** -device / device_add properties (bus/addr not yet set). */
  props: DeviceProps;
  netdevId: string;
  warnings: string[];
  /** QMP to run once the NIC exists (link down). */
  after: QmpSetupCommand[];
}

/** The NIC and its backend for interface `i` of the VMI (shared by cold plug and hotplug). */
export function interfacePlan(vmi: VirtualMachineInstance, i: number, ctx: ConvertContext): NicPlan {
  const devices = vmi.spec.domain.devices;
  const iface = devices.interfaces?.[i];
  const field = at(IFACES, i);
  if (!iface) throw new ConversionError(field, 'no such interface');
  const netIndex = (vmi.spec.networks ?? []).findIndex((n) => n.name === iface.name);
  const net = vmi.spec.networks?.[netIndex];
  if (!net) throw new ConversionError(field, `no network named "${iface.name}" in spec.networks`);
  const backend = networkBackend(iface, net, field, at('spec.networks', netIndex), ctx.podNetwork?.[iface.name]);
  if (iface.pciAddress) throw new ConversionError(`${field}.pciAddress`, 'explicit PCI addresses are not supported by qvirt yet');
  const netdevId = NETDEV_PREFIX + iface.name;
  const id = USER_ALIAS_PREFIX + iface.name;
  const warnings: string[] = [];
  let netdev: Record<string, unknown>;
  switch (backend.kind) {
    case 'user':
      netdev = { type: 'user', id: netdevId };
      warnings.push(`${field}: ${bindingName(iface)} binding is served by QEMU user-mode networking for now`);
      if (iface.dhcpOptions) warnings.push(`${field}.dhcpOptions: not applied with user-mode networking`);
      if ((iface.ports?.length ?? 0) > 0 || (iface.portRanges?.length ?? 0) > 0) {
        warnings.push(`${field}.ports: not forwarded to the guest with user-mode networking`);
      }
      if (devices.networkInterfaceMultiqueue) warnings.push(`${field}: networkInterfaceMultiqueue is not applied with user-mode networking`);
      break;
    case 'tap':
      netdev = { type: 'tap', id: netdevId, ifname: backend.tap, script: 'no', downscript: 'no' };
      if (devices.networkInterfaceMultiqueue) warnings.push(`${field}: networkInterfaceMultiqueue is not applied (single-queue tap)`);
      break;
    case 'passt':
      netdev = { type: 'stream', id: netdevId, server: false, addr: { type: 'unix', path: backend.socket } };
      if (iface.dhcpOptions) warnings.push(`${field}.dhcpOptions: not applied with passt (passt runs its own DHCP)`);
      break;
  }
  const driver = nicDriver(iface.model || 'virtio', devices.useVirtioTransitional === true, field, ctx.qemu.version?.major);
  const mac = backend.kind === 'tap' ? backend.mac : iface.macAddress || derivedMac(vmi.metadata?.uid ?? '', iface.name);
  const props: DeviceProps = { driver, netdev: netdevId, id, mac };
  // The guest's MTU follows the pod's (KubeVirt's host_mtu on virtio-net).
  if (backend.kind === 'tap' && driver.startsWith('virtio-net')) props['host_mtu'] = backend.mtu;
  if (iface.bootOrder !== undefined) props['bootindex'] = iface.bootOrder;
  // KubeVirt disables the option ROM unless the interface is a boot device.
  else props['romfile'] = '';
  if (iface.acpiIndex) props['acpi-index'] = iface.acpiIndex;
  const after: QmpSetupCommand[] = iface.state === 'down'
    ? [{ execute: 'set_link', arguments: { name: id, up: false }, reason: `${field}.state=down` }]
    : [];
  return { netdev, props, netdevId, warnings, after };
}

export function configureInterfaces(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): { count: number } {
  let count = 0;
  (vmi.spec.domain.devices.interfaces ?? []).forEach((iface, i) => {
    if (iface.state === 'absent') return;
    const nic = interfacePlan(vmi, i, ctx);
    b.backend('-netdev', json(nic.netdev));
    for (const w of nic.warnings) b.warn(w);
    b.device(nic.props, { order: PciOrder.Interface, nic: true });
    b.record({ alias: iface.name, kind: 'interface', qemuId: nic.props.id, driver: nic.props.driver, bus: 'pci', netdevId: nic.netdevId });
    b.setup.push(...nic.after);
    count++;
  });
  return { count };
}
