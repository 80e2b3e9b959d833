// The pure decisions of the local mode's image pulls, as tables: kubelet's pull policy defaults
// and decisions, its back-off, which imagePullSecret entries apply to an image (dockerconfigjson
// and dockercfg, auth / username+password / identitytoken, scheme and path prefixes), the
// containers-auth.json handed to skopeo, TLS settings per registry, skopeo's messages, and a
// pull's progress (the manifest's total, the blobs of a `dir:` layout, the pod's message).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { presenceOf, pullDecision, pullPolicyOf, tlsOptionsFor } from '../../src/local/image-pull.ts';
import { pullBackoffMs } from '../../src/local/pod-runner/image-manager.ts';
import { isBlobName, manifestTotal, pullProgressMessage } from '../../src/local/pull-progress.ts';
import { authFileFor, credentialsFor, imageRegistry, keyMatches } from '../../src/local/registry-auth.ts';
import { SkopeoError, skopeoCopyArgs, skopeoMessage } from '../../src/local/skopeo.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const dockerconfigjson = (name: string, auths: Record<string, unknown>) => ({ name, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) } });

test('pull policy: the default per tag, and what kubelet does with it', () => {
  const rows: Array<[string, string | undefined, string]> = [
    ['quay.io/containerdisks/fedora:41', undefined, 'IfNotPresent'],
    ['quay.io/containerdisks/fedora', undefined, 'Always'],
    ['quay.io/containerdisks/fedora:latest', undefined, 'Always'],
    ['localhost:5000/qvirt/testguest', undefined, 'Always'],
    ['localhost:5000/qvirt/testguest:v1', undefined, 'IfNotPresent'],
    [`r.io/x@sha256:${'a'.repeat(64)}`, undefined, 'IfNotPresent'],
    ['r.io/x:v1', 'Always', 'Always'],
    ['r.io/x:latest', 'Never', 'Never'],
  ];
  for (const [image, policy, want] of rows) assert.is(pullPolicyOf({ image, imagePullPolicy: policy }), want, `${image} ${policy}`);
  const decisions: Array<[Parameters<typeof pullDecision>[0], Parameters<typeof pullDecision>[1], string]> = [
    ['Always', 'absent', 'pull'], ['Always', 'pulled', 'pull'], ['Always', 'imported', 'use'],
    ['IfNotPresent', 'absent', 'pull'], ['IfNotPresent', 'pulled', 'use'], ['IfNotPresent', 'imported', 'use'],
    ['Never', 'absent', 'neverPull'], ['Never', 'pulled', 'use'], ['Never', 'imported', 'use'],
  ];
  for (const [policy, presence, want] of decisions) assert.is(pullDecision(policy, presence), want, `${policy} ${presence}`);
  assert.is(presenceOf(undefined), 'absent');
  assert.is(presenceOf({ source: 'docker://r.io/x:v1' }), 'pulled');
  assert.is(presenceOf({ source: 'oci-archive:/x.tar' }), 'imported');
  assert.is(presenceOf({}), 'imported', 'an image imported before sources were recorded');
  assert.equal([1, 2, 3, 6, 10].map(pullBackoffMs), [10_000, 20_000, 40_000, 300_000, 300_000]);
});

test('the registry of an image reference', () => {
  assert.equal(imageRegistry('localhost:5000/qvirt/testguest:v1'), { host: 'localhost:5000', path: 'qvirt/testguest' });
  assert.equal(imageRegistry('quay.io/containerdisks/fedora@sha256:abc'), { host: 'quay.io', path: 'containerdisks/fedora' });
  assert.equal(imageRegistry('busybox'), { host: 'docker.io', path: 'library/busybox' });
  assert.equal(imageRegistry('kubevirt/cirros-container-disk-demo:v1'), { host: 'docker.io', path: 'kubevirt/cirros-container-disk-demo' });
  assert.equal(imageRegistry('localhost/x'), { host: 'localhost', path: 'x' });
});

test('which Secret keys apply to an image', () => {
  const rows: Array<[string, string, boolean]> = [
    ['localhost:5000', 'localhost:5000/qvirt/g:v1', true],
    ['https://localhost:5000/', 'localhost:5000/qvirt/g:v1', true],
    ['localhost:5000/qvirt', 'localhost:5000/qvirt/g:v1', true],
    ['localhost:5000/other', 'localhost:5000/qvirt/g:v1', false],
    ['localhost:5001', 'localhost:5000/qvirt/g:v1', false],
    ['https://index.docker.io/v1/', 'kubevirt/cirros:v1', true],
    ['docker.io', 'busybox', true],
    ['quay.io', 'kubevirt/cirros:v1', false],
  ];
  for (const [key, ref, want] of rows) assert.is(keyMatches(key, ref), want, `${key} ~ ${ref}`);
});

test('credentials from imagePullSecrets: every matching entry, the most specific first', () => {
  const ref = 'localhost:5000/qvirt/testguest:v1';
  const creds = credentialsFor(ref, [
    dockerconfigjson('a', { 'localhost:5000': { auth: b64('alice:pw-a') }, 'quay.io': { auth: b64('q:q') } }),
    dockerconfigjson('b', { 'localhost:5000/qvirt': { username: 'bob', password: 'pw:b' } }),
    { name: 'c', type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64(JSON.stringify({ 'https://localhost:5000': { identitytoken: 'refresh-token' } })) } },
  ]);
  assert.equal(creds, [
    { key: 'localhost:5000/qvirt', secret: 'b', username: 'bob', password: 'pw:b' },
    { key: 'localhost:5000', secret: 'a', username: 'alice', password: 'pw-a' },
    { key: 'https://localhost:5000', secret: 'c', identityToken: 'refresh-token' },
  ]);
  assert.equal(JSON.parse(authFileFor(ref, creds[0]!)), { auths: { 'localhost:5000': { auth: b64('bob:pw:b') } } });
  assert.equal(JSON.parse(authFileFor(ref, creds[2]!)), { auths: { 'localhost:5000': { auth: b64('<token>:'), identitytoken: 'refresh-token' } } });
  assert.throws(() => credentialsFor(ref, [{ name: 'opaque', type: 'Opaque', data: { x: b64('y') } }]), /imagePullSecret "opaque" has neither \.dockerconfigjson nor \.dockercfg \(type Opaque\)/);
  assert.throws(() => credentialsFor(ref, [{ name: 'bad', data: { '.dockerconfigjson': b64('{nope') } }]), /imagePullSecret "bad": \.dockerconfigjson is not JSON/);
});

test('TLS per registry: the certs.d directory when present, insecure only where listed', () => {
  const exists = (p: string) => p === '/d/certs.d/localhost:5000';
  assert.equal(tlsOptionsFor('localhost:5000/x:v1', { certsDir: '/d/certs.d' }, exists), { certDir: '/d/certs.d/localhost:5000' });
  assert.equal(tlsOptionsFor('localhost:5001/x:v1', { certsDir: '/d/certs.d' }, exists), {});
  assert.equal(tlsOptionsFor('localhost:5001/x:v1', { insecure: ['localhost:5001'] }, exists), { tlsVerify: false });
  assert.equal(tlsOptionsFor('localhost:5001/x:v1', { insecure: ['http://LOCALHOST:5001/'] }, exists), { tlsVerify: false });
  assert.equal(tlsOptionsFor('quay.io/x:v1', { insecure: ['localhost:5001'] }, exists), {});
  assert.equal(skopeoCopyArgs('docker://r/x:v1', 'dir:/t', { authFile: '/a.json', certDir: '/c', tlsVerify: false }),
    ['--insecure-policy', 'copy', '--quiet', '--src-authfile', '/a.json', '--src-cert-dir', '/c', '--src-tls-verify=false', 'docker://r/x:v1', 'dir:/t']);
  assert.not.ok(skopeoCopyArgs('oci-archive:/x.tar', 'dir:/t', { tlsVerify: false }).includes('--src-tls-verify=false'), 'TLS options only for registries');
});

test("skopeo's messages: the fatal line, and what it says about auth and missing images", () => {
  const stderr = 'time="2026-11-26T17:50:00Z" level=warning msg="x"\ntime="2026-11-26T17:50:01Z" level=fatal msg="initializing source docker://r/x:v1: reading manifest v1 in r/x: unauthorized: authentication required"\n';
  assert.is(skopeoMessage(stderr), 'initializing source docker://r/x:v1: reading manifest v1 in r/x: unauthorized: authentication required');
  assert.is(skopeoMessage('time="t" level=fatal msg="a \\"quoted\\" word"'), 'a "quoted" word');
  assert.ok(new SkopeoError('m', 'reading manifest v1 in r/x: unauthorized: authentication required').unauthorized);
  const missing = new SkopeoError('m', 'reading manifest v9 in r/x: manifest unknown: manifest unknown');
  assert.ok(missing.notFound && !missing.unauthorized);
});

test('pull progress: the manifest\'s total, the blob names of a dir: layout, the pod\'s ContainerCreating message', () => {
  const m = (o: unknown) => Buffer.from(JSON.stringify(o));
  assert.is(manifestTotal(m({ schemaVersion: 2, config: { size: 100 }, layers: [{ size: 1000 }, { size: 24 }] })), 1124);
  assert.is(manifestTotal(m({ schemaVersion: 2, config: { size: 100 }, layers: [] })), 100);
  assert.is(manifestTotal(m({ schemaVersion: 2, manifests: [{ size: 500 }] })), undefined, 'an index: the platform\'s manifest is not known yet');
  assert.is(manifestTotal(m({ schemaVersion: 2, config: { size: 1 }, layers: [{}] })), undefined);
  assert.is(manifestTotal(Buffer.from('not json')), undefined);
  assert.is(isBlobName('a'.repeat(64)), true);
  assert.is(isBlobName('dir-put-blob123456'), true);
  assert.is(isBlobName('manifest.json'), false);
  assert.is(isBlobName('version'), false);
  assert.is(pullProgressMessage('r.io/x:v1', undefined), 'Pulling image "r.io/x:v1"');
  assert.is(pullProgressMessage('r.io/x:v1', { done: 5 * 1048576, total: 20 * 1048576 }), 'Pulling image "r.io/x:v1": 5.0 MiB of 20.0 MiB (25%)');
  assert.is(pullProgressMessage('r.io/x:v1', { done: 3 * 1048576, total: undefined }), 'Pulling image "r.io/x:v1": 3.0 MiB downloaded');
});

test.run();
