// Persistence: a server restarted on the same data directory has every object (including custom
// resources of stored CRDs) and continues resourceVersions where it stopped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type V1Pod } from '@kubernetes/client-node';
import { apiError, createCrd, pod, startTestServer } from './lib.ts';
import { tempDir } from '../lib/tmp.ts';
import { GROUP, gadget, gadgetCrd } from './fixtures.ts';

test('restart on the same data directory loses nothing and resourceVersion continues', async () => {
  const dir = tempDir('qapi');
  try {
    const a = await startTestServer({ dataDir: dir.path });
    let podUid: string;
    let lastRv: number;
    try {
      await a.core.createNamespace({ body: { metadata: { name: 'keep' } } });
      podUid = (await a.core.createNamespacedPod({ namespace: 'keep', body: pod('p', { labels: { a: 'b' } }) as V1Pod })).metadata!.uid!;
      await a.core.createNamespacedConfigMap({ namespace: 'keep', body: { metadata: { name: 'gone' } } });
      await a.core.deleteNamespacedConfigMap({ name: 'gone', namespace: 'keep' });
      assert.is((await createCrd(a.api.url, gadgetCrd())).status, 201);
      await a.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'keep', plural: 'gadgets', body: gadget('g', { mode: 'Always', replicas: 1 }) });
      lastRv = a.api.resourceVersion();
    } finally {
      await a.close();
    }
    const b = await startTestServer({ dataDir: dir.path });
    try {
      assert.is(b.api.resourceVersion(), lastRv, 'resourceVersion restored');
      const p = await b.core.readNamespacedPod({ name: 'p', namespace: 'keep' });
      assert.is(p.metadata!.uid, podUid);
      assert.is(p.metadata!.labels!.a, 'b');
      assert.is((await apiError(() => b.core.readNamespacedConfigMap({ name: 'gone', namespace: 'keep' }))).code, 404);
      const g = (await b.custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'keep', plural: 'gadgets', name: 'g' })) as { spec: { replicas: number } };
      assert.is(g.spec.replicas, 1, 'custom resources of stored CRDs are served again');
      // Validation from the stored CRD applies after the restart.
      const bad = await apiError(() => b.custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'keep', plural: 'gadgets', body: gadget('bad', { mode: 'Never' }) }));
      assert.is(bad.code, 422);
      const next = await b.core.createNamespacedConfigMap({ namespace: 'keep', body: { metadata: { name: 'after' } } });
      assert.is(Number(next.metadata!.resourceVersion), lastRv + 1);
      // A watch from before the restart cannot be resumed: the event history is gone.
      const r = await fetch(`${b.api.url}/api/v1/pods?watch=1&resourceVersion=${lastRv - 2}&timeoutSeconds=1`);
      const first = JSON.parse((await r.text()).split('\n')[0]!) as { type: string; object: { code: number } };
      assert.equal([first.type, first.object.code], ['ERROR', 410]);
      // ... but one from the current resourceVersion can.
      const ok = await fetch(`${b.api.url}/api/v1/pods?watch=1&resourceVersion=${b.api.resourceVersion()}&timeoutSeconds=1`);
      assert.is((await ok.text()).trim(), '');
    } finally {
      await b.close();
    }
  } finally {
    dir.cleanup();
  }
});

test.run();
