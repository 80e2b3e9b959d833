// The local mode in a process of its own, as `qvirt local up` runs it (src/cli/local.ts: the API
// server, the controllers, the node agents and the pod runners in one process; SIGTERM or SIGINT
// drains and stops), so a test can kill it with SIGKILL and start another on the same data dir.
// Unlike the CLI it takes the pod network's bridge and subnet, so it does not collide with another
// local mode on this machine (the CLI's is qvirt0, 10.244.0.0/24).
//
//   node local-up-process.ts '{"dataDir":..., "imageStore":..., "port":N, "nodes":N, "bridge":..., "subnet":...}'
//
// Prints one JSON line {"ready":true,"kubeconfig":...,"url":...,"nodeNames":[...]} once it serves,
// "stopped" after a drain.
import { join } from 'node:path';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode } from '../../src/local/up.ts';
import { componentLogger } from '../../src/log/logger.ts';

interface Args { dataDir: string; imageStore: string; port: number; nodes?: number; bridge?: string; subnet?: string; clusterConfig?: Record<string, unknown> }

const a = JSON.parse(process.argv[2] ?? '{}') as Args;
if (!a.dataDir || !a.imageStore) throw new Error('usage: local-up-process.ts \'{"dataDir":..., "imageStore":..., "port":N}\'');
const log = componentLogger('local', { level: (process.env.QVIRT_TEST_LOG ?? 'error') as 'error' });
const local = await startLocalMode({
  dataDir: a.dataDir, port: a.port, nodes: a.nodes ?? 1, emulation: 'auto', imageStore: new ImageStore(a.imageStore), log,
  ...(a.clusterConfig ? { clusterConfig: a.clusterConfig } : {}),
  ...(a.bridge ? { podNetwork: { bridge: a.bridge, subnet: a.subnet ?? '10.244.0.0/24', subnet6: false as const, stateDir: join(a.dataDir, 'cni') } } : {}),
});
process.stdout.write(`${JSON.stringify({ ready: true, kubeconfig: local.kubeconfig, url: local.url, nodeNames: local.nodeNames })}\n`);
await new Promise<void>((resolve) => {
  const on = () => { process.off('SIGINT', on); process.off('SIGTERM', on); resolve(); };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
});
await local.stop();
process.stdout.write('stopped\n');
process.exit(0);
