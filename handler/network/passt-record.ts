// The node agent's half of "a passt guest keeps its address across migrations" (pure): passt
// hands the guest the address of the pod the VMI runs in, and after a live migration the guest
// keeps the FIRST pod's (no new lease, no reboot). So the first pod's addresses are recorded on
// the VMI (`qvirt.io/passt-guest-addresses`, src/net/passt-guest-addresses.ts) with the status the
// node agent writes once it has set up that pod — no later than the VMI's Running phase, which a
// migration waits for — and never changed once the VMI has a migration state: each target's
// launcher starts passt with them (launcher/network/pod-network.ts).
import { PASST_GUEST_ADDRESSES_ANNOTATION } from '../../src/api/constants.ts';
import { formatPasstGuestAddresses, type PasstGuestAddresses } from '../../src/net/passt-guest-addresses.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { PodInterfaceStatus } from '../status.ts';
import type { PodInterfaceState } from './plan.ts';

/** What passt hands the guest in a pod with interface `pod`: the pod's own addresses and gateway. */
export function passtGuestOf(pod: PodInterfaceState | undefined): PasstGuestAddresses | undefined {
  if (!pod?.ipv4 && !pod?.ipv6) return undefined;
  return {
    ...(pod.ipv4 ? { ipv4: `${pod.ipv4.address}/${pod.ipv4.prefix}` } : {}),
    ...(pod.ipv4 && pod.gateway4 ? { gateway4: pod.gateway4 } : {}),
    ...(pod.ipv6 ? { ipv6: pod.ipv6.address } : {}),
  };
}

/**
 * The annotation value to write on the VMI now, or undefined: only while the VMI has never
 * migrated (the pod set up is the first one), and only when the record is missing or differs
 * (a record copied in from elsewhere, e.g. a VM template, is replaced by the truth).
 */
export function passtRecordToWrite(vmi: VirtualMachineInstance, podNetwork: ReadonlyMap<string, PodInterfaceStatus> | undefined): string | undefined {
  if (vmi.status?.migrationState) return undefined;
  const guest = [...(podNetwork?.values() ?? [])].find((s) => s.binding === 'passt' && s.passtGuest)?.passtGuest;
  if (!guest) return undefined;
  const value = formatPasstGuestAddresses(guest);
  return vmi.metadata?.annotations?.[PASST_GUEST_ADDRESSES_ANNOTATION] === value ? undefined : value;
}

/** `vmi`'s metadata with the record set to `value`. */
export function withPasstRecord(vmi: VirtualMachineInstance, value: string): NonNullable<VirtualMachineInstance['metadata']> {
  return { ...vmi.metadata, annotations: { ...vmi.metadata?.annotations, [PASST_GUEST_ADDRESSES_ANNOTATION]: value } };
}
