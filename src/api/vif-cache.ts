// What the node agent's pod network setup hands the launcher, per pod interface: KubeVirt's
// `vif-cache-<podIface>.json` in the launcher's /var/run/kubevirt-private (pkg/network/cache).
// The node agent writes it after building the bridge and tap in the pod's network namespace; the
// launcher reads it to open the tap by name and to serve the guest its address over DHCP. The
// setup is a pure function of the VMI and the pod interface, so a migration target pod gets the
// same file and the guest keeps its address.

/** `vif-cache-<podInterface>.json`. */
export const vifCacheFile = (podInterface: string) => `vif-cache-${podInterface}.json`;

export interface VifRoute {
  /** Destination CIDR; `0.0.0.0/0` is the default route. */
  readonly dst: string;
  readonly gateway: string;
}

export interface VifCache {
  /** The VMI interface (spec.domain.devices.interfaces[].name). */
  readonly iface: string;
  readonly binding: 'masquerade' | 'bridge';
  /** The pod interface (eth0) and the tap QEMU opens by name. */
  readonly podInterface: string;
  readonly tap: string;
  readonly bridge: string;
  readonly mtu: number;
  /** The MAC the guest NIC must use (bridge binding: the pod's own MAC); absent: the launcher's choice. */
  readonly mac?: string;
  /** The pod's own addresses (what status.interfaces reports for the pod network). */
  readonly podIPs: readonly string[];
  /** What the DHCP server hands the guest (absent: no IPv4 on the pod interface, no DHCP). */
  readonly dhcp4?: {
    readonly address: string;
    readonly prefix: number;
    /** The server's own address on the bridge (the source of its replies). */
    readonly server: string;
    readonly router?: string;
    readonly routes: readonly VifRoute[];
  };
  /** IPv6 for the guest (masquerade with an IPv6 pod): the address is configured by the guest or DHCPv6. */
  readonly ipv6?: { readonly address: string; readonly prefix: number; readonly gateway: string };
}

export class VifCacheError extends Error {
  override name = 'VifCacheError';
}

const str = (o: Record<string, unknown>, k: string, file: string): string => {
  const v = o[k];
  if (typeof v !== 'string' || !v) throw new VifCacheError(`${file}: field "${k}" must be a non-empty string`);
  return v;
};

/** Parses a vif cache file's JSON, naming the field that is wrong. */
export function parseVifCache(text: string, file: string): VifCache {
  let o: unknown;
  try { o = JSON.parse(text); } catch (err) { throw new VifCacheError(`${file}: not JSON: ${(err as Error).message}`); }
  if (!o || typeof o !== 'object') throw new VifCacheError(`${file}: not a JSON object`);
  const r = o as Record<string, unknown>;
  const binding = str(r, 'binding', file);
  if (binding !== 'masquerade' && binding !== 'bridge') throw new VifCacheError(`${file}: field "binding" must be masquerade or bridge, not "${binding}"`);
  const mtu = r['mtu'];
  if (typeof mtu !== 'number' || !Number.isInteger(mtu) || mtu < 68 || mtu > 65535) throw new VifCacheError(`${file}: field "mtu" must be an integer 68..65535`);
  const podIPs = r['podIPs'];
  if (!Array.isArray(podIPs) || podIPs.some((x) => typeof x !== 'string')) throw new VifCacheError(`${file}: field "podIPs" must be a list of strings`);
  const out: VifCache = {
    iface: str(r, 'iface', file), binding, podInterface: str(r, 'podInterface', file), tap: str(r, 'tap', file), bridge: str(r, 'bridge', file), mtu, podIPs: podIPs as string[],
    ...(typeof r['mac'] === 'string' && r['mac'] ? { mac: r['mac'] } : {}),
  };
  const d = r['dhcp4'];
  if (d !== undefined) {
    if (!d || typeof d !== 'object') throw new VifCacheError(`${file}: field "dhcp4" must be an object`);
    const dd = d as Record<string, unknown>;
    const prefix = dd['prefix'];
    if (typeof prefix !== 'number' || prefix < 0 || prefix > 32) throw new VifCacheError(`${file}: field "dhcp4.prefix" must be 0..32`);
    const routes = Array.isArray(dd['routes']) ? (dd['routes'] as Array<Record<string, unknown>>).map((x, i) => ({ dst: str(x, 'dst', `${file} dhcp4.routes[${i}]`), gateway: str(x, 'gateway', `${file} dhcp4.routes[${i}]`) })) : [];
    Object.assign(out, { dhcp4: { address: str(dd, 'address', `${file} dhcp4`), prefix, server: str(dd, 'server', `${file} dhcp4`), ...(typeof dd['router'] === 'string' ? { router: dd['router'] } : {}), routes } });
  }
  const v6 = r['ipv6'];
  if (v6 && typeof v6 === 'object') {
    const vv = v6 as Record<string, unknown>;
    Object.assign(out, { ipv6: { address: str(vv, 'address', `${file} ipv6`), prefix: Number(vv['prefix'] ?? 64), gateway: str(vv, 'gateway', `${file} ipv6`) } });
  }
  return out;
}
