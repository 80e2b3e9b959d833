// Minimal IPv6 arithmetic (pure): enough to pick the gateway and guest addresses in a CIDR.
import { AddressError } from './ipv4.ts';

/** The eight 16-bit groups of an IPv6 address (no zone, no embedded IPv4). */
export function parseIpv6(ip: string, field = 'address'): number[] {
  const halves = ip.split('::');
  if (halves.length > 2) throw new AddressError(`${field}: "${ip}" is not an IPv6 address`);
  const parse = (s: string) => (s ? s.split(':') : []).map((h) => {
    if (!/^[0-9a-fA-F]{1,4}$/.test(h)) throw new AddressError(`${field}: "${ip}" is not an IPv6 address`);
    return parseInt(h, 16);
  });
  const head = parse(halves[0] ?? '');
  const tail = halves.length === 2 ? parse(halves[1] ?? '') : [];
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) throw new AddressError(`${field}: "${ip}" is not an IPv6 address`);
  return [...head, ...Array<number>(fill).fill(0), ...tail];
}

/** RFC 5952 text of eight groups: lower case, the longest run of zero groups as `::`. */
export const formatIpv6 = (h: readonly number[]): string => {
  const s = h.map((x) => x.toString(16)).join(':');
  // Longest run of zero groups becomes '::'.
  let best = '';
  for (const m of s.matchAll(/(^|:)(0(:0)+)(:|$)/g)) if (m[0].length > best.length) best = m[0];
  return best ? s.replace(best, '::') : s;
};

/** The n-th address of an IPv6 CIDR (n < 65536), and the prefix length. */
export function nthAddress6(cidr: string, n: number, field = 'cidr'): { address: string; prefix: number } {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
  if (!m || Number(m[2]) > 128) throw new AddressError(`${field}: "${cidr}" is not an IPv6 CIDR (addr/len)`);
  const prefix = Number(m[2]);
  if (prefix > 126) throw new AddressError(`${field}: "${cidr}" leaves no room for a gateway and a guest`);
  const h = parseIpv6(m[1]!, field);
  const last = (h[7] ?? 0) + n;
  if (last > 0xffff) throw new AddressError(`${field}: "${cidr}": address ${n} overflows the last group`);
  h[7] = last;
  return { address: formatIpv6(h), prefix };
}

/** The network address of `address/prefix` (host bits cleared). */
export function network6(address: string, prefix: number, field = 'address'): string {
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > 128) throw new AddressError(`${field}: prefix /${prefix} is not 0..128`);
  return formatIpv6(parseIpv6(address, field).map((g, i) => {
    const bits = Math.min(16, Math.max(0, prefix - i * 16));
    return g & (bits === 0 ? 0 : (0xffff << (16 - bits)) & 0xffff);
  }));
}
