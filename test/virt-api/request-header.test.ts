// The aggregation layer's requestheader authentication, as a table: the ConfigMap's data → settings;
// headers and the connection's client certificate → the user, or why the request is not believed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { requestHeaderConfig, userFromRequestHeaders, type RequestHeaderConfig } from '../../src/virt-api/request-header.ts';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test('the ConfigMap as kube-apiserver writes it', () => {
  const c = requestHeaderConfig({
    'client-ca-file': 'x',
    'requestheader-client-ca-file': CA,
    'requestheader-allowed-names': '["front-proxy-client"]',
    'requestheader-username-headers': '["X-Remote-User"]',
    'requestheader-group-headers': '["X-Remote-Group"]',
    'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    'requestheader-uid-headers': '["X-Remote-Uid"]',
  });
  assert.equal(c, { clientCa: CA, allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], uidHeaders: ['X-Remote-Uid'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] });
  assert.is(requestHeaderConfig({ 'client-ca-file': CA }), undefined, 'no aggregation layer configured');
  assert.is(requestHeaderConfig(undefined), undefined);
  assert.throws(() => requestHeaderConfig({ 'requestheader-client-ca-file': CA, 'requestheader-allowed-names': 'front-proxy-client' }), /requestheader-allowed-names: not a JSON list/);
  // Defaults when only the CA is published.
  assert.equal(requestHeaderConfig({ 'requestheader-client-ca-file': CA })?.usernameHeaders, ['X-Remote-User']);
});

const cfg: RequestHeaderConfig = { clientCa: CA, allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], uidHeaders: [], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] };
const proxy = { verified: true, commonName: 'front-proxy-client' };

const cases: [string, Record<string, string | string[]>, { verified: boolean; commonName?: string }, RequestHeaderConfig, unknown][] = [
  ['user, groups (repeated and comma-joined), extra', { 'x-remote-user': 'alice', 'x-remote-group': 'dev, system:authenticated', 'x-remote-extra-scopes': ['a', 'b'], 'x-remote-extra-acme.com%2fproject': 'p1' }, proxy, cfg,
    { ok: true, user: { name: 'alice', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a', 'b'], 'acme.com/project': ['p1'] } } }],
  ['no groups', { 'x-remote-user': 'bob' }, proxy, cfg, { ok: true, user: { name: 'bob', groups: [] } }],
  ['any CN when no names are published', { 'x-remote-user': 'bob' }, { verified: true, commonName: 'other' }, { ...cfg, allowedNames: [] }, { ok: true, user: { name: 'bob', groups: [] } }],
];
for (const [name, headers, peer, c, want] of cases) test(name, () => assert.equal(userFromRequestHeaders(headers, peer, c), want));

const refusals: [string, Record<string, string>, { verified: boolean; commonName?: string }, RegExp][] = [
  ['headers without the front proxy certificate are not believed', { 'x-remote-user': 'system:admin' }, { verified: false }, /no client certificate signed by the requestheader CA/],
  ['a certificate with another common name', { 'x-remote-user': 'alice' }, { verified: true, commonName: 'mallory' }, /common name "mallory" is not one of the requestheader allowed names \(front-proxy-client\)/],
  ['no user header', { 'x-remote-group': 'dev' }, proxy, /names no user \(X-Remote-User\)/],
];
for (const [name, headers, peer, re] of refusals) {
  test(name, () => {
    const r = userFromRequestHeaders(headers, peer, cfg);
    assert.is(r.ok, false);
    if (!r.ok) assert.match(r.reason, re);
  });
}

test.run();
