// Live migration through the whole stack in the local mode with two nodes: a VirtualMachineInstanceMigration
// moves a running test guest from one node's launcher pod to the other's — migration controller
// (target pod, hand-off), both node agents (target prepare + TLS listener, source proxy + migrate),
// both launchers (QEMU -incoming / migrate). The guest prints a counter every 100 ms.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { virtctl } from '../lib/virtctl.ts';
import { promisify } from 'node:util';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { MIGRATION_PROGRESS_ANNOTATION, parseMigrationProgress } from '../../src/api/migration.ts';
import { TickReader } from './lib.ts';
import { repo, serialLog, vmiManifest, waitUntil, withCluster } from './local-cluster.ts';

function migration(name: string, vmiName: string): VirtualMachineInstanceMigration {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: 'default' }, spec: { vmiName } } as VirtualMachineInstanceMigration;
}

test('VMIM moves a running guest to the other node: no reboot, counter continues, node changes, source launcher exits, Succeeded; the MigrationPolicy matching it shapes the migration', async () => {
  await withCluster({}, async (c) => {
    // Two policies match the VMI (by its label and its namespace's); the one naming more labels wins
    // and overrides the cluster's configuration for this migration. A third, naming a label the VMI lacks, does not.
    const policy = (name: string, selectors: Record<string, Record<string, string>>, spec: Record<string, unknown>) => c.local.client.create(Resources.migrationPolicies, {
      apiVersion: 'migrations.kubevirt.io/v1alpha1', kind: 'MigrationPolicy', metadata: { name }, spec: { selectors, ...spec },
    });
    await policy('a-broad', { namespaceSelector: { 'kubernetes.io/metadata.name': 'default' } }, { allowAutoConverge: false });
    await policy('b-gold', { namespaceSelector: { 'kubernetes.io/metadata.name': 'default' }, virtualMachineInstanceSelector: { 'qvirt.io/tier': 'gold' } }, { allowAutoConverge: true, bandwidthPerMigration: '1Gi', completionTimeoutPerGiB: 400 });
    await policy('c-other', { virtualMachineInstanceSelector: { 'qvirt.io/tier': 'gold', 'qvirt.io/zone': 'far' } }, { bandwidthPerMigration: '1Mi' });
    const refused = await c.local.client.create(Resources.migrationPolicies, {
      apiVersion: 'migrations.kubevirt.io/v1alpha1', kind: 'MigrationPolicy', metadata: { name: 'bad' }, spec: { selectors: {}, completionTimeoutPerGiB: -1 },
    }).then(() => '', (e: Error) => e.message);
    assert.match(refused, /migration-policy-validator\.kubevirt\.io.*spec\.completionTimeoutPerGiB: must not be negative/);
    const manifest = vmiManifest('mover', 'qvirt.tick=100');
    manifest.metadata!.labels = { 'qvirt.io/tier': 'gold' };
    await c.local.client.create(Resources.virtualMachineInstances, manifest);
    const vmi = await waitUntil('VMI Running', async () => {
      const v = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'mover');
      return v.status?.phase === 'Running' ? v : undefined;
    }, 180_000);
    const uid = vmi.metadata!.uid!;
    const from = vmi.status!.nodeName!;
    const srcIdx = c.local.nodeNames.indexOf(from);
    const dstIdx = 1 - srcIdx;
    const ticks = new TickReader([{ side: 'source', path: () => serialLog(c, srcIdx, uid) }, { side: 'target', path: () => serialLog(c, dstIdx, uid) }]);
    try {
      await ticks.waitFor('source', 5, 120_000);
      const srcPod = Object.keys(vmi.status!.activePods ?? {})[0]!;
      const t0 = Date.now();
      await c.local.client.create(Resources.virtualMachineInstanceMigrations, migration('mover-mig', 'mover'));
      const done = await waitUntil('migration final', async () => {
        const m = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'mover-mig');
        return m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed' ? m : undefined;
      }, 240_000);
      const took = Date.now() - t0;
      assert.is(done.status?.phase, 'Succeeded', JSON.stringify(done.status));
      const after = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'mover');
      const ms = after.status!.migrationState!;
      assert.is(after.status!.nodeName, c.local.nodeNames[dstIdx]);
      assert.is(after.metadata!.labels!['kubevirt.io/nodeName'], c.local.nodeNames[dstIdx]);
      assert.is(after.status!.phase, 'Running');
      assert.equal([ms.completed, ms.failed ?? false, ms.sourceNode, ms.targetNode, ms.targetNodeAddress], [true, false, from, c.local.nodeNames[dstIdx], `127.0.0.${dstIdx + 1}`]);
      assert.ok(ms.startTimestamp && ms.endTimestamp && ms.targetNodeDomainReadyTimestamp && ms.targetNodeDomainDetected);
      assert.is(ms.migrationPolicyName, 'b-gold');
      assert.equal([ms.migrationConfiguration?.allowAutoConverge, ms.migrationConfiguration?.bandwidthPerMigration, ms.migrationConfiguration?.completionTimeoutPerGiB], [true, '1Gi', 400]);
      assert.is(ms.migrationConfiguration?.progressTimeout, 150, 'what the policy leaves unset is the cluster\'s');
      // The migration controller copies the VMI's migrationState into a finished VMIM's status on its next
      // pass, after the one that made it Succeeded (as KubeVirt's does): the phase may be seen first.
      const named = await waitUntil('the VMIM status names the policy', async () => {
        const m = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'mover-mig');
        return m.status?.migrationState?.migrationPolicyName ? m : undefined;
      }, 30_000);
      assert.is(named.status?.migrationState?.migrationPolicyName, 'b-gold', 'the VMIM status names it too');
      // The source launcher exits (its QEMU ended with the migration): the pod's compute container terminates.
      const computeEnd = await waitUntil('source launcher exit', async () => {
        const pods = await c.local.client.list<{ metadata?: { uid?: string }; status?: { phase?: string; containerStatuses?: { name: string; state?: { terminated?: { exitCode: number } } }[] } }>(Resources.pods, { namespace: 'default' });
        const p = pods.items.find((x) => x.metadata?.uid === srcPod);
        if (!p) return 'pod gone';
        const t = p.status?.containerStatuses?.find((cs) => cs.name === 'compute')?.state?.terminated;
        return t ? `compute exited ${t.exitCode}, pod ${p.status?.phase}` : undefined;
      }, 90_000);
      assert.match(computeEnd, /pod gone|compute exited 0/);
      // The guest: no reboot, counter continues.
      const srcTicks = ticks.of('source');
      const dstTicks = await ticks.waitFor('target', 10, 60_000);
      const last = srcTicks.at(-1)!;
      const first = dstTicks[0]!;
      assert.is(first.n, last.n + 1, `target's first tick ${first.n} follows the source's last ${last.n}`);
      assert.ok(first.uptime > last.uptime);
      assert.not.ok(readFileSync(serialLog(c, dstIdx, uid), 'utf8').includes('QVIRT-GUEST-BOOTED'), 'the guest did not boot again');
      for (let i = 1; i < dstTicks.length; i++) assert.is(dstTicks[i]!.n, dstTicks[i - 1]!.n + 1);
      console.log(`    VMIM created → Succeeded in ${took} ms; host-observed tick gap ${first.at - last.at} ms`);
    } finally {
      ticks.stop();
    }
  });
});


test('qvirt migrate-cancel aborts a slow migration (source keeps running, abortStatus Succeeded); qvirt migrate --watch shows progress to the end', async () => {
  // 8 MiB/s: ~105 MiB of guest RAM take long enough to watch and to cancel.
  await withCluster({ migrations: { bandwidthPerMigration: '8Mi' } }, async (c) => {
    // Asynchronously: the API server the CLI talks to runs in this process.
    const qvirt = async (...args: string[]) => (await promisify(execFile)(join(repo, 'bin/qvirt'), [...args, '--kubeconfig', c.local.kubeconfig], { encoding: 'utf8', timeout: 240_000 })).stdout;
    await c.local.client.create(Resources.virtualMachines, {
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'roamer', namespace: 'default' },
      spec: { runStrategy: 'Always', template: { metadata: { labels: { 'kubevirt.io/vm': 'roamer' } }, spec: vmiManifest('roamer', 'qvirt.tick=100').spec } },
    });
    const vmi = await waitUntil('VMI Running', async () => {
      const v = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'roamer');
      return v.status?.phase === 'Running' ? v : undefined;
    }, 180_000);
    const uid = vmi.metadata!.uid!;
    const from = vmi.status!.nodeName!;
    const srcIdx = c.local.nodeNames.indexOf(from);
    const ticks = new TickReader([{ side: 'source', path: () => serialLog(c, srcIdx, uid) }]);
    try {
      await ticks.waitFor('source', 3, 120_000);
      assert.match(await qvirt('migrate', 'roamer'), /VM roamer was scheduled to migrate \(kubevirt-migrate-vm-\w+\)/);
      // Progress appears on the VMI while the guest's memory is sent.
      const progress = await waitUntil('migration progress', async () => {
        const v = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'roamer');
        const p = parseMigrationProgress(v.metadata?.annotations?.[MIGRATION_PROGRESS_ANNOTATION]);
        return p && p.transferred > 0 ? p : undefined;
      }, 120_000);
      assert.ok(progress.total >= 256 * 2 ** 20, `total ${progress.total}`);
      assert.match(await qvirt('migrate-cancel', 'roamer'), /VM roamer was scheduled to migrate-cancel/);
      const aborted = await waitUntil('abort recorded on the VMI', async () => {
        const v = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'roamer');
        return v.status?.migrationState?.failed ? v : undefined;
      }, 60_000);
      const ms = aborted.status!.migrationState!;
      assert.equal([ms.abortStatus, ms.failureReason], ['Succeeded', 'Live migration has been aborted']);
      assert.is(aborted.status!.nodeName, from, 'the VMI stays on its node');
      assert.is(aborted.status!.phase, 'Running');
      const n = ticks.of('source').length;
      await ticks.waitFor('source', n + 10, 30_000);
      const err = await qvirt('migrate-cancel', 'roamer').then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
      assert.match(err, /Found no migration to cancel for roamer/);
      // Again, watched to the end this time.
      const out = await qvirt('migrate', 'roamer', '--watch');
      const lines = out.trim().split('\n');
      assert.match(lines.at(-1)!, new RegExp(`VMI roamer migrated to node ${c.local.nodeNames[1 - srcIdx]}`));
      const bars = lines.filter((l) => /^Running\s+\[[#.]+\]\s+\d+%\s+sent [\d.]+ MiB, remaining [\d.]+ MiB, dirty rate [\d.]+ MiB\/s/.test(l));
      assert.ok(bars.length >= 2, `progress lines while running:\n${out}`);
      console.log(`    qvirt migrate --watch:\n${lines.slice(-4).map((l) => `      ${l}`).join('\n')}`);
      // And back with KubeVirt's own virtctl, through virt-api's migrate route.
      const back = await virtctl(c.local.kubeconfig, ['migrate', 'roamer']);
      assert.is(back.out, 'VM roamer was scheduled to migrate\n', back.err);
      const home = await waitUntil('the VMI back on its first node (virtctl migrate)', async () => {
        const v = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'roamer');
        return v.status?.nodeName === from && v.status.migrationState?.completed ? v : undefined;
      }, 180_000);
      assert.is(home.metadata?.uid, uid, 'the same VMI, migrated, not restarted');
    } finally {
      ticks.stop();
    }
  });
});

test.run();
