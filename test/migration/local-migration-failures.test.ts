// Migration failures through the whole stack in the local mode with two nodes (the launcher-level
// versions are in launcher-migration.test.ts): the target's QEMU killed mid-migration, and a guest
// dirtying memory faster than the bandwidth — pre-copy times out and aborts (auto-converge and
// post-copy off), or completes in post-copy when it is allowed. Each time the VMI stays healthy
// where it ends up and its counter keeps going.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { localNodeDirs } from '../../src/local/local-node.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import type { PartialClusterConfig } from '../../src/api/cluster-config.ts';
import { TickReader } from './lib.ts';
import { runningVmi, serialLog, waitUntil, withCluster, type Cluster } from './local-cluster.ts';

interface PodView { metadata?: { name?: string; uid?: string; labels?: Record<string, string> }; spec?: { nodeName?: string }; status?: { phase?: string } }

const migration = (name: string, vmiName: string): VirtualMachineInstanceMigration =>
  ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: 'default' }, spec: { vmiName } } as VirtualMachineInstanceMigration);

async function finalMigration(c: Cluster, name: string, timeoutMs: number): Promise<VirtualMachineInstanceMigration> {
  return waitUntil(`migration ${name} final`, async () => {
    const m = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', name);
    return m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed' ? m : undefined;
  }, timeoutMs);
}

/** Runs `body` with a migrating guest: `dirty` MiB of memory rewritten continuously (0: only the counter). */
async function withMigratingGuest(cfg: PartialClusterConfig, name: string, dirty: number, body: (x: { c: Cluster; vmi: VirtualMachineInstance; srcIdx: number; dstIdx: number; ticks: TickReader }) => Promise<void>): Promise<void> {
  await withCluster(cfg, async (c) => {
    const vmi = await runningVmi(c, name, `qvirt.tick=100${dirty ? ` qvirt.dirty=${dirty}` : ''}`);
    const srcIdx = c.local.nodeNames.indexOf(vmi.status!.nodeName!);
    const dstIdx = 1 - srcIdx;
    const uid = vmi.metadata!.uid!;
    const ticks = new TickReader([{ side: 'source', path: () => serialLog(c, srcIdx, uid) }, { side: 'target', path: () => serialLog(c, dstIdx, uid) }]);
    try {
      await ticks.waitFor('source', 5, 120_000);
      await body({ c, vmi, srcIdx, dstIdx, ticks });
    } finally {
      ticks.stop();
    }
  });
}

/** The VMI is Running on `node`, no longer migrating, and its counter advances there. */
async function healthyOn(x: { c: Cluster; ticks: TickReader }, name: string, node: string, side: 'source' | 'target'): Promise<VirtualMachineInstance> {
  const v = await waitUntil('VMI settled', async () => {
    const v = await x.c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name);
    return v.status?.migrationState?.completed || v.status?.migrationState?.failed ? v : undefined;
  }, 60_000);
  assert.is(v.status?.phase, 'Running');
  assert.is(v.status?.nodeName, node);
  const n = x.ticks.of(side).length;
  await x.ticks.waitFor(side, n + 10, 30_000);
  return v;
}

test('target QEMU killed mid-migration: migration Failed, the source keeps running, the VMI is unharmed', async () => {
  await withMigratingGuest({ migrations: { bandwidthPerMigration: '1Mi' } }, 'victim', 0, async (x) => {
    const { c } = x;
    await c.local.client.create(Resources.virtualMachineInstanceMigrations, migration('victim-mig', 'victim'));
    // The target launcher runs QEMU -incoming and memory is flowing: kill that QEMU.
    const m0 = await waitUntil('migration Running', async () => {
      const m = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'victim-mig');
      return m.status?.phase === 'Running' ? m : undefined;
    }, 180_000);
    const target = await waitUntil('target pod', async () => (await c.local.client.list<PodView>(Resources.pods, { namespace: 'default', labelSelector: `kubevirt.io/migrationJobUID=${m0.metadata!.uid}` })).items[0], 30_000);
    const dstNode = c.local.nodeNames[x.dstIdx]!;
    const { podsDir } = localNodeDirs(c.dataDir, x.dstIdx, dstNode);
    const state = JSON.parse(readFileSync(join(podsDir, target.metadata!.uid!, 'state.json'), 'utf8')) as { containers: Record<string, { pid?: number }> };
    const launcherPid = state.containers.compute!.pid!;
    const qemuPid = Number(execFileSync('pgrep', ['-P', String(launcherPid), 'qemu'], { encoding: 'utf8' }).trim().split('\n')[0]);
    assert.ok(qemuPid > 0);
    await new Promise((r) => setTimeout(r, 1500));
    process.kill(qemuPid, 'SIGKILL');
    const m = await finalMigration(c, 'victim-mig', 120_000);
    assert.is(m.status?.phase, 'Failed', JSON.stringify(m.status));
    const v = await healthyOn(x, 'victim', c.local.nodeNames[x.srcIdx]!, 'source');
    assert.is(v.status?.migrationState?.failed, true);
    // The source saw only its stream cut; the target's node agent adds its QEMU's end, first, on the
    // VMI and in the migration (what `kubectl get vmim -o yaml` shows), with a Warning event.
    const why = /^the target's QEMU was killed by SIGKILL \(the source: .+\)$/;
    const reason = await waitUntil('the target\'s reason in the migration\'s', async () => {
      const mm = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'victim-mig');
      const r = mm.status?.migrationState?.failureReason ?? '';
      return why.test(r) ? r : undefined;
    }, 30_000);
    assert.match((await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'victim')).status?.migrationState?.failureReason ?? '', why);
    const events = (await c.local.client.list<KubeObject & { reason?: string; type?: string; message?: string; involvedObject?: { name?: string } }>(Resources.events, { namespace: 'default' })).items;
    assert.ok(events.some((e) => e.involvedObject?.name === 'victim' && e.type === 'Warning' && e.reason === 'Migrated' && /failed on the target node .*reason:the target's QEMU was killed by SIGKILL/.test(e.message ?? '')), 'a Warning event names the target');
    console.log(`    target killed: migration Failed (${reason}); source still running`);
  });
});

test('pre-copy cannot converge (auto-converge and post-copy off): the migration times out and aborts, the source keeps running', async () => {
  // 8 MiB/s: too slow for the dirtied 96 MiB, live on KVM and as one copy of the stopped guest under TCG (launcher/migration/accelerator.ts).
  await withMigratingGuest({ migrations: { bandwidthPerMigration: '8Mi', completionTimeoutPerGiB: 8, allowAutoConverge: false, allowPostCopy: false } }, 'dirty', 96, async (x) => {
    const { c } = x;
    const t0 = Date.now();
    await c.local.client.create(Resources.virtualMachineInstanceMigrations, migration('dirty-mig', 'dirty'));
    const m = await finalMigration(c, 'dirty-mig', 240_000);
    assert.is(m.status?.phase, 'Failed', JSON.stringify(m.status));
    await healthyOn(x, 'dirty', c.local.nodeNames[x.srcIdx]!, 'source');
    // The failed target pod is cleaned up; only the source pod is left active.
    await waitUntil('target pod gone', async () => {
      const pods = (await c.local.client.list<PodView>(Resources.pods, { namespace: 'default', labelSelector: `kubevirt.io/migrationJobUID=${m.metadata!.uid}` })).items;
      return pods.every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') ? true : undefined;
    }, 60_000);
    // Read after the target's node agent cleaned up: the source ended it, so the target's complaint of its cut stream was not added.
    const reason = (await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'dirty')).status?.migrationState?.failureReason ?? '';
    assert.match(reason, /^Live migration is not completed after 8 sec and has been aborted$/);
    console.log(`    aborted after ${Date.now() - t0} ms: ${reason}`);
  });
});

test('the same guest with post-copy allowed: switches to post-copy and completes on the other node', async () => {
  await withMigratingGuest({ migrations: { bandwidthPerMigration: '16Mi', completionTimeoutPerGiB: 4, allowPostCopy: true } }, 'dirty-pc', 96, async (x) => {
    const { c } = x;
    await c.local.client.create(Resources.virtualMachineInstanceMigrations, migration('dirty-pc-mig', 'dirty-pc'));
    const m = await finalMigration(c, 'dirty-pc-mig', 240_000);
    assert.is(m.status?.phase, 'Succeeded', JSON.stringify(m.status));
    const v = await healthyOn(x, 'dirty-pc', c.local.nodeNames[x.dstIdx]!, 'target');
    assert.is(v.status?.migrationState?.mode, 'PostCopy');
    const last = x.ticks.of('source').at(-1)!;
    const first = x.ticks.of('target')[0]!;
    assert.ok(first.n > last.n - 1 && first.n <= last.n + 1, `target continues the counter (source last ${last.n}, target first ${first.n})`);
    assert.not.ok(readFileSync(serialLog(c, x.dstIdx, v.metadata!.uid!), 'utf8').includes('QVIRT-GUEST-BOOTED'), 'the guest did not boot again');
  });
});

test.run();
