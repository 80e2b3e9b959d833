// The webhook PKI's rotation, as virt-operator rotates virt-api's: renew at 80 % of the lifetime
// (CA 7 d, serving 24 h), a serving certificate for new names or not from the CA, the previous CA
// kept in the bundle while valid; the Secret's data round-trips.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { CA_LIFETIME_MS, CERT_LIFETIME_MS, pkiDecision, pkiFromSecretData, pkiToSecretData, renewPki } from '../../src/admission/webhook-certs.ts';

const hosts = ['virt-controller-webhooks.kubevirt.svc', 'virt-controller-webhooks.kubevirt.svc.cluster.local'];
const t0 = new Date('2026-11-22T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

test('decisions over time and names', () => {
  const pki = renewPki(undefined, { type: 'renew-all', reason: '' }, hosts, t0);
  const other = renewPki(undefined, { type: 'renew-all', reason: '' }, hosts, t0);
  const rows: [string, Parameters<typeof pkiDecision>[0], readonly string[], Date, string][] = [
    ['none yet', undefined, hosts, t0, 'renew-all'],
    ['fresh', pki, hosts, at(3600_000), 'keep'],
    ['serving at 79 %', pki, hosts, at(CERT_LIFETIME_MS * 0.79), 'keep'],
    ['serving at 81 %', pki, hosts, at(CERT_LIFETIME_MS * 0.81), 'renew-serving'],
    ['CA at 81 %', pki, hosts, at(CA_LIFETIME_MS * 0.81), 'renew-all'],
    ['fewer names than it has', pki, [hosts[0]!], at(60_000), 'keep'],
    ['a new name', pki, [...hosts, 'virt-controller-webhooks.qvirt.svc'], at(60_000), 'renew-serving'],
    ['serving from another CA', { ...pki, serving: other.serving }, hosts, at(60_000), 'renew-serving'],
    ['unreadable', { ...pki, ca: { ...pki.ca, certPem: 'junk' } }, hosts, at(60_000), 'renew-all'],
  ];
  for (const [name, p, h, now, want] of rows) assert.is(pkiDecision(p, h, now).type, want, name);
  assert.is(pkiDecision({ ...pki, serving: other.serving }, hosts, at(60_000)).type === 'renew-serving' && (pkiDecision({ ...pki, serving: other.serving }, hosts, at(60_000)) as { reason: string }).reason, 'the serving certificate is not signed by the CA');
});

test('renewals: serving only keeps the CA and bundle; a new CA keeps the old one in the bundle; the Secret round-trips', () => {
  const first = renewPki(undefined, { type: 'renew-all', reason: '' }, hosts, t0);
  const serving = renewPki(first, { type: 'renew-serving', reason: '' }, hosts, at(CERT_LIFETIME_MS * 0.9));
  assert.is(serving.ca.certPem, first.ca.certPem);
  assert.is.not(serving.serving.certPem, first.serving.certPem);
  assert.is(serving.caBundle, first.ca.certPem);
  const cert = new X509Certificate(serving.serving.certPem);
  assert.ok(cert.verify(new X509Certificate(first.ca.certPem).publicKey));
  for (const h of hosts) assert.is(cert.checkHost(h), h);

  const rotated = renewPki(serving, { type: 'renew-all', reason: '' }, hosts, at(CA_LIFETIME_MS * 0.85));
  assert.is.not(rotated.ca.certPem, first.ca.certPem);
  assert.is(rotated.caBundle, rotated.ca.certPem + first.ca.certPem, 'old CA still valid: kept after the new one');
  const later = renewPki(first, { type: 'renew-all', reason: '' }, hosts, at(CA_LIFETIME_MS * 1.1));
  assert.is(later.caBundle, later.ca.certPem, 'an expired previous CA is dropped');

  assert.equal(pkiFromSecretData(pkiToSecretData(rotated)), rotated);
  assert.is(pkiFromSecretData({ 'ca.crt': 'eA==' }), undefined);
  assert.is(pkiFromSecretData(undefined), undefined);
});

test.run();
