// ICMPv6 Router Advertisements (RFC 4861 §4.2), pure: what the launcher's router side of the
// masquerade bridge tells the guest, so that a guest needs no static IPv6 configuration. KubeVirt
// itself sends none (its user guide has the guest configure fd10:0:2::1 as its gateway); qvirt
// advertises the bridge as the default router and the VM CIDR as on-link, with the Managed and
// Other flags set: the address itself comes from the DHCPv6 server (no SLAAC: the Autonomous flag
// is off, the CIDR is a /120 anyway).
//
// The checksum is left 0: the kernel computes it for raw ICMPv6 sockets (RFC 3542 §3.1).
import { Dhcpv6CodecError, ipv6Bytes } from './dhcpv6-codec.ts';

export const ICMPV6_ROUTER_SOLICITATION = 133;
export const ICMPV6_ROUTER_ADVERTISEMENT = 134;
const OPT_SOURCE_LL = 1;
const OPT_PREFIX_INFO = 3;
const OPT_MTU = 5;

export interface RouterAdvert {
  /** Seconds the guest may use the sender as its default router (0: not a default router; ≤ 9000). */
  readonly routerLifetime: number;
  /** Managed (addresses by DHCPv6) and Other (other configuration by DHCPv6) flags. */
  readonly managed: boolean;
  readonly other: boolean;
  /** The sender's MAC (source link-layer address option), if known. */
  readonly mac?: string | undefined;
  readonly mtu?: number | undefined;
  /** On-link prefixes (`addr/len`), none autonomous. */
  readonly onLink: readonly string[];
  /** Valid and preferred lifetime of the prefixes, seconds. */
  readonly prefixLifetime: number;
}

export function encodeRouterAdvert(ra: RouterAdvert): Buffer {
  if (!Number.isInteger(ra.routerLifetime) || ra.routerLifetime < 0 || ra.routerLifetime > 9000) throw new Dhcpv6CodecError(`router lifetime ${ra.routerLifetime}: must be 0..9000 seconds`);
  const head = Buffer.alloc(16);
  head[0] = ICMPV6_ROUTER_ADVERTISEMENT;
  head[4] = 64; // current hop limit the guest should use
  head[5] = (ra.managed ? 0x80 : 0) | (ra.other ? 0x40 : 0);
  head.writeUInt16BE(ra.routerLifetime, 6);
  const opts: Buffer[] = [];
  if (ra.mac) {
    const mac = ra.mac.split(':').map((h) => parseInt(h, 16));
    if (mac.length !== 6 || mac.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) throw new Dhcpv6CodecError(`"${ra.mac}" is not a MAC address`);
    opts.push(Buffer.from([OPT_SOURCE_LL, 1, ...mac]));
  }
  if (ra.mtu) {
    const o = Buffer.alloc(8);
    o[0] = OPT_MTU; o[1] = 1;
    o.writeUInt32BE(ra.mtu, 4);
    opts.push(o);
  }
  for (const p of ra.onLink) {
    const m = /^([^/]+)\/(\d{1,3})$/.exec(p);
    const len = Number(m?.[2]);
    if (!m || len > 128) throw new Dhcpv6CodecError(`on-link prefix "${p}" is not an IPv6 CIDR (addr/len)`);
    const o = Buffer.alloc(32);
    o[0] = OPT_PREFIX_INFO; o[1] = 4; o[2] = len;
    o[3] = 0x80; // L (on-link); A (autonomous) off
    o.writeUInt32BE(ra.prefixLifetime >>> 0, 4);
    o.writeUInt32BE(ra.prefixLifetime >>> 0, 8);
    ipv6Bytes(m[1]!, `on-link prefix ${p}`).copy(o, 16);
    opts.push(o);
  }
  return Buffer.concat([head, ...opts]);
}

/** The fields of an RA (for tests): flags, lifetime, options by type. */
export function decodeRouterAdvert(b: Buffer): { managed: boolean; other: boolean; routerLifetime: number; options: Array<{ type: number; data: Buffer }> } {
  if (b.length < 16 || b[0] !== ICMPV6_ROUTER_ADVERTISEMENT) throw new Dhcpv6CodecError('not a router advertisement');
  const options: Array<{ type: number; data: Buffer }> = [];
  for (let o = 16; o < b.length;) {
    const len = (b[o + 1] ?? 0) * 8;
    if (len === 0 || o + len > b.length) throw new Dhcpv6CodecError(`router advertisement: bad option length at byte ${o}`);
    options.push({ type: b[o]!, data: b.subarray(o + 2, o + len) });
    o += len;
  }
  return { managed: (b[5]! & 0x80) !== 0, other: (b[5]! & 0x40) !== 0, routerLifetime: b.readUInt16BE(6), options };
}
