// Prometheus' text format, the registry's vectors, KubeVirt's REST client labels and work-queue
// metrics: pure decisions, table-tested; the exposition is also read back by a parser that follows
// Prometheus' grammar so what is written is what a scrape sees.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { escapeHelp, escapeLabelValue, formatExposition, formatLabels, formatValue, mergeFamilies, MetricType, InvalidMetricError, type MetricFamily } from '../../src/metrics/exposition.ts';
import { CounterVec, GaugeVec, HistogramVec, Registry, exponentialBuckets } from '../../src/metrics/registry.ts';
import { resourceAndVerb, resourceOfPath } from '../../src/metrics/rest-client.ts';
import { WorkQueueMetricFamilies } from '../../src/metrics/workqueue.ts';

test('escaping: HELP escapes backslash and newline; label values also the double quote', () => {
  const cases: Array<[string, string, string]> = [
    ['plain', 'plain', 'plain'],
    ['a\\b', 'a\\\\b', 'a\\\\b'],
    ['two\nlines', 'two\\nlines', 'two\\nlines'],
    ['say "hi"', 'say "hi"', 'say \\"hi\\"'],
    ['C:\\dir\n"x"', 'C:\\\\dir\\n"x"', 'C:\\\\dir\\n\\"x\\"'],
  ];
  for (const [input, help, label] of cases) {
    assert.is(escapeHelp(input), help, `help of ${JSON.stringify(input)}`);
    assert.is(escapeLabelValue(input), label, `label of ${JSON.stringify(input)}`);
  }
});

test('values: integers plain, floats shortest, NaN and infinities as Prometheus spells them', () => {
  const cases: Array<[number, string]> = [[0, '0'], [42, '42'], [1.5, '1.5'], [1e-9, '1e-9'], [2 ** 53, '9007199254740992'], [NaN, 'NaN'], [Infinity, '+Inf'], [-Infinity, '-Inf']];
  for (const [v, want] of cases) assert.is(formatValue(v), want, String(v));
});

test('labels: in order, empty values left out, invalid names refused', () => {
  assert.is(formatLabels({}), '');
  assert.is(formatLabels({ a: '' }), '');
  assert.is(formatLabels({ node: 'n1', namespace: 'default', os: '', name: 'vm"1' }), '{node="n1",namespace="default",name="vm\\"1"}');
  assert.throws(() => formatLabels({ 'bad-name': 'x' }), (e: unknown) => e instanceof InvalidMetricError && /bad-name/.test((e as Error).message));
  assert.throws(() => formatLabels({ __name__: 'x' }), (e: unknown) => e instanceof InvalidMetricError);
});

test('families of one name merge into one HELP/TYPE block; a type clash is an error', () => {
  const a: MetricFamily = { name: 'm', help: 'h', type: MetricType.Gauge, samples: [{ labels: { x: '1' }, value: 1 }] };
  const b: MetricFamily = { name: 'm', help: 'other', type: MetricType.Gauge, samples: [{ labels: { x: '2' }, value: 2 }] };
  assert.equal(mergeFamilies([a, b]).map((f) => [f.name, f.help, f.samples.length]), [['m', 'h', 2]]);
  assert.throws(() => mergeFamilies([a, { ...b, type: MetricType.Counter }]), /both gauge and counter/);
});

test('exposition: one block per family, empty families left out, duplicate series kept once', () => {
  const text = formatExposition([
    { name: 'kubevirt_vmi_info', help: 'Information about VirtualMachineInstances.', type: MetricType.Gauge, samples: [{ labels: { name: 'a', phase: 'running' }, value: 1 }] },
    { name: 'empty_total', help: 'nothing', type: MetricType.Counter, samples: [] },
    { name: 'kubevirt_vmi_info', help: 'ignored', type: MetricType.Gauge, samples: [{ labels: { name: 'b', phase: '' }, value: 1 }, { labels: { name: 'a', phase: 'running' }, value: 7 }] },
  ]);
  assert.is(text, [
    '# HELP kubevirt_vmi_info Information about VirtualMachineInstances.',
    '# TYPE kubevirt_vmi_info gauge',
    'kubevirt_vmi_info{name="a",phase="running"} 1',
    'kubevirt_vmi_info{name="b"} 1',
    '',
  ].join('\n'));
  assert.throws(() => formatExposition([{ name: 'bad-name', help: '', type: MetricType.Gauge, samples: [{ labels: {}, value: 1 }] }]), (e: unknown) => e instanceof InvalidMetricError);
});

test('registry: counters only go up, gauges set, histograms cumulative with +Inf, _sum and _count', async () => {
  const r = new Registry();
  const c = r.register(new CounterVec('c_total', 'a counter', ['code']));
  c.inc({ code: '200' }); c.inc({ code: '200' }, 2); c.inc({ code: '500' });
  assert.throws(() => c.inc({ code: '200' }, -1), (e: unknown) => e instanceof RangeError);
  assert.is(r.register(new CounterVec('c_total', 'again', ['code'])), c, 'one metric per name');
  const g = r.register(new GaugeVec('g', 'a gauge', []));
  g.set({}, 3); g.inc({}, -1);
  const h = r.register(new HistogramVec('h_seconds', 'a histogram', ['name'], [0.1, 1]));
  for (const v of [0.05, 0.5, 5]) h.observe({ name: 'q' }, v);
  r.addCollector(() => [{ name: 'late', help: 'computed', type: MetricType.Gauge, samples: [{ labels: {}, value: 9 }] }]);
  const text = formatExposition(await r.gather());
  for (const line of [
    'c_total{code="200"} 3', 'c_total{code="500"} 1', 'g 2',
    'h_seconds_bucket{name="q",le="0.1"} 1', 'h_seconds_bucket{name="q",le="1"} 2', 'h_seconds_bucket{name="q",le="+Inf"} 3',
    'h_seconds_sum{name="q"} 5.55', 'h_seconds_count{name="q"} 3', 'late 9', '# TYPE h_seconds histogram',
  ]) assert.ok(text.includes(`${line}\n`), `${line} in:\n${text}`);
  assert.equal(exponentialBuckets(10e-9, 10, 3), [1e-8, 1e-7, 1e-6]);
});

test('REST client labels: resource and verb as KubeVirt parses a request', () => {
  const u = (p: string) => new URL(p, 'https://10.0.0.1:6443');
  const cases: Array<[string, string, string, string]> = [
    ['GET', '/api/v1/namespaces/default/pods', 'pods', 'LIST'],
    ['GET', '/api/v1/namespaces/default/pods/p1', 'pods', 'GET'],
    ['GET', '/apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances?watch=true&resourceVersion=5', 'virtualmachineinstances', 'WATCH'],
    ['GET', '/api/v1/watch/nodes', 'nodes', 'WATCH'],
    ['GET', '/api/v1/nodes', 'nodes', 'LIST'],
    ['PUT', '/apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances/v/status', 'virtualmachineinstances', 'UPDATE'],
    ['PATCH', '/api/v1/nodes/n1', 'nodes', 'PATCH'],
    ['POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', 'subjectaccessreviews', 'CREATE'],
    ['DELETE', '/api/v1/namespaces/ns/pods/p', 'pods', 'DELETE'],
    ['GET', '/version', 'none', 'none'],
    ['', '/api/v1/pods', 'none', 'none'],
  ];
  for (const [method, path, resource, verb] of cases) assert.equal(resourceAndVerb(method, u(path)), { resource, verb }, `${method} ${path}`);
  assert.is(resourceOfPath('/healthz'), '');
});

test('work-queue metrics: depth, adds, retries, waits and work measured per queue name', async () => {
  let now = 0;
  const r = new Registry();
  const f = new WorkQueueMetricFamilies(r, () => now);
  const a = f.track('virt-handler-vm');
  const b = f.track('virt-handler-vm');
  a.added('k1'); a.added('k2'); b.added('k1');
  now = 2000;
  a.got('k1');
  now = 2500;
  const during = formatExposition(await r.gather());
  assert.ok(during.includes('kubevirt_workqueue_depth{name="virt-handler-vm"} 2\n'), during);
  assert.ok(during.includes('kubevirt_workqueue_adds_total{name="virt-handler-vm"} 3\n'), during);
  assert.ok(during.includes('kubevirt_workqueue_longest_running_processor_seconds{name="virt-handler-vm"} 0.5\n'), during);
  assert.ok(during.includes('kubevirt_workqueue_unfinished_work_seconds{name="virt-handler-vm"} 0.5\n'), during);
  assert.ok(during.includes('kubevirt_workqueue_queue_duration_seconds_sum{name="virt-handler-vm"} 2\n'), during);
  now = 3000;
  a.done('k1');
  a.retried();
  a.close();
  const after = formatExposition(await r.gather());
  assert.ok(after.includes('kubevirt_workqueue_work_duration_seconds_sum{name="virt-handler-vm"} 1\n'), after);
  assert.ok(after.includes('kubevirt_workqueue_retries_total{name="virt-handler-vm"} 1\n'), after);
  assert.ok(after.includes('kubevirt_workqueue_depth{name="virt-handler-vm"} 1\n'), 'a closed queue no longer counts: only b\'s key');
});

test('a named WorkQueue reports into the process registry; depth follows adds and gets', async () => {
  const { WorkQueue } = await import('../../src/kube/workqueue.ts');
  const { defaultRegistry } = await import('../../src/metrics/registry.ts');
  const q = new WorkQueue<string>({ name: 'test-queue' });
  q.add('a'); q.add('a'); q.add('b');
  const depth = async () => /kubevirt_workqueue_depth\{name="test-queue"\} (\d+)/.exec(formatExposition(await defaultRegistry.gather()))?.[1];
  assert.is(await depth(), '2');
  const k = await q.get();
  q.add(k!); // dirty while processing: counted as an add, queued again on done()
  q.done(k!);
  assert.is(await depth(), '2');
  assert.is(q.length, 2);
  q.shutDown();
  assert.is(await depth(), undefined, 'a shut-down queue reports nothing');
});

test.run();
