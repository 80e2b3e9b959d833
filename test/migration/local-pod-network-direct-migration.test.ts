// The direct transport on the local mode's pod network (two nodes, root): each launcher pod has its
// own network namespace and IP, so the target QEMU listens on the target pod's IP at KubeVirt's
// port 49152 and the source QEMU, in the source pod's namespace, connects there through the bridge
// with QEMU's TLS — the migration's address is the pod's, not the node's; no relay runs; the guest
// arrives without a reboot; the bridge and its nft table go with the local mode.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { DIRECT_MIGRATION_PORT, TARGET_QEMU_MIGRATION_PORT } from '../../src/api/migration.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { readFileSync } from 'node:fs';
import { serialLog, sleep, vmiManifest, waitUntil, type Cluster } from './local-cluster.ts';

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });

test('direct on the pod network: the target QEMU listens on the target pod\'s IP:49152, the guest arrives without a reboot', async () => {
  const t = tempDir('qmpd');
  const bridge = `qvd${process.pid % 10000}`;
  const octet = 100 + ((process.pid + 53) % 100);
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const local = await startLocalMode({
    dataDir: join(t.path, 'data'), port: 0, nodes: 2, emulation: true, imageStore: store,
    podNetwork: { bridge, subnet: `10.248.${octet}.0/24`, subnet6: false, stateDir: join(t.path, 'cni') },
    log: componentLogger('test', { level: (process.env.QVIRT_TEST_LOG ?? 'error') as 'error' }),
  });
  try {
    const c = local.client;
    const created = await c.create<VirtualMachineInstance>(Resources.virtualMachineInstances, vmiManifest('podnet', 'qvirt.tick=100'));
    const cluster: Cluster = { local, dataDir: join(t.path, 'data'), cleanup: async () => {} };
    const read = (f: string) => { try { return f ? readFileSync(f, 'utf8') : ''; } catch { return ''; } };
    const serial = () => [0, 1].map((i) => read(serialLog(cluster, i, created.metadata!.uid!))).join('');
    await waitUntil('guest ticking', async () => (serial().match(/QVIRT-TICK/g)?.length ?? 0) >= 3 || undefined, 180_000);
    const before = await c.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'podnet');
    await c.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'podnet-mig', namespace: 'default' }, spec: { vmiName: 'podnet' } });
    const phase = await waitUntil('migration over', async () => {
      const p = (await c.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'podnet-mig')).status?.phase;
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    }, 240_000);
    assert.is(phase, 'Succeeded');
    const after = await c.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'podnet');
    const ms = after.status!.migrationState!;
    const targetPod = await c.get<{ metadata?: { name?: string }; status?: { podIP?: string; hostIP?: string } }>(Resources.pods, 'default', ms.targetPod!);
    assert.ok(targetPod.status?.podIP?.startsWith(`10.248.${octet}.`), `the target pod has a pod-network IP (${targetPod.status?.podIP})`);
    assert.is(ms.targetNodeAddress, targetPod.status!.podIP, 'the migration went to the target pod\'s own address');
    assert.equal(ms.targetDirectMigrationNodePorts, { [String(DIRECT_MIGRATION_PORT)]: TARGET_QEMU_MIGRATION_PORT });
    assert.is.not(after.status!.nodeName, before.status!.nodeName);
    await sleep(1000);
    const ticks = [...serial().matchAll(/QVIRT-TICK n=(\d+)/g)].map((m) => Number(m[1]));
    assert.is(serial().match(/QVIRT-GUEST-BOOTED/g)?.length, 1, 'no reboot');
    assert.ok(Math.max(...ticks) > 3, 'the counter went on');
  } finally {
    await local.stop();
    let left = '';
    try { left = execFileSync('pgrep', ['-af', `qemu.*${t.path}`], { encoding: 'utf8' }); } catch { /* none */ }
    t.cleanup();
    assert.is(left.trim(), '', 'no QEMU left');
    assert.not.match(sh('ip', ['-o', 'link']), new RegExp(`\\b${bridge}\\b`));
    assert.not.match(sh('nft', ['list', 'tables']), new RegExp(`qvirt-${bridge}\\b`));
  }
});

test.run();
