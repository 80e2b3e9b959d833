// The addresses a passt-bound guest has on the pod network, recorded once on the VMI
// (`qvirt.io/passt-guest-addresses`). passt hands the guest its pod's address by DHCP/NDP and
// delivers forwarded connections to the address the guest last used (`addr_seen`). After a live
// migration the guest keeps the address of the pod it FIRST ran in (no new lease, no reboot), while
// the target pod has an address of its own: the target's passt must be started with the guest's
// address (`--address`, `--netmask`, `--gateway`) or inbound connections go to an address the guest
// does not have until it happens to send IPv4 itself. passt's own migration carries addr_seen
// (vhost-user device state, QEMU ≥ 10); KubeVirt has no field for this, so qvirt keeps it on the VMI.
//
// Who does what: the node agent writes the record when the VMI first runs (handler/network/
// passt-record.ts: from the pod it set up, only while the VMI has never migrated), the target
// launcher reads it (launcher/network/pod-network.ts → passt.ts `passtArgs`). Pure.
import { isIPv4, isIPv6 } from 'node:net';
import { PASST_GUEST_ADDRESSES_ANNOTATION } from '../api/constants.ts';
import type { VirtualMachineInstance } from '../api/types.ts';

export interface PasstGuestAddresses {
  /** The guest's IPv4 address with its prefix length (`10.244.0.5/24`). */
  readonly ipv4?: string;
  /** The IPv4 default gateway passt handed out with it. */
  readonly gateway4?: string;
  /** The guest's IPv6 address (passt advertises its /64). */
  readonly ipv6?: string;
}

export class PasstGuestAddressesError extends Error {
  override name = 'PasstGuestAddressesError';
}

const KEYS = ['ipv4', 'gateway4', 'ipv6'] as const;

/** The annotation's value: JSON with the keys in a fixed order (so equal records compare equal). */
export function formatPasstGuestAddresses(a: PasstGuestAddresses): string {
  const out: Record<string, string> = {};
  for (const k of KEYS) if (a[k]) out[k] = a[k];
  return JSON.stringify(out);
}

function checkCidr4(v: string, where: string): void {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(v);
  if (!m || !isIPv4(m[1]!) || Number(m[2]) < 1 || Number(m[2]) > 32) throw new PasstGuestAddressesError(`${where}: "${v}" is not an IPv4 address with a prefix length (like 10.244.0.5/24)`);
}

/** Parses the annotation's value, naming the key that is wrong. */
export function parsePasstGuestAddresses(text: string, field = `metadata.annotations[${PASST_GUEST_ADDRESSES_ANNOTATION}]`): PasstGuestAddresses {
  let o: unknown;
  try { o = JSON.parse(text); } catch (err) { throw new PasstGuestAddressesError(`${field}: not JSON: ${(err as Error).message}`); }
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new PasstGuestAddressesError(`${field}: not a JSON object`);
  const r = o as Record<string, unknown>;
  for (const k of Object.keys(r)) {
    if (!(KEYS as readonly string[]).includes(k)) throw new PasstGuestAddressesError(`${field}: unknown key "${k}" (known: ${KEYS.join(', ')})`);
    if (typeof r[k] !== 'string' || !r[k]) throw new PasstGuestAddressesError(`${field}.${k}: must be a non-empty string`);
  }
  const out: { ipv4?: string; gateway4?: string; ipv6?: string } = {};
  if (typeof r.ipv4 === 'string') { checkCidr4(r.ipv4, `${field}.ipv4`); out.ipv4 = r.ipv4; }
  if (typeof r.gateway4 === 'string') {
    if (!isIPv4(r.gateway4)) throw new PasstGuestAddressesError(`${field}.gateway4: "${r.gateway4}" is not an IPv4 address`);
    if (!out.ipv4) throw new PasstGuestAddressesError(`${field}.gateway4: given without ipv4`);
    out.gateway4 = r.gateway4;
  }
  if (typeof r.ipv6 === 'string') {
    if (!isIPv6(r.ipv6)) throw new PasstGuestAddressesError(`${field}.ipv6: "${r.ipv6}" is not an IPv6 address`);
    out.ipv6 = r.ipv6;
  }
  return out;
}

/** The record on a VMI, if any (throws PasstGuestAddressesError when it is malformed). */
export function recordedPasstGuestAddresses(vmi: VirtualMachineInstance): PasstGuestAddresses | undefined {
  const text = vmi.metadata?.annotations?.[PASST_GUEST_ADDRESSES_ANNOTATION];
  return text === undefined ? undefined : parsePasstGuestAddresses(text);
}
