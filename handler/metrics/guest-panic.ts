// kubevirt_vmi_guest_os_panic_total (KubeVirt's virt-handler guest_metrics.go): one increment per new
// panic a launcher reports (its domain's PanicCount grew), labelled with the panic's type and
// bugcheck code — by one, not by the difference, as KubeVirt counts, so a node agent restarted under a
// VMI that panicked before does not count the old panics again. The counter lives in the process's
// registry, so the node agent's /metrics carries it.
import { CounterVec, defaultRegistry, type Registry } from '../../src/metrics/registry.ts';
import type { ReportedDomain } from '../domain-view.ts';

export class GuestPanicCounter {
  readonly counter: CounterVec;
  private readonly lastSeen = new Map<string, number>();

  constructor(registry: Registry = defaultRegistry) {
    this.counter = registry.register(new CounterVec('kubevirt_vmi_guest_os_panic_total', 'Total number of guest OS panic events detected, partitioned by VMI and panic type.', ['namespace', 'name', 'type', 'bugcheck_code']));
  }

  /** A domain report: counts a panic when its count grew since the last report of that VMI. */
  observe(domain: Pick<ReportedDomain, 'namespace' | 'name' | 'uid' | 'panics'> | undefined): void {
    if (!domain?.panics || !domain.uid) return;
    const seen = this.lastSeen.get(domain.uid);
    if (seen !== undefined && seen >= domain.panics.count) return;
    this.lastSeen.set(domain.uid, domain.panics.count);
    const code = domain.panics.arg1 ? `0x${domain.panics.arg1.toString(16)}` : 'unknown';
    this.counter.inc({ namespace: domain.namespace, name: domain.name, type: domain.panics.type || 'unknown', bugcheck_code: code });
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
