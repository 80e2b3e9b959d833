// From a VMI and its pod's interface to the privileged setup inside the pod's network namespace
// (pure): what virt-handler's netpod does before the launcher starts QEMU (KubeVirt
// pkg/network/setup/netpod). Per interface on the pod network:
// - masquerade: bridge `k6t-eth0` (MAC 02:00:00:00:00:00) holding the gateway of `vmNetworkCIDR`
//   (10.0.2.1/24 by default), tap `tap0` in it, forwarding on, NAT rules (nft-masquerade.ts); the
//   guest gets the CIDR's second address (10.0.2.2) by DHCP. With an IPv6 pod address also
//   `vmIPv6NetworkCIDR`'s gateway (fd10:0:2::1/120) on the bridge and NAT66; the launcher serves
//   fd10:0:2::2 by DHCPv6 and advertises the bridge as the router.
// - bridge: the pod interface becomes `eth0-nic`, a port of bridge `k6t-eth0` with a new MAC; a
//   guest (on tap0) gets the pod's MAC, address and default route by DHCP from the bridge's
//   link-local 169.254.75.1<index>. (KubeVirt also leaves a dummy `eth0` holding the pod's address
//   in the pod; qvirt does not: dummy links are not available everywhere, e.g. in this CI's kernel.)
// - passt: nothing privileged (passt runs unprivileged in the launcher); only the sysctls KubeVirt
//   sets so it can bind low ports and answer pings.
// Every step tolerates having been done (idempotent), so the plan may run again.
import { vifCacheFile, type VifCache } from '../../src/api/vif-cache.ts';
import type { Interface, VirtualMachineInstance } from '../../src/api/types.ts';
import { intToIpv4, ipv4ToInt, parseCidr4, AddressError } from '../../src/net/ipv4.ts';
import { nthAddress6 } from '../../src/net/ipv6.ts';
import { renderMasqueradeNft, type NatPort } from './nft-masquerade.ts';

export const DEFAULT_VM_CIDR = '10.0.2.0/24';
export const DEFAULT_VM_IPV6_CIDR = 'fd10:0:2::/120';
export const POD_IFACE = 'eth0';
export const BRIDGE_NAME = (podIface: string) => `k6t-${podIface}`;
export const BRIDGED_POD_IFACE = (podIface: string) => `${podIface}-nic`;
export const TAP_NAME = 'tap0';
export const MASQUERADE_BRIDGE_MAC = '02:00:00:00:00:00';
const FAKE_BRIDGE_IP_BASE = '169.254.75.1';

/** What `ip addr` / `ip route` say about the pod interface before anything is changed. */
export interface PodInterfaceState {
  readonly name: string;
  readonly mac: string;
  readonly mtu: number;
  readonly ipv4?: { readonly address: string; readonly prefix: number } | undefined;
  readonly ipv6?: { readonly address: string; readonly prefix: number } | undefined;
  readonly gateway4?: string | undefined;
}

export interface SetupStep {
  readonly cmd: 'ip' | 'nft' | 'sysctl' | 'bridge';
  readonly args: readonly string[];
  readonly input?: string;
  /** Skip the step when this link already exists (creating taps/bridges/dummies). */
  readonly unlessLink?: string;
  /** Skip the step unless this link exists (renaming the pod interface). */
  readonly ifLink?: string;
}

export interface PodNetworkPlan {
  readonly steps: readonly SetupStep[];
  /** `vif-cache-<podIface>.json` contents for the launcher, by file name. */
  readonly caches: ReadonlyArray<{ readonly file: string; readonly cache: VifCache }>;
}

export class NetworkSetupError extends Error {
  override name = 'NetworkSetupError';
}

const IFACES = 'spec.domain.devices.interfaces';

/** The interfaces on the pod network that are not absent, with their index in the spec. */
export function podNetworkInterfaces(vmi: VirtualMachineInstance): Array<{ iface: Interface; index: number; networkIndex: number }> {
  const nets = vmi.spec.networks ?? [];
  const out: Array<{ iface: Interface; index: number; networkIndex: number }> = [];
  (vmi.spec.domain.devices.interfaces ?? []).forEach((iface, index) => {
    const networkIndex = nets.findIndex((n) => n.name === iface.name);
    if (networkIndex >= 0 && nets[networkIndex]?.pod && iface.state !== 'absent') out.push({ iface, index, networkIndex });
  });
  return out;
}

/** A deterministic locally administered MAC for the bridged pod NIC (it must differ from the guest's). */
function bridgedNicMac(podMac: string): string {
  const b = podMac.split(':');
  return ['02', '00', '00', ...(b.length === 6 ? b.slice(3) : ['00', '00', '01'])].join(':');
}

function natPorts(iface: Interface, field: string): NatPort[] {
  const proto = (p: string | undefined, f: string): NatPort['protocol'] => {
    const v = (p || 'TCP').toLowerCase();
    if (v === 'tcp' || v === 'udp' || v === 'sctp') return v;
    throw new NetworkSetupError(`${f}.protocol: "${p}" is not TCP, UDP or SCTP`);
  };
  return [
    ...(iface.ports ?? []).map((p, i) => ({ protocol: proto(p.protocol, `${field}.ports[${i}]`), port: p.port })),
    ...(iface.portRanges ?? []).map((r, i) => ({ protocol: proto(r.protocol, `${field}.portRanges[${i}]`), port: [r.start, r.end] as const })),
  ];
}

export function planPodNetwork(vmi: VirtualMachineInstance, pod: PodInterfaceState | undefined): PodNetworkPlan {
  const steps: SetupStep[] = [];
  const caches: Array<{ file: string; cache: VifCache }> = [];
  const onPod = podNetworkInterfaces(vmi);
  const bridge = BRIDGE_NAME(POD_IFACE);
  const sysctl = (k: string, v: string): SetupStep => ({ cmd: 'sysctl', args: ['-q', '-w', `${k}=${v}`] });
  for (const { iface, index, networkIndex } of onPod) {
    const field = `${IFACES}[${index}]`;
    const network = vmi.spec.networks![networkIndex]!;
    if (iface.passtBinding || iface.passt) {
      // passt answers the guest's pings through ping sockets and binds the forwarded ports. KubeVirt
      // allows its qemu user (107); a root launcher's passt runs as nobody (65534): allow both.
      steps.push(sysctl('net.ipv4.ping_group_range', '107 65534'), sysctl('net.ipv4.ip_unprivileged_port_start', '0'));
      continue;
    }
    if (!iface.masquerade && !iface.bridge) continue;
    if (!pod) throw new NetworkSetupError(`${field}: the pod has no interface ${POD_IFACE} to bind ${iface.masquerade ? 'masquerade' : 'bridge'} to`);
    if (caches.length > 0) throw new NetworkSetupError(`${field}: only one interface can be bound to the pod network`);
    // The launcher's DHCP servers bind ports 67 and 547 as the launcher's non-root user (qemu, 107,
    // KubeVirt's default). KubeVirt grants CAP_NET_BIND_SERVICE, which a non-root container process
    // keeps only through file capabilities; this namespace's port threshold does it for this pod alone.
    steps.push(sysctl('net.ipv4.ip_unprivileged_port_start', '0'));
    const tapSteps: SetupStep[] = [
      { cmd: 'ip', args: ['tuntap', 'add', 'dev', TAP_NAME, 'mode', 'tap', 'vnet_hdr'], unlessLink: TAP_NAME },
      { cmd: 'ip', args: ['link', 'set', TAP_NAME, 'mtu', String(pod.mtu), 'master', bridge, 'up'] },
    ];
    const podIPs = [pod.ipv4?.address, pod.ipv6?.address].filter((x): x is string => !!x);
    if (iface.masquerade) {
      steps.push(
        { cmd: 'ip', args: ['link', 'add', bridge, 'type', 'bridge'], unlessLink: bridge },
        { cmd: 'ip', args: ['link', 'set', bridge, 'address', MASQUERADE_BRIDGE_MAC, 'mtu', String(pod.mtu)] },
      );
      let dhcp4: VifCache['dhcp4'];
      let ipv6: VifCache['ipv6'];
      const nat: string[] = [];
      const ports = natPorts(iface, field);
      if (pod.ipv4) {
        const cidrField = `spec.networks[${networkIndex}].pod.vmNetworkCIDR`;
        let net: { network: number; prefix: number };
        try { net = parseCidr4(network.pod?.vmNetworkCIDR || DEFAULT_VM_CIDR, cidrField); } catch (err) { throw new NetworkSetupError((err as Error).message); }
        if (net.prefix > 30) throw new NetworkSetupError(`${cidrField}: /${net.prefix} leaves no room for a gateway and a guest`);
        const gw = intToIpv4(net.network + 1);
        const guest = intToIpv4(net.network + 2);
        steps.push({ cmd: 'ip', args: ['addr', 'replace', `${gw}/${net.prefix}`, 'dev', bridge] });
        dhcp4 = { address: guest, prefix: net.prefix, server: gw, router: gw, routes: [] };
        nat.push(renderMasqueradeNft({ family: 'ip', podInterface: pod.name, bridge, guestIP: guest, gatewayIP: gw, ports }));
      }
      if (pod.ipv6) {
        const cidrField = `spec.networks[${networkIndex}].pod.vmIPv6NetworkCIDR`;
        const cidr = network.pod?.vmIPv6NetworkCIDR || DEFAULT_VM_IPV6_CIDR;
        let gw: { address: string; prefix: number }; let guest: { address: string; prefix: number };
        try { gw = nthAddress6(cidr, 1, cidrField); guest = nthAddress6(cidr, 2, cidrField); } catch (err) { throw new NetworkSetupError((err as Error).message); }
        // No duplicate address detection on the bridge: its link-local address (the source of the
        // launcher's DHCPv6 replies and router advertisements) is usable as soon as it comes up.
        steps.push(sysctl(`net.ipv6.conf.${bridge}.accept_dad`, '0'), { cmd: 'ip', args: ['-6', 'addr', 'replace', `${gw.address}/${gw.prefix}`, 'dev', bridge, 'nodad'] });
        ipv6 = { address: guest.address, prefix: guest.prefix, gateway: gw.address };
        nat.push(renderMasqueradeNft({ family: 'ip6', podInterface: pod.name, bridge, guestIP: guest.address, gatewayIP: gw.address, ports }));
      }
      steps.push(...tapSteps, { cmd: 'ip', args: ['link', 'set', bridge, 'up'] });
      if (pod.ipv4) steps.push(sysctl('net.ipv4.ip_forward', '1'), sysctl(`net.ipv4.conf.${bridge}.route_localnet`, '1'));
      if (pod.ipv6) steps.push(sysctl('net.ipv6.conf.all.forwarding', '1'));
      for (const script of nat) steps.push({ cmd: 'nft', args: ['-f', '-'], input: script });
      caches.push({ file: vifCacheFile(pod.name), cache: { iface: iface.name, binding: 'masquerade', podInterface: pod.name, tap: TAP_NAME, bridge, mtu: pod.mtu, podIPs, ...(dhcp4 ? { dhcp4 } : {}), ...(ipv6 ? { ipv6 } : {}) } });
      continue;
    }
    // bridge binding
    const nic = BRIDGED_POD_IFACE(pod.name);
    const fakeIP = `${FAKE_BRIDGE_IP_BASE}${index}`;
    try { ipv4ToInt(fakeIP); } catch (err) { throw new NetworkSetupError(`${field}: ${(err as AddressError).message}`); }
    steps.push(
      { cmd: 'ip', args: ['link', 'add', bridge, 'type', 'bridge'], unlessLink: bridge },
      ...(pod.ipv4 ? [{ cmd: 'ip' as const, args: ['addr', 'replace', `${fakeIP}/32`, 'dev', bridge] }] : []),
      // The pod interface loses its address and MAC and becomes a bridge port, renamed eth0-nic.
      { cmd: 'ip', args: ['addr', 'flush', 'dev', pod.name], ifLink: pod.name, unlessLink: nic },
      { cmd: 'ip', args: ['link', 'set', pod.name, 'down'], ifLink: pod.name, unlessLink: nic },
      { cmd: 'ip', args: ['link', 'set', pod.name, 'name', nic], ifLink: pod.name, unlessLink: nic },
      { cmd: 'ip', args: ['link', 'set', nic, 'address', bridgedNicMac(pod.mac), 'master', bridge, 'up'] },
      { cmd: 'bridge', args: ['link', 'set', 'dev', nic, 'learning', 'off'] },
      ...tapSteps,
      { cmd: 'ip', args: ['link', 'set', bridge, 'up'] },
      sysctl('net.ipv4.conf.all.arp_ignore', '1'),
    );
    const dhcp4: VifCache['dhcp4'] = pod.ipv4
      ? { address: pod.ipv4.address, prefix: pod.ipv4.prefix, server: fakeIP, ...(pod.gateway4 ? { router: pod.gateway4 } : {}), routes: [] }
      : undefined;
    caches.push({ file: vifCacheFile(pod.name), cache: { iface: iface.name, binding: 'bridge', podInterface: pod.name, tap: TAP_NAME, bridge, mtu: pod.mtu, mac: iface.macAddress || pod.mac, podIPs, ...(dhcp4 ? { dhcp4 } : {}) } });
  }
  return { steps, caches };
}
