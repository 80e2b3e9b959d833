// DHCPv4 messages (RFC 2131/2132), pure: decoding what a guest's client sends and encoding the
// single-client server's OFFER/ACK/NAK with the options KubeVirt's server hands out
// (pkg/network/dhcp/server): subnet mask, router, DNS servers, domain name and search list
// (RFC 3397), MTU, hostname, classless static routes (RFC 3442), and the interface's
// `dhcpOptions` (TFTP server 66, boot file 67, NTP servers 42, private options 224–254).

export const DHCP_SERVER_PORT = 67;
export const DHCP_CLIENT_PORT = 68;
const MAGIC = 0x63825363;

export const MessageType = { Discover: 1, Offer: 2, Request: 3, Decline: 4, Ack: 5, Nak: 6, Release: 7, Inform: 8 } as const;
export type MessageTypeName = keyof typeof MessageType;

export const Opt = {
  SubnetMask: 1, Router: 3, DNS: 6, HostName: 12, DomainName: 15, MTU: 26, NTP: 42, RequestedIP: 50, LeaseTime: 51,
  MessageType: 53, ServerId: 54, ParamList: 55, TFTPServer: 66, BootFile: 67, DomainSearch: 119, ClasslessRoutes: 121, End: 255, Pad: 0,
} as const;

export class DhcpCodecError extends Error {
  override name = 'DhcpCodecError';
}

export interface DhcpMessage {
  readonly op: number;
  readonly xid: number;
  readonly secs: number;
  readonly flags: number;
  readonly ciaddr: string;
  readonly yiaddr: string;
  readonly siaddr: string;
  readonly giaddr: string;
  /** Client hardware address, `aa:bb:cc:dd:ee:ff`. */
  readonly chaddr: string;
  readonly type: number | undefined;
  /** Raw options by code (the last occurrence wins; RFC 3396 concatenation is not needed here). */
  readonly options: ReadonlyMap<number, Buffer>;
}

const ip = (b: Buffer, o: number) => `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;

export function ipBytes(addr: string, field = 'address'): Buffer {
  const p = addr.split('.');
  if (p.length !== 4 || p.some((x) => !/^\d{1,3}$/.test(x) || Number(x) > 255)) throw new DhcpCodecError(`${field}: "${addr}" is not an IPv4 address`);
  return Buffer.from(p.map(Number));
}

export function decodeMessage(b: Buffer): DhcpMessage {
  if (b.length < 240) throw new DhcpCodecError(`DHCP message too short: ${b.length} bytes (at least 240)`);
  if (b.readUInt32BE(236) !== MAGIC) throw new DhcpCodecError('not a DHCP message: the magic cookie is missing');
  const hlen = Math.min(b[2] ?? 6, 16);
  const chaddr = [...b.subarray(28, 28 + hlen)].map((x) => x.toString(16).padStart(2, '0')).join(':');
  const options = new Map<number, Buffer>();
  let o = 240;
  while (o < b.length) {
    const code = b[o]!;
    if (code === Opt.Pad) { o++; continue; }
    if (code === Opt.End) break;
    const len = b[o + 1];
    if (len === undefined || o + 2 + len > b.length) throw new DhcpCodecError(`DHCP option ${code} runs past the end of the message`);
    options.set(code, b.subarray(o + 2, o + 2 + len));
    o += 2 + len;
  }
  const t = options.get(Opt.MessageType);
  return {
    op: b[0]!, xid: b.readUInt32BE(4), secs: b.readUInt16BE(8), flags: b.readUInt16BE(10),
    ciaddr: ip(b, 12), yiaddr: ip(b, 16), siaddr: ip(b, 20), giaddr: ip(b, 24), chaddr,
    type: t && t.length === 1 ? t[0] : undefined, options,
  };
}

/** RFC 1035 §3.1 names, uncompressed (as KubeVirt sends option 119). */
export function encodeSearchDomains(domains: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  for (const d of domains) {
    if (d.length > 253 || !/^(?:[_a-z0-9](?:[_a-z0-9-]{0,61}[a-z0-9])?\.)*(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?)?$/i.test(d)) {
      throw new DhcpCodecError(`search domain "${d}" is not valid`);
    }
    for (const label of d.split('.').filter(Boolean)) parts.push(Buffer.from([label.length]), Buffer.from(label, 'ascii'));
    parts.push(Buffer.from([0]));
  }
  const out = Buffer.concat(parts);
  if (out.length > 255) throw new DhcpCodecError(`search domains take ${out.length} bytes (at most 255)`);
  return out;
}

export interface ClasslessRoute { readonly dst: string; readonly gateway: string }

/** RFC 3442: width, significant octets of the destination, gateway; default routes last. */
export function encodeClasslessRoutes(routes: readonly ClasslessRoute[]): Buffer {
  const sorted = [...routes.filter((r) => !r.dst.endsWith('/0')), ...routes.filter((r) => r.dst.endsWith('/0'))];
  return Buffer.concat(sorted.map((r) => {
    const [addr, lenText] = r.dst.split('/');
    const width = Number(lenText ?? 32);
    if (!Number.isInteger(width) || width < 0 || width > 32) throw new DhcpCodecError(`route ${r.dst}: bad prefix length`);
    const octets = width > 0 ? Math.floor((width - 1) / 8) + 1 : 0;
    return Buffer.concat([Buffer.from([width]), ipBytes(addr ?? '', `route ${r.dst}`).subarray(0, octets), ipBytes(r.gateway, `route ${r.dst} gateway`)]);
  }));
}

export function prefixMask(prefix: number): Buffer {
  const n = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** What the server tells its one client. */
export interface LeaseOptions {
  readonly address: string;
  readonly prefix: number;
  readonly server: string;
  readonly router?: string | undefined;
  readonly dns: readonly string[];
  readonly search: readonly string[];
  readonly mtu?: number | undefined;
  readonly hostname?: string | undefined;
  readonly routes: readonly ClasslessRoute[];
  readonly leaseSeconds: number;
  readonly tftpServerName?: string | undefined;
  readonly bootFileName?: string | undefined;
  readonly ntpServers?: readonly string[] | undefined;
  readonly privateOptions?: ReadonlyArray<{ option: number; value: string }> | undefined;
}

/** The options of an OFFER/ACK in code order (RFC 2132 encodings). Throws naming the bad value. */
export function leaseOptions(l: LeaseOptions): Array<[number, Buffer]> {
  const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n >>> 0); return b; };
  const opts: Array<[number, Buffer]> = [[Opt.SubnetMask, prefixMask(l.prefix)]];
  if (l.router) opts.push([Opt.Router, ipBytes(l.router, 'router')]);
  if (l.dns.length) opts.push([Opt.DNS, Buffer.concat(l.dns.map((d) => ipBytes(d, 'DNS server')))]);
  if (l.hostname) opts.push([Opt.HostName, Buffer.from(l.hostname.slice(0, 255))]);
  // KubeVirt: the domain name is the first search domain (the pod's namespace.svc.cluster.local).
  if (l.search[0]) opts.push([Opt.DomainName, Buffer.from(l.search[0])]);
  if (l.mtu) { const b = Buffer.alloc(2); b.writeUInt16BE(l.mtu); opts.push([Opt.MTU, b]); }
  if (l.ntpServers?.length) opts.push([Opt.NTP, Buffer.concat(l.ntpServers.map((s, i) => ipBytes(s, `dhcpOptions.ntpServers[${i}]`)))]);
  opts.push([Opt.LeaseTime, u32(l.leaseSeconds)]);
  opts.push([Opt.ServerId, ipBytes(l.server, 'server')]);
  if (l.tftpServerName) opts.push([Opt.TFTPServer, Buffer.from(l.tftpServerName)]);
  if (l.bootFileName) opts.push([Opt.BootFile, Buffer.from(l.bootFileName)]);
  if (l.search.length) opts.push([Opt.DomainSearch, encodeSearchDomains(l.search)]);
  if (l.routes.length) opts.push([Opt.ClasslessRoutes, encodeClasslessRoutes(l.routes)]);
  for (const p of l.privateOptions ?? []) {
    // KubeVirt passes only the private-use range; the admitter rejects others.
    if (p.option >= 224 && p.option <= 254) opts.push([p.option, Buffer.from(p.value)]);
  }
  for (const [code, v] of opts) if (v.length > 255) throw new DhcpCodecError(`DHCP option ${code} is ${v.length} bytes (at most 255)`);
  return opts;
}

/** A BOOTREPLY to `req` of `type` offering `yiaddr`, with `options` (message type and end added). */
export function encodeReply(req: DhcpMessage, type: number, yiaddr: string, options: ReadonlyArray<[number, Buffer]>): Buffer {
  const head = Buffer.alloc(240);
  head[0] = 2; // BOOTREPLY
  head[1] = 1; // Ethernet
  head[2] = 6;
  head.writeUInt32BE(req.xid, 4);
  head.writeUInt16BE(req.flags, 10);
  ipBytes(req.ciaddr).copy(head, 12);
  ipBytes(type === MessageType.Nak ? '0.0.0.0' : yiaddr).copy(head, 16);
  ipBytes(req.giaddr).copy(head, 24);
  Buffer.from(req.chaddr.split(':').map((h) => parseInt(h, 16))).copy(head, 28);
  head.writeUInt32BE(MAGIC, 236);
  const body: Buffer[] = [Buffer.from([Opt.MessageType, 1, type])];
  for (const [code, v] of options) if (code !== Opt.MessageType) body.push(Buffer.from([code, v.length]), v);
  body.push(Buffer.from([Opt.End]));
  const msg = Buffer.concat([head, ...body]);
  // BOOTP minimum message size.
  return msg.length < 300 ? Buffer.concat([msg, Buffer.alloc(300 - msg.length)]) : msg;
}

/** Encodes a client request (for tests and the benchmark's client). */
export function encodeRequest(type: number, mac: string, xid: number, options: ReadonlyArray<[number, Buffer]> = [], ciaddr = '0.0.0.0'): Buffer {
  const head = Buffer.alloc(240);
  head[0] = 1; head[1] = 1; head[2] = 6;
  head.writeUInt32BE(xid, 4);
  head.writeUInt16BE(0x8000, 10);
  ipBytes(ciaddr).copy(head, 12);
  Buffer.from(mac.split(':').map((h) => parseInt(h, 16))).copy(head, 28);
  head.writeUInt32BE(MAGIC, 236);
  const body: Buffer[] = [Buffer.from([Opt.MessageType, 1, type])];
  for (const [code, v] of options) body.push(Buffer.from([code, v.length]), v);
  body.push(Buffer.from([Opt.End]));
  return Buffer.concat([head, ...body]);
}

/**
 * The server's answer to a client message (pure): OFFER to DISCOVER, ACK to REQUEST (for our
 * address; NAK when the client asks for another one), nothing otherwise.
 */
export function answer(req: DhcpMessage, lease: LeaseOptions): { type: number; reply: Buffer } | undefined {
  if (req.op !== 1) return undefined;
  const opts = leaseOptions(lease);
  if (req.type === MessageType.Discover) return { type: MessageType.Offer, reply: encodeReply(req, MessageType.Offer, lease.address, opts) };
  if (req.type === MessageType.Request) {
    const requested = req.options.get(Opt.RequestedIP);
    const wanted = requested && requested.length === 4 ? ip(requested, 0) : req.ciaddr !== '0.0.0.0' ? req.ciaddr : lease.address;
    const serverId = req.options.get(Opt.ServerId);
    if (serverId && serverId.length === 4 && ip(serverId, 0) !== lease.server) return undefined; // the client chose another server
    if (wanted !== lease.address) return { type: MessageType.Nak, reply: encodeReply(req, MessageType.Nak, '0.0.0.0', [[Opt.ServerId, ipBytes(lease.server)]]) };
    return { type: MessageType.Ack, reply: encodeReply(req, MessageType.Ack, lease.address, opts) };
  }
  return undefined;
}
