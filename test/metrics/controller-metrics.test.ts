// virt-controller's /metrics as pure decisions (controller/metrics/controller-metrics.ts): the
// launcher pod named in kubevirt_vmi_info's vmi_pod (KubeVirt's getVMIPod), the overhead from the
// status or else as the pod was rendered, leading/ready, a standby's empty VMI families; and the
// service-proxy path the local mode serves it on (src/apiserver/service-proxy.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { mergeClusterConfig } from '../../src/api/cluster-config.ts';
import { ControllerMetrics, controllerVmiFamilies, launcherPodOf, managerMetricsView } from '../../controller/metrics/controller-metrics.ts';
import { parseServiceProxyPath } from '../../src/apiserver/service-proxy.ts';
import { Registry } from '../../src/metrics/registry.ts';

const vmi = (name: string, uid: string, extra: Partial<VirtualMachineInstance['status']> = {}): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
  metadata: { name, namespace: 'ns', uid },
  spec: { domain: { devices: {}, resources: { requests: { memory: '1Gi' } } } },
  status: { phase: 'Running', nodeName: 'node-a', ...extra },
} as VirtualMachineInstance);

const pod = (name: string, uid: string, phase: string, nodeName = 'node-a', namespace = 'ns') => ({
  metadata: { name, namespace, labels: { 'kubevirt.io/created-by': uid } }, spec: { nodeName }, status: { phase },
});

test('launcherPodOf: the Running pod created by the VMI on the VMI\'s node; none otherwise', () => {
  const v = vmi('a', 'u1');
  assert.is(launcherPodOf(v, [pod('old', 'u1', 'Succeeded'), pod('target', 'u1', 'Running', 'node-b'), pod('other-ns', 'u1', 'Running', 'node-a', 'x'), pod('virt-launcher-a-abcde', 'u1', 'Running')]), 'virt-launcher-a-abcde');
  assert.is(launcherPodOf(v, [pod('p', 'u2', 'Running')]), '');
  assert.is(launcherPodOf(vmi('a', ''), [pod('p', '', 'Running')]), '');
});

test('controllerVmiFamilies: kubevirt_vmi_info with vmi_pod; the overhead from the status, else computed', () => {
  const withStatus = vmi('a', 'u1', { memory: { memoryOverhead: '200Mi' } } as never);
  const computed = vmi('b', 'u2');
  const fams = controllerVmiFamilies({ vmis: () => [withStatus, computed], pods: () => [pod('virt-launcher-a-x', 'u1', 'Running')], overheadBytes: (v) => (v.metadata?.name === 'b' ? 123 : 999) });
  const info = fams.find((f) => f.name === 'kubevirt_vmi_info')!;
  assert.equal(info.samples.map((s) => [s.labels.name, s.labels.vmi_pod]), [['a', 'virt-launcher-a-x'], ['b', '']]);
  const overhead = fams.find((f) => f.name === 'kubevirt_vmi_launcher_memory_overhead_bytes')!;
  assert.equal(overhead.samples.map((s) => [s.labels.name, s.value]), [['a', 200 * 1024 * 1024], ['b', 123]]);
});

test('managerMetricsView: leading and the leader\'s caches; a standby reports no VMIs; the overhead as the launcher pod renders it', async () => {
  const config = mergeClusterConfig({});
  const v = vmi('a', 'u1');
  const leader = { isLeader: true, current: { informers: { vmis: { list: () => [v] }, pods: { list: () => [pod('virt-launcher-a-x', 'u1', 'Running')] } } } };
  const view = managerMetricsView(leader, () => config);
  assert.equal([view.ready(), view.leading(), view.vmis().length], [true, true, 1]);
  const bytes = view.overheadBytes(v)!;
  assert.ok(bytes > 100 * 1024 * 1024 && bytes < 1024 * 1024 * 1024, `a launcher overhead for a 1Gi VMI: ${bytes}`);
  const text = await new ControllerMetrics(view, new Registry()).scrape();
  assert.match(text, /^kubevirt_virt_controller_leading_status 1$/m);
  assert.match(text, /^kubevirt_virt_controller_ready_status 1$/m);
  assert.match(text, /^kubevirt_vmi_info\{.*name="a".*vmi_pod="virt-launcher-a-x"\} 1$/m);
  const standby = await new ControllerMetrics(managerMetricsView({ isLeader: false, current: undefined }, () => config), new Registry()).scrape();
  assert.match(standby, /^kubevirt_virt_controller_leading_status 0$/m);
  assert.not.match(standby, /kubevirt_vmi_info/);
});

test('managerMetricsView: instance_type and preference named when the leader\'s caches say KubeVirt or Red Hat ships them, else <other>', async () => {
  const cache = (objs: Record<string, Record<string, string>>) => ({ get: (k: string) => (objs[k] ? { metadata: { labels: objs[k] } } : undefined) });
  const shipped = { 'instancetype.kubevirt.io/vendor': 'kubevirt.io' };
  const instancetypes = {
    clusterInstancetypes: cache({ 'u1.medium': shipped, 'acme.large': { 'instancetype.kubevirt.io/vendor': 'acme.example' } }),
    instancetypes: cache({ 'ns/mine': { 'instancetype.kubevirt.io/vendor': 'redhat.com' } }),
    preferences: cache({}),
    clusterPreferences: cache({ fedora: shipped }),
  };
  const a = { ...vmi('a', 'u1'), metadata: { name: 'a', namespace: 'ns', uid: 'u1', annotations: { 'kubevirt.io/cluster-instancetype-name': 'u1.medium', 'kubevirt.io/cluster-preference-name': 'fedora' } } };
  const b = { ...vmi('b', 'u2'), metadata: { name: 'b', namespace: 'ns', uid: 'u2', annotations: { 'kubevirt.io/cluster-instancetype-name': 'acme.large', 'kubevirt.io/preference-name': 'gone' } } };
  const c = { ...vmi('c', 'u3'), metadata: { name: 'c', namespace: 'ns', uid: 'u3', annotations: { 'kubevirt.io/instancetype-name': 'mine' } } };
  const leader = { isLeader: true, current: { informers: { vmis: { list: () => [a, b, c] as VirtualMachineInstance[] }, pods: { list: () => [] } } }, instancetypes: instancetypes as never };
  const info = controllerVmiFamilies(managerMetricsView(leader, () => mergeClusterConfig({}))).find((f) => f.name === 'kubevirt_vmi_info')!;
  assert.equal(info.samples.map((s) => [s.labels.name, s.labels.instance_type, s.labels.preference]), [['a', 'u1.medium', 'fedora'], ['b', '<other>', '<other>'], ['c', 'mine', '']]);
});

test('parseServiceProxyPath: [scheme:]name[:port], the backend path', () => {
  assert.equal(parseServiceProxyPath('/api/v1/namespaces/kubevirt/services/https:kubevirt-prometheus-metrics:metrics/proxy/metrics'), { namespace: 'kubevirt', name: 'kubevirt-prometheus-metrics', path: '/metrics' });
  assert.equal(parseServiceProxyPath('/api/v1/namespaces/kubevirt/services/kubevirt-prometheus-metrics:8443/proxy'), { namespace: 'kubevirt', name: 'kubevirt-prometheus-metrics', path: '/' });
  assert.equal(parseServiceProxyPath('/api/v1/namespaces/kubevirt/services/kubevirt-prometheus-metrics/proxy/a/b'), { namespace: 'kubevirt', name: 'kubevirt-prometheus-metrics', path: '/a/b' });
  assert.is(parseServiceProxyPath('/api/v1/namespaces/kubevirt/services/kubevirt-prometheus-metrics'), undefined);
  assert.is(parseServiceProxyPath('/api/v1/namespaces/kubevirt/services/https::443/proxy/metrics'), undefined);
});

test.run();
