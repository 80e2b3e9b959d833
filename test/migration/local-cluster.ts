// The local mode with two nodes for whole-stack migration tests: a cluster around a test body
// (every QEMU checked gone after), the test guest as a VMI, the serial log of its launcher pod on
// either node, and polling.
import * as assert from 'uvu/assert';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { importTestGuest, TEST_GUEST_IMAGE } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { localNodeDirs } from '../../src/local/local-node.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { PartialClusterConfig } from '../../src/api/cluster-config.ts';
import { tempDir } from '../lib/tmp.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const repo = new URL('../../', import.meta.url).pathname;

export function vmiManifest(name: string, kernelArgs: string): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default' },
    spec: {
      terminationGracePeriodSeconds: 5,
      domain: {
        firmware: { kernelBoot: { kernelArgs: `console=ttyS0 quiet cryptomgr.notests ${kernelArgs}`, container: { image: TEST_GUEST_IMAGE, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
        // masquerade: KubeVirt migrates a VMI on the pod network only with masquerade, passt or a migratable plugin.
        devices: { interfaces: [{ name: 'default', masquerade: {} }] },
        resources: { requests: { memory: '256Mi' } },
      },
      networks: [{ name: 'default', pod: {} }],
    },
  } as VirtualMachineInstance;
}

export interface Cluster { local: LocalMode; dataDir: string; cleanup(): Promise<void> }

export async function withCluster(cfg: PartialClusterConfig, fn: (c: Cluster) => Promise<void>): Promise<void> {
  const t = tempDir('qmig');
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const dataDir = join(t.path, 'data');
  const local = await startLocalMode({ dataDir, port: 0, nodes: 2, emulation: true, imageStore: store, clusterConfig: cfg, log: componentLogger('test', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' }) });
  let stopped = false;
  const c: Cluster = { local, dataDir, cleanup: async () => { if (!stopped) { stopped = true; await local.stop(); } } };
  try {
    await fn(c);
  } finally {
    await c.cleanup();
    let left = '';
    try { left = execFileSync('pgrep', ['-af', `qemu.*${t.path}`], { encoding: 'utf8' }); } catch { /* none */ }
    t.cleanup();
    assert.is(left.trim(), '', 'no QEMU left');
  }
}

/** The serial log of the VMI's launcher pod on node `i`, if that pod exists. */
export function serialLog(c: Cluster, i: number, vmiUid: string): string {
  const name = c.local.nodeNames[i]!;
  const { podsDir } = localNodeDirs(c.dataDir, i, name);
  if (!existsSync(podsDir)) return '';
  for (const pod of readdirSync(podsDir)) {
    const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', vmiUid, 'virt-serial0-log');
    if (existsSync(f)) return f;
  }
  return '';
}

export async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

export async function runningVmi(c: Cluster, name: string, kernelArgs: string, annotations?: Record<string, string>): Promise<VirtualMachineInstance> {
  const manifest = vmiManifest(name, kernelArgs);
  if (annotations) manifest.metadata = { ...manifest.metadata, annotations };
  await c.local.client.create(Resources.virtualMachineInstances, manifest);
  return waitUntil('VMI Running', async () => {
    const v = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name);
    return v.status?.phase === 'Running' ? v : undefined;
  }, 180_000);
}
