// Write throughput through the real client-node, on a persistent (SQLite) store with an informer
// watching: the later benchmark creates 1 000 VMs + 1 000 VMIs + 1 000 pods in ≤ 20 s. Prints
// creates/s; fails if the server is far too slow for that budget.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeInformer, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { createCrd, eventually, pod, startTestServer } from './lib.ts';
import { tempDir } from '../lib/tmp.ts';
import { GROUP, gadget, gadgetCrd } from './fixtures.ts';

test('3 000 creates (1 000 custom resources, 1 000 status patches, 1 000 pods) with watchers attached', async () => {
  const dir = tempDir('qapi');
  const s = await startTestServer({ dataDir: dir.path });
  try {
    assert.is((await createCrd(s.api.url, gadgetCrd())).status, 201);
    const podInformer = makeInformer(s.kc, '/api/v1/pods', () => s.core.listPodForAllNamespaces());
    const gadgetInformer = makeInformer(s.kc, `/apis/${GROUP}/v1/gadgets`, () => s.custom.listClusterCustomObject({ group: GROUP, version: 'v1', plural: 'gadgets' }) as never);
    await podInformer.start();
    await gadgetInformer.start();
    const N = 1000;
    const concurrency = 16;
    const run = async (label: string, one: (i: number) => Promise<unknown>) => {
      const t0 = performance.now();
      let next = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < N) await one(next++);
      }));
      const ms = performance.now() - t0;
      console.log(`  ${label}: ${N} in ${ms.toFixed(0)} ms = ${((N / ms) * 1000).toFixed(0)}/s`);
      return ms;
    };
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await run('custom resource creates', (i) => s.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', body: gadget(`vm-${i}`, { mode: 'Always', replicas: 1, ports: [{ port: 80, primary: true }], template: { spec: { domain: { devices: { disks: [{ name: 'root' }] } } } } }) }));
    await run('status patches', (i) => s.custom.patchNamespacedCustomObjectStatus({ group: GROUP, version: 'v1', namespace: 'default', plural: 'gadgets', name: `vm-${i}`, body: { status: { printableStatus: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    await run('pod creates', (i) => s.core.createNamespacedPod({ namespace: 'default', body: pod(`virt-launcher-vm-${i}`, { labels: { 'kubevirt.io/created-by': String(i) } }) as V1Pod }));
    const total = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    console.log(`  total: ${3 * N} writes in ${total.toFixed(0)} ms = ${((3 * N / total) * 1000).toFixed(0)} writes/s; ` +
      `CPU (client-node and server together, one process): ${((cpu.user + cpu.system) / 1000 / (3 * N)).toFixed(2)} ms per write; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`);
    await eventually(() => podInformer.list().length === N && gadgetInformer.list().length === N, 10_000, 'informers caught up');
    // The budget is 20 s on an idle machine; this bound only catches pathological slowness on a busy one.
    assert.ok(total < 60_000, `3 000 writes took ${total.toFixed(0)} ms`);
    await podInformer.stop();
    await gadgetInformer.stop();
  } finally {
    await s.close();
    dir.cleanup();
  }
});

test.run();
