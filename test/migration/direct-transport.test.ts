// The direct migration's decisions and credentials: which transport a migration takes
// (handler/migration/transport.ts) and the per-migration certificates (direct-credentials.ts) —
// signed by the handlers' CA, naming the pods and the migration, short-lived, never the CA's key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { chooseMigrationTransport, parseTransportSetting } from '../../handler/migration/transport.ts';
import { issueMigrationCredentials, migrationClientIdentity, migrationTlsHostname, MIGRATION_CREDENTIALS_LIFETIME_MS } from '../../handler/migration/direct-credentials.ts';
import { DIRECT_MIGRATION_PORT, MIGRATION_TRANSPORT_ANNOTATION } from '../../src/api/migration.ts';
import { issueCertificate } from '../../src/pki/x509.ts';
import { directMigrationUri, migrationTlsSetup, MIGRATION_TLS_AUTHZ_ID, parseMigrationOptions, targetDirectMigration, MigrationOptionsError, MIGRATION_TLS_CREDS_ID } from '../../launcher/migration/options.ts';
import { sourceAction } from '../../handler/migration/state.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const base = { annotations: undefined, setting: 'auto' as const, targetPod: { podIP: '10.244.0.7', hostIP: '127.0.0.2' }, passt: false, tls: true, canIssue: true };

test('transport: direct when the target pod has an IP; its own network → KubeVirt\'s port, its node\'s → a free port', () => {
  assert.equal(chooseMigrationTransport(base), { kind: 'direct', address: '10.244.0.7', port: DIRECT_MIGRATION_PORT, why: 'the target pod has an IP' });
  const shared = chooseMigrationTransport({ ...base, targetPod: { podIP: '127.0.0.2', hostIP: '127.0.0.2' } });
  assert.equal(shared, { kind: 'direct', address: undefined, port: undefined, why: 'the target pod has an IP' });
});

test('transport: the relay without a pod IP, with passt, without a CA key, or when asked', () => {
  assert.is(chooseMigrationTransport({ ...base, targetPod: {} }).kind, 'relay');
  assert.is(chooseMigrationTransport({ ...base, targetPod: undefined }).kind, 'relay');
  assert.is(chooseMigrationTransport({ ...base, passt: true }).kind, 'relay');
  assert.is(chooseMigrationTransport({ ...base, canIssue: false }).kind, 'relay');
  // disableTLS: no credentials needed.
  assert.is(chooseMigrationTransport({ ...base, canIssue: false, tls: false }).kind, 'direct');
  assert.is(chooseMigrationTransport({ ...base, setting: 'relay' }).kind, 'relay');
  // The annotation wins over the node agent's setting, both ways; `auto` defers to it.
  assert.is(chooseMigrationTransport({ ...base, setting: 'relay', annotations: { [MIGRATION_TRANSPORT_ANNOTATION]: 'direct' } }).kind, 'direct');
  assert.is(chooseMigrationTransport({ ...base, annotations: { [MIGRATION_TRANSPORT_ANNOTATION]: 'relay' } }).kind, 'relay');
  assert.is(chooseMigrationTransport({ ...base, setting: 'relay', annotations: { [MIGRATION_TRANSPORT_ANNOTATION]: 'auto' } }).kind, 'relay');
  assert.equal([parseTransportSetting('direct'), parseTransportSetting('Direct'), parseTransportSetting(undefined)], ['direct', undefined, undefined]);
});

test('credentials: the target\'s names the migration and the pod, the source\'s the source pod; CA-signed, short-lived, no CA key', () => {
  const now = new Date('2026-11-27T00:00:00Z');
  const ca = issueCertificate({ subject: { commonName: 'qvirt-handler-ca' }, notBefore: new Date(now.getTime() - 864e5), notAfter: new Date(now.getTime() + 864e5), ca: true });
  const server = issueMigrationCredentials({ ca, endpoint: 'server', migrationUid: 'mig-1', podName: 'virt-launcher-a-xyz', addresses: ['10.244.0.7'], now });
  const client = issueMigrationCredentials({ ca, endpoint: 'client', migrationUid: 'mig-1', podName: 'virt-launcher-a-abc', now });
  assert.equal(Object.keys(server).sort(), ['ca-cert.pem', 'server-cert.pem', 'server-key.pem']);
  assert.equal(Object.keys(client).sort(), ['ca-cert.pem', 'client-cert.pem', 'client-key.pem']);
  for (const text of [...Object.values(server), ...Object.values(client)]) assert.not.ok(text.includes(ca.keyPem), 'never the CA key');
  const issuer = new X509Certificate(ca.certPem);
  const s = new X509Certificate(server['server-cert.pem']!);
  const c = new X509Certificate(client['client-cert.pem']!);
  for (const cert of [s, c]) {
    assert.ok(cert.checkIssued(issuer) && cert.verify(issuer.publicKey));
    assert.is(Date.parse(cert.validTo) - now.getTime(), MIGRATION_CREDENTIALS_LIFETIME_MS);
    assert.not.ok(cert.ca);
  }
  assert.is(migrationTlsHostname('mig-1'), 'mig-1.migration.qvirt.io');
  assert.is(s.checkHost('mig-1.migration.qvirt.io'), 'mig-1.migration.qvirt.io');
  assert.is(s.checkHost('mig-2.migration.qvirt.io'), undefined);
  assert.is(s.checkIP('10.244.0.7'), '10.244.0.7');
  assert.match(s.subject, /CN=virt-launcher-a-xyz/);
  assert.match(c.subject, /CN=virt-launcher-a-abc/);
  assert.match(c.subject, /O=migration:mig-1/);
  // The one client identity the target admits, as QEMU prints the certificate's subject.
  assert.is(migrationClientIdentity('mig-1', 'virt-launcher-a-abc'), 'O=migration:mig-1,CN=virt-launcher-a-abc');
  assert.match(s.keyUsage?.join(',') ?? '', /1\.3\.6\.1\.5\.5\.7\.3\.1/);
  assert.match(c.keyUsage?.join(',') ?? '', /1\.3\.6\.1\.5\.5\.7\.3\.2/);
});

test('launcher options: DirectMigration parsed and checked; QEMU\'s TLS steps; IPv6 URIs in brackets', () => {
  const o = parseMigrationOptions('{"DirectMigration":{"Address":"10.0.0.2","Port":49152,"TLS":true,"TLSHostname":"m.migration.qvirt.io"}}');
  assert.equal(o.direct, { Address: '10.0.0.2', Port: 49152, TLS: true, TLSHostname: 'm.migration.qvirt.io' });
  assert.not.ok('direct' in parseMigrationOptions('{}'));
  assert.equal(parseMigrationOptions('{"DirectMigration":{"Address":"10.0.0.2","Port":49152,"TLS":false,"BlockPort":49153}}').direct, { Address: '10.0.0.2', Port: 49152, TLS: false, BlockPort: 49153 });
  for (const bad of ['"49153"', '0', '70000', '49152', '1.5']) {
    assert.throws(() => parseMigrationOptions(`{"DirectMigration":{"Address":"10.0.0.2","Port":49152,"TLS":false,"BlockPort":${bad}}}`), (e: Error) => e instanceof MigrationOptionsError && e.message.startsWith('MigrationOptions.DirectMigration.BlockPort: '), bad);
  }
  for (const bad of ['{"DirectMigration":{"Address":"host","Port":1,"TLS":true}}', '{"DirectMigration":{"Address":"10.0.0.2","Port":0,"TLS":true}}', '{"DirectMigration":{"Address":"10.0.0.2","Port":1}}', '{"DirectMigration":{"Address":"10.0.0.2","Port":1,"TLS":true,"TLSHostname":"a b"}}']) {
    assert.throws(() => parseMigrationOptions(bad), (e: Error) => e instanceof MigrationOptionsError, bad);
  }
  assert.is(directMigrationUri({ Address: 'fd00::7', Port: 49152, TLS: true }), 'tcp:[fd00::7]:49152');
  assert.is(directMigrationUri({ Address: '10.0.0.2', Port: 49152, TLS: true }), 'tcp:10.0.0.2:49152');
  assert.equal(migrationTlsSetup('client', o.direct, '/d'), [
    { execute: 'object-add', arguments: { 'qom-type': 'tls-creds-x509', id: MIGRATION_TLS_CREDS_ID, dir: '/d', endpoint: 'client', 'verify-peer': true } },
    { execute: 'migrate-set-parameters', arguments: { 'tls-creds': MIGRATION_TLS_CREDS_ID, 'tls-hostname': 'm.migration.qvirt.io' } },
  ]);
  assert.equal(migrationTlsSetup('server', { Address: '10.0.0.2', Port: 49152, TLS: true, TLSAuthz: 'O=migration:m,CN=p' }, '/d'), [
    { execute: 'object-add', arguments: { 'qom-type': 'tls-creds-x509', id: MIGRATION_TLS_CREDS_ID, dir: '/d', endpoint: 'server', 'verify-peer': true } },
    { execute: 'object-add', arguments: { 'qom-type': 'authz-simple', id: MIGRATION_TLS_AUTHZ_ID, identity: 'O=migration:m,CN=p' } },
    { execute: 'migrate-set-parameters', arguments: { 'tls-creds': MIGRATION_TLS_CREDS_ID, 'tls-hostname': '', 'tls-authz': MIGRATION_TLS_AUTHZ_ID } },
  ]);
  // Not direct, or without TLS: QEMU's TLS off (a previous direct migration may have set it).
  assert.equal(migrationTlsSetup('client', undefined, ''), [{ execute: 'migrate-set-parameters', arguments: { 'tls-creds': '', 'tls-hostname': '' } }]);
  const vmi = { metadata: { annotations: { 'qvirt.io/direct-migration-target': '{"Address":"10.0.0.2","Port":49152,"TLS":false}' } }, spec: { domain: {} } } as unknown as VirtualMachineInstance;
  assert.equal(targetDirectMigration(vmi), { Address: '10.0.0.2', Port: 49152, TLS: false });
  assert.is(targetDirectMigration({ metadata: {}, spec: { domain: {} } } as unknown as VirtualMachineInstance), undefined);
});

test('source action: a target QEMU\'s own port (qvirt\'s key 49155) is a direct migration, before any relay port', () => {
  const vmi = { metadata: { name: 'a', uid: 'u' }, spec: { domain: { devices: {} } }, status: { migrationState: { migrationUid: 'm', sourceNode: 'n1', targetNode: 'n2', targetNodeAddress: '10.244.0.7', targetDirectMigrationNodePorts: { '49152': 49155 } } } } as unknown as VirtualMachineInstance;
  assert.equal(sourceAction(vmi, 'n1', undefined, false), { kind: 'migrate', host: '10.244.0.7', port: 49152, direct: true });
  // A block migration (a cloud-init disk is copied) waits for the target QEMU's NBD port (qvirt's key 49156), then names it.
  const block = structuredClone(vmi) as VirtualMachineInstance;
  block.spec.volumes = [{ name: 'ci', cloudInitNoCloud: { userData: '#!/bin/sh' } }];
  block.spec.domain.devices.disks = [{ name: 'ci', disk: { bus: 'virtio' } }];
  assert.equal(sourceAction(block, 'n1', undefined, false), { kind: 'none' });
  block.status!.migrationState!.targetDirectMigrationNodePorts = { '49152': 49155, '49153': 49156 };
  assert.equal(sourceAction(block, 'n1', undefined, false), { kind: 'migrate', host: '10.244.0.7', port: 49152, direct: true, blockPort: 49153 });
});

test.run();
