// Node drain through the whole stack in the local mode with two nodes: `kubectl drain` evicts the
// launcher pod of a VMI with evictionStrategy LiveMigrate; the eviction interceptor marks the VMI
// (status.evacuationNodeName) and answers 429; the evacuation controller creates a
// kubevirt-evacuation-* migration; the guest moves to the other node without a reboot; the source
// launcher exits, its pod completes, and kubectl's retried eviction then removes it — drain done.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localNodeDirs } from '../../src/local/local-node.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { TickReader } from './lib.ts';
import { serialLog, vmiManifest, waitUntil, withCluster } from './local-cluster.ts';
import { tempDir } from '../lib/tmp.ts';

interface PodView { metadata?: { name?: string; uid?: string }; spec?: { nodeName?: string }; status?: { phase?: string; containerStatuses?: { name: string; state?: { terminated?: { exitCode: number; reason?: string } } }[] } }

test('kubectl drain moves a LiveMigrate VM to the other node (no reboot) and completes once the source pod is gone', async () => {
  await withCluster({}, async (c) => {
    const client = c.local.client;
    const manifest = vmiManifest('evacuee', 'qvirt.tick=100');
    await client.create(Resources.virtualMachineInstances, { ...manifest, spec: { ...manifest.spec, evictionStrategy: 'LiveMigrate' } });
    const vmi = await waitUntil('VMI Running and LiveMigratable', async () => {
      const v = await client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'evacuee');
      return v.status?.phase === 'Running' && v.status.conditions?.some((x) => x.type === 'LiveMigratable' && x.status === 'True') ? v : undefined;
    }, 180_000);
    const uid = vmi.metadata!.uid!;
    const from = vmi.status!.nodeName!;
    const srcIdx = c.local.nodeNames.indexOf(from);
    const dstIdx = 1 - srcIdx;
    const srcPod = Object.keys(vmi.status!.activePods ?? {})[0]!;
    const ticks = new TickReader([{ side: 'source', path: () => serialLog(c, srcIdx, uid) }, { side: 'target', path: () => serialLog(c, dstIdx, uid) }]);
    const home = tempDir('qdrh');
    try {
      await ticks.waitFor('source', 5, 120_000);
      const t0 = Date.now();
      // Asynchronously: the API server kubectl talks to runs in this process.
      const drain = await promisify(execFile)('kubectl', ['drain', from, '--delete-emptydir-data', '--ignore-daemonsets', '--timeout=300s'],
        { env: { KUBECONFIG: c.local.kubeconfig, HOME: home.path, PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 330_000 })
        .then((r) => ({ ok: true, out: r.stdout + r.stderr }), (e: { stdout?: string; stderr?: string; message: string }) => ({ ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` }));
      const took = Date.now() - t0;
      assert.ok(drain.ok, drain.out);
      assert.match(drain.out, `node/${from} cordoned`);
      assert.match(drain.out, /admission webhook "virt-launcher-eviction-interceptor.kubevirt.io" denied the request: (Evacuation in progress: )?Eviction triggered evacuation of VMI "default\/evacuee"/);
      assert.match(drain.out, `node/${from} drained`);

      // The VM is on the other node, still running, moved by an evacuation migration.
      const after = await client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'evacuee');
      assert.is(after.status?.nodeName, c.local.nodeNames[dstIdx]);
      assert.is(after.status?.phase, 'Running');
      assert.is(after.status?.evacuationNodeName, undefined, 'the evacuation mark is cleared once migrated');
      const migrations = (await client.list<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { namespace: 'default' })).items;
      assert.is(migrations.length, 1, JSON.stringify(migrations.map((m) => m.metadata?.name)));
      const m = migrations[0]!;
      assert.match(m.metadata!.name!, /^kubevirt-evacuation-[a-z0-9]{5}$/);
      assert.is(m.metadata?.annotations?.['kubevirt.io/evacuationMigration'], from);
      assert.is(m.spec.priority, 'system-critical');
      assert.is(m.status?.phase, 'Succeeded');
      // kubectl waited until the source pod was gone; the target pod runs on the other node.
      const pods = (await client.list<PodView>(Resources.pods, { namespace: 'default' })).items;
      assert.not.ok(pods.some((p) => p.metadata?.uid === srcPod), 'the source pod is gone');
      assert.ok(pods.some((p) => p.spec?.nodeName === c.local.nodeNames[dstIdx] && p.status?.phase === 'Running'));
      const node = await client.get<{ metadata?: object; spec?: { unschedulable?: boolean } }>(Resources.nodes, undefined, from);
      assert.is(node.spec?.unschedulable, true);

      // The guest: no reboot, the counter continues.
      const last = ticks.of('source').at(-1)!;
      const dstTicks = await ticks.waitFor('target', 5, 60_000);
      assert.is(dstTicks[0]!.n, last.n + 1, `target's first tick ${dstTicks[0]!.n} follows the source's last ${last.n}`);
      assert.not.ok(readFileSync(serialLog(c, dstIdx, uid), 'utf8').includes('QVIRT-GUEST-BOOTED'), 'the guest did not boot again');
      console.log(`    kubectl drain → drained in ${took} ms`);
    } finally {
      ticks.stop();
      home.cleanup();
    }
  });
});

test('after a migration the source launcher pod completes (all containers exited 0, phase Succeeded), as in KubeVirt', async () => {
  await withCluster({}, async (c) => {
    const client = c.local.client;
    await client.create(Resources.virtualMachineInstances, vmiManifest('done-src', 'qvirt.tick=100'));
    const vmi = await waitUntil('VMI Running', async () => {
      const v = await client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'done-src');
      return v.status?.phase === 'Running' ? v : undefined;
    }, 180_000);
    const srcPod = Object.keys(vmi.status!.activePods ?? {})[0]!;
    await client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'done-src-mig', namespace: 'default' }, spec: { vmiName: 'done-src' } } as VirtualMachineInstanceMigration);
    const pod = await waitUntil('source pod Succeeded', async () => {
      const p = (await client.list<PodView>(Resources.pods, { namespace: 'default' })).items.find((x) => x.metadata?.uid === srcPod);
      return p?.status?.phase === 'Succeeded' ? p : undefined;
    }, 240_000);
    const states = (pod.status?.containerStatuses ?? []).map((s) => [s.name, s.state?.terminated?.exitCode, s.state?.terminated?.reason]);
    assert.ok(states.length >= 2, JSON.stringify(states));
    for (const s of states) assert.equal(s.slice(1), [0, 'Completed'], JSON.stringify(states));
    const m = await client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'done-src-mig');
    assert.is(m.status?.phase, 'Succeeded');
    // The node agent deleted the migrated-away domain, so the launcher did not wait out its final-notify timeout.
    const srcIdx = c.local.nodeNames.indexOf(vmi.status!.nodeName!);
    const { podsDir } = localNodeDirs(c.dataDir, srcIdx, c.local.nodeNames[srcIdx]!);
    const launcherLog = readFileSync(join(podsDir, srcPod, 'logs', 'compute', '0.stdout'), 'utf8');
    assert.match(launcherLog, /launcher finished/);
    assert.not.match(launcherLog, /no final deletion notification/);
  });
});

test.run();
