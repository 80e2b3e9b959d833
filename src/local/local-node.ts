// One node of the local mode: its Node object (name, address, kubelet port), the pod runner playing
// its kubelet, its node agent (with live migration: this node's address and the handlers' TLS) and
// the agent's heartbeat. `qvirt local up --nodes N` runs N of them in one process, each with its own
// pods directory and handler state, so a migration really goes from one launcher process and pod
// directory to another, through the two agents' TLS proxy.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { LabelPrefix } from '../api/constants.ts';
import type { KubeClient } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import type { Logger } from '../log/logger.ts';
import { HandlerController, type StartStep } from '../../handler/controller.ts';
import { Heartbeat } from '../../handler/heartbeat.ts';
import { startEndpoint } from '../../handler/endpoint/server.ts';
import type { PodNetwork } from './pod-runner/pod-network.ts';
import type { MigrationTls } from '../../handler/migration/tls.ts';
import type { ImageStore } from './image-store.ts';
import type { RegistryOptions } from './image-pull.ts';
import { ImageStoreContainerDisks } from './image-store-container-disks.ts';
import { registerLocalNode } from './node.ts';
import { startPodRunner } from './pod-runner/index.ts';

export interface LocalNodeOptions {
  readonly client: KubeClient;
  readonly nodeName: string;
  /** The node's InternalIP; the node agent's migration listeners bind to it. */
  readonly ip: string;
  readonly podsDir: string;
  readonly stateDir: string;
  readonly imageStore: ImageStore;
  readonly kubeletTls: { key: string; cert: string; ca: string };
  readonly migrationTls: MigrationTls | undefined;
  readonly podNetwork?: PodNetwork | undefined;
  /** How the pod runner reaches registries when it pulls containerDisk images. */
  readonly registries?: RegistryOptions | undefined;
  readonly log: Logger;
  /** Told each step of a VMI start the node agent takes (benchmarks split a start's phases with it). */
  readonly onStartStep?: ((key: string, step: StartStep) => void) | undefined;
}

export interface LocalNode {
  readonly nodeName: string;
  readonly ip: string;
  readonly podsDir: string;
  readonly handler: HandlerController;
  /** Stops the agent, then the pod runner (pods keep running only if drained before). */
  stop(): Promise<void>;
}

/** The local name of the i-th node (0-based): the first is `base`, the others `base-2`, `base-3`... */
export function localNodeName(base: string, i: number): string {
  return i === 0 ? base : `${base}-${i + 1}`;
}

/** The i-th node's address: 127.0.0.1, 127.0.0.2... (all of 127/8 is loopback on Linux). */
export function localNodeIp(i: number): string {
  return `127.0.0.${i + 1}`;
}

/**
 * What KubeVirt's node labeller would publish about the CPU, for the local nodes: they are all this
 * one machine, so one host model (`qvirt-local-host`) that each can take over from the others, and the
 * vendor from /proc/cpuinfo. A migration target pod selects on these labels.
 */
export const LOCAL_HOST_CPU_MODEL = 'qvirt-local-host';
export function localCpuLabels(cpuinfo: string): Record<string, string> {
  const labels: Record<string, string> = {
    [LabelPrefix.HostModelCPU + LOCAL_HOST_CPU_MODEL]: 'true',
    [LabelPrefix.SupportedHostModelMigrationCPU + LOCAL_HOST_CPU_MODEL]: 'true',
  };
  const vendorId = /^vendor_id\s*:\s*(\S+)/m.exec(cpuinfo)?.[1];
  const vendor = vendorId === 'GenuineIntel' ? 'Intel' : vendorId === 'AuthenticAMD' ? 'AMD' : undefined;
  if (vendor) labels[LabelPrefix.CPUVendor + vendor] = 'true';
  return labels;
}

export async function startLocalNode(o: LocalNodeOptions): Promise<LocalNode> {
  const { client, nodeName, ip, log } = o;
  const stops: Array<() => Promise<void> | void> = [];
  const stop = async () => { for (const s of stops.reverse()) { try { await s(); } catch (err) { log.warn({ err: (err as Error).message, node: nodeName }, 'stopping a local node part failed'); } } };
  try {
    let cpuinfo = '';
    try { cpuinfo = readFileSync('/proc/cpuinfo', 'utf8'); } catch { /* not Linux */ }
    const labels = localCpuLabels(cpuinfo);
    await registerLocalNode({ client, nodeName, ip, labels });
    const runner = await startPodRunner({ client, nodeName, imageStore: o.imageStore, podsDir: o.podsDir, log: log.child({ part: 'pod-runner', node: nodeName }), kubelet: { tls: o.kubeletTls }, ...(o.podNetwork ? { podNetwork: o.podNetwork } : {}), ...(o.registries ? { registries: o.registries } : {}) });
    stops.push(() => runner.stop());
    const kubeletPort = runner.kubeletPort;
    const register = () => registerLocalNode({ client, nodeName, ip, labels, ...(kubeletPort ? { kubeletPort } : {}) });
    await register();
    const nodeTimer = setInterval(() => { register().catch((err: Error) => log.warn({ err: err.message, node: nodeName }, 'node status update failed')); }, 30_000);
    stops.push(() => clearInterval(nodeTimer));
    const hlog = log.child({ part: 'virt-handler', node: nodeName });
    const handler = new HandlerController({
      client, nodeName, podsDir: o.podsDir, stateDir: o.stateDir, log: hlog, containerDiskSource: new ImageStoreContainerDisks(o.imageStore),
      recorder: new EventRecorder(client, 'virt-handler', { host: nodeName, log: hlog }),
      migration: { address: ip, tls: o.migrationTls },
      ...(o.onStartStep ? { onStartStep: o.onStartStep } : {}),
    });
    const heartbeat = new Heartbeat(client, nodeName, hlog);
    await heartbeat.start();
    await handler.start();
    stops.push(() => heartbeat.stop());
    stops.push(() => handler.stop());
    // The subresource endpoint (console, vnc, pause, qmp...) the CLI reaches through the Node's annotations.
    const endpoint = await startEndpoint({ controller: handler, client, nodeName, listen: '127.0.0.1:0', stateDir: o.stateDir, log: hlog });
    stops.push(() => endpoint.close());
    return { nodeName, ip, podsDir: o.podsDir, handler, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Per-node directories: the first node keeps the single-node layout (<data>/pods, <data>/handler). */
export function localNodeDirs(dataDir: string, i: number, nodeName: string): { podsDir: string; stateDir: string } {
  if (i === 0) return { podsDir: join(dataDir, 'pods'), stateDir: join(dataDir, 'handler') };
  return { podsDir: join(dataDir, 'nodes', nodeName, 'pods'), stateDir: join(dataDir, 'nodes', nodeName, 'handler') };
}
