// Harness for the controllers against qvirt's embedded API server: a server with KubeVirt's CRDs
// applied, real KubeClients over HTTP, controller managers, and a simulated node — the kubelet
// (binds pods, runs them, finishes deleted ones) and virt-handler (Scheduled → Running) — that
// does through the API exactly what those components write, nothing more.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { tempDir } from '../lib/tmp.ts';
import { KubeClient, isNotFound } from '../../src/kube/client.ts';
import { Informer } from '../../src/kube/informer.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger, type Logger } from '../../src/log/logger.ts';
import { applyCrdFiles } from '../../src/deploy/crds.ts';
import { kubeConfigForServer } from '../../src/kube/kubeconfig.ts';
import { ControllerManager, type ManagerOptions } from '../../controller/manager.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

export const log: Logger = componentLogger('controller-test', { level: (process.env.QVIRT_LOG_LEVEL as 'warn' | undefined) ?? 'warn' });

export interface Cluster {
  api: ApiServer;
  client: KubeClient;
  /** A kubeconfig file for the server (for `qvirt controller` in a child process). */
  kubeconfig: string;
  newClient(): KubeClient;
  /** Stops the server and starts it again on the same port and data (only with `persistent`). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startCluster(opts: { historySize?: number; persistent?: boolean } = {}): Promise<Cluster> {
  const dir = tempDir('qctl');
  const start = (port?: number) => startApiServer({ tls: false, log, ...(opts.persistent ? { dataDir: dir.path } : {}), ...(port ? { port } : {}), ...(opts.historySize ? { historySize: opts.historySize } : {}) });
  let api = await start();
  // client-node refuses plain HTTP unless the cluster says insecure-skip-tls-verify.
  const kubeconfig = join(dir.path, 'kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'qvirt',
    clusters: [{ name: 'qvirt', cluster: { server: api.url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'qvirt', user: {} }],
    contexts: [{ name: 'qvirt', context: { cluster: 'qvirt', user: 'qvirt' } }],
  }));
  const clients: KubeClient[] = [];
  const newClient = () => { const c = new KubeClient(kubeConfigForServer(api.url)); clients.push(c); return c; };
  const client = newClient();
  try {
    await applyCrdFiles(client);
    await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubevirt' } });
  } catch (err) {
    await api.stop();
    dir.cleanup();
    throw err;
  }
  const cluster: Cluster = {
    api,
    client,
    kubeconfig,
    newClient,
    restart: async () => {
      const port = Number(new URL(api.url).port);
      await api.stop();
      api = await start(port);
      cluster.api = api;
    },
    close: async () => {
      for (const c of clients) await c.close();
      await api.stop();
      dir.cleanup();
    },
  };
  return cluster;
}

export function newManager(cluster: Cluster, opts: Partial<Omit<ManagerOptions, 'client'>> = {}): ControllerManager {
  return new ControllerManager({
    client: cluster.newClient(),
    config: defaultClusterConfig(),
    log,
    leaderElect: false,
    ...opts,
  });
}

export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, ms = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${last instanceof Error ? last.message : String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The image ID a container runtime reports: the repository pinned to a digest. */
export function imageID(image: string): string {
  const repo = image.replace(/@.*$/, '').replace(/:[^/:]+$/, '');
  return `docker-pullable://${repo}@sha256:${createHash('sha256').update(image).digest('hex')}`;
}

/** What a kubelet writes when a pod starts on `node`: Running, containers started and ready, Ready. */
export function runningPodStatus(pod: Pod): NonNullable<Pod['status']> {
  const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    phase: 'Running',
    qosClass: 'Burstable',
    conditions: [
      ...(pod.status?.conditions ?? []).filter((c) => !['Ready', 'ContainersReady', 'Initialized'].includes(c.type)),
      { type: 'Initialized', status: 'True', lastTransitionTime: t },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: t },
      { type: 'Ready', status: 'True', lastTransitionTime: t },
    ],
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({ name: c.name, image: c.image ?? '', imageID: imageID(c.image ?? ''), ready: true, restartCount: 0, started: true, state: { running: { startedAt: t } } })),
  } as NonNullable<Pod['status']>;
}

/** virt-handler's phase change: the phase and its transition timestamp, guarded by a test of the old phase. */
export function handlerPhasePatch(vmi: VirtualMachineInstance, phase: 'Running' | 'Succeeded' | 'Failed'): { op: string; path: string; value: unknown }[] {
  const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [
    { op: 'test', path: '/status/phase', value: vmi.status?.phase },
    { op: 'replace', path: '/status/phase', value: phase },
    { op: 'add', path: '/status/phaseTransitionTimestamps/-', value: { phase, phaseTransitionTimestamp: t } },
  ];
}

/**
 * A simulated node: binds new kubevirt pods to it and starts them (kubelet), removes pods that are
 * being deleted (kubelet after the container exits), and moves Scheduled VMIs on it to Running
 * (virt-handler). Optionally only the kubelet half.
 */
export class SimulatedNode {
  private readonly client: KubeClient;
  readonly name: string;
  private readonly pods: Informer<Pod>;
  private readonly vmis: Informer<VirtualMachineInstance>;
  private readonly handler: boolean;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(cluster: Cluster, opts: { name?: string; handler?: boolean } = {}) {
    this.client = cluster.newClient();
    this.name = opts.name ?? 'node01';
    this.handler = opts.handler ?? true;
    this.pods = new Informer<Pod>(this.client, Resources.pods, { labelSelector: 'kubevirt.io' });
    this.vmis = new Informer<VirtualMachineInstance>(this.client, Resources.virtualMachineInstances);
    this.pods.on('add', (p) => this.onPod(p));
    this.pods.on('update', (_o, p) => this.onPod(p));
    this.vmis.on('add', (v) => this.onVMI(v));
    this.vmis.on('update', (_o, v) => this.onVMI(v));
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => { if (!isNotFound(err)) log.debug({ err: String(err) }, 'simulated node write failed'); });
    this.pending.add(q);
    void q.finally(() => this.pending.delete(q));
  }

  private onPod(pod: Pod): void {
    const m = pod.metadata!;
    if (m.deletionTimestamp != null) {
      this.track(this.client.delete(Resources.pods, m.namespace, m.name!, { gracePeriodSeconds: 0 }));
      return;
    }
    if (!pod.spec?.nodeName) {
      this.track(this.client.request('POST', `/api/v1/namespaces/${m.namespace}/pods/${m.name}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: m.name }, target: { apiVersion: 'v1', kind: 'Node', name: this.name } } }));
      return;
    }
    if (pod.spec.nodeName === this.name && pod.status?.phase !== 'Running') {
      this.track(this.client.patch(Resources.pods, m.namespace, m.name!, { status: runningPodStatus(pod) }, 'merge', 'status'));
    }
  }

  private onVMI(vmi: VirtualMachineInstance): void {
    if (!this.handler || vmi.status?.nodeName !== this.name) return;
    // virt-handler: the domain starts (Scheduled → Running); a deleted VMI's guest shuts down (→ Succeeded).
    if (vmi.status.phase === 'Scheduled' && vmi.metadata?.deletionTimestamp == null) {
      this.track(this.client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, [
        ...handlerPhasePatch(vmi, 'Running'),
        { op: 'add', path: '/status/selinuxContext', value: 'none' },
      ], 'json'));
    }
    if (vmi.status.phase === 'Running' && vmi.metadata?.deletionTimestamp != null) this.track(this.client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata!.name!, handlerPhasePatch(vmi, 'Succeeded'), 'json'));
  }

  async start(): Promise<void> {
    // The Node as virt-handler labels it: schedulable, host-model CPU, CPU vendor, a fresh heartbeat.
    await this.client.create(Resources.nodes, {
      apiVersion: 'v1', kind: 'Node',
      metadata: {
        name: this.name,
        labels: { 'kubernetes.io/hostname': this.name, 'kubevirt.io/schedulable': 'true', 'host-model-cpu.node.kubevirt.io/Skylake-Client-IBRS': 'true', 'cpu-vendor.node.kubevirt.io/Intel': 'true' },
        annotations: { 'kubevirt.io/heartbeat': new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') },
      },
    }).catch(() => undefined);
    await Promise.all([this.pods.start(), this.vmis.start()]);
  }

  async stop(): Promise<void> {
    this.pods.stop();
    this.vmis.stop();
    await Promise.all([...this.pending]);
  }
}

/** The cluster, a started controller manager that leads, and (unless `node: false`) a simulated node. */
export interface ControlPlane {
  readonly cluster: Cluster;
  readonly manager: ControllerManager;
  readonly node: SimulatedNode | undefined;
  stop(): Promise<void>;
}

export async function startControlPlane(opts: { node?: false | { handler?: boolean }; manager?: Partial<Omit<ManagerOptions, 'client'>> } = {}): Promise<ControlPlane> {
  const cluster = await startCluster();
  const node = opts.node === false ? undefined : new SimulatedNode(cluster, opts.node ?? {});
  await node?.start();
  const manager = newManager(cluster, opts.manager);
  await manager.start();
  await manager.leading;
  return {
    cluster, manager, node,
    async stop() {
      await manager.stop();
      await node?.stop();
      await cluster.close();
    },
  };
}
