// The launcher's IPv6 side of the masquerade bridge, for a pod with IPv6: the DHCPv6 server that
// hands the guest its address (vmIPv6NetworkCIDR's second, fd10:0:2::2 by default) and the router
// advertisements that give it its default route (the bridge) and the CIDR as on-link. What to
// send is decided here (pure); the servers are dhcpv6-server.ts and ra-sender.ts. The RA sender
// needs a raw socket; without it the guest still gets its address, and the failure is logged once.
import type { Logger } from '../../src/log/logger.ts';
import { network6 } from '../../src/net/ipv6.ts';
import { duidLL, type Lease6 } from './dhcpv6-codec.ts';
import { startDhcpv6Server, type Dhcpv6Server } from './dhcpv6-server.ts';
import { encodeRouterAdvert, type RouterAdvert } from './router-advert.ts';
import { startRaSender, type RaSender } from './ra-sender.ts';

/** KubeVirt's infinite lease: 999 days. */
export const LEASE6_SECONDS = 999 * 24 * 3600;
export const ROUTER_LIFETIME_SECONDS = 1800;
export const RA_INTERVAL_SECONDS = 60;
/** The masquerade bridge's MAC (the node agent sets it); the DUID when the launcher cannot read it. */
const MASQUERADE_BRIDGE_MAC = '02:00:00:00:00:00';

export interface Ipv6RouterConfig {
  readonly bridge: string;
  readonly bridgeMac?: string | undefined;
  /** The guest's address and its CIDR's prefix (vif cache `ipv6`). */
  readonly guest: { readonly address: string; readonly prefix: number };
  readonly mtu?: number | undefined;
  /** IPv6 nameservers for the guest. */
  readonly dns: readonly string[];
  readonly log: Logger;
}

/** The guest's DHCPv6 lease (pure). */
export function lease6For(c: Pick<Ipv6RouterConfig, 'bridgeMac' | 'guest' | 'dns'>): Lease6 {
  return { address: c.guest.address, lifetimeSeconds: LEASE6_SECONDS, serverId: duidLL(c.bridgeMac ?? MASQUERADE_BRIDGE_MAC), dns: c.dns };
}

/** The router advertisement for the guest (pure): default router, M and O set, the CIDR on-link. */
export function routerAdvertFor(c: Pick<Ipv6RouterConfig, 'bridgeMac' | 'guest' | 'mtu'>): RouterAdvert {
  return {
    routerLifetime: ROUTER_LIFETIME_SECONDS, managed: true, other: true, mac: c.bridgeMac, mtu: c.mtu,
    onLink: [`${network6(c.guest.address, c.guest.prefix, 'vif cache ipv6.address')}/${c.guest.prefix}`], prefixLifetime: LEASE6_SECONDS,
  };
}

export interface Ipv6Router {
  readonly dhcp: Dhcpv6Server;
  /** Absent when router advertisements could not be sent (no raw socket). */
  readonly ra: RaSender | undefined;
  stop(): Promise<void>;
}

export async function startIpv6Router(c: Ipv6RouterConfig): Promise<Ipv6Router> {
  const dhcp = await startDhcpv6Server(c.bridge, lease6For(c), c.log);
  let ra: RaSender | undefined = startRaSender(c.bridge, encodeRouterAdvert(routerAdvertFor(c)), RA_INTERVAL_SECONDS, c.log);
  try {
    await ra.ready;
    c.log.info({ bridge: c.bridge, onLink: routerAdvertFor(c).onLink }, 'router advertisements started');
  } catch (err) {
    c.log.warn({ err: (err as Error).message, bridge: c.bridge }, 'no router advertisements: the guest gets its IPv6 address by DHCPv6 but needs its gateway configured');
    await ra.stop();
    ra = undefined;
  }
  return { dhcp, ra, stop: async () => { await ra?.stop(); await dhcp.close(); } };
}
