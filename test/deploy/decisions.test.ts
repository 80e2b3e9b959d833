// Pure decisions of the install: workload readiness (Deployment, DaemonSet, CRD) and which KubeVirt
// CR configures the cluster, with command-line overrides and invalid configurations.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crdEstablished, daemonSetReadiness, deploymentReadiness } from '../../src/deploy/readiness.ts';
import { configFromKubeVirt, selectKubeVirt } from '../../src/kube/kubevirt-config.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { callArgs, rbacAllows, requestAttributes, resourceOfPath, stripComments } from './api-calls.ts';

test('Deployment readiness', () => {
  const d = (gen: number, observed: number | undefined, replicas: number, ready: number, updated: number) => ({ metadata: { name: 'virt-controller', generation: gen }, spec: { replicas }, status: { ...(observed !== undefined ? { observedGeneration: observed } : {}), readyReplicas: ready, updatedReplicas: updated } });
  const table: [ReturnType<typeof d>, boolean, string][] = [
    [d(1, 1, 2, 2, 2), true, 'Deployment virt-controller: 2/2 ready'],
    [d(1, 1, 2, 1, 2), false, 'Deployment virt-controller: 1/2 ready'],
    [d(2, 1, 2, 2, 2), false, 'Deployment virt-controller: 2/2 ready (rollout not observed yet)'],
    [d(1, undefined, 2, 0, 0), false, 'Deployment virt-controller: 0/2 ready (rollout not observed yet)'],
    [d(1, 1, 2, 2, 1), false, 'Deployment virt-controller: 2/2 ready'],
  ];
  for (const [obj, ready, line] of table) assert.equal(deploymentReadiness(obj), { ready, progress: line });
});

test('DaemonSet readiness', () => {
  const ds = (status: Record<string, number> | undefined) => ({ metadata: { name: 'virt-handler', generation: 1 }, status: { observedGeneration: 1, ...(status ?? {}) } });
  assert.equal(daemonSetReadiness(ds({ desiredNumberScheduled: 3, numberReady: 3, updatedNumberScheduled: 3 })).ready, true);
  assert.equal(daemonSetReadiness(ds({ desiredNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3 })), { ready: false, progress: 'DaemonSet virt-handler: 2/3 nodes ready' });
  assert.equal(daemonSetReadiness(ds(undefined)).ready, false, 'not yet seen by its controller');
  assert.ok(crdEstablished({ status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }] } }));
  assert.not.ok(crdEstablished({ status: { conditions: [{ type: 'Established', status: 'False' }] } }));
});

test('which KubeVirt CR configures the cluster, overrides on top, invalid ones rejected with the field', () => {
  const cr = (name: string, created: string, deleting = false, configuration: unknown = {}) => ({ metadata: { name, namespace: 'kubevirt', creationTimestamp: created, ...(deleting ? { deletionTimestamp: created } : {}) }, spec: { configuration } });
  assert.is(selectKubeVirt([cr('b', '2026-01-02T00:00:00Z'), cr('a', '2026-01-03T00:00:00Z')])?.metadata?.name, 'b');
  assert.is(selectKubeVirt([cr('old', '2026-01-01T00:00:00Z', true), cr('new', '2026-01-03T00:00:00Z')])?.metadata?.name, 'new');
  assert.is(selectKubeVirt([]), undefined);
  const base = defaultClusterConfig();
  assert.is(configFromKubeVirt(undefined, base, () => {}).config, base);
  const emu = configFromKubeVirt(cr('k', '2026-01-01T00:00:00Z', false, { developerConfiguration: { useEmulation: true }, cpuModel: 'host-model' }), base, () => {}).config!;
  assert.is(emu.developerConfiguration.useEmulation, true);
  assert.is(emu.cpuModel, 'host-model');
  const forced = configFromKubeVirt(cr('k', '2026-01-01T00:00:00Z', false, {}), base, (c) => { c.developerConfiguration.useEmulation = true; }).config!;
  assert.is(forced.developerConfiguration.useEmulation, true);
  const bad = configFromKubeVirt(cr('k', '2026-01-01T00:00:00Z', false, { developerConfiguration: { memoryOvercommit: 'lots' } }), base, () => {});
  assert.is(bad.config, undefined);
  assert.ok(bad.errors.some((e) => e.field.includes('memoryOvercommit')), JSON.stringify(bad.errors));
});

test('the RBAC scan: API paths, comments and nested type arguments', () => {
  assert.equal(resourceOfPath('/apis/authentication.k8s.io/v1/tokenreviews'), { group: 'authentication.k8s.io', resource: 'tokenreviews' });
  assert.equal(resourceOfPath('/api/v1/namespaces/ns/pods/p/status'), { group: '', resource: 'pods/status' });
  assert.equal(resourceOfPath('/apis/kubevirt.io/v1/namespaces/ns/virtualmachines'), { group: 'kubevirt.io', resource: 'virtualmachines' });
  assert.is(resourceOfPath('/healthz'), undefined);
  const src = "const u = 'http://x'; // client.delete(Resources.pods)\n/* client.create(Resources.nodes) */ x";
  const stripped = stripComments(src);
  assert.ok(stripped.includes("'http://x'"), stripped);
  assert.not.ok(stripped.includes('client.delete') || stripped.includes('client.create'), stripped);
  assert.is(stripped.split('\n').length, src.split('\n').length, 'line numbers kept');
  assert.equal(callArgs('f(Resources.pods, ns, { a: [1, 2] }, \'status\')', 1), ['Resources.pods', 'ns', '{ a: [1, 2] }', "'status'"]);
});

test('request attributes and RBAC evaluation, as kube-apiserver does them', () => {
  const table: [string, string, unknown][] = [
    ['GET', '/apis/kubevirt.io/v1/virtualmachines?watch=true&resourceVersion=5', { verb: 'watch', group: 'kubevirt.io', resource: 'virtualmachines' }],
    ['GET', '/api/v1/pods?labelSelector=kubevirt.io', { verb: 'list', group: '', resource: 'pods' }],
    ['GET', '/apis/coordination.k8s.io/v1/namespaces/kubevirt/leases/qvirt-controller', { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kubevirt', name: 'qvirt-controller' }],
    ['PATCH', '/api/v1/namespaces/default/pods/p/status', { verb: 'patch', group: '', resource: 'pods/status', namespace: 'default', name: 'p' }],
    ['DELETE', '/api/v1/namespaces/default/pods', { verb: 'deletecollection', group: '', resource: 'pods', namespace: 'default' }],
    ['GET', '/version', undefined],
  ];
  for (const [m, u, want] of table) assert.equal(requestAttributes(m, u), want, `${m} ${u}`);
  const cluster = [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }];
  const ns = { kubevirt: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['one'] }] };
  assert.ok(rbacAllows({ verb: 'list', group: '', resource: 'pods' }, cluster, ns));
  assert.not.ok(rbacAllows({ verb: 'watch', group: '', resource: 'pods' }, cluster, ns));
  assert.ok(rbacAllows({ verb: 'get', group: '', resource: 'configmaps', namespace: 'kubevirt', name: 'one' }, cluster, ns));
  assert.not.ok(rbacAllows({ verb: 'get', group: '', resource: 'configmaps', namespace: 'kubevirt', name: 'two' }, cluster, ns));
  assert.not.ok(rbacAllows({ verb: 'get', group: '', resource: 'configmaps', namespace: 'default', name: 'one' }, cluster, ns));
});

test.run();
