// Aggregated discovery (src/apiserver/aggregated-discovery.ts): which clients get it, and the
// legacy APIResourceList entries converted as kube-aggregator converts them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { aggregatedDiscovery, versionDiscovery, wantsAggregatedDiscovery } from '../../src/apiserver/aggregated-discovery.ts';

const accepts: Array<[string, string | undefined, boolean]> = [
  ['kubectl 1.32', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', true],
  ['client-go with protobuf first', 'application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json', true],
  ['spaces and case', 'Application/JSON; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList', true],
  ['v2beta1 only (not served here)', 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', false],
  ['protobuf only', 'application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList', false],
  ['plain JSON', 'application/json', false],
  ['a Table', 'application/json;as=Table;v=v1;g=meta.k8s.io', false],
  ['no header', undefined, false],
];
for (const [name, accept, want] of accepts) {
  test(`wantsAggregatedDiscovery: ${name}`, () => assert.is(wantsAggregatedDiscovery(accept), want));
}

test('a version: subresources under their resource; a kind\'s group and version as the entry names them (empty if not, as kube-apiserver\'s built-ins)', () => {
  const v = versionDiscovery('v1', [
    { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'], categories: ['all'] },
    { name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
    { name: 'nodes', singularName: 'node', namespaced: false, kind: 'Node', verbs: ['get'] },
  ]);
  assert.equal(v, {
    version: 'v1',
    freshness: 'Current',
    resources: [
      {
        resource: 'pods', responseKind: { group: '', version: '', kind: 'Pod' }, scope: 'Namespaced', singularResource: 'pod', verbs: ['get', 'list'], shortNames: ['po'], categories: ['all'],
        subresources: [
          { subresource: 'status', responseKind: { group: '', version: '', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] },
          { subresource: 'eviction', responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
        ],
      },
      { resource: 'nodes', responseKind: { group: '', version: '', kind: 'Node' }, scope: 'Cluster', singularResource: 'node', verbs: ['get'] },
    ],
  });
});

test('virt-api\'s subresources without their resource: a placeholder resource holds them (nested names kept whole)', () => {
  const v = versionDiscovery('v1', [
    { name: 'expand-vm-spec', singularName: '', namespaced: true, kind: '', verbs: [] },
    { name: 'virtualmachineinstances/console', singularName: '', namespaced: true, kind: '', verbs: [] },
    { name: 'virtualmachineinstances/vnc/screenshot', singularName: '', namespaced: true, kind: '', verbs: [] },
  ]);
  assert.equal(v.resources.map((r) => [r.resource, r.scope, (r.subresources ?? []).map((s) => s.subresource)]), [
    ['expand-vm-spec', 'Namespaced', []],
    ['virtualmachineinstances', 'Namespaced', ['console', 'vnc/screenshot']],
  ]);
  assert.equal(v.resources[1]!.responseKind, { group: '', version: '', kind: '' });
});

test('the list: apidiscovery.k8s.io/v2, one item per group in order, versions in order', () => {
  const doc = aggregatedDiscovery([
    { name: 'apps', versions: [{ version: 'v1', resources: [] }] },
    { name: 'kubevirt.io', versions: [{ version: 'v1', resources: [] }, { version: 'v1alpha3', resources: [] }] },
  ]) as { kind: string; apiVersion: string; items: Array<{ metadata: { name: string }; versions: Array<{ version: string }> }> };
  assert.is(doc.kind, 'APIGroupDiscoveryList');
  assert.is(doc.apiVersion, 'apidiscovery.k8s.io/v2');
  assert.equal(doc.items.map((i) => [i.metadata.name, i.versions.map((v) => v.version)]), [['apps', ['v1']], ['kubevirt.io', ['v1', 'v1alpha3']]]);
  const core = aggregatedDiscovery([{ name: '', versions: [{ version: 'v1', resources: [] }] }]) as { items: Array<{ metadata: object }> };
  assert.equal(core.items[0]!.metadata, {}, 'the core group\'s item has no name, as kube-apiserver\'s');
});

test.run();
