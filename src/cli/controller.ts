// `qvirt controller`: virt-controller — the VM, VMI, ReplicaSet, Migration and Node controllers
// against a Kubernetes API (a kubeconfig, or the in-cluster service account in a pod), behind
// leader election on a Lease. SIGTERM/SIGINT stop it cleanly and release the lease.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { componentLogger } from '../log/logger.ts';
import { KubeClient, loadKubeConfig } from '../kube/client.ts';
import { decodeClusterConfig, type ClusterConfig } from '../api/cluster-config.ts';
import { ControllerManager, DEFAULT_LAUNCHER_IMAGE } from '../../controller/manager.ts';
import { DEFAULT_LEASE_NAME, DEFAULT_LEASE_NAMESPACE } from '../kube/controller-lease.ts';

const specs = {
  kubeconfig: { type: 'string', value: 'FILE', help: 'kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)' },
  namespace: { type: 'string', value: 'NS', help: 'namespace of the leader-election Lease', default: DEFAULT_LEASE_NAMESPACE },
  'watch-namespace': { type: 'string', value: 'NS', help: 'reconcile objects of this namespace only (default: all namespaces)' },
  'leader-elect': { type: 'boolean', help: 'campaign for the Lease; only the leader reconciles (--leader-elect=false: run at once)', default: true },
  'lease-name': { type: 'string', value: 'NAME', help: 'name of the leader-election Lease', default: DEFAULT_LEASE_NAME },
  'lease-duration': { type: 'duration', value: 'DURATION', help: 'how long a Lease holds without renewal', default: '15s' },
  'renew-deadline': { type: 'duration', value: 'DURATION', help: 'how long the leader retries renewing before it steps down', default: '10s' },
  'retry-period': { type: 'duration', value: 'DURATION', help: 'interval between Lease acquire/renew attempts', default: '2s' },
  config: { type: 'string', value: 'FILE', help: 'cluster configuration: a JSON or YAML KubeVirtConfiguration (a KubeVirt CR\'s spec.configuration)' },
  'use-emulation': { type: 'boolean', help: 'set developerConfiguration.useEmulation (software emulation when KVM is unavailable)' },
  'kubevirt-config': { type: 'boolean', help: 'read the cluster configuration from the KubeVirt CR in --namespace and follow its changes (--config and --use-emulation are the base and the overrides)', default: true },
  'launcher-image': { type: 'string', value: 'IMAGE', help: 'image of the launcher pods\' compute container', default: DEFAULT_LAUNCHER_IMAGE },
  'vm-workers': { type: 'number', value: 'N', help: 'VM controller workers', default: 8 },
  'vmi-workers': { type: 'number', value: 'N', help: 'VMI controller workers', default: 8 },
  'replicaset-workers': { type: 'number', value: 'N', help: 'ReplicaSet controller workers', default: 2 },
  'migration-workers': { type: 'number', value: 'N', help: 'Migration controller workers', default: 2 },
  'webhook-port': { type: 'number', value: 'PORT', help: 'serve virt-api\'s VMI/VM/VMIRS validating webhooks (AdmissionReview v1 over HTTPS) on this port, with a certificate kept in a Secret in --namespace (default: not served)' },
} as const;

/** Reads --config: JSON or YAML; a whole KubeVirt CR or a `{configuration: ...}` is accepted too. */
export async function loadClusterConfig(file: string | undefined, useEmulation: boolean): Promise<ClusterConfig> {
  let input: unknown;
  if (file) {
    const text = readFileSync(file, 'utf8');
    try {
      input = JSON.parse(text);
    } catch {
      const { default: yaml } = await import('js-yaml');
      input = yaml.load(text);
    }
    const o = input as { kind?: string; spec?: { configuration?: unknown }; configuration?: unknown } | null;
    if (o && o.kind === 'KubeVirt') input = o.spec?.configuration;
    else if (o && typeof o === 'object' && 'configuration' in o) input = o.configuration;
  }
  const r = decodeClusterConfig(input);
  if (!r.config) throw new UsageError(`--config ${file}: ${r.errors.map((e) => `${e.field}: ${e.reason}`).join('; ')}`);
  if (useEmulation) r.config.developerConfiguration.useEmulation = true;
  return r.config;
}

/**
 * A controller holds every VM, VMI and launcher pod of the cluster in its caches and churns through
 * short-lived JSON: a small young generation and V8's size-optimised mode keep its RSS ≈ 40 %
 * lower at 1 000 VMs for a few % of throughput (bench/controllers.bench.ts). Set before the caches
 * fill; an explicit NODE_OPTIONS/command-line choice wins.
 */
function tuneHeap(): void {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(' ')];
  if (!given.some((f) => f.startsWith('--max-semi-space-size'))) v8.setFlagsFromString('--max-semi-space-size=2');
  if (!given.some((f) => f.startsWith('--optimize-for-size'))) v8.setFlagsFromString('--optimize-for-size');
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  tuneHeap();
  if (help) {
    process.stdout.write(usage('qvirt controller [flags]', 'Run qvirt\'s virt-controller: the VirtualMachine, VirtualMachineInstance, ReplicaSet, Migration and Node controllers, with leader election.', specs));
    return 0;
  }
  if (args.length > 0) throw new UsageError(`qvirt controller takes no arguments (got ${args.join(' ')})`);
  const log = componentLogger('virt-controller');
  const config = await loadClusterConfig(flags.config, flags['use-emulation']);
  const client = new KubeClient(loadKubeConfig(flags.kubeconfig));
  client.userAgent = 'qvirt-controller';
  let configWatch: { stop(): void } | undefined;
  let effective = config;
  let onConfig: (c: ClusterConfig) => void = () => {};
  if (flags['kubevirt-config']) {
    const { KubeVirtConfigWatch } = await import('../kube/kubevirt-config.ts');
    const useEmulation = flags['use-emulation'];
    const w = new KubeVirtConfigWatch({
      client,
      namespace: flags.namespace ?? DEFAULT_LEASE_NAMESPACE,
      log,
      base: config,
      overrides: (c) => { if (useEmulation) c.developerConfiguration.useEmulation = true; },
      onChange: (c) => onConfig(c),
    });
    effective = await w.start();
    configWatch = w;
  }
  const manager = new ControllerManager({
    client,
    config: effective,
    log,
    launcherImage: flags['launcher-image'] ?? DEFAULT_LAUNCHER_IMAGE,
    ...(flags['watch-namespace'] ? { watchNamespace: flags['watch-namespace'] } : {}),
    leaderElect: flags['leader-elect'],
    leaseNamespace: flags.namespace ?? DEFAULT_LEASE_NAMESPACE,
    leaseName: flags['lease-name'] ?? DEFAULT_LEASE_NAME,
    leaseDurationMs: (flags['lease-duration'] ?? 15) * 1000,
    renewDeadlineMs: (flags['renew-deadline'] ?? 10) * 1000,
    retryPeriodMs: (flags['retry-period'] ?? 2) * 1000,
    workers: { vm: flags['vm-workers'] ?? 8, vmi: flags['vmi-workers'] ?? 8, replicaset: flags['replicaset-workers'] ?? 2, migration: flags['migration-workers'] ?? 2 },
  });
  onConfig = (c) => { effective = c; manager.updateConfig(c); };
  let webhooks: { stop(): Promise<void> } | undefined;
  if (flags['webhook-port'] !== undefined) {
    const { startControllerWebhooks } = await import('../admission/controller-webhooks.ts');
    // virt-controller's /metrics on the same HTTPS port, read-only, for callers whose own token may
    // `get` the non-resource URL /metrics (as kube-rbac-proxy asks; the node agents ask the same).
    const { ControllerMetrics, managerMetricsView, serveControllerMetrics, METRICS_PATH } = await import('../../controller/metrics/controller-metrics.ts');
    const { EndpointAuth, AuthUnavailableError } = await import('../../handler/endpoint/auth.ts');
    const { authorizedScrape } = await import('../metrics/scrape-auth.ts');
    const metrics = new ControllerMetrics(managerMetricsView(manager, () => effective));
    const serveMetrics = authorizedScrape(new EndpointAuth({ client, log: log.child({ part: 'metrics' }) }), (req, res) => serveControllerMetrics(metrics, req, res, METRICS_PATH), (err) => err instanceof AuthUnavailableError);
    webhooks = await startControllerWebhooks({ client, namespace: flags.namespace ?? DEFAULT_LEASE_NAMESPACE, port: flags['webhook-port'], config: () => effective, log: log.child({ part: 'webhooks' }), metrics: serveMetrics });
  }
  await manager.start();
  await new Promise<void>((resolve) => {
    const onSignal = () => { process.off('SIGINT', onSignal); process.off('SIGTERM', onSignal); resolve(); };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  log.info('stopping');
  configWatch?.stop();
  await webhooks?.stop();
  await manager.stop();
  await client.close();
  return 0;
}
