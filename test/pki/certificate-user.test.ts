// The user a client certificate names, as Kubernetes reads it (src/pki/certificate-user.ts): CN the
// name, each O a group, system:authenticated always.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { userOfCertificate } from '../../src/pki/certificate-user.ts';
import { issueCertificate, type DistinguishedName } from '../../src/pki/x509.ts';

const notBefore = new Date('2026-11-22T00:00:00Z');
const notAfter = new Date('2027-11-22T00:00:00Z');
const ca = issueCertificate({ subject: { commonName: 'qvirt-ca' }, notBefore, notAfter, ca: true });
const userOf = (subject: DistinguishedName) =>
  userOfCertificate(new X509Certificate(issueCertificate({ subject, notBefore, notAfter, usages: ['clientAuth'] }, ca).certPem));

test('CN is the name, each O a group, then system:authenticated', () => {
  assert.equal(userOf({ organizations: ['system:masters'], commonName: 'qvirt-admin' }), { name: 'qvirt-admin', groups: ['system:masters', 'system:authenticated'] });
  assert.equal(userOf({ organizations: ['a', 'b'], commonName: 'alice' }), { name: 'alice', groups: ['a', 'b', 'system:authenticated'] });
  assert.equal(userOf({ commonName: 'system:node:n1' }), { name: 'system:node:n1', groups: ['system:authenticated'] });
});

test.run();
