// The project's X.509 issuer (src/pki/x509.ts): a table of requests — CAs, serving certificates
// with DNS and IP SANs, client certificates with organizations, both usages — each read back by
// node's X509Certificate (subject, issuer, CA flag, SANs, extended key usages, validity, signature
// and chain); `openssl x509`/`openssl verify` as an independent DER parser for what node does not
// show (criticality, key usage bits, key identifiers); and real TLS handshakes with them, client
// certificates included, where OpenSSL in node:tls enforces the extended key usages and SANs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import { certificateNames } from '../../src/pki/certificate-names.ts';
import { CertificateIssueError, ipAddressBytes, issueCertificate, type CertificateRequest, type KeyPair } from '../../src/pki/x509.ts';
import { tempDir } from '../lib/tmp.ts';

const tmp = tempDir('qx509');
test.after(() => tmp.cleanup());

const now = new Date('2026-11-22T00:00:00Z');
const day = 864e5;
const span = (days: number) => ({ notBefore: now, notAfter: new Date(now.getTime() + days * day) });
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

const ca = issueCertificate({ subject: { commonName: 'qvirt-ca' }, ...span(3650), ca: true });

interface Row {
  readonly name: string;
  readonly req: CertificateRequest;
  readonly issuer: KeyPair | undefined;
  readonly subject: string;
  readonly issuerName: string;
  readonly isCa: boolean;
  readonly san: string | undefined;
  readonly eku: readonly string[] | undefined;
}

const rows: Row[] = [
  { name: 'self-signed CA', req: { subject: { commonName: 'qvirt-handler-ca' }, ...span(3650), ca: true }, issuer: undefined, subject: 'CN=qvirt-handler-ca', issuerName: 'CN=qvirt-handler-ca', isCa: true, san: undefined, eku: undefined },
  {
    name: 'API server serving certificate', issuer: ca,
    req: { subject: { commonName: 'qvirt-apiserver' }, ...span(3650), usages: ['serverAuth'], hosts: ['127.0.0.1', '::1', 'localhost', '10.0.0.5', 'node-1.example'] },
    subject: 'CN=qvirt-apiserver', issuerName: 'CN=qvirt-ca', isCa: false,
    san: 'IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost, IP Address:10.0.0.5, DNS:node-1.example', eku: [SERVER_AUTH],
  },
  {
    name: 'admin client certificate (O=system:masters)', issuer: ca,
    req: { subject: { organizations: ['system:masters'], commonName: 'qvirt-admin' }, ...span(3650), usages: ['clientAuth'] },
    subject: 'O=system:masters\nCN=qvirt-admin', issuerName: 'CN=qvirt-ca', isCa: false, san: undefined, eku: [CLIENT_AUTH],
  },
  {
    name: 'migration certificate, server and client', issuer: ca,
    req: { subject: { commonName: 'kubevirt.io:system:node:virt-handler' }, ...span(3650), usages: ['serverAuth', 'clientAuth'] },
    subject: 'CN=kubevirt.io:system:node:virt-handler', issuerName: 'CN=qvirt-ca', isCa: false, san: undefined, eku: [SERVER_AUTH, CLIENT_AUTH],
  },
  {
    name: 'webhook serving certificate past 2049 (GeneralizedTime), a host twice', issuer: ca,
    req: { subject: { commonName: 'virt-api.kubevirt.svc' }, notBefore: now, notAfter: new Date('2051-01-01T00:00:00Z'), usages: ['serverAuth'], hosts: ['virt-api.kubevirt.svc', 'virt-api.kubevirt.svc', '::ffff:10.1.2.3'] },
    subject: 'CN=virt-api.kubevirt.svc', issuerName: 'CN=qvirt-ca', isCa: false, san: 'DNS:virt-api.kubevirt.svc, IP Address:0:0:0:0:0:FFFF:A01:203', eku: [SERVER_AUTH],
  },
];

const issued = rows.map((r) => ({ row: r, pair: issueCertificate(r.req, r.issuer) }));

for (const { row, pair } of issued) {
  test(`${row.name}: node reads what was asked, and the chain verifies`, () => {
    const cert = new X509Certificate(pair.certPem);
    const signer = new X509Certificate((row.issuer ?? pair).certPem);
    assert.is(cert.subject, row.subject);
    assert.is(cert.issuer, row.issuerName);
    assert.is(cert.ca, row.isCa);
    assert.is(cert.subjectAltName, row.san);
    assert.equal(cert.keyUsage, row.eku);
    assert.is(new Date(cert.validFrom).toISOString(), row.req.notBefore.toISOString());
    assert.is(new Date(cert.validTo).toISOString(), row.req.notAfter.toISOString());
    assert.ok(cert.checkIssued(signer), 'issued by its CA (names and key identifiers)');
    assert.ok(cert.verify(signer.publicKey), 'signed by its CA');
    assert.ok(cert.checkPrivateKey(createPrivateKey(pair.keyPem)), 'the key is the certificate\'s');
    for (const h of row.req.ca ? [] : row.req.hosts ?? []) assert.ok(certificateNames(cert, h), `names ${h}`);
  });
}

test('each certificate has a serial of its own', () => {
  const serials = issued.map(({ pair }) => new X509Certificate(pair.certPem).serialNumber);
  assert.is(new Set(serials).size, serials.length);
});

test('openssl reads the extensions node does not show: criticality, key usage bits, key identifiers; verify by purpose', async () => {
  const write = (name: string, pem: string) => { writeFileSync(join(tmp.path, name), pem); return name; };
  write('ca.crt', ca.certPem);
  const text = async (f: string) => (await execa('openssl', ['x509', '-noout', '-text', '-in', f], { cwd: tmp.path })).stdout;
  const caText = await text('ca.crt');
  assert.match(caText, /Basic Constraints: critical\s+CA:TRUE/);
  assert.match(caText, /Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
  const caKeyId = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(caText)?.[1];
  assert.ok(caKeyId);
  const at = String(now.getTime() / 1000 + 3600);
  for (const [i, { row, pair }] of issued.entries()) {
    if (row.req.ca || row.issuer !== ca) continue;
    const f = write(`leaf-${i}.crt`, pair.certPem);
    const t = await text(f);
    assert.match(t, /Basic Constraints: \n\s+CA:FALSE/, row.name);
    assert.match(t, /Key Usage: critical\s+Digital Signature, Key Encipherment/, row.name);
    assert.match(t, /Signature Algorithm: ecdsa-with-SHA256/, row.name);
    assert.match(t, new RegExp(`Authority Key Identifier:\\s+(keyid:)?${caKeyId}`), row.name);
    for (const usage of row.req.usages) {
      const v = await execa('openssl', ['verify', '-attime', at, '-purpose', usage === 'serverAuth' ? 'sslserver' : 'sslclient', '-CAfile', 'ca.crt', f], { cwd: tmp.path, reject: false });
      assert.is(v.stdout.trim(), `${f}: OK`, `${row.name} as ${usage}: ${v.stderr}`);
    }
  }
});

test('requests that cannot be issued are refused, naming why', () => {
  const leaf = issued[2]!.pair;
  const other = issueCertificate({ subject: { commonName: 'other-ca' }, ...span(1), ca: true });
  const cases: [string, () => unknown, RegExp][] = [
    ['an issuer that is not a CA', () => issueCertificate({ subject: { commonName: 'x' }, ...span(1), usages: ['serverAuth'] }, leaf), /CN=x: the issuer O=system:masters\nCN=qvirt-admin is not a CA/],
    ['a key that is not the issuer certificate\'s', () => issueCertificate({ subject: { commonName: 'x' }, ...span(1), usages: ['serverAuth'] }, { certPem: ca.certPem, keyPem: other.keyPem }), /private key is not the key of its certificate CN=qvirt-ca/],
    ['an unreadable issuer certificate', () => issueCertificate({ subject: { commonName: 'x' }, ...span(1), usages: ['serverAuth'] }, { certPem: 'junk', keyPem: ca.keyPem }), /the issuer's certificate does not parse/],
    ['notAfter before notBefore', () => issueCertificate({ subject: { commonName: 'x' }, notBefore: now, notAfter: now, ca: true }), /notAfter .* is not after notBefore/],
    ['no extended key usage', () => issueCertificate({ subject: { commonName: 'x' }, ...span(1), usages: [] }, ca), /needs an extended key usage/],
    ['a host that is not ASCII', () => issueCertificate({ subject: { commonName: 'x' }, ...span(1), usages: ['serverAuth'], hosts: ['bücher.example'] }, ca), /subjectAltName "bücher.example" is neither/],
  ];
  for (const [name, fn, message] of cases) assert.throws(fn, (err: Error) => err instanceof CertificateIssueError && message.test(err.message), name);
});

test('IP addresses as iPAddress bytes', () => {
  const cases: [string, string][] = [
    ['127.0.0.1', '7f000001'],
    ['::1', '00000000000000000000000000000001'],
    ['::', '00000000000000000000000000000000'],
    ['2001:db8::', '20010db8000000000000000000000000'],
    ['fe80::1%eth0', 'fe800000000000000000000000000001'],
    ['::ffff:10.1.2.3', '00000000000000000000ffff0a010203'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
  ];
  for (const [ip, hex] of cases) assert.is(ipAddressBytes(ip).toString('hex'), hex, ip);
});

/** A TLS server that asks for a client certificate; what each side saw of one connection. */
async function handshake(server: { cert: KeyPair; ca: string[] }, client: { ca: string[]; cert?: KeyPair; servername: string }):
  Promise<{ client: string; serverSaw: string | undefined; peerSubject: string | undefined }> {
  let serverSaw: string | undefined;
  let peerSubject: string | undefined;
  const srv = createServer({ key: server.cert.keyPem, cert: server.cert.certPem, ca: server.ca, requestCert: true, rejectUnauthorized: false }, (s: TLSSocket) => {
    serverSaw = s.authorized ? 'authorized' : `refused: ${String(s.authorizationError)}`;
    peerSubject = s.getPeerX509Certificate()?.subject;
    s.end('ok');
  });
  srv.on('tlsClientError', () => {});
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const { port } = srv.address() as AddressInfo;
    const got = await new Promise<string>((resolve) => {
      const s = connect({ host: '127.0.0.1', port, servername: client.servername, ca: client.ca, ...(client.cert ? { key: client.cert.keyPem, cert: client.cert.certPem } : {}) });
      let body = '';
      s.on('data', (d: Buffer) => { body += d.toString(); });
      s.on('end', () => resolve(body));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(`error: ${e.code ?? e.message}`));
    });
    return { client: got, serverSaw, peerSubject };
  } finally {
    await new Promise<void>((r) => srv.close(() => r()));
  }
}

test('TLS: the serving and client certificates authenticate both ends; the usages and names are enforced', async () => {
  const t0 = new Date(Date.now() - 60_000);
  const live = (days: number) => ({ notBefore: t0, notAfter: new Date(t0.getTime() + days * day) });
  const tlsCa = issueCertificate({ subject: { commonName: 'qvirt-ca' }, ...live(1), ca: true });
  const otherCa = issueCertificate({ subject: { commonName: 'another-ca' }, ...live(1), ca: true });
  const serving = issueCertificate({ subject: { commonName: 'qvirt-apiserver' }, ...live(1), usages: ['serverAuth'], hosts: ['127.0.0.1', 'localhost'] }, tlsCa);
  const admin = issueCertificate({ subject: { organizations: ['system:masters'], commonName: 'qvirt-admin' }, ...live(1), usages: ['clientAuth'] }, tlsCa);
  const foreign = issueCertificate({ subject: { commonName: 'intruder' }, ...live(1), usages: ['clientAuth'] }, otherCa);
  const serverOnly = issueCertificate({ subject: { commonName: 'server-only' }, ...live(1), usages: ['serverAuth'] }, tlsCa);
  const cases: [string, Parameters<typeof handshake>[0], Parameters<typeof handshake>[1], string, string | undefined][] = [
    ['client certificate of the CA', { cert: serving, ca: [tlsCa.certPem] }, { ca: [tlsCa.certPem], cert: admin, servername: 'localhost' }, 'ok', 'authorized'],
    ['no client certificate', { cert: serving, ca: [tlsCa.certPem] }, { ca: [tlsCa.certPem], servername: 'localhost' }, 'ok', 'refused: UNABLE_TO_GET_ISSUER_CERT'],
    ['client certificate of another CA', { cert: serving, ca: [tlsCa.certPem] }, { ca: [tlsCa.certPem], cert: foreign, servername: 'localhost' }, 'ok', 'refused: UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    ['a serverAuth-only certificate as a client certificate', { cert: serving, ca: [tlsCa.certPem] }, { ca: [tlsCa.certPem], cert: serverOnly, servername: 'localhost' }, 'ok', 'refused: INVALID_PURPOSE'],
    ['a clientAuth-only certificate as the server\'s', { cert: admin, ca: [tlsCa.certPem] }, { ca: [tlsCa.certPem], servername: 'localhost' }, 'error: INVALID_PURPOSE', undefined],
    ['a server name the certificate does not have', { cert: serving, ca: [tlsCa.certPem] }, { ca: [tlsCa.certPem], servername: 'elsewhere.example' }, 'error: ERR_TLS_CERT_ALTNAME_INVALID', undefined],
    ['a client pinning another CA', { cert: serving, ca: [tlsCa.certPem] }, { ca: [otherCa.certPem], servername: 'localhost' }, 'error: SELF_SIGNED_CERT_IN_CHAIN', undefined],
  ];
  for (const [name, server, client, wantClient, wantServer] of cases) {
    const r = await handshake(server, client);
    assert.is(r.client, wantClient, name);
    if (wantServer) assert.is(r.serverSaw, wantServer, name);
    if (wantServer === 'authorized') assert.is(r.peerSubject, 'O=system:masters\nCN=qvirt-admin', name);
  }
});

test('TLS: two CAs of one name in a bundle (a rotation) — the key identifiers lead to the one that signed', async () => {
  const t0 = new Date(Date.now() - 60_000);
  const live = { notBefore: t0, notAfter: new Date(t0.getTime() + day) };
  const oldCa = issueCertificate({ subject: { commonName: 'kubevirt.io-webhooks-ca' }, ...live, ca: true });
  const newCa = issueCertificate({ subject: { commonName: 'kubevirt.io-webhooks-ca' }, ...live, ca: true });
  for (const [signer, name] of [[oldCa, 'old'], [newCa, 'new']] as const) {
    const serving = issueCertificate({ subject: { commonName: 'virt-api' }, ...live, usages: ['serverAuth'], hosts: ['localhost'] }, signer);
    const client = issueCertificate({ subject: { commonName: 'api' }, ...live, usages: ['clientAuth'] }, signer);
    for (const bundle of [[newCa.certPem, oldCa.certPem], [oldCa.certPem, newCa.certPem]]) {
      const r = await handshake({ cert: serving, ca: bundle }, { ca: bundle, cert: client, servername: 'localhost' });
      assert.is(r.client, 'ok', `signed by the ${name} CA`);
      assert.is(r.serverSaw, 'authorized', `signed by the ${name} CA`);
    }
  }
});

test.run();
