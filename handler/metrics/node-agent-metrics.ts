// The node agent's /metrics (KubeVirt's virt-handler metrics, pkg/monitoring/metrics/virt-handler):
// kubevirt_info, kubevirt_virt_handler_ready_status, the process's work queues and REST client
// requests (src/metrics), and per VMI on this node kubevirt_vmi_info plus the domain stats its
// launcher reports — asked for at scrape time, one GetDomainStats per launcher (scrape.ts).
import pkg from '../../package.json' with { type: 'json' };
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { isNotFound } from '../../src/kube/client.ts';
import type { Logger } from '../../src/log/logger.ts';
import { formatExposition, MetricType, type MetricFamily } from '../../src/metrics/exposition.ts';
import { defaultRegistry, type Registry } from '../../src/metrics/registry.ts';
import { workQueueMetrics } from '../../src/metrics/workqueue.ts';
import { serverVersion } from '../../src/virt-api/server-version.ts';
import type { LauncherEntry } from '../domain-cache.ts';
import { FamilyBuilder, domainMetrics } from './domain-metrics.ts';
import { DomainStatsScraper, type StatsOutcome, type StatsScraperOptions } from './scrape.ts';
import { VmiInfoAnnotation, vmiMetrics, type InstancetypeKind, type VendorLookup } from './vmi-metrics.ts';

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
  /** Reads the instancetypes and preferences VMIs name (their vendor label); absent: `<other>`. */
  readonly client?: KubeClient | undefined;
  readonly log: Logger;
  readonly registry?: Registry;
}

const INSTANCETYPE_PLURAL: Readonly<Record<InstancetypeKind, string>> = {
  VirtualMachineInstancetype: 'virtualmachineinstancetypes',
  VirtualMachineClusterInstancetype: 'virtualmachineclusterinstancetypes',
  VirtualMachinePreference: 'virtualmachinepreferences',
  VirtualMachineClusterPreference: 'virtualmachineclusterpreferences',
};
const VENDOR_LABEL = 'instancetype.kubevirt.io/vendor';
const VENDOR_TTL_MS = 60_000;

export class NodeAgentMetrics {
  private readonly o: NodeAgentMetricsOptions;
  private readonly scraper: DomainStatsScraper;
  private readonly registry: Registry;
  private readonly vendors = new Map<string, { vendor: string | undefined; expires: number }>();
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
    await this.refreshVendors(vmis);
    const vendor: VendorLookup = (kind, ns, name) => this.vendors.get(vendorKey(kind, ns, name))?.vendor;
    for (const vmi of vmis) vmiMetrics(vmi, out, vendor);
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

  /** Looks up (at most once a minute each) the vendor label of the instancetypes and preferences the VMIs name. */
  private async refreshVendors(vmis: readonly VirtualMachineInstance[]): Promise<void> {
    const client = this.o.client;
    if (!client) return;
    const now = Date.now();
    const wanted = new Map<string, [InstancetypeKind, string | undefined, string]>();
    for (const vmi of vmis) {
      const a = vmi.metadata?.annotations ?? {};
      const ns = vmi.metadata?.namespace;
      const add = (kind: InstancetypeKind, namespaced: boolean, name: string | undefined) => {
        if (name === undefined) return;
        const key = vendorKey(kind, namespaced ? ns : undefined, name);
        const have = this.vendors.get(key);
        if (!have || have.expires <= now) wanted.set(key, [kind, namespaced ? ns : undefined, name]);
      };
      add('VirtualMachineInstancetype', true, a[VmiInfoAnnotation.Instancetype]);
      add('VirtualMachineClusterInstancetype', false, a[VmiInfoAnnotation.ClusterInstancetype]);
      add('VirtualMachinePreference', true, a[VmiInfoAnnotation.Preference]);
      add('VirtualMachineClusterPreference', false, a[VmiInfoAnnotation.ClusterPreference]);
    }
    await Promise.all([...wanted].map(async ([key, [kind, ns, name]]) => {
      const path = `/apis/instancetype.kubevirt.io/v1beta1${ns ? `/namespaces/${encodeURIComponent(ns)}` : ''}/${INSTANCETYPE_PLURAL[kind]}/${encodeURIComponent(name)}`;
      let vendor: string | undefined;
      try {
        const obj = await client.request<{ metadata?: { labels?: Record<string, string> } }>('GET', path);
        vendor = obj?.metadata?.labels?.[VENDOR_LABEL] ?? '';
      } catch (err) {
        if (!isNotFound(err)) this.o.log.debug({ path, err: (err as Error).message }, 'instancetype vendor lookup failed');
        vendor = undefined;
      }
      this.vendors.set(key, { vendor, expires: now + VENDOR_TTL_MS });
    }));
  }
}

const vendorKey = (kind: string, ns: string | undefined, name: string) => `${kind}/${ns ?? ''}/${name}`;
