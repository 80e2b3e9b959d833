// ASN.1 DER, as much as X.509 certificates need: writing the few types a TBSCertificate is made of,
// and reading an encoding back element by element (to take a CA certificate's subject and key
// identifier for the certificates it signs).

/** Universal tags used here, and the context-specific ones as `contextTag(n)`. */
export const Tag = {
  boolean: 0x01, integer: 0x02, bitString: 0x03, octetString: 0x04, oid: 0x06, utf8String: 0x0c,
  sequence: 0x30, set: 0x31, utcTime: 0x17, generalizedTime: 0x18,
} as const;
/** `[n]` constructed (EXPLICIT tagging), or primitive (an IMPLICIT string such as a GeneralName). */
export const contextTag = (n: number, constructed = true): number => (constructed ? 0xa0 : 0x80) | n;

export function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  const len = n < 0x80 ? [n] : [0x80 | bytes.length, ...bytes];
  return Buffer.concat([Buffer.from([tag, ...len]), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(Tag.sequence, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(Tag.set, Buffer.concat(items));
export const explicit = (n: number, inner: Buffer): Buffer => tlv(contextTag(n), inner);
export const boolean = (v: boolean): Buffer => tlv(Tag.boolean, Buffer.from([v ? 0xff : 0]));
export const octetString = (b: Buffer): Buffer => tlv(Tag.octetString, b);
export const utf8String = (s: string): Buffer => tlv(Tag.utf8String, Buffer.from(s, 'utf8'));
/** A BIT STRING of whole bytes (a key, a signature). */
export const bitString = (b: Buffer): Buffer => tlv(Tag.bitString, Buffer.concat([Buffer.from([0]), b]));

/** A non-negative INTEGER from its big-endian bytes: leading zeros dropped, one added before a high bit. */
export function unsignedInteger(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(Tag.integer, (v[0]! & 0x80) ? Buffer.concat([Buffer.from([0]), v]) : v);
}

export function objectIdentifier(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const bytes: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) bytes.unshift(0x80 | (v & 0x7f));
    out.push(...bytes);
  }
  return tlv(Tag.oid, Buffer.from(out));
}

/** A BIT STRING of named bits (bit 0 is the first byte's high bit), trailing zero bits dropped as DER requires. */
export function namedBits(bits: readonly number[]): Buffer {
  const max = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(max / 8) + 1);
  for (const b of bits) bytes[Math.floor(b / 8)]! |= 0x80 >> (b % 8);
  return tlv(Tag.bitString, Buffer.concat([Buffer.from([7 - (max % 8)]), bytes]));
}

/** X.509's Time: UTCTime through 2049, GeneralizedTime from 2050; whole seconds. */
export function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').replace(/\.\d{3}Z$/, 'Z'); // YYYYMMDDHHMMSSZ
  return d.getUTCFullYear() < 2050 ? tlv(Tag.utcTime, Buffer.from(iso.slice(2), 'ascii')) : tlv(Tag.generalizedTime, Buffer.from(iso, 'ascii'));
}

export class DerError extends Error {
  constructor(what: string, offset: number) {
    super(`malformed DER: ${what} at byte ${offset}`);
    this.name = 'DerError';
  }
}

/** One element of an encoding: its tag, its whole encoding (`der`) and its content. */
export interface Element {
  readonly tag: number;
  readonly der: Buffer;
  readonly content: Buffer;
}

/** The element starting at `offset` of `buf`. */
export function readElement(buf: Buffer, offset = 0): Element {
  const tag = buf[offset];
  const first = buf[offset + 1];
  if (tag === undefined || first === undefined) throw new DerError('truncated header', offset);
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const n = first & 0x7f;
    if (n === 0 || n > 4 || offset + 2 + n > buf.length) throw new DerError(`length of ${n} bytes`, offset);
    length = buf.readUIntBE(offset + 2, n);
    header += n;
  }
  const end = offset + header + length;
  if (end > buf.length) throw new DerError(`content of ${length} bytes past the end`, offset);
  return { tag, der: buf.subarray(offset, end), content: buf.subarray(offset + header, end) };
}

/** The elements a constructed element holds, in order. */
export function children(e: Element): Element[] {
  const out: Element[] = [];
  for (let at = 0; at < e.content.length;) {
    const c = readElement(e.content, at);
    out.push(c);
    at += c.der.length;
  }
  return out;
}

/** The dotted form of an OBJECT IDENTIFIER's content. */
export function readObjectIdentifier(content: Buffer): string {
  const first = content[0] ?? 0;
  const parts = [Math.min(2, Math.floor(first / 40)), first - 40 * Math.min(2, Math.floor(first / 40))];
  let v = 0;
  for (const b of content.subarray(1)) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) { parts.push(v); v = 0; }
  }
  return parts.join('.');
}
