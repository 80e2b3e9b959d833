// The node agents' migration CA on a cluster (handler/migration/cluster-tls.ts): what a Secret must
// hold to be used, the handler certificates issued from it (two node agents' relays trust each other
// in a real TLS handshake), and the Secret made once against a real API server even when node agents
// race to create it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { createServer, connect, type TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { clusterMigrationTls, handlerMigrationTls, migrationCaFromSecretData, newMigrationCaData, MIGRATION_CA_SECRET } from '../../handler/migration/cluster-tls.ts';
import { HANDLER_CERT_CN, clientTlsOptions, serverTlsOptions } from '../../handler/migration/tls.ts';
import { issueCertificate } from '../../src/pki/x509.ts';
import { startApiServer } from '../../src/apiserver/index.ts';
import { KubeClient, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('cluster-tls-test', { level: 'warn' });
const now = new Date();
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('a Secret is used only with a CA certificate and its own key, still valid; the error names the key and why', () => {
  const good = newMigrationCaData(now);
  assert.ok(migrationCaFromSecretData(good, now).ok);
  const other = newMigrationCaData(now);
  const leaf = issueCertificate({ subject: { commonName: 'leaf' }, notBefore: now, notAfter: new Date(now.getTime() + 864e5), usages: ['serverAuth'] });
  const expired = issueCertificate({ subject: { commonName: 'old' }, notBefore: new Date(now.getTime() - 2 * 864e5), notAfter: new Date(now.getTime() - 864e5), ca: true });
  const rows: [string, Record<string, string> | undefined, string][] = [
    ['no data', undefined, 'data["ca.crt"] is missing'],
    ['no key', { 'ca.crt': good['ca.crt']! }, 'data["ca.key"] is missing'],
    ['not PEM', { 'ca.crt': b64('hello'), 'ca.key': good['ca.key']! }, 'data["ca.crt"] is not a PEM certificate'],
    ['not a CA', { 'ca.crt': b64(leaf.certPem), 'ca.key': b64(leaf.keyPem) }, 'is not a CA'],
    ['expired', { 'ca.crt': b64(expired.certPem), 'ca.key': b64(expired.keyPem) }, 'data["ca.crt"] expired'],
    ['another CA\'s key', { 'ca.crt': good['ca.crt']!, 'ca.key': other['ca.key']! }, 'data["ca.key"] is not the key of data["ca.crt"]'],
    ['a key that is not one', { 'ca.crt': good['ca.crt']!, 'ca.key': b64('nope') }, 'data["ca.key"] is not a PEM private key'],
  ];
  for (const [what, data, reason] of rows) {
    const r = migrationCaFromSecretData(data, now);
    assert.is(r.ok, false, what);
    if (!r.ok) {
      assert.match(r.reason, `Secret ${MIGRATION_CA_SECRET}: `, what);
      assert.match(r.reason, reason, what);
    }
  }
});

test('two node agents\' certificates from the CA: KubeVirt\'s handler identity, and their relays trust each other over real TLS', async () => {
  const read = migrationCaFromSecretData(newMigrationCaData(now), now);
  assert.ok(read.ok);
  if (!read.ok) return;
  const a = handlerMigrationTls(read.ca, now);
  const b = handlerMigrationTls(read.ca, now);
  assert.is.not(a.cert, b.cert, 'each node agent its own key');
  const cert = new X509Certificate(a.cert);
  assert.ok(cert.checkIssued(new X509Certificate(read.ca.certPem)));
  assert.match(cert.subject, `CN=${HANDLER_CERT_CN}`);
  assert.is(a.caKey, read.ca.keyPem, 'the node agent can issue direct migrations\' credentials');
  const server = createServer(serverTlsOptions(a), (s) => s.end('hello from a'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as { port: number }).port;
    const got = await new Promise<string>((resolve, reject) => {
      const s: TLSSocket = connect({ ...clientTlsOptions(b), host: '127.0.0.1', port, checkServerIdentity: () => undefined }, () => {
        const peer = s.getPeerCertificate();
        if (peer.subject?.CN !== HANDLER_CERT_CN) reject(new Error(`peer ${JSON.stringify(peer.subject)}`));
      });
      let text = '';
      s.on('data', (d: Buffer) => { text += d.toString(); });
      s.on('end', () => resolve(text));
      s.on('error', reject);
    });
    assert.is(got, 'hello from a');
    // A certificate of another CA is refused by the relay.
    const stranger = handlerMigrationTls((migrationCaFromSecretData(newMigrationCaData(now), now) as { ca: { certPem: string; keyPem: string } }).ca, now);
    const refused = await new Promise<string>((resolve) => {
      const s = connect({ ...clientTlsOptions({ ...stranger, ca: read.ca.certPem }), host: '127.0.0.1', port, checkServerIdentity: () => undefined });
      s.on('data', () => resolve('data'));
      s.on('error', (err) => resolve(err.message));
      s.on('close', () => resolve('closed'));
    });
    assert.is.not(refused, 'data');
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('against an API server: node agents racing at start make one Secret and share its CA; a broken Secret is reported, not replaced', async () => {
  const tmp = tempDir('qvctls');
  const api = await startApiServer({ dataDir: join(tmp.path, 'api'), log });
  const client = KubeClient.fromFile(api.kubeconfigPath!);
  try {
    await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubevirt' } });
    const all = await Promise.all([1, 2, 3, 4].map(() => clusterMigrationTls(client, 'kubevirt', log)));
    assert.is(new Set(all.map((t) => t.ca)).size, 1, 'one CA for every node agent');
    assert.is(new Set(all.map((t) => t.cert)).size, 4, 'a certificate each');
    const secret = await client.get<KubeObject & { data: Record<string, string> }>(Resources.secrets, 'kubevirt', MIGRATION_CA_SECRET);
    assert.is(Buffer.from(secret.data['ca.crt']!, 'base64').toString(), all[0]!.ca);
    // A later start reads the same CA.
    assert.is((await clusterMigrationTls(client, 'kubevirt', log)).ca, all[0]!.ca);
    // Broken: the error says what is wrong, and the Secret stays as it is (other node agents trust it).
    await client.patch(Resources.secrets, 'kubevirt', MIGRATION_CA_SECRET, { data: { 'ca.key': b64('garbage') } }, 'merge');
    const err = await clusterMigrationTls(client, 'kubevirt', log).then(() => undefined, (e: Error) => e.message);
    assert.match(String(err), `Secret ${MIGRATION_CA_SECRET}: data["ca.key"] is not a PEM private key`);
    const after = await client.get<KubeObject & { data: Record<string, string> }>(Resources.secrets, 'kubevirt', MIGRATION_CA_SECRET);
    assert.is(after.data['ca.crt'], secret.data['ca.crt']);
  } finally {
    await client.close();
    await api.stop();
    tmp.cleanup();
  }
});

test.run();
