/**
 * The string formats Kubernetes and KubeVirt check, as their helpers word their refusals: DNS-1123
 * labels and subdomains, qualified names and label values (label keys and values, for the
 * admitters, the label selectors and the embedded API server), port names, IP, MAC and PCI
 * addresses.
 */

/** `validation.IsDNS1123Label`'s pattern (63 characters at most, checked apart). */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** `validation.IsDNS1123Subdomain`'s pattern (253 characters at most, checked apart). */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** `validation.IsQualifiedName`'s pattern: an optional DNS-subdomain prefix and `/`, then the name part (a label key). */
export const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** `validation.IsValidLabelValue`'s pattern (63 characters at most, checked apart); empty is valid. */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

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
