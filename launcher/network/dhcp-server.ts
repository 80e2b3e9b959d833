// The launcher's DHCPv4 server for the masquerade and bridge bindings (KubeVirt's
// SingleClientDHCPServer): answers only the guest NICs it knows by MAC, each with its one lease.
//
// Sockets: one bound to 0.0.0.0:67 receives the clients' broadcasts; one per server address
// (the bridge's 10.0.2.1, or the bridge binding's 169.254.75.1x) sends the replies. A limited
// broadcast (255.255.255.255) from a socket bound to an address leaves through the interface
// holding that address — the bridge the guest's tap is on — which stands in for KubeVirt's
// SO_BINDTODEVICE (Node cannot set it).
import { createSocket, type Socket } from 'node:dgram';
import type { Logger } from '../../src/log/logger.ts';
import { answer, decodeMessage, DHCP_CLIENT_PORT, DHCP_SERVER_PORT, MessageType, type LeaseOptions } from './dhcp-codec.ts';

export interface DhcpServer {
  /** Resolves at the first ACK for `mac` (for tests and the benchmark). */
  acked(mac: string): Promise<{ address: string; atMs: number }>;
  close(): Promise<void>;
}

const typeName = (t: number) => Object.entries(MessageType).find(([, v]) => v === t)?.[0] ?? String(t);

function bind(s: Socket, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.bind({ port: DHCP_SERVER_PORT, address, exclusive: false }, () => { s.off('error', reject); resolve(); });
  });
}

/** Starts serving `leases` (by lower-case MAC). */
export async function startDhcpServer(leases: ReadonlyMap<string, LeaseOptions>, log: Logger): Promise<DhcpServer> {
  const sockets: Socket[] = [];
  const senders = new Map<string, Socket>();
  const acks = new Map<string, { address: string; atMs: number }>();
  const waiters = new Map<string, Array<(v: { address: string; atMs: number }) => void>>();
  const open = async (address: string) => {
    const s = createSocket({ type: 'udp4', reuseAddr: true });
    sockets.push(s);
    await bind(s, address);
    s.setBroadcast(true);
    s.on('message', (msg, rinfo) => onMessage(msg, rinfo.address));
    s.on('error', (err) => log.warn({ err: err.message, address }, 'DHCP socket error'));
    return s;
  };
  const onMessage = (msg: Buffer, from: string) => {
    let req;
    try { req = decodeMessage(msg); } catch (err) { log.debug({ err: (err as Error).message, from }, 'ignored a malformed DHCP message'); return; }
    const lease = leases.get(req.chaddr.toLowerCase());
    if (!lease) return; // not our client
    let res;
    try { res = answer(req, lease); } catch (err) { log.error({ err: (err as Error).message, mac: req.chaddr }, 'cannot build the DHCP reply'); return; }
    if (!res) return;
    const sender = senders.get(lease.server);
    if (!sender) return;
    // A renewing client has its address (ciaddr): unicast; otherwise broadcast on the bridge.
    const dest = req.ciaddr !== '0.0.0.0' && res.type !== MessageType.Nak ? req.ciaddr : '255.255.255.255';
    sender.send(res.reply, DHCP_CLIENT_PORT, dest, (err) => {
      if (err) { log.warn({ err: err.message, mac: req.chaddr, dest }, 'sending the DHCP reply failed'); return; }
      log.info({ mac: req.chaddr, request: typeName(req.type ?? 0), reply: typeName(res.type), address: lease.address }, 'DHCP reply sent');
      if (res.type === MessageType.Ack) {
        const mac = req.chaddr.toLowerCase();
        const v = { address: lease.address, atMs: Date.now() };
        if (!acks.has(mac)) acks.set(mac, v);
        for (const w of waiters.get(mac) ?? []) w(v);
        waiters.delete(mac);
      }
    });
  };
  try {
    await open('0.0.0.0');
    for (const server of new Set([...leases.values()].map((l) => l.server))) senders.set(server, await open(server));
  } catch (err) {
    for (const s of sockets) s.close();
    throw new Error(`DHCP server: cannot bind port ${DHCP_SERVER_PORT}: ${(err as Error).message}`);
  }
  log.info({ clients: [...leases].map(([mac, l]) => `${mac}=${l.address}/${l.prefix}`) }, 'DHCP server started');
  return {
    acked: (mac) => {
      const k = mac.toLowerCase();
      const got = acks.get(k);
      if (got) return Promise.resolve(got);
      return new Promise((resolve) => { waiters.set(k, [...(waiters.get(k) ?? []), resolve]); });
    },
    close: async () => {
      await Promise.all(sockets.map((s) => new Promise<void>((r) => { try { s.close(() => r()); } catch { r(); } })));
    },
  };
}
