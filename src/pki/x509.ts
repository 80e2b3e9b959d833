/**
 * The project's one X.509 issuer, in JavaScript: a new EC P-256 key from node:crypto, the
 * TBSCertificate assembled in DER here, signed ecdsa-with-SHA256 by the issuer's key (no CSR, no
 * `openssl` CLI — the qvirt/virt image has none, and virt-operator makes its certificates
 * in-process too). X.509 v3 with the extensions `openssl` gave the certificates it used to make:
 * basicConstraints, keyUsage, extKeyUsage and subjectAltName for end entities, subject and
 * authority key identifiers (so a verifier finds the right CA among CAs of one name, as in a
 * webhook CA bundle during a rotation).
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString, boolean, children, contextTag, explicit, namedBits, objectIdentifier, octetString, readElement, readObjectIdentifier,
  sequence, set, Tag, time, tlv, unsignedInteger, utf8String, type Element,
} from './der.ts';

const OID = {
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
} as const;

/** The extended key usages qvirt's certificates carry, by their RFC 5280 names. */
export const ExtendedKeyUsageOid = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' } as const;
export type ExtendedKeyUsage = keyof typeof ExtendedKeyUsageOid;

const KeyUsageBit = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

/** A subject: the organizations (each a group to Kubernetes, e.g. system:masters) before the common name, as `/O=…/CN=…`. */
export interface DistinguishedName {
  readonly commonName: string;
  readonly organizations?: readonly string[];
}

interface CertificateBasics {
  readonly subject: DistinguishedName;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** A CA: basicConstraints CA:TRUE, keyUsage digitalSignature, keyCertSign, cRLSign (all critical). */
export interface CaProfile {
  readonly ca: true;
}

/**
 * An end entity: basicConstraints CA:FALSE, keyUsage digitalSignature, keyEncipherment (critical),
 * extKeyUsage `usages`, and `hosts` (IP addresses and DNS names) as subjectAltName.
 */
export interface EndEntityProfile {
  readonly ca?: false;
  readonly usages: readonly ExtendedKeyUsage[];
  readonly hosts?: readonly string[];
}

export type CertificateProfile = CaProfile | EndEntityProfile;
export type CertificateRequest = CertificateBasics & CertificateProfile;

/** PEM: a PKCS#8 private key and its certificate. */
export interface KeyPair {
  readonly keyPem: string;
  readonly certPem: string;
}

export class CertificateIssueError extends Error {
  constructor(subject: DistinguishedName, why: string) {
    super(`cannot issue a certificate for CN=${subject.commonName}: ${why}`);
    this.name = 'CertificateIssueError';
  }
}

const pem = (label: string, der: Buffer): string => `-----BEGIN ${label}-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;

function distinguishedName(dn: DistinguishedName): Buffer {
  const rdn = (oid: string, value: string) => set(sequence(objectIdentifier(oid), utf8String(value)));
  return sequence(...(dn.organizations ?? []).map((o) => rdn(OID.organizationName, o)), rdn(OID.commonName, dn.commonName));
}

const extension = (oid: string, critical: boolean, value: Buffer): Buffer =>
  sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));

/** An IP address's bytes for an iPAddress GeneralName: 4 for IPv4, 16 for IPv6 (`::`, a dotted IPv4 tail, a zone dropped). */
export function ipAddressBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const v6 = ip.replace(/%.*$/, '').replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`);
  const [head, tail] = v6.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), 2 * i));
  return out;
}

/** subjectAltName's GeneralNames: IP addresses as iPAddress, anything else as dNSName; each host once. */
function subjectAltName(subject: DistinguishedName, hosts: readonly string[]): Buffer {
  return sequence(...[...new Set(hosts)].map((h) => {
    if (isIP(h)) return tlv(contextTag(7, false), ipAddressBytes(h));
    if (!/^[\x21-\x7e]+$/.test(h)) throw new CertificateIssueError(subject, `subjectAltName ${JSON.stringify(h)} is neither an IP address nor an ASCII DNS name`);
    return tlv(contextTag(2, false), Buffer.from(h, 'ascii'));
  }));
}

/** RFC 5280's key identifier: the SHA-1 of the subjectPublicKey bits of an SPKI. */
function keyIdentifier(spki: Buffer): Buffer {
  const [, key] = children(readElement(spki));
  if (!key || key.tag !== Tag.bitString) throw new Error('a SubjectPublicKeyInfo without its public key BIT STRING');
  return createHash('sha1').update(key.content.subarray(1)).digest();
}

/** What a certificate gives to those it signs: its subject's DER and its key identifier (its own, or the SHA-1 of its key). */
function issuerOf(cert: X509Certificate): { name: Buffer; keyId: Buffer } {
  const tbs = children(readElement(cert.raw))[0];
  if (!tbs) throw new Error('a certificate without a TBSCertificate');
  const fields = children(tbs);
  const at = fields[0]?.tag === contextTag(0) ? 1 : 0; // version, then serial, signature, issuer, validity, subject, spki
  const name = fields[at + 4];
  const spki = fields[at + 5];
  if (!name || !spki) throw new Error('a TBSCertificate without its subject or key');
  const extensions: Element[] = fields.filter((f) => f.tag === contextTag(3)).flatMap((e) => children(e).flatMap(children));
  for (const ext of extensions) {
    const [oid, ...rest] = children(ext);
    const value = rest.at(-1);
    if (oid && value && readObjectIdentifier(oid.content) === OID.subjectKeyIdentifier) return { name: name.der, keyId: readElement(value.content).content };
  }
  return { name: name.der, keyId: keyIdentifier(spki.der) };
}

/** The issuer as a certificate and its key, checked to be a CA's EC key that belongs to the certificate. */
function readIssuer(subject: DistinguishedName, issuer: KeyPair): { name: Buffer; keyId: Buffer; key: string } {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(issuer.certPem);
  } catch (err) {
    throw new CertificateIssueError(subject, `the issuer's certificate does not parse: ${(err as Error).message}`);
  }
  if (!cert.ca) throw new CertificateIssueError(subject, `the issuer ${cert.subject} is not a CA (basicConstraints CA:FALSE)`);
  const key = createPublicKey(issuer.keyPem);
  if (key.asymmetricKeyType !== 'ec') throw new CertificateIssueError(subject, `the issuer's key is ${key.asymmetricKeyType}, not EC (ecdsa-with-SHA256)`);
  if (!key.equals(cert.publicKey)) throw new CertificateIssueError(subject, `the issuer's private key is not the key of its certificate ${cert.subject}`);
  try {
    return { ...issuerOf(cert), key: issuer.keyPem };
  } catch (err) {
    throw new CertificateIssueError(subject, `the issuer's certificate ${cert.subject}: ${(err as Error).message}`);
  }
}

/** A new key and its certificate for `req`, signed by `issuer` (a CA's key pair), or self-signed without one. */
export function issueCertificate(req: CertificateRequest, issuer?: KeyPair): KeyPair {
  if (!(req.notBefore.getTime() < req.notAfter.getTime())) throw new CertificateIssueError(req.subject, `notAfter ${req.notAfter.toISOString()} is not after notBefore ${req.notBefore.toISOString()}`);
  if (!req.ca && req.usages.length === 0) throw new CertificateIssueError(req.subject, 'an end-entity certificate needs an extended key usage (serverAuth, clientAuth)');
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const keyId = keyIdentifier(spki);
  const signer = issuer ? readIssuer(req.subject, issuer) : { name: distinguishedName(req.subject), keyId, key: privateKey };
  const profile = req.ca
    ? [
      extension(OID.basicConstraints, true, sequence(boolean(true))),
      extension(OID.keyUsage, true, namedBits([KeyUsageBit.digitalSignature, KeyUsageBit.keyCertSign, KeyUsageBit.cRLSign])),
    ]
    : [
      extension(OID.basicConstraints, false, sequence()),
      extension(OID.keyUsage, true, namedBits([KeyUsageBit.digitalSignature, KeyUsageBit.keyEncipherment])),
      extension(OID.extKeyUsage, false, sequence(...[...new Set(req.usages)].map((u) => objectIdentifier(ExtendedKeyUsageOid[u])))),
      ...(req.hosts?.length ? [extension(OID.subjectAltName, false, subjectAltName(req.subject, req.hosts))] : []),
    ];
  const extensions = [
    ...profile,
    extension(OID.subjectKeyIdentifier, false, octetString(keyId)),
    extension(OID.authorityKeyIdentifier, false, sequence(tlv(contextTag(0, false), signer.keyId))),
  ];
  const algorithm = sequence(objectIdentifier(OID.ecdsaWithSHA256));
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, 16 bytes long
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    signer.name,
    sequence(time(req.notBefore), time(req.notAfter)),
    distinguishedName(req.subject),
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, signer.key);
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    certPem: pem('CERTIFICATE', sequence(tbs, algorithm, bitString(signature))),
  };
}
