// The masquerade binding's NAT, as KubeVirt's pkg/network/setup/netpod/masquerade writes it, rendered
// as one `nft -f -` script per address family (pure). The script first declares and deletes the
// `nat` table, then recreates it whole: applying it twice leaves the same ruleset (idempotent, for
// a retried setup or a migration target pod).
//
// - postrouting: traffic from the guest leaves masqueraded as the pod IP; traffic arriving through
//   the pod interface and going to the guest jumps to KUBEVIRT_POSTINBOUND.
// - prerouting: traffic arriving on the pod interface jumps to KUBEVIRT_PREINBOUND, which DNATs the
//   listed ports (all traffic when none are listed) to the guest — except KubeVirt's live-migration
//   ports (49152, 49153), which stay with the pod: a direct migration's target QEMU listens there
//   (handler/migration/transport.ts).
// - output: connections from inside the pod to localhost on those ports go to the guest too, with
//   their source rewritten to the gateway (KUBEVIRT_POSTINBOUND) so the guest can answer.

import { BLOCK_MIGRATION_PORT, DIRECT_MIGRATION_PORT } from '../../src/api/migration.ts';

export type NftFamily = 'ip' | 'ip6';

export interface NatPort {
  readonly protocol: 'tcp' | 'udp' | 'sctp';
  /** One port, or a range `start-end`. */
  readonly port: number | readonly [number, number];
}

export interface MasqueradeNat {
  readonly family: NftFamily;
  /** The pod interface traffic comes in through (eth0). */
  readonly podInterface: string;
  /** The bridge the guest's tap is a port of (k6t-eth0). */
  readonly bridge: string;
  readonly guestIP: string;
  readonly gatewayIP: string;
  /** Ports forwarded to the guest; empty: everything. */
  readonly ports: readonly NatPort[];
}

export const NAT_TABLE = 'nat';
/** The pod's ports a direct live migration uses (KubeVirt's LibvirtDirectMigrationPort and LibvirtBlockMigrationPort): never forwarded to the guest. */
const MIGRATION_PORTS = [DIRECT_MIGRATION_PORT, BLOCK_MIGRATION_PORT] as const;
export const PREINBOUND = 'KUBEVIRT_PREINBOUND';
export const POSTINBOUND = 'KUBEVIRT_POSTINBOUND';

const loopback = (f: NftFamily) => (f === 'ip' ? '127.0.0.1' : '::1');
const portSpec = (p: NatPort['port']) => (typeof p === 'number' ? String(p) : `${p[0]}-${p[1]}`);
const q = (s: string) => JSON.stringify(s);

export function renderMasqueradeNft(n: MasqueradeNat): string {
  const f = n.family;
  const pre: string[] = [];
  const post: string[] = [];
  const out: string[] = [];
  const lo = `{ ${loopback(f)} }`;
  if (n.ports.length === 0) {
    pre.push(`counter dnat to ${n.guestIP}`);
    post.push(`${f} saddr ${lo} counter snat to ${n.gatewayIP}`);
    out.push(`${f} daddr ${lo} counter dnat to ${n.guestIP}`);
  }
  for (const p of n.ports) {
    const dport = `${p.protocol} dport ${typeof p.port === 'number' ? `{ ${p.port} }` : portSpec(p.port)}`;
    pre.push(`${dport} counter dnat to ${n.guestIP}`);
    post.push(`${p.protocol} dport ${portSpec(p.port)} ${f} saddr ${lo} counter snat to ${n.gatewayIP}`);
    out.push(`${f} daddr ${lo} ${p.protocol} dport ${portSpec(p.port)} counter dnat to ${n.guestIP}`);
  }
  const chain = (name: string, head: string | undefined, rules: readonly string[]) =>
    [`  chain ${name} {`, ...(head ? [`    ${head}`] : []), ...rules.map((r) => `    ${r}`), '  }'];
  return [
    `table ${f} ${NAT_TABLE} {}`,
    `delete table ${f} ${NAT_TABLE}`,
    `table ${f} ${NAT_TABLE} {`,
    ...chain(PREINBOUND, undefined, pre),
    ...chain(POSTINBOUND, undefined, post),
    ...chain('prerouting', 'type nat hook prerouting priority -100;', [
      `iifname ${q(n.podInterface)} tcp dport { ${MIGRATION_PORTS.join(', ')} } counter return`,
      `iifname ${q(n.podInterface)} counter jump ${PREINBOUND}`,
    ]),
    ...chain('input', 'type nat hook input priority 100;', []),
    ...chain('output', 'type nat hook output priority -100;', out),
    ...chain('postrouting', 'type nat hook postrouting priority 100;', [
      `${f} saddr ${n.guestIP} counter masquerade`,
      `oifname ${q(n.bridge)} counter jump ${POSTINBOUND}`,
    ]),
    '}',
    '',
  ].join('\n');
}
