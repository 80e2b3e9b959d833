// qvirt's own Kubernetes plumbing (src/kube: the wire-form client, the shared informer) against
// the embedded server: CRUD on KubeVirt objects, a 409 the client surfaces as KubeApiError, and an
// informer that lists, watches and relists after its watch resumes from a compacted version.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { KubeApiError, KubeClient, type KubeObject } from '../../src/kube/client.ts';
import { Informer } from '../../src/kube/informer.ts';
import { Resources } from '../../src/kube/resource.ts';
import { createCrd, eventually, kubeConfigFor, startTestServer } from './lib.ts';
import { tempDir } from '../lib/tmp.ts';

const CRD_DIR = new URL('../../deploy/crds/', import.meta.url).pathname;

const vmi = (name: string, labels: Record<string, string> = {}): KubeObject & { spec: unknown } => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name, namespace: 'default', labels },
  spec: { domain: { devices: {}, resources: { requests: { memory: '64Mi' } } } },
});

test('the src/kube client and informer work against the embedded server, across a server restart', async () => {
  const dir = tempDir('qapi');
  let s = await startTestServer({ dataDir: dir.path, watchTimeoutSeconds: 1 });
  const client = new KubeClient(kubeConfigFor(s.api.url));
  const informer = new Informer<KubeObject>(client, Resources.virtualMachineInstances, { labelSelector: 'app=vm', retryBaseMs: 20 });
  try {
    for (const f of readdirSync(CRD_DIR).filter((x) => x.endsWith('.yaml'))) assert.is((await createCrd(s.api.url, yaml.load(readFileSync(join(CRD_DIR, f), 'utf8')))).status, 201);
    const created = await client.create(Resources.virtualMachineInstances, vmi('a', { app: 'vm' }));
    const got = await client.get<KubeObject>(Resources.virtualMachineInstances, 'default', 'a');
    assert.is(got.metadata?.uid, created.metadata?.uid);
    await client.update(Resources.virtualMachineInstances, { ...got, metadata: { ...got.metadata, labels: { app: 'vm', x: '1' } } });
    try {
      await client.update(Resources.virtualMachineInstances, got);
      assert.unreachable('stale update accepted');
    } catch (e) {
      assert.instance(e, KubeApiError);
      assert.is((e as KubeApiError).code, 409);
      assert.is((e as KubeApiError).reason, 'Conflict');
    }
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    await informer.start();
    assert.equal(seen, ['add a']);
    await client.create(Resources.virtualMachineInstances, vmi('b', { app: 'vm' }));
    await eventually(() => seen.includes('add b'), 3000, 'watched add');
    // Unselected churn: the watch's closing BOOKMARK carries the informer forward without a relist.
    const lists = informer.listCount;
    for (let i = 0; i < 10; i++) await client.create(Resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'default' } });
    const rv = s.api.resourceVersion();
    await eventually(() => Number(informer.resourceVersion) >= rv, 4000, 'bookmark');
    assert.is(informer.listCount, lists);
    // More churn, then a restart before any bookmark: the event history is gone, the informer's
    // watch resumes from a version the new server cannot replay (410) and relists.
    for (let i = 10; i < 20; i++) await client.create(Resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'default' } });
    const port = Number(new URL(s.api.url).port);
    await s.api.stop();
    s = await startTestServer({ dataDir: dir.path, port, watchTimeoutSeconds: 1 });
    await eventually(() => informer.listCount > lists, 8000, 'relist after 410');
    await client.delete(Resources.virtualMachineInstances, 'default', 'b');
    await eventually(() => seen.includes('delete b'), 3000, 'watched delete');
    assert.equal(informer.list().map((o) => o.metadata?.name), ['a']);
  } finally {
    informer.stop();
    await client.close();
    await s.close();
    dir.cleanup();
  }
});

test.run();
