// A CA and the certificates it signs as PEM files in a directory, made on first use and reused
// afterwards (clients keep trusting the CA across restarts): `ca.crt` + `ca.key`, `<name>.crt` +
// `<name>.key`. Keys are written 0600, certificates 0644, the directory is 0700. Both are valid ten
// years from their making. A certificate is made anew when it no longer fits: not signed by the
// directory's CA (the CA was made again), expired, or not naming every host asked for (the node's
// address changed).
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certificateNames } from './certificate-names.ts';
import { issueCertificate, type DistinguishedName, type EndEntityProfile, type KeyPair } from './x509.ts';

/** How long the certificates of a directory are valid (openssl's `-days 3650` they were made with before). */
export const CERT_FILES_LIFETIME_DAYS = 3650;

const validity = (now: Date) => ({ notBefore: now, notAfter: new Date(now.getTime() + CERT_FILES_LIFETIME_DAYS * 864e5) });

function readPair(dir: string, name: string): KeyPair | undefined {
  const [cert, key] = [join(dir, `${name}.crt`), join(dir, `${name}.key`)];
  return existsSync(cert) && existsSync(key) ? { certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') } : undefined;
}

function writePair(dir: string, name: string, pair: KeyPair): KeyPair {
  writeFileSync(join(dir, `${name}.key`), pair.keyPem, { mode: 0o600 });
  writeFileSync(join(dir, `${name}.crt`), pair.certPem, { mode: 0o644 });
  return pair;
}

/** `dir/ca.crt` + `dir/ca.key`: a self-signed CA named `commonName`, made if either file is missing. */
export function ensureCaFiles(dir: string, commonName: string, now = new Date()): KeyPair {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return readPair(dir, 'ca') ?? writePair(dir, 'ca', issueCertificate({ subject: { commonName }, ...validity(now), ca: true }));
}

/** Whether the certificate `pair` holds still fits: signed by `ca`, valid at `now`, naming every one of `hosts`. */
export function certificateFits(pair: KeyPair, ca: KeyPair, hosts: readonly string[], now: Date): boolean {
  try {
    const cert = new X509Certificate(pair.certPem);
    const issuer = new X509Certificate(ca.certPem);
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey) && Date.parse(cert.validTo) > now.getTime() && hosts.every((h) => certificateNames(cert, h));
  } catch {
    return false;
  }
}

/** `dir/<name>.crt` + `.key` for `subject` and `profile`, signed by `dir/ca.*` (see ensureCaFiles); kept while it fits. */
export function ensureCertFiles(dir: string, name: string, subject: DistinguishedName, profile: EndEntityProfile, now = new Date()): KeyPair {
  const ca = readPair(dir, 'ca');
  if (!ca) throw new Error(`no CA in ${dir} to sign ${name}.crt: ca.crt and ca.key are made by ensureCaFiles first`);
  const held = readPair(dir, name);
  if (held && certificateFits(held, ca, profile.hosts ?? [], now)) return held;
  return writePair(dir, name, issueCertificate({ subject, ...validity(now), ...profile }, ca));
}
