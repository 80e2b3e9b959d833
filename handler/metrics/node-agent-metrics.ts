// The node agent's /metrics (KubeVirt's virt-handler metrics, pkg/monitoring/metrics/virt-handler):
// kubevirt_info, kubevirt_virt_handler_ready_status, the process's work queues and REST client
// requests (src/metrics), and per VMI on this node the domain stats its launcher reports — asked for
// at scrape time, one GetDomainStats per launcher (scrape.ts). kubevirt_vmi_info and the launcher
// memory overhead are virt-controller's, as in KubeVirt (controller/metrics).
import pkg from '../../package.json' with { type: 'json' };
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { Logger } from '../../src/log/logger.ts';
import { formatExposition, MetricType, type MetricFamily } from '../../src/metrics/exposition.ts';
import { defaultRegistry, type Registry } from '../../src/metrics/registry.ts';
import { workQueueMetrics } from '../../src/metrics/workqueue.ts';
import { serverVersion } from '../../src/version/server-version.ts';
import type { LauncherEntry } from '../launcher/domain-cache.ts';
import { FamilyBuilder, domainMetrics } from './domain-metrics.ts';
import { DomainStatsScraper, type StatsOutcome, type StatsScraperOptions } from './scrape.ts';

/** What the metrics need of the node agent. */
export interface NodeAgentView {
  /** The VMIs on this node (the handler's informer). */
  vmis(): readonly VirtualMachineInstance[];
  /** A VMI's launcher, when the agent talks to one. */
  launcherOf(namespace: string, name: string): LauncherEntry | undefined;
  /** Whether the agent is ready to serve (its VMI informer synced). */
  ready(): boolean;
}

export interface NodeAgentMetricsOptions extends StatsScraperOptions {
  readonly view: NodeAgentView;
  readonly log: Logger;
  readonly registry?: Registry;
}

export class NodeAgentMetrics {
  private readonly o: NodeAgentMetricsOptions;
  private readonly scraper: DomainStatsScraper;
  private readonly registry: Registry;
  /** The last scrape's per-launcher outcomes (for logs and tests). */
  lastOutcomes: readonly StatsOutcome[] = [];

  constructor(o: NodeAgentMetricsOptions) {
    this.o = o;
    this.scraper = new DomainStatsScraper(o);
    this.registry = o.registry ?? defaultRegistry;
    workQueueMetrics(); // registered even before a named queue exists
  }

  /** The exposition text of one scrape. */
  async scrape(): Promise<string> {
    const [process, vmis] = await Promise.all([this.registry.gather(), this.vmiFamilies()]);
    return formatExposition([...this.componentFamilies(), ...process, ...vmis]);
  }

  private componentFamilies(): MetricFamily[] {
    const v = serverVersion(pkg.version);
    return [
      { name: 'kubevirt_info', help: 'Version information.', type: MetricType.Gauge, samples: [{ labels: { goversion: v.goVersion, kubeversion: v.gitVersion }, value: 1 }] },
      { name: 'kubevirt_virt_handler_ready_status', help: 'Indication for a virt-handler that is ready to serve requests.', type: MetricType.Gauge, samples: [{ labels: {}, value: this.o.view.ready() ? 1 : 0 }] },
    ];
  }

  private async vmiFamilies(): Promise<MetricFamily[]> {
    const vmis = this.o.view.vmis();
    const out = new FamilyBuilder();
    const sources = vmis.flatMap((vmi) => {
      const entry = this.o.view.launcherOf(vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '');
      // KubeVirt scrapes a VMI whose launcher socket is there; an unresponsive launcher is not asked.
      if (!entry || entry.unresponsive || !entry.domain || entry.uid !== vmi.metadata?.uid) return [];
      return [{ key: entry.key, vmi, client: entry.client }];
    });
    const outcomes = await this.scraper.scrape(sources);
    this.lastOutcomes = outcomes;
    for (const r of outcomes) {
      if (r.ok) domainMetrics(r.vmi, r.stats, out);
      else this.o.log.debug({ vmi: r.key, reason: r.reason }, 'domain stats not collected');
    }
    return out.families();
  }
}
