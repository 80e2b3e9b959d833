// DHCPv6 messages (RFC 8415), pure: decoding what the guest's client sends and encoding the
// single-client server's answers as KubeVirt's SingleClientDHCPv6Server gives them
// (pkg/network/dhcp/serverv6): the client's ID echoed, the server's DUID-LL (the bridge's MAC),
// an IA_NA with the client's IAID holding the guest's one address (999-day lifetimes), DNS servers
// (option 23) when the pod has IPv6 nameservers. Solicit → Advertise, or Reply when the client asked
// for Rapid Commit; anything else a client sends (Request, Confirm, Renew, Rebind, Information-
// request, Release, Decline) → Reply.
import { AddressError } from '../../src/net/ipv4.ts';
import { formatIpv6, parseIpv6 } from '../../src/net/ipv6.ts';

export const DHCPV6_SERVER_PORT = 547;
export const DHCPV6_CLIENT_PORT = 546;
/** All_DHCP_Relay_Agents_and_Servers: where clients send. */
export const ALL_DHCP_SERVERS = 'ff02::1:2';

export const MessageType6 = {
  Solicit: 1, Advertise: 2, Request: 3, Confirm: 4, Renew: 5, Rebind: 6, Reply: 7, Release: 8, Decline: 9,
  Reconfigure: 10, InformationRequest: 11, RelayForw: 12, RelayRepl: 13,
} as const;

export const Opt6 = {
  ClientId: 1, ServerId: 2, IaNa: 3, IaAddr: 5, Oro: 6, ElapsedTime: 8, StatusCode: 13, RapidCommit: 14, DnsServers: 23,
} as const;

export class Dhcpv6CodecError extends Error {
  override name = 'Dhcpv6CodecError';
}

export interface Dhcpv6Message {
  readonly type: number;
  readonly transactionId: number;
  /** Options in the order they came (a code may repeat). */
  readonly options: ReadonlyArray<readonly [number, Buffer]>;
}

/** Parses a client/server message (not relay messages). */
export function decodeMessage6(b: Buffer): Dhcpv6Message {
  if (b.length < 4) throw new Dhcpv6CodecError(`DHCPv6 message too short: ${b.length} bytes (at least 4)`);
  const type = b[0]!;
  if (type === MessageType6.RelayForw || type === MessageType6.RelayRepl) throw new Dhcpv6CodecError(`DHCPv6 relay messages (type ${type}) are not served`);
  return { type, transactionId: b.readUIntBE(1, 3), options: decodeOptions6(b.subarray(4), 'message') };
}

export function decodeOptions6(b: Buffer, where: string): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  let o = 0;
  while (o < b.length) {
    if (o + 4 > b.length) throw new Dhcpv6CodecError(`DHCPv6 ${where}: truncated option header at byte ${o}`);
    const code = b.readUInt16BE(o);
    const len = b.readUInt16BE(o + 2);
    if (o + 4 + len > b.length) throw new Dhcpv6CodecError(`DHCPv6 ${where}: option ${code} runs past the end (${len} bytes)`);
    out.push([code, b.subarray(o + 4, o + 4 + len)]);
    o += 4 + len;
  }
  return out;
}

export const option6 = (m: Dhcpv6Message, code: number): Buffer | undefined => m.options.find(([c]) => c === code)?.[1];

export function encodeOption6(code: number, data: Buffer): Buffer {
  if (data.length > 0xffff) throw new Dhcpv6CodecError(`DHCPv6 option ${code} is ${data.length} bytes (at most 65535)`);
  const h = Buffer.alloc(4);
  h.writeUInt16BE(code, 0);
  h.writeUInt16BE(data.length, 2);
  return Buffer.concat([h, data]);
}

export function encodeMessage6(type: number, transactionId: number, options: ReadonlyArray<readonly [number, Buffer]>): Buffer {
  const h = Buffer.alloc(4);
  h[0] = type;
  h.writeUIntBE(transactionId & 0xffffff, 1, 3);
  return Buffer.concat([h, ...options.map(([c, d]) => encodeOption6(c, d))]);
}

export function ipv6Bytes(addr: string, field = 'address'): Buffer {
  try { return Buffer.from(parseIpv6(addr, field).flatMap((g) => [g >> 8, g & 0xff])); } catch (err) {
    throw new Dhcpv6CodecError((err as AddressError).message);
  }
}

export function ipv6FromBytes(b: Buffer): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i));
  return formatIpv6(groups);
}

/** DUID-LL (RFC 8415 §11.4): type 3, hardware type 1 (Ethernet), the MAC. */
export function duidLL(mac: string): Buffer {
  const bytes = mac.split(':').map((h) => parseInt(h, 16));
  if (bytes.length !== 6 || bytes.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) throw new Dhcpv6CodecError(`"${mac}" is not a MAC address`);
  return Buffer.from([0, 3, 0, 1, ...bytes]);
}

/** What the server gives its one client. */
export interface Lease6 {
  readonly address: string;
  /** Preferred and valid lifetime, seconds. */
  readonly lifetimeSeconds: number;
  /** The server's DUID (DUID-LL of the bridge). */
  readonly serverId: Buffer;
  readonly dns: readonly string[];
}

/** IA_NA for `iaid` holding the lease's address (T1/T2 0: the client chooses). */
export function encodeIaNa(iaid: Buffer, l: Lease6): Buffer {
  const life = Buffer.alloc(8);
  life.writeUInt32BE(l.lifetimeSeconds >>> 0, 0);
  life.writeUInt32BE(l.lifetimeSeconds >>> 0, 4);
  const addr = encodeOption6(Opt6.IaAddr, Buffer.concat([ipv6Bytes(l.address, 'lease address'), life]));
  return Buffer.concat([iaid, Buffer.alloc(8), addr]);
}

/**
 * The server's answer to a client message (pure), or undefined when there is none: not a client
 * message, no client ID, or a server ID naming another server.
 */
export function answer6(req: Dhcpv6Message, lease: Lease6): { type: number; reply: Buffer } | undefined {
  const clientMessages: number[] = [MessageType6.Solicit, MessageType6.Request, MessageType6.Confirm, MessageType6.Renew, MessageType6.Rebind, MessageType6.Release, MessageType6.Decline, MessageType6.InformationRequest];
  if (!clientMessages.includes(req.type)) return undefined;
  const clientId = option6(req, Opt6.ClientId);
  if (!clientId && req.type !== MessageType6.InformationRequest) return undefined;
  const serverId = option6(req, Opt6.ServerId);
  if (serverId && !serverId.equals(lease.serverId)) return undefined; // the client chose another server
  const rapid = req.type === MessageType6.Solicit && option6(req, Opt6.RapidCommit) !== undefined;
  const type = req.type === MessageType6.Solicit && !rapid ? MessageType6.Advertise : MessageType6.Reply;
  const opts: Array<[number, Buffer]> = [];
  if (clientId) opts.push([Opt6.ClientId, clientId]);
  opts.push([Opt6.ServerId, lease.serverId]);
  if (rapid) opts.push([Opt6.RapidCommit, Buffer.alloc(0)]);
  // The IA_NA the client asked about, with its IAID; KubeVirt answers with IAID 0 when none was sent.
  const ia = option6(req, Opt6.IaNa);
  if (req.type !== MessageType6.InformationRequest && req.type !== MessageType6.Release && req.type !== MessageType6.Decline) {
    opts.push([Opt6.IaNa, encodeIaNa(ia && ia.length >= 4 ? ia.subarray(0, 4) : Buffer.alloc(4), lease)]);
  }
  if (lease.dns.length) opts.push([Opt6.DnsServers, Buffer.concat(lease.dns.map((d, i) => ipv6Bytes(d, `DNS server ${i}`)))]);
  if (req.type === MessageType6.Release || req.type === MessageType6.Decline) opts.push([Opt6.StatusCode, Buffer.from([0, 0, ...Buffer.from('released')])]);
  return { type, reply: encodeMessage6(type, req.transactionId, opts) };
}

/** The address offered in a reply's first IA_NA (for tests and the benchmark's client). */
export function leasedAddress6(reply: Dhcpv6Message): string | undefined {
  const ia = option6(reply, Opt6.IaNa);
  if (!ia || ia.length < 12) return undefined;
  const addr = decodeOptions6(ia.subarray(12), 'IA_NA').find(([c]) => c === Opt6.IaAddr)?.[1];
  return addr && addr.length >= 24 ? ipv6FromBytes(addr.subarray(0, 16)) : undefined;
}
