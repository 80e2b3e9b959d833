/**
 * The string formats the admitters check, as Kubernetes' and KubeVirt's helpers word their refusals:
 * DNS-1123 labels and subdomains, port names, IP and MAC addresses, PCI addresses.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `validation.IsDNS1123Label`: messages as Kubernetes words them. */
export function dns1123LabelErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(v)) {
    errs.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errs;
}

/** `validation.IsDNS1123Subdomain`. */
export function dns1123SubdomainErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(v)) {
    errs.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return errs;
}

/** `validation.IsValidPortName`. */
export function isValidPortName(name: string): boolean {
  return name.length <= 15 && /^[-a-z0-9]+$/.test(name) && /[a-z]/.test(name) && !name.includes('--') && !name.startsWith('-') && !name.endsWith('-');
}

/** `hwutil.ParsePciAddress` format: `dddd:bb:ss.f`. */
export const PCI_ADDRESS = /^[\da-fA-F]{4}:[\da-fA-F]{2}:[\da-fA-F]{2}\.[0-7]$/;

/** `link.ValidateMacAddress`: Go `net.ParseMAC`, then at most 6 bytes. Returns the error text or undefined. */
export function macAddressError(mac: string): string | undefined {
  if (mac === '') return undefined;
  const h = '[0-9a-fA-F]{2}';
  const colonOrDash = (n: number) => new RegExp(`^${h}(?:([:-])${h}(?:\\1${h}){${n - 2}})$`);
  const dotted = (n: number) => new RegExp(`^[0-9a-fA-F]{4}(?:\\.[0-9a-fA-F]{4}){${n / 2 - 1}}$`);
  if (colonOrDash(6).test(mac) || dotted(6).test(mac)) return undefined;
  if (colonOrDash(8).test(mac) || colonOrDash(20).test(mac) || dotted(8).test(mac) || dotted(20).test(mac)) {
    return `too long MAC address (${mac})`;
  }
  return `malformed MAC address (${mac})`;
}

/** `net.ParseIP` accepts it (IPv4 dotted quad or IPv6). */
export function isIP(s: string): boolean {
  const v4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
  if (v4.test(s)) return true;
  if (!s.includes(':')) return false;
  try {
    return new URL(`http://[${s}]/`).hostname.length > 0;
  } catch {
    return false;
  }
}
