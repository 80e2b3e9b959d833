// The launcher's part of pod networking, before QEMU starts: reads what the node agent set up in
// the pod (`vif-cache-<podIface>.json` in /var/run/kubevirt-private), starts the DHCP server for the
// masquerade/bridge interfaces and passt for passtBinding interfaces, and tells the converter which
// backend each interface gets. All of it unprivileged: the tap exists already (QEMU opens it by
// name), and passt needs no capabilities. An interface bound to the pod network whose setup is
// missing (the pod shares the host's network, e.g. the local mode without a pod network) falls
// back to QEMU user-mode networking, as before.
import { chmod, chown, mkdir, readFile } from '../fs/async.ts';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { parseVifCache, vifCacheFile, type VifCache } from '../../src/api/vif-cache.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { PASST_GUEST_ADDRESSES_ANNOTATION } from '../../src/api/constants.ts';
import { recordedPasstGuestAddresses, type PasstGuestAddresses } from '../../src/net/passt-guest-addresses.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { PodNetworkBackend } from '../convert/plan.ts';
import { derivedMac } from '../convert/interfaces.ts';
import type { LeaseOptions } from './dhcp-codec.ts';
import { startDhcpServer, type DhcpServer } from './dhcp-server.ts';
import { startIpv6Router, type Ipv6Router } from './ipv6-router.ts';
import { startPasst, type PasstProcess } from './passt.ts';
import { parseResolvConf, type DnsConfig } from './resolv-conf.ts';

/** KubeVirt's lease: 999 days (infinite for a guest that lives as long as its pod). */
export const LEASE_SECONDS = 999 * 24 * 3600;
export const POD_INTERFACE = 'eth0';

export interface PodNetworkRuntime {
  /** Backend per VMI interface name (absent: user-mode fallback). */
  readonly backends: Readonly<Record<string, PodNetworkBackend>>;
  readonly dhcp?: DhcpServer | undefined;
  /** DHCPv6 and router advertisements on the masquerade bridge (a pod with IPv6). */
  readonly ipv6?: Ipv6Router | undefined;
  readonly passt: readonly PasstProcess[];
  /** The MAC each DHCP-served interface's guest NIC has. */
  readonly dhcpClients: ReadonlyMap<string, string>;
  stop(): Promise<void>;
}

export interface PodNetworkEnv {
  /** /var/run/kubevirt-private (the vif caches). */
  readonly privateDir: string;
  /** /var/run/kubevirt-private/<vmi uid> (passt's socket). */
  readonly privateVmiDir: string;
  readonly resolvConf?: string;
  readonly log: Logger;
}

/**
 * passt refuses to run as root: started by a root launcher (the local mode) it switches to
 * `nobody`. Debian 12's passt binds its socket after the switch; newer passt binds it before, as
 * root without CAP_DAC_OVERRIDE (it keeps only the capabilities it needs). So the directory is
 * nobody's and root's group's, 0770: both can create the socket there and no one else can.
 * A non-root launcher (KubeVirt's uid 107) runs passt as itself.
 */
export const PASST_NOBODY = 65534;
async function passtSocketDir(privateVmiDir: string): Promise<string> {
  const dir = join(privateVmiDir, 'passt');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() === 0) {
    await chown(dir, PASST_NOBODY, 0);
    await chmod(dir, 0o770);
  }
  return dir;
}

async function readCache(file: string): Promise<VifCache | undefined> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return undefined; throw err; });
  return text === undefined ? undefined : parseVifCache(text, file);
}

/** Builds the DHCP lease for a vif cache entry (pure). */
export function leaseFor(vmi: VirtualMachineInstance, cache: VifCache, ifaceIndex: number, dns: { nameservers: readonly string[]; search: readonly string[] }): LeaseOptions | undefined {
  const d = cache.dhcp4;
  if (!d) return undefined;
  const iface = vmi.spec.domain.devices.interfaces?.[ifaceIndex];
  const opts = iface?.dhcpOptions;
  return {
    address: d.address, prefix: d.prefix, server: d.server, router: d.router,
    dns: dns.nameservers, search: dns.search, mtu: cache.mtu,
    hostname: vmi.spec.hostname || vmi.metadata?.name,
    routes: d.routes, leaseSeconds: LEASE_SECONDS,
    ...(opts?.tftpServerName ? { tftpServerName: opts.tftpServerName } : {}),
    ...(opts?.bootFileName ? { bootFileName: opts.bootFileName } : {}),
    ...(opts?.ntpServers?.length ? { ntpServers: opts.ntpServers } : {}),
    ...(opts?.privateOptions?.length ? { privateOptions: opts.privateOptions } : {}),
  };
}

/**
 * The addresses a passt guest must keep (pure): none on the VMI's first run (passt takes the pod's
 * own, which the node agent records), the recorded ones on a migration target — the guest kept the
 * first pod's address. `missing` is true on a target without a record (a VMI that started before
 * qvirt recorded them): passt then takes the target pod's address, as before.
 */
export function passtGuestAddresses(vmi: VirtualMachineInstance): { guest?: PasstGuestAddresses; missing: boolean } {
  if (!vmi.status?.migrationState) return { missing: false };
  const guest = recordedPasstGuestAddresses(vmi);
  return guest ? { guest, missing: false } : { missing: true };
}

export async function preparePodNetwork(vmi: VirtualMachineInstance, env: PodNetworkEnv): Promise<PodNetworkRuntime> {
  const log = env.log;
  const backends: Record<string, PodNetworkBackend> = {};
  const leases = new Map<string, LeaseOptions>();
  const dhcpClients = new Map<string, string>();
  const passt: PasstProcess[] = [];
  const nets = vmi.spec.networks ?? [];
  const ifaces = vmi.spec.domain.devices.interfaces ?? [];
  let dns: DnsConfig | undefined;
  let ipv6: Ipv6Router | undefined;
  const stopAll = async (dhcp?: DhcpServer) => {
    await dhcp?.close();
    await ipv6?.stop();
    await Promise.all(passt.map((p) => p.stop()));
  };
  try {
    for (const [index, iface] of ifaces.entries()) {
      const net = nets.find((n) => n.name === iface.name);
      if (!net?.pod || iface.state === 'absent') continue;
      const field = `spec.domain.devices.interfaces[${index}]`;
      if (iface.passtBinding || iface.passt) {
        const { guest, missing } = passtGuestAddresses(vmi);
        if (missing) log.warn({ annotation: PASST_GUEST_ADDRESSES_ANNOTATION }, 'migration target without the guest\'s recorded passt addresses: passt hands out this pod\'s, inbound connections reach the guest once it sends IPv4');
        else if (guest) log.info({ guest }, 'passt keeps the guest\'s addresses from its first pod');
        const p = await startPasst(iface, join(await passtSocketDir(env.privateVmiDir), `${index}.sock`), field, log, guest);
        passt.push(p);
        backends[iface.name] = { kind: 'passt', socket: p.socket };
        continue;
      }
      if (!iface.masquerade && !iface.bridge) continue;
      const cache = await readCache(join(env.privateDir, vifCacheFile(POD_INTERFACE)));
      if (!cache || cache.iface !== iface.name) continue;
      const wanted = iface.masquerade ? 'masquerade' : 'bridge';
      if (cache.binding !== wanted) throw new Error(`${field}: the pod network was set up for ${cache.binding}, the interface asks for ${wanted}`);
      const mac = (iface.macAddress || cache.mac || derivedMac(vmi.metadata?.uid ?? '', iface.name)).toLowerCase();
      backends[iface.name] = { kind: 'tap', tap: cache.tap, mtu: cache.mtu, mac };
      dns ??= parseResolvConf(await readFile(env.resolvConf ?? '/etc/resolv.conf', 'utf8').catch(() => ''));
      const lease = leaseFor(vmi, cache, index, dns);
      if (lease) { leases.set(mac, lease); dhcpClients.set(iface.name, mac); }
      if (cache.ipv6 && cache.binding === 'masquerade') {
        const bridgeMac = networkInterfaces()[cache.bridge]?.find((a) => a.mac !== '00:00:00:00:00:00')?.mac;
        ipv6 = await startIpv6Router({ bridge: cache.bridge, bridgeMac, guest: cache.ipv6, mtu: cache.mtu, dns: dns.nameservers6 ?? [], log });
      }
    }
    const dhcp = leases.size > 0 ? await startDhcpServer(leases, log) : undefined;
    return { backends, dhcp, ipv6, passt, dhcpClients, stop: () => stopAll(dhcp) };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
