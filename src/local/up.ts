// The local mode: a one-machine KubeVirt with no Kubernetes and no libvirt. In one process: the
// embedded API server (TLS, persisted under the data dir, KubeVirt's CRDs applied), the
// controllers, this machine as a Node with its node agent, the pod runner playing kubelet, and a
// local-path provisioner for PVCs. VMs run in launcher processes, one per VMI, as in a cluster.
//
// Stopping is a node drain: the controllers stop first (so nothing is restarted meanwhile), the
// launcher pods are deleted with their grace period (the node agent shuts the guests down over
// ACPI), then the rest stops. The next `qvirt local up` finds the VMs' objects as they were and
// the VM controller brings them back per their run strategy.
import { copyFile, mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../apiserver/index.ts';
import { isKubeVirtControllerServiceAccount, isKubeVirtOrAdmin, kubeVirtWebhooks } from '../admission/kubevirt-webhooks.ts';
import { mergeClusterConfig, type PartialClusterConfig } from '../api/cluster-config.ts';
import { KubeClient, loadKubeConfig } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import type { Logger } from '../log/logger.ts';
import { applyCrd, applyCrdFiles } from '../deploy/crds.ts';
import { cdiConfigCustomResourceDefinition, dataVolumeCustomResourceDefinition } from '../api/cdi/crd.ts';
import { startUploadProxy } from '../../controller/datavolume/upload-proxy.ts';
import { CdiConfigResource, DEFAULT_FILESYSTEM_OVERHEAD } from '../api/cdi/types.ts';
import { DataVolumeController } from '../../controller/datavolume/controller.ts';
import { ControllerManager } from '../../controller/manager.ts';
import { ControllerMetrics, PROMETHEUS_METRICS_SERVICE, managerMetricsView, serveControllerMetrics } from '../../controller/metrics/controller-metrics.ts';
import { probeKvm } from '../../launcher/accel/kvm-probe.ts';
import { ImageStore } from './image-store.ts';
import { ImageStoreRegistrySource } from './image-store-registry-source.ts';
import type { RegistryOptions } from './image-pull.ts';
import { startLocalPathProvisioner } from './local-path-provisioner.ts';
import { localNodeDirs, localNodeIp, localNodeName, startLocalNode } from './local-node.ts';
import type { StartStep } from '../../handler/controller.ts';
import { ensureMigrationTls } from '../../handler/migration/tls.ts';
import { PodNetwork, type PodNetworkConfig } from './pod-runner/pod-network.ts';
import { SUBRESOURCE_GROUP } from '../api/constants.ts';
import { subresourceApi } from '../virt-api/subresource-api.ts';
import { accessReviewAuthorizer } from '../virt-api/access-review.ts';
import { SUBRESOURCE_VERSIONS, discoveredResources } from '../virt-api/subresource-routes.ts';
import { KubeVirtConfigWatch } from '../kube/kubevirt-config.ts';
import { isAlreadyExists } from '../kube/client.ts';
import { INSTALL_NAMESPACE, Names } from '../deploy/manifests.ts';

export interface LocalModeOptions {
  readonly dataDir: string;
  readonly port?: number;
  readonly nodeName?: string;
  /** How many local nodes (default 1): names <nodeName>, <nodeName>-2...; addresses 127.0.0.1, 127.0.0.2... */
  readonly nodes?: number;
  /** KubeVirt configuration on top of the defaults (e.g. `migrations`). */
  readonly clusterConfig?: PartialClusterConfig;
  /** Software emulation: 'auto' (only when KVM cannot run guests here), or forced on/off. */
  readonly emulation?: 'auto' | boolean;
  readonly imageStore?: ImageStore;
  /**
   * How the pod runners reach registries when they pull containerDisk images: CA certificates in
   * `certsDir/<host[:port]>/ca.crt` (default `<dataDir>/certs.d`) and the registries to reach
   * without TLS verification (none unless listed).
   */
  readonly registries?: RegistryOptions;
  /**
   * A pod network (root only): each pod gets its own network namespace and address on a host
   * bridge, and VMs get KubeVirt's masquerade/bridge/passt bindings. Off: pods share the host's
   * network and pod-network interfaces use QEMU user-mode networking.
   */
  readonly podNetwork?: boolean | PodNetworkConfig;
  readonly log: Logger;
  /** Told each step of a VMI start the node agents take (benchmarks split a start's phases with it). */
  readonly onStartStep?: (key: string, step: StartStep) => void;
}

export interface LocalMode {
  readonly url: string;
  readonly kubeconfig: string;
  readonly nodeName: string;
  /** Every local node's name (the first is nodeName). */
  readonly nodeNames: readonly string[];
  readonly client: KubeClient;
  readonly useEmulation: boolean;
  /** Drains the node (graceful guest shutdowns) and stops everything. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startLocalMode(o: LocalModeOptions): Promise<LocalMode> {
  const log = o.log;
  const nodeName = o.nodeName ?? hostname().toLowerCase().replace(/[^a-z0-9.-]/g, '-');
  await mkdir(o.dataDir, { recursive: true });
  const stops: Array<() => Promise<void> | void> = [];
  const stopAll = async () => { for (const s of stops.reverse()) { try { await s(); } catch (err) { log.warn({ err: (err as Error).message }, 'stopping a local-mode part failed'); } } };
  try {
    // virt-api's webhooks run inside the API server. The controllers, the node agents and the user all
    // hold the admin credentials here, so the admin counts as virt-controller (migration priority).
    let admissionConfig = mergeClusterConfig(o.clusterConfig ?? {});
    const admission = kubeVirtWebhooks({ config: () => admissionConfig, isVirtController: (u) => isKubeVirtControllerServiceAccount(u) || (u?.groups.includes('system:masters') ?? false), isKubeVirt: isKubeVirtOrAdmin });
    const api: ApiServer = await startApiServer({ dataDir: join(o.dataDir, 'api'), port: o.port ?? 0, host: '127.0.0.1', tls: true, log: log.child({ part: 'apiserver' }), admission });
    stops.push(() => api.stop());
    const kubeconfig = join(o.dataDir, 'kubeconfig');
    await copyFile(api.kubeconfigPath!, kubeconfig);
    const client = new KubeClient(loadKubeConfig(kubeconfig));
    client.userAgent = 'qvirt-local';
    stops.push(() => client.close());
    await applyCrdFiles(client);
    // CDI's DataVolume kind: served by the local mode itself (on a cluster CDI installs it).
    await applyCrd(client, dataVolumeCustomResourceDefinition() as never);
    await applyCrd(client, cdiConfigCustomResourceDefinition() as never);
    // virt-api's subresources (virtctl's verbs), served by the API server as the aggregation layer
    // serves an APIService; virt-api acts with the admin's credentials, as the controllers do here.
    const virtApi = subresourceApi({ client, authorize: accessReviewAuthorizer(client), config: () => admissionConfig, log: log.child({ part: 'virt-api' }) });
    api.addAggregatedApi({ group: SUBRESOURCE_GROUP, versions: SUBRESOURCE_VERSIONS, resources: discoveredResources, handle: virtApi.handle, upgrade: virtApi.upgrade });
    stops.push(() => virtApi.close());

    let useEmulation = o.emulation === true;
    if (o.emulation === undefined || o.emulation === 'auto') {
      const kvm = await probeKvm({ cacheFile: join(o.dataDir, 'cache', 'kvm-probe.json') });
      useEmulation = !kvm.usable;
      if (useEmulation) log.info({ reason: kvm.reason }, 'KVM cannot run guests here: VMs use software emulation (useEmulation)');
    }

    const provisioner = await startLocalPathProvisioner({ client, dataDir: o.dataDir, log: log.child({ part: 'local-path-provisioner' }) });
    stops.push(() => provisioner.stop());

    const imageStore = o.imageStore ?? new ImageStore();
    // CDI's role: DataVolumes imported into local-path claims (controller/datavolume); registry
    // sources are pulled into the image store as the pod runners pull container disks.
    const dataVolumes = new DataVolumeController({ client, log: log.child({ part: 'datavolume-controller' }), registry: new ImageStoreRegistrySource(imageStore, { certsDir: join(o.dataDir, 'certs.d'), ...o.registries }) });
    await dataVolumes.start();
    stops.push(() => dataVolumes.stop());
    // CDI's upload path (virtctl/qvirt image-upload): UploadTokenRequests in the API server, the
    // upload proxy beside it (the API server's certificate), its URL in CDIConfig config.
    const uploadProxy = await startUploadProxy({ dataVolumes, tls: { key: api.pki!.serverKey, cert: api.pki!.serverCert }, log: log.child({ part: 'cdi-uploadproxy' }) });
    stops.push(() => uploadProxy.close());
    api.addAggregatedApi(uploadProxy.tokenApi);
    await publishUploadProxy(client, uploadProxy.url);

    const pki = api.pki!;
    // Each node: Node object, pod runner (kubelet), node agent; live migration goes between them.
    const migrationTls = ensureMigrationTls(join(o.dataDir, 'migration-tls'));
    // One pod network for all local nodes: they are one machine (one bridge, one address pool).
    const podNetwork = o.podNetwork ? new PodNetwork(o.podNetwork === true ? { stateDir: join(o.dataDir, 'cni') } : o.podNetwork) : undefined;
    const nodeNames: string[] = [];
    for (let i = 0; i < Math.max(1, o.nodes ?? 1); i++) {
      const name = localNodeName(nodeName, i);
      const node = await startLocalNode({ client, nodeName: name, ip: localNodeIp(i), ...localNodeDirs(o.dataDir, i, name), imageStore, kubeletTls: { key: pki.kubeletKey, cert: pki.kubeletCert, ca: pki.caCert }, migrationTls, log, registries: { certsDir: join(o.dataDir, 'certs.d'), ...o.registries }, ...(podNetwork ? { podNetwork } : {}), ...(o.onStartStep ? { onStartStep: o.onStartStep } : {}) });
      stops.push(() => node.stop());
      nodeNames.push(name);
    }

    const base = mergeClusterConfig({ ...(o.clusterConfig ?? {}), developerConfiguration: { ...(o.clusterConfig?.developerConfiguration ?? {}), useEmulation } });
    // The cluster configuration lives where KubeVirt keeps it: the KubeVirt CR kubevirt/kubevirt,
    // created on the first start from the options and kept since, so `kubectl edit kubevirt` (a
    // feature gate, migration settings) takes effect as on a cluster. Emulation is this machine's.
    await ensureKubeVirtCr(client, o.clusterConfig ?? {});
    let manager: ControllerManager | undefined;
    const configWatch = new KubeVirtConfigWatch({
      client, namespace: INSTALL_NAMESPACE, log: log.child({ part: 'kubevirt-config' }), base,
      overrides: (c) => { c.developerConfiguration.useEmulation = useEmulation; },
      onChange: (c) => { admissionConfig = c; manager?.updateConfig(c); },
    });
    const config = await configWatch.start();
    stops.push(() => configWatch.stop());
    admissionConfig = config;
    manager = new ControllerManager({ client, config, log: log.child({ part: 'virt-controller' }), leaderElect: false });
    manager.start();
    await manager.leading;
    // virt-controller's /metrics, where a cluster's API server proxies to it: the Service
    // kubevirt/kubevirt-prometheus-metrics (kubectl get --raw .../services/https:kubevirt-prometheus-metrics:metrics/proxy/metrics).
    const controllerMetrics = new ControllerMetrics(managerMetricsView(manager, () => admissionConfig));
    stops.push(api.addServiceProxy({ namespace: INSTALL_NAMESPACE, name: PROMETHEUS_METRICS_SERVICE, handle: (req, res, path) => serveControllerMetrics(controllerMetrics, req, res, path) }));
    let controllersStopped = false;
    const stopControllers = async () => { if (!controllersStopped) { controllersStopped = true; await manager!.stop(); } };
    stops.push(stopControllers);

    return {
      url: api.url,
      kubeconfig,
      nodeName,
      nodeNames,
      client,
      useEmulation,
      stop: async () => {
        // Drain: no controller may start anything again, then every pod on the nodes goes away gracefully.
        await stopControllers();
        const onOurNodes = (p: { spec?: { nodeName?: string } }) => nodeNames.includes(p.spec?.nodeName ?? '');
        const pods = (await client.list<{ metadata?: { name?: string; namespace?: string }; spec?: { nodeName?: string; terminationGracePeriodSeconds?: number } }>(Resources.pods).catch(() => ({ items: [] }))).items.filter(onOurNodes);
        let longest = 0;
        for (const p of pods) {
          longest = Math.max(longest, p.spec?.terminationGracePeriodSeconds ?? 30);
          await client.delete(Resources.pods, p.metadata?.namespace, p.metadata!.name!).catch(() => undefined);
        }
        const deadline = Date.now() + (longest + 10) * 1000;
        while (pods.length && Date.now() < deadline) {
          const left = (await client.list<{ metadata?: { name?: string }; spec?: { nodeName?: string } }>(Resources.pods).catch(() => ({ items: [] }))).items.filter(onOurNodes);
          if (left.length === 0) break;
          await sleep(500);
        }
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** CDIConfig `config` with status.uploadProxyURL, where virtctl image-upload finds the upload proxy. */
async function publishUploadProxy(client: KubeClient, url: string): Promise<void> {
  const status = { uploadProxyURL: url, filesystemOverhead: { global: String(DEFAULT_FILESYSTEM_OVERHEAD) } };
  const obj = { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: CdiConfigResource.kind, metadata: { name: CdiConfigResource.name }, spec: {}, status };
  try {
    await client.create(Resources.cdiConfigs, obj as never);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const cur = await client.get<{ metadata?: { resourceVersion?: string } }>(Resources.cdiConfigs, undefined, CdiConfigResource.name);
    await client.update(Resources.cdiConfigs, { ...(cur as object), status } as never);
  }
}

/** The KubeVirt CR kubevirt/kubevirt (and its namespace) with `configuration`, unless it exists: the user's edits are kept. */
async function ensureKubeVirtCr(client: KubeClient, configuration: PartialClusterConfig): Promise<void> {
  const ignoreExisting = (err: unknown) => { if (!isAlreadyExists(err)) throw err; };
  await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: INSTALL_NAMESPACE } }).catch(ignoreExisting);
  await client.create(Resources.kubeVirts, { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: Names.KubeVirt, namespace: INSTALL_NAMESPACE }, spec: { configuration } } as never).catch(ignoreExisting);
}
