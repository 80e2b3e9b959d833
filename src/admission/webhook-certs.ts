/**
 * The webhook server's certificates, as virt-operator keeps virt-api's: a CA (7 days) and a serving
 * certificate it signs (24 hours) for the Service's names, both renewed at 80 % of their lifetime,
 * kept in one Secret every replica reads; the CA bundle (the current CA and the previous one while
 * it is still valid, so certificates of either verify during a rotation) is what the
 * ValidatingWebhookConfiguration's webhooks carry as `clientConfig.caBundle`.
 */
import { X509Certificate } from 'node:crypto';
import { certificateNames } from '../pki/certificate-names.ts';
import { issueCertificate, type KeyPair } from '../pki/x509.ts';

export const CA_LIFETIME_MS = 7 * 24 * 3600_000;
export const CERT_LIFETIME_MS = 24 * 3600_000;
/** Renewed once this share of the lifetime has passed (virt-operator's 0.8). */
export const RENEW_AT = 0.8;

/** The Secret's data keys (base64 in the Secret, PEM here). */
export const SecretKeys = { CaCert: 'ca.crt', CaKey: 'ca.key', CaBundle: 'ca-bundle.crt', Cert: 'tls.crt', Key: 'tls.key' } as const;

export interface WebhookPki {
  readonly ca: KeyPair;
  readonly serving: KeyPair;
  /** PEM, the current CA first. */
  readonly caBundle: string;
}

const renewDue = (c: X509Certificate, now: Date) => {
  const from = Date.parse(c.validFrom);
  const to = Date.parse(c.validTo);
  return now.getTime() >= from + (to - from) * RENEW_AT;
};

export type PkiDecision = { readonly type: 'keep' } | { readonly type: 'renew-serving'; readonly reason: string } | { readonly type: 'renew-all'; readonly reason: string };

/** What to do with the PKI the Secret holds (undefined: none yet). */
export function pkiDecision(pki: WebhookPki | undefined, hosts: readonly string[], now: Date): PkiDecision {
  if (!pki) return { type: 'renew-all', reason: 'no certificates yet' };
  let ca: X509Certificate;
  let cert: X509Certificate;
  try {
    ca = new X509Certificate(pki.ca.certPem);
    cert = new X509Certificate(pki.serving.certPem);
  } catch (err) {
    return { type: 'renew-all', reason: `unreadable certificate: ${(err as Error).message}` };
  }
  if (renewDue(ca, now)) return { type: 'renew-all', reason: `the CA is due for renewal (valid until ${ca.validTo})` };
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return { type: 'renew-serving', reason: 'the serving certificate is not signed by the CA' };
  if (renewDue(cert, now)) return { type: 'renew-serving', reason: `the serving certificate is due for renewal (valid until ${cert.validTo})` };
  const missing = hosts.filter((h) => !certificateNames(cert, h));
  if (missing.length) return { type: 'renew-serving', reason: `the serving certificate does not name ${missing.join(', ')}` };
  return { type: 'keep' };
}

const CA_NAME = 'kubevirt.io-webhooks-ca';

/** Applies a decision: a new CA (the old one stays in the bundle while valid) and/or serving certificate. */
export function renewPki(pki: WebhookPki | undefined, d: PkiDecision, hosts: readonly string[], now: Date): WebhookPki {
  if (d.type === 'keep' && pki) return pki;
  // Backdated a minute: clocks of the API server and the nodes differ a little.
  const from = new Date(now.getTime() - 60_000);
  const ca = d.type === 'renew-all' || !pki ? issueCertificate({ subject: { commonName: CA_NAME }, notBefore: from, notAfter: new Date(now.getTime() + CA_LIFETIME_MS), ca: true }) : pki.ca;
  const serving = issueCertificate({ subject: { commonName: hosts[0] ?? 'webhook' }, notBefore: from, notAfter: new Date(now.getTime() + CERT_LIFETIME_MS), usages: ['serverAuth'], hosts }, ca);
  const previous = pki && pki.ca.certPem !== ca.certPem && Date.parse(new X509Certificate(pki.ca.certPem).validTo) > now.getTime() ? [pki.ca.certPem] : [];
  return { ca, serving, caBundle: [ca.certPem, ...previous].join('') };
}

/** The Secret's `data` for a PKI, and back (undefined when a key is missing). */
export function pkiToSecretData(p: WebhookPki): Record<string, string> {
  const b = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  return { [SecretKeys.CaCert]: b(p.ca.certPem), [SecretKeys.CaKey]: b(p.ca.keyPem), [SecretKeys.CaBundle]: b(p.caBundle), [SecretKeys.Cert]: b(p.serving.certPem), [SecretKeys.Key]: b(p.serving.keyPem) };
}
export function pkiFromSecretData(data: Readonly<Record<string, string>> | undefined): WebhookPki | undefined {
  const get = (k: string) => (data?.[k] ? Buffer.from(data[k], 'base64').toString('utf8') : undefined);
  const [caCert, caKey, bundle, cert, key] = [get(SecretKeys.CaCert), get(SecretKeys.CaKey), get(SecretKeys.CaBundle), get(SecretKeys.Cert), get(SecretKeys.Key)];
  if (!caCert || !caKey || !cert || !key) return undefined;
  return { ca: { certPem: caCert, keyPem: caKey }, serving: { certPem: cert, keyPem: key }, caBundle: bundle ?? caCert };
}
