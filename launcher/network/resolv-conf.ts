// The pod's DNS settings as the guest should get them over DHCP (KubeVirt pkg/network/dns): the
// `nameserver` (IPv4 for DHCP, IPv6 for DHCPv6) and `search` lines of the launcher's
// /etc/resolv.conf. Pure parser.

export interface DnsConfig {
  readonly nameservers: readonly string[];
  /** IPv6 nameservers (without a zone: a link-local server is of no use to the guest). */
  readonly nameservers6?: readonly string[];
  readonly search: readonly string[];
}

export function parseResolvConf(text: string): DnsConfig {
  const nameservers: string[] = [];
  const nameservers6: string[] = [];
  let search: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'nameserver' && rest[0] && /^\d+\.\d+\.\d+\.\d+$/.test(rest[0])) nameservers.push(rest[0]);
    else if (key === 'nameserver' && rest[0] && /^[0-9a-f:]+$/i.test(rest[0]) && rest[0].includes(':')) nameservers6.push(rest[0].toLowerCase());
    // The last search (or domain) line wins, as in the resolver.
    if (key === 'search' || key === 'domain') search = rest.filter(Boolean);
  }
  return { nameservers, ...(nameservers6.length ? { nameservers6 } : {}), search };
}
