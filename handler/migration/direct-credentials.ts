// The credentials of one direct migration (QEMU to QEMU with QEMU's own TLS, transport.ts): the
// node agents issue them from the handlers' CA for that one migration — a server certificate for
// the target QEMU naming the target pod and the migration's host name, a client certificate for the
// source QEMU naming the source pod (the one client the target QEMU admits) — valid for MIGRATION_CREDENTIALS_LIFETIME_MS only. The CA's key
// stays in the node agent; the launcher gets the CA's certificate and its own key pair, written in
// QEMU's tls-creds-x509 layout into the pod's migrationTlsDir (0700, files 0600, owned as the pod's
// share directory so the launcher's QEMU can read them), removed when the migration ends.
import { chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { issueCertificate, type KeyPair } from '../../src/pki/x509.ts';

/** How long a direct migration's certificates are valid: QEMU checks them at each channel's handshake, all at the migration's start. */
export const MIGRATION_CREDENTIALS_LIFETIME_MS = 60 * 60_000;
/** How far back a certificate's notBefore goes (the other node's clock may run behind). */
const CLOCK_SKEW_MS = 5 * 60_000;

/** The name the target's certificate carries and the source's QEMU checks (its tls-hostname): one per migration. */
export function migrationTlsHostname(migrationUid: string): string {
  return `${migrationUid.toLowerCase()}.migration.qvirt.io`;
}

export type MigrationEndpoint = 'server' | 'client';

/** The subject of one end's certificate: the pod, in the migration (an organization naming it). */
function subjectOf(migrationUid: string, podName: string) {
  return { commonName: podName, organizations: [`migration:${migrationUid}`] };
}

/**
 * The source's certificate subject as QEMU prints it (`O=…,CN=…`, in the order the certificate
 * holds them): the only client identity the target QEMU admits (its tls-authz).
 */
export function migrationClientIdentity(migrationUid: string, sourcePod: string): string {
  const s = subjectOf(migrationUid, sourcePod);
  return [...s.organizations.map((o) => `O=${o}`), `CN=${s.commonName}`].join(',');
}

/** The files of one end in QEMU's tls-creds-x509 directory layout. Pure apart from the key's making. */
export function issueMigrationCredentials(o: {
  readonly ca: KeyPair;
  readonly endpoint: MigrationEndpoint;
  readonly migrationUid: string;
  /** The pod this end runs in (the certificate's common name). */
  readonly podName: string;
  /** The target pod's addresses (server only), besides the migration's host name. */
  readonly addresses?: readonly string[];
  readonly now?: Date;
}): Record<string, string> {
  const now = o.now ?? new Date();
  const validity = { notBefore: new Date(now.getTime() - CLOCK_SKEW_MS), notAfter: new Date(now.getTime() + MIGRATION_CREDENTIALS_LIFETIME_MS) };
  const subject = subjectOf(o.migrationUid, o.podName);
  const pair = o.endpoint === 'server'
    ? issueCertificate({ subject, ...validity, usages: ['serverAuth'], hosts: [migrationTlsHostname(o.migrationUid), ...(o.addresses ?? [])] }, o.ca)
    : issueCertificate({ subject, ...validity, usages: ['clientAuth'] }, o.ca);
  return { 'ca-cert.pem': o.ca.certPem, [`${o.endpoint}-cert.pem`]: pair.certPem, [`${o.endpoint}-key.pem`]: pair.keyPem };
}

/**
 * Writes `files` into `dir` (made 0700, files 0600), owned by whoever owns the directory above
 * it (the launcher's share directory): the launcher's QEMU reads them, nobody else.
 */
export async function writeMigrationCredentials(dir: string, files: Record<string, string>): Promise<void> {
  const parent = dirname(dir);
  await mkdir(parent, { recursive: true });
  const owner = await stat(dirname(parent));
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { mode: 0o700 });
  await chown(dir, owner.uid, owner.gid);
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    await writeFile(path, text, { mode: 0o600 });
    await chown(path, owner.uid, owner.gid);
  }
}

/** Removes a migration's credentials (nothing there is fine). */
export async function removeMigrationCredentials(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
