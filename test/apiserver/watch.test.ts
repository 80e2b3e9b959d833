// The watch protocol through client-node's Watch and informer: replay from a resourceVersion,
// 410 Expired when the history no longer reaches back, bookmarks, selector transitions,
// timeouts, and an informer that lists, watches and relists after a 410.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeInformer, PatchStrategy, setHeaderOptions, Watch, type V1Pod } from '@kubernetes/client-node';
import { apiError, eventually, pod, raw, sleep, startTestServer, type TestServer } from './lib.ts';

interface Ev { type: string; name: string; rv: string; code?: number; reason?: string; annotations?: Record<string, string> }

async function watchEvents(s: TestServer, path: string, query: Record<string, string | number | boolean>) {
  const events: Ev[] = [];
  let ended = false;
  let error: unknown;
  const ctl = await new Watch(s.kc).watch(path, query, (type, obj: { metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> }; code?: number; reason?: string }) => {
    events.push({ type, name: obj.metadata?.name ?? '', rv: obj.metadata?.resourceVersion ?? '', ...(obj.code ? { code: obj.code, reason: obj.reason } : {}), ...(obj.metadata?.annotations ? { annotations: obj.metadata.annotations } : {}) });
  }, (err) => { ended = true; error = err; });
  return { events, ctl, isEnded: () => ended, error: () => error };
}

let s: TestServer;
test.before(async () => { s = await startTestServer({ historySize: 60, bookmarkIntervalMs: 150 }); });
test.after(async () => { await s.close(); });

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

test('a watch from a resourceVersion replays what happened after it, then streams live events', async () => {
  const a = await s.core.createNamespacedPod({ namespace: 'default', body: pod('wa') as V1Pod });
  await s.core.patchNamespacedPod({ name: 'wa', namespace: 'default', body: { metadata: { labels: { x: '1' } } } }, merge);
  await s.core.deleteNamespacedPod({ name: 'wa', namespace: 'default' });
  const w = await watchEvents(s, '/api/v1/namespaces/default/pods', { resourceVersion: a.metadata!.resourceVersion! });
  await eventually(() => w.events.length >= 2, 2000, 'replayed events');
  assert.equal(w.events.map((e) => `${e.type} ${e.name}`), ['MODIFIED wa', 'DELETED wa']);
  assert.ok(Number(w.events[1]!.rv) > Number(w.events[0]!.rv), 'a deletion has its own resourceVersion');
  await s.core.createNamespacedPod({ namespace: 'default', body: pod('wb') as V1Pod });
  await eventually(() => w.events.length >= 3, 2000, 'live event');
  assert.equal(w.events[2]!.type + ' ' + w.events[2]!.name, 'ADDED wb');
  w.ctl.abort();
});

test('a watch without resourceVersion starts with synthetic ADDED events for what exists', async () => {
  const w = await watchEvents(s, '/api/v1/namespaces/default/pods', {});
  await eventually(() => w.events.length >= 1, 2000, 'initial ADDED');
  assert.equal(w.events.map((e) => `${e.type} ${e.name}`), ['ADDED wb']);
  w.ctl.abort();
});

test('a too-old resourceVersion gets an ERROR event with a 410 Expired Status, then the watch ends', async () => {
  for (let i = 0; i < 70; i++) await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `fill${i}` } } });
  const w = await watchEvents(s, '/api/v1/namespaces/default/pods', { resourceVersion: '2' });
  await eventually(() => w.isEnded(), 2000, 'watch end');
  assert.is(w.events.length, 1);
  assert.is(w.events[0]!.type, 'ERROR');
  assert.is(w.events[0]!.code, 410);
  assert.is(w.events[0]!.reason, 'Expired');
  // The same history bound answers a list continuation that is too old.
  const page = await s.core.listNamespacedConfigMap({ namespace: 'default', limit: 5 });
  for (let i = 0; i < 70; i++) await s.core.deleteNamespacedConfigMap({ name: `fill${i}`, namespace: 'default' });
  const e = await apiError(() => s.core.listNamespacedConfigMap({ namespace: 'default', limit: 5, _continue: page.metadata!._continue! }));
  assert.is(e.code, 410);
  assert.is(e.status.reason, 'Expired');
  assert.match(e.status.message, /^The provided continue parameter is too old/);
});

test('label-selected watches see objects leave (DELETED) and enter (ADDED) the selection', async () => {
  await s.core.createNamespacedPod({ namespace: 'default', body: pod('sel', { labels: { app: 'a' } }) as V1Pod });
  const w = await watchEvents(s, '/api/v1/namespaces/default/pods', { labelSelector: 'app=a', resourceVersion: String(s.api.resourceVersion()) });
  await s.core.patchNamespacedPod({ name: 'sel', namespace: 'default', body: { metadata: { labels: { app: 'b' } } } }, merge);
  await s.core.patchNamespacedPod({ name: 'sel', namespace: 'default', body: { metadata: { labels: { app: 'a', more: 'x' } } } }, merge);
  await s.core.patchNamespacedPod({ name: 'sel', namespace: 'default', body: { metadata: { labels: { more: 'y' } } } }, merge);
  await eventually(() => w.events.length >= 3, 2000, 'transition events');
  assert.equal(w.events.map((e) => e.type), ['DELETED', 'ADDED', 'MODIFIED']);
  w.ctl.abort();
});

test('field-selected watch of one name (kubectl delete --wait) and timeoutSeconds', async () => {
  const w = await watchEvents(s, '/api/v1/namespaces/default/pods', { fieldSelector: 'metadata.name=sel', timeoutSeconds: 1 });
  await eventually(() => w.events.length >= 1, 2000, 'initial');
  await s.core.deleteNamespacedPod({ name: 'sel', namespace: 'default' });
  await eventually(() => w.events.some((e) => e.type === 'DELETED'), 2000, 'deleted');
  await eventually(() => w.isEnded(), 3000, 'timeout');
  assert.equal(w.events.map((e) => e.type), ['ADDED', 'DELETED']);
});

test('bookmarks carry the current resourceVersion; sendInitialEvents ends with the initial-events-end bookmark', async () => {
  const w = await watchEvents(s, '/api/v1/namespaces/default/pods', { allowWatchBookmarks: true, resourceVersion: String(s.api.resourceVersion()) });
  await s.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'bm' } } });
  await eventually(() => w.events.some((e) => e.type === 'BOOKMARK' && Number(e.rv) === s.api.resourceVersion()), 2000, 'bookmark at current rv');
  w.ctl.abort();
  const i = await watchEvents(s, '/api/v1/namespaces/default/pods', { allowWatchBookmarks: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' });
  await eventually(() => i.events.some((e) => e.type === 'BOOKMARK'), 2000, 'initial bookmark');
  const bm = i.events.find((e) => e.type === 'BOOKMARK')!;
  assert.equal(bm.annotations, { 'k8s.io/initial-events-end': 'true' });
  assert.equal(i.events.slice(0, i.events.indexOf(bm)).map((e) => `${e.type} ${e.name}`), ['ADDED wb']);
  i.ctl.abort();
});

test('watches by legacy /watch/ path and on a single object path', async () => {
  const r = await fetch(`${s.api.url}/api/v1/watch/namespaces/default/pods/wb?timeoutSeconds=1`);
  const text = await r.text();
  const lines = text.trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
  assert.equal(lines.map((l) => `${l.type} ${l.object.metadata.name}`), ['ADDED wb']);
  const bad = await raw(`${s.api.url}/api/v1/pods?watch=1&labelSelector=${encodeURIComponent('a b')}`);
  assert.is(bad.status, 400);
});

test('an informer lists, watches, and relists after its watch resumes from a compacted resourceVersion', async () => {
  const t = await startTestServer({ historySize: 20, watchTimeoutSeconds: 1 });
  try {
    await t.core.createNamespace({ body: { metadata: { name: 'inf' } } });
    await t.core.createNamespacedPod({ namespace: 'inf', body: pod('i1', { labels: { app: 'vm' } }) as V1Pod });
    let lists = 0;
    const informer = makeInformer(t.kc, '/api/v1/namespaces/inf/pods', () => { lists++; return t.core.listNamespacedPod({ namespace: 'inf', labelSelector: 'app=vm' }); }, 'app=vm');
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata!.name}`));
    informer.on('update', (p) => seen.push(`update ${p.metadata!.name}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata!.name}`));
    informer.on('error', () => { /* restarted below if it stops */ });
    await informer.start();
    await eventually(() => seen.includes('add i1'), 2000, 'initial list');
    await t.core.createNamespacedPod({ namespace: 'inf', body: pod('i2', { labels: { app: 'vm' } }) as V1Pod });
    await eventually(() => seen.includes('add i2'), 2000, 'watched add');
    await t.core.patchNamespacedPod({ name: 'i1', namespace: 'inf', body: { metadata: { annotations: { a: 'b' } } } }, merge);
    await eventually(() => seen.includes('update i1'), 2000, 'watched update');
    const listsBefore = lists;
    // Unselected churn moves the history past the informer's last resourceVersion...
    for (let i = 0; i < 40; i++) await t.core.createNamespacedConfigMap({ namespace: 'inf', body: { metadata: { name: `c${i}` } } });
    // ...so when its watch times out and resumes, it gets 410 and relists.
    await eventually(() => lists > listsBefore, 5000, 'relist after 410');
    await t.core.deleteNamespacedPod({ name: 'i2', namespace: 'inf' });
    await eventually(() => seen.includes('delete i2'), 3000, 'delete seen after the relist');
    assert.equal(informer.list('inf').map((p) => p.metadata!.name), ['i1']);
    await informer.stop();
  } finally {
    await t.close();
  }
});

test.run();
