/**
 * Self-signed CA and serving certificates written in JS (node:crypto keys and signatures, the
 * X.509 DER assembled here): the qvirt/virt image has no openssl, and virt-operator makes its
 * webhook certificates in-process too. EC P-256 keys, ecdsa-with-SHA256, X.509 v3 with
 * basicConstraints, keyUsage, extKeyUsage (serving) and subjectAltName.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

const tlv = (tag: number, content: Buffer): Buffer => {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : (() => {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    return Buffer.from([0x80 | bytes.length, ...bytes]);
  })();
  return Buffer.concat([Buffer.from([tag]), len, content]);
};
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const octets = (b: Buffer) => tlv(0x04, b);
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));

function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, (v[0]! & 0x80) ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const bytes: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) bytes.unshift(0x80 | (v & 0x7f));
    out.push(...bytes);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A BIT STRING of named bits (bit 0 is the first byte's high bit), minimal as DER requires. */
function namedBits(bits: readonly number[]): Buffer {
  const max = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(max / 8) + 1);
  for (const b of bits) bytes[Math.floor(b / 8)]! |= 0x80 >> (b % 8);
  const unused = 7 - (max % 8);
  return tlv(0x03, Buffer.concat([Buffer.from([unused]), bytes]));
}
const bitString = (b: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').replace(/\.\d{3}Z$/, 'Z'); // YYYYMMDDHHMMSSZ
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii')) : tlv(0x18, Buffer.from(iso, 'ascii'));
}

const OID = {
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;
const KeyUsageBit = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

const name = (cn: string) => seq(set(seq(oid(OID.commonName), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.concat(groups.map((g) => { const b = Buffer.alloc(2); b.writeUInt16BE(parseInt(g, 16)); return b; }));
}
const subjectAltName = (hosts: readonly string[]) => seq(...hosts.map((h) => (isIP(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h, 'ascii')))));

export interface CertificateRequest {
  readonly commonName: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** A CA (keyCertSign) or a TLS server certificate naming `hosts`. */
  readonly ca: boolean;
  readonly hosts?: readonly string[];
}

export interface KeyPair {
  readonly keyPem: string;
  readonly certPem: string;
}

const pem = (label: string, der: Buffer) => `-----BEGIN ${label}-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;

/** A new key and its certificate, signed by `issuer` (or self-signed without one). */
export function issueCertificate(req: CertificateRequest, issuer?: { keyPem: string; commonName: string }): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const extensions = req.ca
    ? [extension(OID.basicConstraints, true, seq(bool(true))), extension(OID.keyUsage, true, namedBits([KeyUsageBit.digitalSignature, KeyUsageBit.keyCertSign, KeyUsageBit.cRLSign]))]
    : [
      extension(OID.basicConstraints, false, seq()),
      extension(OID.keyUsage, true, namedBits([KeyUsageBit.digitalSignature, KeyUsageBit.keyEncipherment])),
      extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
      ...(req.hosts?.length ? [extension(OID.subjectAltName, false, subjectAltName(req.hosts))] : []),
    ];
  const algorithm = seq(oid(OID.ecdsaWithSHA256));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    name(issuer?.commonName ?? req.commonName),
    seq(time(req.notBefore), time(req.notAfter)),
    name(req.commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions)),
  );
  const signer: KeyObject = issuer ? createPrivateKey(issuer.keyPem) : privateKey;
  const signature = sign('sha256', tbs, signer);
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    certPem: pem('CERTIFICATE', seq(tbs, algorithm, bitString(signature))),
  };
}
