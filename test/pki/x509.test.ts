// The JS-written certificates: parsed by node's X509Certificate, checked by `openssl verify` and
// `openssl x509` (an independent DER parser), and used by a real TLS handshake.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:https';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import { issueCertificate } from '../../src/admission/x509.ts';
import { tempDir } from '../lib/tmp.ts';

const tmp = tempDir('qx509');
test.after(() => tmp.cleanup());

const now = new Date('2026-11-22T00:00:00Z');
const day = 864e5;
const ca = issueCertificate({ commonName: 'kubevirt-ca', notBefore: now, notAfter: new Date(now.getTime() + 7 * day), ca: true });
const leaf = issueCertificate({ commonName: 'virt-api.kubevirt.svc', notBefore: now, notAfter: new Date(now.getTime() + day), ca: false, hosts: ['virt-api.kubevirt.svc', 'localhost', '127.0.0.1', '::1'] }, { keyPem: ca.keyPem, commonName: 'kubevirt-ca' });

test('node reads them: CA flag, subject/issuer, validity, SANs, serverAuth, signature', () => {
  const c = new X509Certificate(ca.certPem);
  const l = new X509Certificate(leaf.certPem);
  assert.ok(c.ca);
  assert.not.ok(l.ca);
  assert.is(c.subject, 'CN=kubevirt-ca');
  assert.is(l.issuer, 'CN=kubevirt-ca');
  assert.is(new Date(l.validFrom).toISOString(), now.toISOString());
  assert.is(new Date(l.validTo).toISOString(), new Date(now.getTime() + day).toISOString());
  assert.is(l.subjectAltName, 'DNS:virt-api.kubevirt.svc, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  assert.equal(l.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.ok(l.verify(c.publicKey));
  assert.ok(c.verify(c.publicKey), 'the CA is self-signed');
  assert.ok(l.checkIssued(c));
});

test('openssl verifies the chain and parses the extensions', async () => {
  writeFileSync(join(tmp.path, 'ca.crt'), ca.certPem);
  writeFileSync(join(tmp.path, 'leaf.crt'), leaf.certPem);
  const v = await execa('openssl', ['verify', '-attime', String(now.getTime() / 1000 + 3600), '-purpose', 'sslserver', '-CAfile', 'ca.crt', 'leaf.crt'], { cwd: tmp.path, reject: false });
  assert.is(v.stdout.trim(), 'leaf.crt: OK', v.stderr);
  const text = (await execa('openssl', ['x509', '-noout', '-text', '-in', 'ca.crt'], { cwd: tmp.path })).stdout;
  assert.match(text, /Basic Constraints: critical\s+CA:TRUE/);
  assert.match(text, /Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
  const leafText = (await execa('openssl', ['x509', '-noout', '-text', '-in', 'leaf.crt'], { cwd: tmp.path })).stdout;
  assert.match(leafText, /Key Usage: critical\s+Digital Signature, Key Encipherment/);
  assert.match(leafText, /TLS Web Server Authentication/);
  assert.match(leafText, /Signature Algorithm: ecdsa-with-SHA256/);
});

test('a TLS server with them is trusted by a client pinning the CA', async () => {
  const fresh = issueCertificate({ commonName: 'ca2', notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + day), ca: true });
  const serving = issueCertificate({ commonName: 'virt-api', notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + day), ca: false, hosts: ['localhost'] }, { keyPem: fresh.keyPem, commonName: 'ca2' });
  const server = createServer({ key: serving.keyPem, cert: serving.certPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as AddressInfo).port;
    const body = await new Promise<string>((resolve, reject) => {
      request({ host: '127.0.0.1', port, servername: 'localhost', ca: fresh.certPem, agent: false }, (res) => { let s = ''; res.on('data', (c: Buffer) => { s += c.toString(); }); res.on('end', () => resolve(s)); }).on('error', reject).end();
    });
    assert.is(body, 'ok');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test.run();
