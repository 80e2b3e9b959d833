// Kubeconfigs read without client-node (src/kube/kubeconfig.ts): the current context's server and
// credentials (table), merged $KUBECONFIG files, the in-cluster service account, where a kubeconfig comes
// from, what a client gets applied (files read for real, a rotated token file read again), and an exec
// plugin's user handed to client-node (a real plugin script).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { join } from 'node:path';
import { inClusterContext, KubeconfigCredentials, kubeconfigSource, loadKubeConfig, parseKubeconfig, type KubeconfigContext } from '../../src/kube/kubeconfig.ts';
import { tempDir } from '../lib/tmp.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const config = (cluster: Record<string, unknown>, user: Record<string, unknown>, extra: Record<string, unknown> = {}) => JSON.stringify({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
  contexts: [{ name: 'c', context: { cluster: 'k', user: 'u', namespace: 'ns1' } }],
  clusters: [{ name: 'k', cluster }], users: [{ name: 'u', user }], ...extra,
});

test('parseKubeconfig: the current context\'s server and credentials', () => {
  const table: Array<[string, string, Partial<KubeconfigContext>]> = [
    ['data fields', config({ server: 'https://a:6443', 'certificate-authority-data': b64('CA') }, { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }),
      { server: 'https://a:6443', ca: { data: b64('CA') }, clientCert: { data: b64('CERT') }, clientKey: { data: b64('KEY') }, namespace: 'ns1' }],
    ['relative files resolve against the kubeconfig\'s directory', config({ server: 'https://a', 'certificate-authority': 'pki/ca.crt' }, { 'client-certificate': '/abs/c.crt', 'client-key': 'k.key', tokenFile: 'tok' }),
      { ca: { file: '/cfg/pki/ca.crt' }, clientCert: { file: '/abs/c.crt' }, clientKey: { file: '/cfg/k.key' }, tokenFile: '/cfg/tok' }],
    ['a token, insecure, tls-server-name', config({ server: 'https://a', 'insecure-skip-tls-verify': true, 'tls-server-name': 'api.local' }, { token: 't0k' }),
      { token: 't0k', insecureSkipTlsVerify: true, tlsServerName: 'api.local' }],
    ['basic auth', config({ server: 'https://a' }, { username: 'me', password: 'pw' }), { username: 'me', password: 'pw' }],
    ['an exec plugin: client-node applies it', config({ server: 'https://a' }, { exec: { command: 'x', apiVersion: 'client.authentication.k8s.io/v1' } }), { delegate: 'an exec plugin' }],
    ['an auth provider', config({ server: 'https://a' }, { 'auth-provider': { name: 'oidc' } }), { delegate: 'an auth provider' }],
    ['impersonation', config({ server: 'https://a' }, { token: 't', as: 'someone' }), { delegate: 'impersonation' }],
    ['a proxy', config({ server: 'https://a', 'proxy-url': 'http://p:3128' }, {}), { delegate: 'a proxy' }],
  ];
  for (const [name, text, want] of table) {
    const got = parseKubeconfig([{ text, dir: '/cfg' }]);
    for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof KubeconfigContext], v, `${name}: ${k}`);
  }
  // YAML as kubectl writes it.
  const y = parseKubeconfig([{ dir: '/', text: 'apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n  cluster:\n    server: https://10.0.0.1:443\nusers:\n- name: u\n  user:\n    token: abc\n' }]);
  assert.equal([y.server, y.token], ['https://10.0.0.1:443', 'abc']);
});

test('parseKubeconfig: what is missing is named', () => {
  const table: Array<[string, string, RegExp]> = [
    ['no current-context', JSON.stringify({ contexts: [] }), /no current-context/],
    ['current context not listed', JSON.stringify({ 'current-context': 'z', contexts: [] }), /current-context "z" is not in its contexts/],
    ['cluster not listed', JSON.stringify({ 'current-context': 'c', contexts: [{ name: 'c', context: { cluster: 'k' } }] }), /cluster "k" is not in the kubeconfig's clusters/],
    ['no server', config({}, {}), /cluster "k" has no server/],
  ];
  for (const [name, text, re] of table) assert.throws(() => parseKubeconfig([{ text, dir: '/' }]), re, name);
});

test('parseKubeconfig: $KUBECONFIG\'s files merged as kubectl merges them', () => {
  const a = { dir: '/a', text: JSON.stringify({ 'current-context': 'c', contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }], clusters: [], users: [{ name: 'u', user: { 'client-key': 'a.key', 'client-certificate': 'a.crt' } }] }) };
  const b = { dir: '/b', text: JSON.stringify({ 'current-context': 'other', clusters: [{ name: 'k', cluster: { server: 'https://b', 'certificate-authority': 'ca.crt' } }], users: [{ name: 'u', user: { token: 'from-b' } }] }) };
  const got = parseKubeconfig([a, b]);
  assert.is(got.server, 'https://b', 'the cluster from the second file');
  assert.equal(got.ca, { file: '/b/ca.crt' }, 'its paths relative to its own file');
  assert.equal([got.clientKey, got.token], [{ file: '/a/a.key' }, undefined], 'the first file\'s user wins');
});

test('kubeconfigSource and inClusterContext', () => {
  const none = () => false;
  const home = () => true;
  assert.equal(kubeconfigSource('/f', { KUBECONFIG: '/x', KUBERNETES_SERVICE_HOST: 'h' }, '/home', home), { kind: 'file', path: '/f' });
  assert.equal(kubeconfigSource(undefined, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, '/home', home), { kind: 'in-cluster' });
  assert.equal(kubeconfigSource(undefined, { KUBECONFIG: '/x', KUBERNETES_SERVICE_HOST: 'h' }, '/home', home), { kind: 'file', path: '/x' });
  assert.equal(kubeconfigSource(undefined, { KUBECONFIG: '/x::/y' }, '/home', home), { kind: 'merged', paths: ['/x', '/y'] });
  assert.equal(kubeconfigSource(undefined, {}, '/home', home), { kind: 'file', path: '/home' });
  assert.is(kubeconfigSource(undefined, {}, '/home', none), undefined);
  assert.equal(inClusterContext('10.0.0.1', '443', '/sa'), { server: 'https://10.0.0.1:443', ca: { file: '/sa/ca.crt' }, tokenFile: '/sa/token' });
  assert.is(inClusterContext('fd00::1', '6443').server, 'https://[fd00::1]:6443');
});

test('applyToHTTPSOptions: files read, a token file read again at each call (rotated service-account tokens)', async () => {
  const t = tempDir('qkc');
  try {
    writeFileSync(join(t.path, 'ca.crt'), 'CA PEM');
    writeFileSync(join(t.path, 'token'), 'first\n');
    const c = new KubeconfigCredentials(inClusterContext('10.0.0.1', '443', t.path), { kind: 'in-cluster' });
    const o1: RequestOptions = {};
    await c.applyToHTTPSOptions(o1);
    assert.equal([String(o1.ca), (o1.headers as Record<string, string>).Authorization], ['CA PEM', 'Bearer first']);
    writeFileSync(join(t.path, 'token'), 'second\n');
    const o2: RequestOptions = {};
    await c.applyToHTTPSOptions(o2);
    assert.is((o2.headers as Record<string, string>).Authorization, 'Bearer second');
    // A kubeconfig file with data fields, insecure and a server name.
    const file = join(t.path, 'kubeconfig');
    writeFileSync(file, config({ server: 'https://a:6443', 'certificate-authority-data': b64('CA2'), 'tls-server-name': 'api', 'insecure-skip-tls-verify': true }, { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }));
    const o3: RequestOptions = {};
    const kc = loadKubeConfig(file);
    assert.is(kc.getCurrentCluster().server, 'https://a:6443');
    await kc.applyToHTTPSOptions(o3);
    assert.equal([String(o3.ca), String(o3.cert), String(o3.key), o3.servername, o3.rejectUnauthorized], ['CA2', 'CERT', 'KEY', 'api', false]);
    const basic: RequestOptions = {};
    writeFileSync(file, config({ server: 'https://a' }, { username: 'me', password: 'pw' }));
    await loadKubeConfig(file).applyToHTTPSOptions(basic);
    assert.is(basic.auth, 'me:pw');
    // Unreadable or broken kubeconfigs: the file and the reason.
    assert.throws(() => loadKubeConfig(join(t.path, 'missing')), /cannot read the kubeconfig .*missing/);
    writeFileSync(file, config({}, {}));
    assert.throws(() => loadKubeConfig(file), /the kubeconfig .*kubeconfig: cluster "k" has no server/);
  } finally {
    t.cleanup();
  }
});

test('an exec plugin\'s user: client-node runs the plugin, its token is applied', async () => {
  const t = tempDir('qkc');
  try {
    mkdirSync(join(t.path, 'bin'));
    const plugin = join(t.path, 'bin', 'plugin');
    writeFileSync(plugin, '#!/bin/sh\necho \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}\'\n');
    chmodSync(plugin, 0o755);
    const file = join(t.path, 'kubeconfig');
    writeFileSync(file, config({ server: 'https://a:6443' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } }));
    const kc = loadKubeConfig(file);
    assert.is(kc.context.delegate, 'an exec plugin');
    const o: RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    assert.is((o.headers as Record<string, string>).Authorization, 'Bearer from-plugin');
  } finally {
    t.cleanup();
  }
});

test.run();
