// kubevirt_vmi_guest_os_panic_total (KubeVirt's virt-handler guest_metrics.go): one increment per new
// panic a launcher reports (its domain's PanicCount grew), labelled with the panic's type and
// bugcheck code — by one, not by the difference, as KubeVirt counts, so a node agent restarted under a
// VMI that panicked before does not count the old panics again. The counter lives in the process's
// registry, so the node agent's /metrics carries it.
import { CounterVec, defaultRegistry, type Registry } from '../../src/metrics/registry.ts';
import { domainVmiUid, type Domain } from '../../src/api/domain/domain.ts';

export class GuestPanicCounter {
  readonly counter: CounterVec;
  private readonly lastSeen = new Map<string, number>();

  constructor(registry: Registry = defaultRegistry) {
    this.counter = registry.register(new CounterVec('kubevirt_vmi_guest_os_panic_total', 'Total number of guest OS panic events detected, partitioned by VMI and panic type.', ['namespace', 'name', 'type', 'bugcheck_code']));
  }

  /** A domain report: counts a panic when its count grew since the last report of that VMI. */
  observe(domain: Domain | undefined): void {
    const count = domain?.Status.PanicCount ?? 0;
    const uid = domain ? domainVmiUid(domain) : '';
    if (!domain || count <= 0 || !uid) return;
    const seen = this.lastSeen.get(uid);
    if (seen !== undefined && seen >= count) return;
    this.lastSeen.set(uid, count);
    const panic = domain.Status.GuestPanicInfo;
    const code = panic?.Arg1 ? `0x${panic.Arg1.toString(16)}` : 'unknown';
    this.counter.inc({ namespace: domain.ObjectMeta.namespace, name: domain.ObjectMeta.name, type: panic?.Type || 'unknown', bugcheck_code: code });
  }

  /** The VMI is gone from this node. */
  forget(uid: string): void {
    this.lastSeen.delete(uid);
  }
}

let shared: GuestPanicCounter | undefined;

/** The process's counter (the local mode's node agents share one registry). */
export function guestPanicCounter(): GuestPanicCounter {
  shared ??= new GuestPanicCounter();
  return shared;
}
