// The network part of GetDomainStats: what libvirt's DOMAIN_STATS_INTERFACE reports for a domain
// whose NICs sit on taps (KubeVirt's masquerade and bridge bindings): the tap's counters from the
// pod's network namespace (/proc/<qemu pid>/net/dev — QEMU runs in the pod's namespace), swapped
// to the guest's point of view as libvirt swaps them for a tap (virNetDevTapInterfaceStats with
// `swapped`: what the tap transmits, the guest received). QEMU itself counts nothing per netdev, so
// user-mode and passt (stream) NICs report no interface statistics, as libvirt reports none for them.
// Pure but for readNetDev.
import { readFileSync } from 'node:fs';
import type { PlanDevice } from '../convert/plan.ts';

/** One line of /proc/net/dev, as the kernel counts for that device. */
export interface NetDevCounters {
  rxBytes: number; rxPackets: number; rxErrs: number; rxDrop: number;
  txBytes: number; txPackets: number; txErrs: number; txDrop: number;
}

/** A VMI interface on a tap: KubeVirt's interface name (the metric's `interface` label) and the tap. */
export interface TapInterface { alias: string; tap: string }

/** /proc/net/dev text → counters per device. Lines that are not `name: 16 numbers` are skipped. Pure. */
export function parseNetDev(text: string): Map<string, NetDevCounters> {
  const out = new Map<string, NetDevCounters>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (!name || f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    // receive: bytes packets errs drop fifo frame compressed multicast; transmit: bytes packets errs drop ...
    out.set(name, {
      rxBytes: f[0]!, rxPackets: f[1]!, rxErrs: f[2]!, rxDrop: f[3]!,
      txBytes: f[8]!, txPackets: f[9]!, txErrs: f[10]!, txDrop: f[11]!,
    });
  }
  return out;
}

/**
 * The VMI's NICs that QEMU opened on a tap: `-netdev {"type":"tap","id":…,"ifname":…}` in the argv,
 * joined to the interface devices by their netdev id. Pure.
 */
export function tapInterfaces(argv: readonly string[], devices: readonly PlanDevice[]): TapInterface[] {
  const tapOf = new Map<string, string>();
  for (let i = 0; i < argv.length - 1; i++) {
    if (argv[i] !== '-netdev') continue;
    let nd: unknown;
    try { nd = JSON.parse(argv[i + 1]!); } catch { continue; }
    if (typeof nd !== 'object' || nd === null) continue;
    const { type, id, ifname } = nd as Record<string, unknown>;
    if (type === 'tap' && typeof id === 'string' && typeof ifname === 'string' && ifname) tapOf.set(id, ifname);
  }
  const out: TapInterface[] = [];
  for (const d of devices) {
    const tap = d.kind === 'interface' && d.netdevId ? tapOf.get(d.netdevId) : undefined;
    if (tap) out.push({ alias: d.alias, tap });
  }
  return out;
}

/** stats.DomainStatsNet entries for the taps found in `counters`, from the guest's point of view. Pure. */
export function netStats(taps: readonly TapInterface[], counters: ReadonlyMap<string, NetDevCounters>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const { alias, tap } of taps) {
    const c = counters.get(tap);
    if (!c) continue;
    out.push({
      NameSet: true, Name: tap, AliasSet: true, Alias: alias,
      RxBytesSet: true, RxBytes: c.txBytes, RxPktsSet: true, RxPkts: c.txPackets,
      RxErrsSet: true, RxErrs: c.txErrs, RxDropSet: true, RxDrop: c.txDrop,
      TxBytesSet: true, TxBytes: c.rxBytes, TxPktsSet: true, TxPkts: c.rxPackets,
      TxErrsSet: true, TxErrs: c.rxErrs, TxDropSet: true, TxDrop: c.rxDrop,
    });
  }
  return out;
}

/** The device counters of the network namespace `pid` runs in (empty when it is gone). */
export function readNetDev(pid: number): Map<string, NetDevCounters> {
  try {
    return parseNetDev(readFileSync(`/proc/${pid}/net/dev`, 'utf8'));
  } catch {
    return new Map();
  }
}
