// Outbound NAT for the local pod network, as the CNI bridge plugin's `ipMasq: true` does: traffic
// from the pod subnets that leaves the host through another interface than the pod bridge goes out
// with the host's address, so pods (and the masquerade guests behind them) reach beyond the host.
// One nft table per bridge, `inet qvirt-<bridge>`, declared-deleted-recreated in one transaction
// (idempotent) and deleted with the bridge.
//
// Forwarding: IPv4 forwarding is switched on, as the CNI plugin does (and left on: other software
// may rely on it by then). IPv6 forwarding is host-wide and turns off accepting router
// advertisements on every interface, so qvirt does not switch it on: pods reach beyond the host
// over IPv6 only when the host forwards IPv6 already (the pods reach the host and each other
// either way).
import { readFile } from 'node:fs/promises';
import { run, runIgnoringMissing } from '../../net/command.ts';

export const outboundNatTable = (bridge: string) => `qvirt-${bridge}`;

export interface OutboundNat {
  readonly bridge: string;
  readonly subnet4: string;
  readonly subnet6?: string | undefined;
}

/** The `nft -f -` script (pure). */
export function renderOutboundNat(n: OutboundNat): string {
  const q = JSON.stringify(n.bridge);
  const table = outboundNatTable(n.bridge);
  return [
    `table inet ${table} {}`,
    `delete table inet ${table}`,
    `table inet ${table} {`,
    '  chain postrouting {',
    '    type nat hook postrouting priority 100;',
    `    ip saddr ${n.subnet4} oifname != ${q} counter masquerade`,
    ...(n.subnet6 ? [`    ip6 saddr ${n.subnet6} oifname != ${q} counter masquerade`] : []),
    '  }',
    '}',
    '',
  ].join('\n');
}

export interface OutboundNatResult {
  /** Whether pods reach beyond the host over IPv6 (the host forwards IPv6). */
  readonly ipv6Forwarding: boolean;
}

export async function applyOutboundNat(n: OutboundNat): Promise<OutboundNatResult> {
  await run('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  await run('nft', ['-f', '-'], { input: renderOutboundNat(n) });
  const v6 = (await readFile('/proc/sys/net/ipv6/conf/all/forwarding', 'utf8').catch(() => '0')).trim() === '1';
  return { ipv6Forwarding: v6 };
}

export async function removeOutboundNat(bridge: string): Promise<void> {
  await runIgnoringMissing('nft', ['delete', 'table', 'inet', outboundNatTable(bridge)]);
}
