// `qvirt handler`: virt-handler, the node agent — reconciles the VMIs scheduled to this node with
// their launchers, heartbeats the Node, and serves the VMI subresource endpoint (HTTPS with its own CA,
// advertised on the Node; callers use their own Kubernetes credentials — handler/endpoint/server.ts).
// SIGTERM/SIGINT stop it cleanly and mark the node unschedulable; the VMs keep running, and a new
// handler re-adopts them from its ghost records.
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { componentLogger } from '../log/logger.ts';
import { KubeClient, loadKubeConfig } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import { ImageStore } from '../local/image-store.ts';
import { ImageStoreContainerDisks } from '../local/image-store-container-disks.ts';
import { DEFAULT_WORKERS, HandlerController } from '../../handler/controller.ts';
import { Heartbeat } from '../../handler/heartbeat.ts';
import { KUBELET_PODS_DIR } from '../kube/kubelet-volume-dirs.ts';
import { startEndpoint } from '../../handler/endpoint/server.ts';
import { clusterMigrationTls } from '../../handler/migration/cluster-tls.ts';
import type { MigrationTls } from '../../handler/migration/tls.ts';
import { readFileSync } from 'node:fs';
import type { Logger } from '../log/logger.ts';

const specs = {
  'node-name': { type: 'string', value: 'NAME', help: 'this node\'s name (default: $NODE_NAME)' },
  kubeconfig: { type: 'string', value: 'FILE', help: 'kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)' },
  'pods-dir': { type: 'string', value: 'DIR', help: 'kubelet\'s pods directory, where launcher pods\' emptyDirs live', default: KUBELET_PODS_DIR },
  'state-dir': { type: 'string', value: 'DIR', help: 'the handler\'s own state (ghost records, the endpoint\'s CA and certificate)', default: '/var/run/kubevirt-private' },
  'image-store': { type: 'string', value: 'DIR', help: 'local mode: materialize container disks from this image store into launcher pods' },
  'allow-emulation': { type: 'boolean', help: 'the node runs VMs with software emulation (no KVM)' },
  listen: { type: 'string', value: 'HOST:PORT', help: 'subresource (console, vnc, pause, qmp, ...) endpoint address; always HTTPS', default: '0.0.0.0:8186' },
  'advertise-address': { type: 'string', value: 'HOST', help: 'the host clients reach the endpoint at, published on the Node (default: the listen host, else $POD_IP, else this machine\'s first IPv4 address)' },
  'watchdog-timeout': { type: 'duration', value: 'DURATION', help: 'a launcher silent this long is unresponsive', default: '30s' },
  'domain-resync-period': { type: 'duration', value: 'DURATION', help: 'GetDomain on every launcher this often', default: '300s' },
  workers: { type: 'number', value: 'N', help: 'VMI reconcile workers', default: DEFAULT_WORKERS },
  'device-plugins-dir': { type: 'string', value: 'DIR', help: 'serve the kvm, tun and vhost-net device plugins to the kubelet in this dir (in a cluster: /var/lib/kubelet/device-plugins)' },
  'host-root': { type: 'string', value: 'DIR', help: 'where the host\'s device nodes are visible, to check device health (a privileged pod has the host\'s /dev; /proc/1/root is not readable under every runtime)', default: '/' },
  'host-fs': { type: 'string', value: 'DIR', help: 'where the host\'s root filesystem is visible (in a pod: a hostPath mount of /), to find container disks and hostPath volumes when the host\'s mount namespace cannot be entered', default: '/' },
  'max-devices': { type: 'number', value: 'N', help: 'pods per node that may hold each device', default: 1000 },
  'migration-address': { type: 'string', value: 'IP', help: 'where this node agent\'s migration relays listen and other node agents reach it (default: $POD_IP; none: no live migration to or from this node)' },
  namespace: { type: 'string', value: 'NS', help: 'the node agents\' namespace, where the migration CA\'s Secret is (default: $POD_NAMESPACE, else the service account\'s)' },
} as const;

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  if (help) {
    process.stdout.write(usage('qvirt handler [flags]', 'Run qvirt\'s virt-handler: the node agent that runs this node\'s VMIs through their launchers.', specs));
    return 0;
  }
  if (args.length > 0) throw new UsageError(`qvirt handler takes no arguments (got ${args.join(' ')})`);
  const nodeName = flags['node-name'] ?? process.env.NODE_NAME;
  if (!nodeName) throw new UsageError('--node-name (or $NODE_NAME) is required');
  const log = componentLogger('virt-handler').child({ node: nodeName });
  const client = new KubeClient(loadKubeConfig(flags.kubeconfig));
  client.userAgent = 'qvirt-handler';
  const stateDir = flags['state-dir'] ?? '/var/run/kubevirt-private';
  const migration = await migrationSetup(client, flags['migration-address'] ?? process.env.POD_IP, flags.namespace ?? process.env.POD_NAMESPACE ?? serviceAccountNamespace(), log);
  const controller = new HandlerController({
    client,
    hostFs: flags['host-fs'] ?? '/',
    nodeName,
    podsDir: flags['pods-dir'] ?? KUBELET_PODS_DIR,
    stateDir,
    recorder: new EventRecorder(client, 'virt-handler', { host: nodeName, log }),
    log,
    containerDiskSource: flags['image-store'] ? new ImageStoreContainerDisks(new ImageStore(flags['image-store'])) : undefined,
    workers: flags.workers ?? 10,
    watchdogTimeoutMs: (flags['watchdog-timeout'] ?? 30) * 1000,
    resyncMs: (flags['domain-resync-period'] ?? 300) * 1000,
    migration,
  });
  let devicePlugins: { stop(): Promise<void> } | undefined;
  if (flags['device-plugins-dir']) {
    const { DevicePluginManager } = await import('../../handler/device-plugins/manager.ts');
    const m = new DevicePluginManager({ pluginDir: flags['device-plugins-dir'], hostRoot: flags['host-root'] ?? '/', maxDevices: flags['max-devices'] ?? 1000, log });
    m.start();
    devicePlugins = m;
  }
  const heartbeat = new Heartbeat(client, nodeName, log);
  await heartbeat.start();
  await controller.start();
  let endpoint: Awaited<ReturnType<typeof startEndpoint>>;
  try {
    endpoint = await startEndpoint({ controller, client, nodeName, listen: flags.listen ?? '0.0.0.0:8186', advertise: flags['advertise-address'], stateDir, log });
  } catch (err) {
    // No half-started agent: the VMs keep running, and the next handler re-adopts them.
    await controller.stop();
    await heartbeat.stop();
    await client.close();
    throw err;
  }
  log.info({ podsDir: flags['pods-dir'], stateDir, emulation: flags['allow-emulation'] }, 'virt-handler running');
  await new Promise<void>((resolve) => {
    const onSignal = () => { process.off('SIGINT', onSignal); process.off('SIGTERM', onSignal); resolve(); };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  log.info('stopping');
  await endpoint.close();
  await controller.stop();
  await heartbeat.stop();
  await devicePlugins?.stop();
  await client.close();
  return 0;
}

/** The namespace of the pod's service account, when running in a pod. */
function serviceAccountNamespace(): string | undefined {
  try {
    return readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Live migration on this node: the address its relays listen on and the node agents' TLS from the
 * migration CA's Secret. Without an address, no migration (said once); without the TLS (the Secret
 * unreadable or broken), migrations that keep TLS fail with that reason and disableTLS ones run — the
 * node agent itself starts either way.
 */
async function migrationSetup(client: KubeClient, address: string | undefined, namespace: string | undefined, log: Logger): Promise<{ address: string; tls: MigrationTls | undefined } | undefined> {
  if (!address) {
    log.warn('no --migration-address and no $POD_IP: live migration to and from this node is off');
    return undefined;
  }
  if (!namespace) {
    log.error({ address }, 'no --namespace, $POD_NAMESPACE or service account namespace to find the migration CA in: live migration only with disableTLS');
    return { address, tls: undefined };
  }
  try {
    const tls = await clusterMigrationTls(client, namespace, log);
    log.info({ address, namespace }, 'live migration: relays on this address, TLS from the migration CA');
    return { address, tls };
  } catch (err) {
    log.error({ address, namespace, err: err instanceof Error ? err.message : String(err) }, 'no migration TLS: live migration only with disableTLS');
    return { address, tls: undefined };
  }
}
