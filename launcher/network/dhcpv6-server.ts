// The launcher's DHCPv6 server for the masquerade binding (KubeVirt's SingleClientDHCPv6Server):
// one UDP socket on [::]:547 that joins All_DHCP_Relay_Agents_and_Servers (ff02::1:2) on the
// bridge, answers only messages that arrived through the bridge (the source's zone names it; KubeVirt
// filters by interface index), and replies to the client's link-local address, port 546.
import { createSocket, type Socket } from 'node:dgram';
import type { Logger } from '../../src/log/logger.ts';
import { ALL_DHCP_SERVERS, answer6, decodeMessage6, DHCPV6_SERVER_PORT, MessageType6, type Lease6 } from './dhcpv6-codec.ts';

export interface Dhcpv6Server {
  /** Resolves at the first Reply that hands out the address (for tests and the benchmark). */
  replied(): Promise<{ address: string; atMs: number }>;
  close(): Promise<void>;
}

const typeName = (t: number) => Object.entries(MessageType6).find(([, v]) => v === t)?.[0] ?? String(t);

export async function startDhcpv6Server(bridge: string, lease: Lease6, log: Logger): Promise<Dhcpv6Server> {
  const s: Socket = createSocket({ type: 'udp6', reuseAddr: true });
  let first: { address: string; atMs: number } | undefined;
  const waiters: Array<(v: { address: string; atMs: number }) => void> = [];
  s.on('error', (err) => log.warn({ err: err.message, bridge }, 'DHCPv6 socket error'));
  s.on('message', (msg, rinfo) => {
    if (!rinfo.address.endsWith(`%${bridge}`)) return; // not from the guest's side
    let req;
    try { req = decodeMessage6(msg); } catch (err) { log.debug({ err: (err as Error).message, from: rinfo.address }, 'ignored a malformed DHCPv6 message'); return; }
    let res;
    try { res = answer6(req, lease); } catch (err) { log.error({ err: (err as Error).message }, 'cannot build the DHCPv6 reply'); return; }
    if (!res) return;
    s.send(res.reply, rinfo.port, rinfo.address, (err) => {
      if (err) { log.warn({ err: err.message, to: rinfo.address }, 'sending the DHCPv6 reply failed'); return; }
      log.info({ from: rinfo.address, request: typeName(req.type), reply: typeName(res.type), address: lease.address }, 'DHCPv6 reply sent');
      if (res.type === MessageType6.Reply && req.type !== MessageType6.Release && req.type !== MessageType6.Decline && req.type !== MessageType6.InformationRequest) {
        const v = { address: lease.address, atMs: Date.now() };
        first ??= v;
        for (const w of waiters.splice(0)) w(v);
      }
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.bind({ port: DHCPV6_SERVER_PORT, address: '::', exclusive: false }, () => { s.off('error', reject); resolve(); });
    });
    s.addMembership(ALL_DHCP_SERVERS, `::%${bridge}`);
  } catch (err) {
    try { s.close(); } catch { /* not bound */ }
    throw new Error(`DHCPv6 server on ${bridge}: cannot listen on port ${DHCPV6_SERVER_PORT}: ${(err as Error).message}`);
  }
  log.info({ bridge, address: lease.address }, 'DHCPv6 server started');
  return {
    replied: () => (first ? Promise.resolve(first) : new Promise((resolve) => { waiters.push(resolve); })),
    close: () => new Promise<void>((r) => { try { s.close(() => r()); } catch { r(); } }),
  };
}
