// virt-api's URL space for subresources.kubevirt.io, as a table: path and method in, route (or the
// refusal) out; the SubjectAccessReview attributes each route is authorized with.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accessOf, apiGroup, apiResourceList, DISCOVERED_RESOURCES, needsAuthorization, routeOf } from '../../src/virt-api/subresource-routes.ts';

const G = '/apis/subresources.kubevirt.io';

const cases: [string, string, Record<string, unknown> | { code: number; match?: RegExp }][] = [
  ['GET', '/apis', { kind: 'group-list' }],
  ['GET', G, { kind: 'group' }],
  ['GET', `${G}/v1`, { kind: 'resource-list', version: 'v1' }],
  ['GET', `${G}/v1alpha3/`, { kind: 'resource-list', version: 'v1alpha3' }],
  ['GET', `${G}/v1/version`, { kind: 'version', version: 'v1' }],
  ['GET', `${G}/v1/healthz`, { kind: 'healthz', version: 'v1' }],
  ['PUT', `${G}/v1/namespaces/default/virtualmachines/vm1/start`, { kind: 'subresource', resource: 'virtualmachines', name: 'vm1', subresource: 'start', support: 'served', stream: false }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachineinstances/a.b/pause`, { kind: 'subresource', resource: 'virtualmachineinstances', name: 'a.b', subresource: 'pause' }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/v/console`, { kind: 'subresource', subresource: 'console', stream: true }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/v/vnc/screenshot`, { kind: 'subresource', subresource: 'vnc/screenshot', support: 'served', stream: false }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/v/portforward/22`, { kind: 'subresource', subresource: 'portforward', port: 22, protocol: 'tcp', stream: true }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachines/v/portforward/53/UDP`, { kind: 'subresource', resource: 'virtualmachines', port: 53, protocol: 'udp' }],
  ['PUT', `${G}/v1/namespaces/ns/expand-vm-spec`, { kind: 'expand-vm-spec', namespace: 'ns' }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachines/v/memorydump`, { kind: 'subresource', subresource: 'memorydump', support: 'served' }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachines/v/removememorydump`, { kind: 'subresource', subresource: 'removememorydump', support: 'served' }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachines/v/evacuate/cancel`, { kind: 'subresource', subresource: 'evacuate/cancel', support: 'served' }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachineinstances/v/backup`, { kind: 'subresource', support: 'unsupported' }],
  // refusals
  ['GET', `${G}/v1/namespaces/ns/virtualmachines/vm1/start`, { code: 405, match: /GET is not supported/ }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachineinstances/v/console`, { code: 405 }],
  ['PUT', `${G}/v2/namespaces/ns/virtualmachines/vm1/start`, { code: 404 }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachines/vm1/explode`, { code: 404 }],
  ['PUT', `${G}/v1/namespaces/ns/pods/vm1/start`, { code: 404 }],
  ['PUT', `${G}/v1/namespaces/NS/virtualmachines/vm1/start`, { code: 400, match: /namespace "NS"/ }],
  ['PUT', `${G}/v1/namespaces/ns/virtualmachines/Bad_Name/start`, { code: 400, match: /name "Bad_Name"/ }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/v/portforward/0`, { code: 400, match: /port "0": must be a number from 1 to 65535/ }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/v/portforward/70000`, { code: 400 }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/v/portforward/22/sctp`, { code: 400, match: /protocol "sctp": must be tcp or udp/ }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/v/portforward`, { code: 404 }],
  ['GET', `${G}/v1/namespaces/ns/virtualmachineinstances/%zz/pause`, { code: 400, match: /percent-encoding/ }],
  ['GET', '/apis/kubevirt.io/v1', { code: 404 }],
];

for (const [method, path, want] of cases) {
  test(`${method} ${path}`, () => {
    const r = routeOf(method, path);
    if ('code' in want && typeof want.code === 'number') {
      assert.is(r.ok, false, JSON.stringify(r));
      if (!r.ok) {
        assert.is(r.code, want.code);
        if (want.match) assert.match(r.message, want.match as RegExp);
      }
      return;
    }
    assert.ok(r.ok, JSON.stringify(r));
    if (r.ok) for (const [k, v] of Object.entries(want)) assert.equal((r.route as unknown as Record<string, unknown>)[k], v, k);
  });
}

test('authorization attributes as virt-api builds them (PUT → update, GET → get, portforward without its port)', () => {
  const put = routeOf('PUT', `${G}/v1/namespaces/ns/virtualmachines/vm1/start`);
  assert.ok(put.ok);
  if (put.ok) assert.equal(accessOf(put.route, 'PUT'), { namespace: 'ns', verb: 'update', group: 'subresources.kubevirt.io', version: 'v1', resource: 'virtualmachines', subresource: 'start', name: 'vm1' });
  const pf = routeOf('GET', `${G}/v1alpha3/namespaces/ns/virtualmachineinstances/v/portforward/22/tcp`);
  assert.ok(pf.ok);
  if (pf.ok) assert.equal(accessOf(pf.route, 'GET'), { namespace: 'ns', verb: 'get', group: 'subresources.kubevirt.io', version: 'v1alpha3', resource: 'virtualmachineinstances', subresource: 'portforward', name: 'v' });
  const disc = routeOf('GET', `${G}/v1/version`);
  assert.ok(disc.ok);
  if (disc.ok) assert.is(needsAuthorization(disc.route), false);
});

test('discovery documents name the group, its versions and every subresource virt-api lists', () => {
  const g = apiGroup() as { preferredVersion: { groupVersion: string }; versions: unknown[] };
  assert.is(g.preferredVersion.groupVersion, 'subresources.kubevirt.io/v1');
  assert.is(g.versions.length, 2);
  const l = apiResourceList('v1') as { groupVersion: string; resources: { name: string; namespaced: boolean }[] };
  assert.is(l.groupVersion, 'subresources.kubevirt.io/v1');
  assert.equal(l.resources.map((r) => r.name), [...DISCOVERED_RESOURCES]);
  assert.ok(l.resources.every((r) => r.namespaced));
  assert.ok(DISCOVERED_RESOURCES.includes('virtualmachineinstances/console'));
});

test.run();
