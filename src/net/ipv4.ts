// IPv4 address arithmetic (pure): dotted quads ↔ integers, CIDR parsing, masks.

export class AddressError extends Error {
  override name = 'AddressError';
}

export function ipv4ToInt(ip: string, field = 'address'): number {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) throw new AddressError(`${field}: "${ip}" is not an IPv4 address`);
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

export function isIpv4(ip: string): boolean {
  try { ipv4ToInt(ip); return true; } catch { return false; }
}

/** `a.b.c.d/len` → the network address (as an integer) and the prefix length. */
export function parseCidr4(cidr: string, field = 'cidr'): { network: number; prefix: number } {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(cidr);
  if (!m) throw new AddressError(`${field}: "${cidr}" is not an IPv4 CIDR (a.b.c.d/len)`);
  const prefix = Number(m[2]);
  if (prefix > 32) throw new AddressError(`${field}: prefix /${prefix} is longer than 32`);
  const addr = ipv4ToInt(m[1]!, field);
  const size = 2 ** (32 - prefix);
  return { network: addr - (addr % size), prefix };
}

export function prefixToMask(prefix: number): string {
  return intToIpv4(prefix === 0 ? 0 : (2 ** 32 - 2 ** (32 - prefix)));
}
