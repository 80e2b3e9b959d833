// Asking the launchers for their domain stats when Prometheus scrapes (KubeVirt's
// ConcurrentCollector + DomainstatsScraper): one GetDomainStats per launcher per scrape, at most
// `concurrency` at once, each with a deadline; a launcher whose previous answer is still awaited
// (a slow QEMU) is skipped rather than asked twice, and a failure or timeout drops that VMI's
// stats from this scrape only. The launcher makes the QMP round trip (launcher/supervise/domain-stats.ts).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { CmdClient } from '../../src/proto/launcher-client.ts';
import { parseDomainStats, type DomainStats } from './domain-stats.ts';

export interface StatsSource {
  readonly key: string;
  readonly vmi: VirtualMachineInstance;
  readonly client: Pick<CmdClient, 'getDomainStats'>;
}

export type StatsOutcome =
  | { readonly key: string; readonly vmi: VirtualMachineInstance; readonly ok: true; readonly stats: DomainStats; readonly ms: number }
  | { readonly key: string; readonly vmi: VirtualMachineInstance; readonly ok: false; readonly reason: string; readonly ms: number };

export interface StatsScraperOptions {
  /** GetDomainStats calls in flight at once across launchers (default 16). */
  readonly concurrency?: number;
  /** Deadline of one launcher's answer (default 10 s: KubeVirt's CollectionTimeout). */
  readonly timeoutMs?: number;
}

export class DomainStatsScraper {
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly busy = new Set<string>();

  constructor(o: StatsScraperOptions = {}) {
    this.concurrency = Math.max(1, o.concurrency ?? 16);
    this.timeoutMs = o.timeoutMs ?? 10_000;
  }

  async scrape(sources: readonly StatsSource[]): Promise<StatsOutcome[]> {
    const out: StatsOutcome[] = [];
    let next = 0;
    const worker = async () => {
      for (;;) {
        const s = sources[next++];
        if (!s) return;
        out.push(await this.one(s));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, sources.length) }, worker));
    return out;
  }

  private async one(s: StatsSource): Promise<StatsOutcome> {
    const start = performance.now();
    const ms = () => performance.now() - start;
    if (this.busy.has(s.key)) return { key: s.key, vmi: s.vmi, ok: false, reason: 'busy from a previous collection, skipped', ms: 0 };
    this.busy.add(s.key);
    try {
      const r = await s.client.getDomainStats({ timeoutMs: this.timeoutMs });
      if (r.response && !r.response.success) return { key: s.key, vmi: s.vmi, ok: false, reason: r.response.message || 'the launcher refused', ms: ms() };
      if (!r.domainStats) return { key: s.key, vmi: s.vmi, ok: false, reason: 'no domain', ms: ms() };
      const stats = parseDomainStats(r.domainStats);
      // A launcher answering for another domain (a disappearing VM) is ignored, as KubeVirt ignores an empty name.
      if (!stats.name) return { key: s.key, vmi: s.vmi, ok: false, reason: 'disappearing domain', ms: ms() };
      return { key: s.key, vmi: s.vmi, ok: true, stats, ms: ms() };
    } catch (err) {
      return { key: s.key, vmi: s.vmi, ok: false, reason: (err as Error).message, ms: ms() };
    } finally {
      this.busy.delete(s.key);
    }
  }
}
