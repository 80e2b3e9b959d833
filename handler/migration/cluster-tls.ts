// The node agents' migration TLS on a cluster: one CA in a Secret of their namespace
// (MIGRATION_CA_SECRET: ca.crt, ca.key), made by the first node agent that finds none, read by every
// other. Each node agent issues itself, at start and in memory, a handler certificate from it
// (KubeVirt's handler identity as common name: what the relay's peers check), and with the CA's key
// the credentials of each direct migration (direct-credentials.ts): short-lived, naming the two pods.
//
// KubeVirt's virt-operator issues virt-handler's certificate from its `kubevirt-ca` and keeps that key
// to itself; qvirt's node agents hold this CA's key because each QEMU → QEMU migration gets its own
// credentials from the node agents at its two ends. The CA signs nothing else: it is trusted only by
// the node agents' relays and the migrating QEMUs, and only for the handler identity or one migration's
// names. The local mode keeps the same CA in a directory (tls.ts ensureMigrationTls).
import { X509Certificate, createPublicKey } from 'node:crypto';
import type { Logger } from '../../src/log/logger.ts';
import { isAlreadyExists, isNotFound, type KubeClient, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { issueCertificate, type KeyPair } from '../../src/pki/x509.ts';
import { HANDLER_CERT_CN, type MigrationTls } from './tls.ts';

/** The Secret, in the node agents' namespace, holding the migration CA. */
export const MIGRATION_CA_SECRET = 'kubevirt-virt-handler-migration-ca';
/** The CA's common name. */
export const MIGRATION_CA_CN = 'qvirt-handler-migration-ca';
/** How long the CA is valid (the local mode's CA files: ten years). */
const CA_LIFETIME_MS = 3650 * 864e5;
/** How long a node agent's own certificate is valid; it is issued anew at every start. */
const HANDLER_CERT_LIFETIME_MS = 365 * 864e5;

interface Secret extends KubeObject { type?: string; data?: Record<string, string> }

/** The CA in a Secret's data, or why it is not usable (names the key and the reason). */
export function migrationCaFromSecretData(data: Record<string, string> | undefined, now: Date): { ok: true; ca: KeyPair } | { ok: false; reason: string } {
  const where = `Secret ${MIGRATION_CA_SECRET}`;
  const crt = data?.['ca.crt'];
  const key = data?.['ca.key'];
  if (!crt) return { ok: false, reason: `${where}: data["ca.crt"] is missing` };
  if (!key) return { ok: false, reason: `${where}: data["ca.key"] is missing` };
  const ca: KeyPair = { certPem: Buffer.from(crt, 'base64').toString('utf8'), keyPem: Buffer.from(key, 'base64').toString('utf8') };
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(ca.certPem);
  } catch (err) {
    return { ok: false, reason: `${where}: data["ca.crt"] is not a PEM certificate: ${(err as Error).message}` };
  }
  if (!cert.ca) return { ok: false, reason: `${where}: data["ca.crt"] (${cert.subject}) is not a CA` };
  if (Date.parse(cert.validTo) <= now.getTime()) return { ok: false, reason: `${where}: data["ca.crt"] expired ${cert.validTo}` };
  try {
    if (!createPublicKey(ca.keyPem).equals(cert.publicKey)) return { ok: false, reason: `${where}: data["ca.key"] is not the key of data["ca.crt"]` };
  } catch (err) {
    return { ok: false, reason: `${where}: data["ca.key"] is not a PEM private key: ${(err as Error).message}` };
  }
  return { ok: true, ca };
}

/** A new CA as a Secret's data. */
export function newMigrationCaData(now: Date): Record<string, string> {
  const ca = issueCertificate({ subject: { commonName: MIGRATION_CA_CN }, notBefore: now, notAfter: new Date(now.getTime() + CA_LIFETIME_MS), ca: true });
  return { 'ca.crt': Buffer.from(ca.certPem).toString('base64'), 'ca.key': Buffer.from(ca.keyPem).toString('base64') };
}

/** This node agent's migration TLS from the CA: its own handler certificate (server and client) and the CA's key to issue with. */
export function handlerMigrationTls(ca: KeyPair, now: Date): MigrationTls {
  const own = issueCertificate({ subject: { commonName: HANDLER_CERT_CN }, notBefore: now, notAfter: new Date(now.getTime() + HANDLER_CERT_LIFETIME_MS), usages: ['serverAuth', 'clientAuth'] }, ca);
  return { ca: ca.certPem, cert: own.certPem, key: own.keyPem, caKey: ca.keyPem };
}

/**
 * The migration TLS from the Secret in `namespace`, which is created when absent (a node agent that
 * loses the race to create it reads the winner's). A Secret that is there but unusable is not
 * replaced (the other node agents trust it): the error names it and why.
 */
export async function clusterMigrationTls(client: KubeClient, namespace: string, log: Logger, now = () => new Date()): Promise<MigrationTls> {
  for (let attempt = 0; ; attempt++) {
    let secret: Secret | undefined;
    try {
      secret = await client.get<Secret>(Resources.secrets, namespace, MIGRATION_CA_SECRET);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (secret) {
      const read = migrationCaFromSecretData(secret.data, now());
      if (!read.ok) throw new Error(read.reason);
      return handlerMigrationTls(read.ca, now());
    }
    try {
      await client.create<Secret>(Resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: MIGRATION_CA_SECRET, namespace, labels: { 'kubevirt.io': '' } }, type: 'Opaque', data: newMigrationCaData(now()) });
      log.info({ namespace, secret: MIGRATION_CA_SECRET }, 'migration CA created');
    } catch (err) {
      if (!(isAlreadyExists(err) && attempt < 3)) throw err;
    }
  }
}
