// The cluster configuration from the KubeVirt CR (`kubevirt.io/v1 KubeVirt`, `spec.configuration`),
// as virt-controller reads it (pkg/virt-config: the informer on KubeVirt objects in its namespace):
// read once at start, then watched; every valid change is handed to `onChange`. An invalid
// configuration is logged with its fields and the last valid one stays in force. Without the
// KubeVirt CRD (a cluster with only the VM CRDs) the base configuration is used and nothing watched.
import { decodeClusterConfig, type ClusterConfig } from '../api/cluster-config.ts';
import type { FieldError } from '../api/field-error.ts';
import { isNotFound, type KubeClient, type KubeObject } from './client.ts';
import { Informer } from './informer.ts';
import { Resources } from './resource.ts';
import type { Logger } from '../log/logger.ts';

export interface KubeVirtCR extends KubeObject {
  spec?: { configuration?: unknown; [k: string]: unknown };
  status?: { phase?: string; [k: string]: unknown };
}

/**
 * Which KubeVirt object configures the cluster when there are several: one not being deleted,
 * the oldest first (KubeVirt refuses a second CR; this keeps the answer stable if one slips in).
 */
export function selectKubeVirt(objs: readonly KubeVirtCR[]): KubeVirtCR | undefined {
  const live = objs.filter((o) => !o.metadata?.deletionTimestamp);
  return [...live].sort((a, b) => (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? '') || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))[0];
}

/** The configuration a KubeVirt CR asks for, with `overrides` (command-line flags) applied on top. */
export function configFromKubeVirt(cr: KubeVirtCR | undefined, base: ClusterConfig, overrides: (c: ClusterConfig) => void): { config?: ClusterConfig; errors: readonly FieldError[] } {
  if (!cr) return { config: base, errors: [] };
  const r = decodeClusterConfig(cr.spec?.configuration);
  if (!r.config) return { errors: r.errors };
  overrides(r.config);
  return { config: r.config, errors: [] };
}

export interface KubeVirtConfigOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly log: Logger;
  /** The configuration when there is no KubeVirt CR (defaults, or --config). */
  readonly base: ClusterConfig;
  /** Command-line settings that win over the CR (e.g. --use-emulation). */
  readonly overrides?: (c: ClusterConfig) => void;
  readonly onChange: (config: ClusterConfig) => void;
}

export class KubeVirtConfigWatch {
  private readonly o: KubeVirtConfigOptions;
  private informer?: Informer<KubeVirtCR>;
  private lastJson = '';
  /** The configuration in force. */
  current: ClusterConfig;

  constructor(opts: KubeVirtConfigOptions) {
    this.o = opts;
    this.current = opts.base;
  }

  /** Reads the KubeVirt CR (if the CRD exists) and starts watching; resolves with the configuration in force. */
  async start(): Promise<ClusterConfig> {
    try {
      await this.o.client.list(Resources.kubeVirts, { namespace: this.o.namespace, limit: 1 });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.o.log.info({ namespace: this.o.namespace }, 'no KubeVirt CRD: using the configuration from flags and defaults');
      return this.current;
    }
    const inf = new Informer<KubeVirtCR>(this.o.client, Resources.kubeVirts, { namespace: this.o.namespace, log: this.o.log });
    const recompute = () => this.recompute(inf.list(), true);
    inf.on('add', recompute).on('update', recompute).on('delete', recompute);
    this.informer = inf;
    await inf.start();
    this.recompute(inf.list(), false);
    return this.current;
  }

  private recompute(objs: KubeVirtCR[], notify: boolean): void {
    const cr = selectKubeVirt(objs);
    const r = configFromKubeVirt(cr, this.o.base, this.o.overrides ?? (() => {}));
    if (!r.config) {
      this.o.log.error({ kubevirt: `${cr?.metadata?.namespace}/${cr?.metadata?.name}`, errors: r.errors.map((e) => `${e.field}: ${e.reason}`) }, 'invalid KubeVirt spec.configuration; keeping the previous configuration');
      return;
    }
    const json = JSON.stringify(r.config);
    if (json === this.lastJson) return;
    this.lastJson = json;
    this.current = r.config;
    this.o.log.info({ kubevirt: cr ? `${cr.metadata?.namespace}/${cr.metadata?.name}` : undefined, resourceVersion: cr?.metadata?.resourceVersion }, cr ? 'cluster configuration from the KubeVirt CR' : 'no KubeVirt CR: default configuration');
    if (notify) this.o.onChange(r.config);
  }

  stop(): void {
    this.informer?.stop();
  }
}
