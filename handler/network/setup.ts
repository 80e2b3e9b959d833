// The node agent's pod network setup (the thin I/O shell around plan.ts): finds the launcher pod's
// network namespace, reads its interface, runs the planned steps inside it and writes the
// `vif-cache-<podIface>.json` files the launcher reads. Called before SyncVirtualMachine, i.e.
// before QEMU starts; safe to call again (a retried sync, a migration target pod).
import { readFile, readlink, mkdir, rename, writeFile } from 'node:fs/promises';
import { podProcesses } from '../launcher/pod-processes.ts';
import { basename, join } from 'node:path';
import { parseVifCache, vifCacheFile, type VifCache } from '../../src/api/vif-cache.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { POD_NETNS_FILE } from '../../src/net/constants.ts';
import { defaultGateway4, linkInfo, run } from '../../src/net/command.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { PodInterfaceStatus } from '../status.ts';
import { BRIDGED_POD_IFACE, POD_IFACE, planPodNetwork, podNetworkInterfaces, type PodInterfaceState } from './plan.ts';
import { passtGuestOf } from './passt-record.ts';

export interface PodNetworkSetupInput {
  readonly vmi: VirtualMachineInstance;
  /** The launcher pod's directory (<podsDir>/<podUid>). */
  readonly podDir: string;
  /** The pod's /var/run/kubevirt-private emptyDir, where the launcher reads the vif caches. */
  readonly privateDir: string;
  readonly log: Logger;
}

export interface PodNetworkSetupResult {
  /** The namespace the setup ran in. */
  readonly netns: string;
  readonly caches: readonly VifCache[];
  /** Per VMI interface bound to the pod network: its binding and the pod's addresses (for status). */
  readonly interfaces: ReadonlyMap<string, PodInterfaceStatus>;
}

function interfaceStatus(vmi: VirtualMachineInstance, caches: readonly VifCache[], pod: PodInterfaceState | undefined): Map<string, PodInterfaceStatus> {
  const out = new Map<string, PodInterfaceStatus>();
  const podIPs = [pod?.ipv4?.address, pod?.ipv6?.address].filter((x): x is string => !!x);
  for (const { iface } of podNetworkInterfaces(vmi)) {
    const c = caches.find((x) => x.iface === iface.name);
    if (c) out.set(iface.name, { binding: c.binding, podIPs: c.podIPs, mac: c.mac });
    else if (iface.passtBinding || iface.passt) out.set(iface.name, { binding: 'passt', podIPs, passtGuest: passtGuestOf(pod) });
  }
  return out;
}

/**
 * The pod's network namespace file, when the pod has its own network: `<podDir>/netns` (the local
 * pod runner writes it; empty for a pod on the host's network), else on a real node `/proc/<pid>/ns/net` of the pod's first process (the
 * sandbox's; handler/launcher/pod-processes.ts). A pod sharing the handler's own network has none of its own.
 */
export async function podNetns(podDir: string, proc = '/proc'): Promise<string | undefined> {
  const text = await readFile(join(podDir, POD_NETNS_FILE), 'utf8').catch(() => undefined);
  if (text !== undefined) return text.trim() || undefined;
  for (const { pid } of await podProcesses(basename(podDir), proc)) {
    const ns = join(proc, String(pid), 'ns', 'net');
    const [theirs, ours] = await Promise.all([readlink(ns).catch(() => undefined), readlink(join(proc, 'self', 'ns', 'net')).catch(() => undefined)]);
    if (!theirs) continue;
    return theirs === ours ? undefined : ns;
  }
  return undefined;
}

async function discover(netns: string): Promise<PodInterfaceState | undefined> {
  const link = await linkInfo(POD_IFACE, netns);
  if (!link) return undefined;
  const v4 = link.addresses.find((a) => a.family === 'inet' && a.scope === 'global');
  const v6 = link.addresses.find((a) => a.family === 'inet6' && a.scope === 'global');
  return {
    name: link.name, mac: link.mac, mtu: link.mtu,
    ...(v4 ? { ipv4: { address: v4.local, prefix: v4.prefixlen } } : {}),
    ...(v6 ? { ipv6: { address: v6.local, prefix: v6.prefixlen } } : {}),
    gateway4: await defaultGateway4(netns),
  };
}

/**
 * Sets up the VMI's pod network interfaces inside the launcher pod's namespace. Returns undefined
 * when the pod has no network namespace of its own (the launcher then falls back to user-mode
 * networking).
 */
export async function setupPodNetwork(i: PodNetworkSetupInput): Promise<PodNetworkSetupResult | undefined> {
  const netns = await podNetns(i.podDir);
  if (!netns) return undefined;
  if (podNetworkInterfaces(i.vmi).length === 0) return { netns, caches: [], interfaces: new Map() };
  // A bridge binding done before moved eth0 away: the cache written then is the truth.
  if (await linkInfo(BRIDGED_POD_IFACE(POD_IFACE), netns)) {
    const file = join(i.privateDir, vifCacheFile(POD_IFACE));
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text) { const caches = [parseVifCache(text, file)]; return { netns, caches, interfaces: interfaceStatus(i.vmi, caches, undefined) }; }
  }
  const pod = await discover(netns);
  const plan = planPodNetwork(i.vmi, pod);
  for (const s of plan.steps) {
    if (s.unlessLink && (await linkInfo(s.unlessLink, netns))) continue;
    if (s.ifLink && !(await linkInfo(s.ifLink, netns))) continue;
    await run(s.cmd, s.args, { netns, ...(s.input !== undefined ? { input: s.input } : {}) });
  }
  await mkdir(i.privateDir, { recursive: true });
  for (const c of plan.caches) {
    const file = join(i.privateDir, c.file);
    await writeFile(`${file}.tmp`, `${JSON.stringify(c.cache, null, 2)}\n`);
    await rename(`${file}.tmp`, file);
  }
  i.log.info({ netns, pod: pod ? { ip: pod.ipv4?.address, mac: pod.mac, mtu: pod.mtu } : undefined, interfaces: plan.caches.map((c) => `${c.cache.iface}:${c.cache.binding}`), steps: plan.steps.length }, 'pod network set up');
  const caches = plan.caches.map((c) => c.cache);
  return { netns, caches, interfaces: interfaceStatus(i.vmi, caches, pod) };
}

/**
 * What an earlier setup left (a restarted node agent, or the target node after a migration):
 * the interfaces' bindings and pod addresses from the vif caches and the pod's interface, without
 * changing anything. Undefined when the pod has no network namespace of its own.
 */
export async function readPodNetworkStatus(vmi: VirtualMachineInstance, podDir: string, privateDir: string): Promise<ReadonlyMap<string, PodInterfaceStatus> | undefined> {
  const netns = await podNetns(podDir);
  if (!netns) return undefined;
  const caches: VifCache[] = [];
  const file = join(privateDir, vifCacheFile(POD_IFACE));
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text) caches.push(parseVifCache(text, file));
  const pod = await discover(netns).catch(() => undefined);
  return interfaceStatus(vmi, caches, pod);
}
