// src/kube's KubeClient.watch against the embedded API server, the way the informers use it:
// events stream per line, abort ends it once and destroys the connection, a version too old for
// the server's (small) history is a 410 the informer relists on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { KubeApiError, type KubeObject, type WatchEvent } from '../../src/kube/client.ts';
import { Informer } from '../../src/kube/informer.ts';
import { eventually, startCluster } from './lib.ts';

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });

test('events arrive, abort ends the watch once and leaves no open connection', async () => {
  const cluster = await startCluster();
  const client = cluster.newClient();
  try {
    const list = await client.list(Resources.configMaps, { namespace: 'default' });
    const events: WatchEvent<KubeObject>[] = [];
    let doneCalls = 0;
    const abort = await client.watch<KubeObject>(Resources.configMaps, { namespace: 'default', resourceVersion: list.metadata.resourceVersion }, (e) => events.push(e), () => { doneCalls++; });
    await cluster.client.create(Resources.configMaps, cm('a'));
    await eventually(() => events.some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'a'), 3000, 'ADDED a');
    abort.abort();
    abort.abort();
    await client.close();
    await new Promise((r) => setTimeout(r, 100));
    assert.is(doneCalls, 1);
    await cluster.client.create(Resources.configMaps, cm('b'));
    await new Promise((r) => setTimeout(r, 200));
    assert.not.ok(events.some((e) => e.object.metadata?.name === 'b'), 'no events after abort');
  } finally {
    await cluster.close();
  }
});

test('a resourceVersion older than the server history: 410 to the caller, a relist in the informer', async () => {
  const cluster = await startCluster({ historySize: 5 });
  const client = cluster.newClient();
  const informer = new Informer<KubeObject>(client, Resources.configMaps, { namespace: 'default', retryBaseMs: 20 });
  try {
    const rv = (await client.list(Resources.configMaps, { namespace: 'default' })).metadata.resourceVersion;
    for (let i = 0; i < 20; i++) await cluster.client.create(Resources.configMaps, cm(`c${i}`));
    const errorEvents: unknown[] = [];
    const err = await new Promise<unknown>((resolve) => {
      void client.watch<KubeObject>(Resources.configMaps, { namespace: 'default', resourceVersion: rv }, (e) => { if (e.type === 'ERROR') errorEvents.push(e.object); }, resolve);
    });
    // kube-apiserver answers 200 and an ERROR event (Status code 410) for an expired version; a 410 answer is the other form.
    const gone = (err instanceof KubeApiError && err.code === 410) || errorEvents.some((o) => (o as { code?: number }).code === 410);
    assert.ok(gone, `expected a 410, got ${String(err)} / ${JSON.stringify(errorEvents)}`);
    await informer.start();
    assert.is(informer.list().length, 20);
  } finally {
    informer.stop();
    await cluster.close();
  }
});

test.run();
