// Minimal IPv6 arithmetic (pure): enough to pick the gateway and guest addresses in a CIDR.
import { AddressError } from './ipv4.ts';

function expand(ip: string, field: string): number[] {
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

const compress = (h: number[]) => {
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
  const h = expand(m[1]!, field);
  const last = (h[7] ?? 0) + n;
  if (last > 0xffff) throw new AddressError(`${field}: "${cidr}": address ${n} overflows the last group`);
  h[7] = last;
  return { address: compress(h), prefix };
}
