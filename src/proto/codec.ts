// Protobuf messages from a JSON descriptor (protobufjs's INamespace shape, what src/proto/descriptor.ts
// gives), without protobufjs at run time: a launcher loaded protobufjs, its reflection tree and a
// generated encoder/decoder per message for the few dozen messages of its five .proto files, ≈2.6 MiB
// of its RSS (bench/launcher-memory.md). Encoding is protobufjs's fromObject + encode, decoding its
// decode + toObject with the gRPC code's options (keepCase, longs: Number, enums: String, bytes: Buffer,
// defaults: true): the same bytes, the same objects, the same errors (test/proto/codec.test.ts holds
// it against protobufjs). Pure: no I/O.

/** A descriptor namespace as protobufjs's Root.toJSON() writes it. */
export interface DescriptorNamespace {
  nested?: Record<string, DescriptorNamespace>;
  fields?: Record<string, DescriptorField>;
  values?: Record<string, number>;
  methods?: Record<string, DescriptorMethod>;
}
export interface DescriptorField { type: string; id: number; rule?: string; keyType?: string; options?: { packed?: boolean } }
export interface DescriptorMethod { requestType: string; responseType: string; requestStream?: boolean; responseStream?: boolean }

/** protoc's and protobufjs's nesting limit. */
const RECURSION_LIMIT = 100;

type Scalar = 'double' | 'float' | 'int32' | 'uint32' | 'sint32' | 'fixed32' | 'sfixed32' | 'int64' | 'uint64' | 'sint64' | 'fixed64' | 'sfixed64' | 'bool' | 'string' | 'bytes';
const WIRE: Record<Scalar, number> = { double: 1, float: 5, int32: 0, uint32: 0, sint32: 0, fixed32: 5, sfixed32: 5, int64: 0, uint64: 0, sint64: 0, fixed64: 1, sfixed64: 1, bool: 0, string: 2, bytes: 2 };
const LONG = new Set<string>(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const isScalar = (t: string): t is Scalar => t in WIRE;

interface EnumType { kind: 'enum'; values: Record<string, number>; byId: Map<number, string>; first: number }
interface Field {
  name: string;
  id: number;
  /** A scalar's name, or 'message' / 'enum'. */
  type: Scalar | 'message' | 'enum';
  repeated: boolean;
  packed: boolean;
  keyType?: Scalar;
  message?: MessageType;
  enumType?: EnumType;
}

/** One message type, compiled from its descriptor. */
export class MessageType {
  /** Declaration order (toObject's key order); `byId` is the wire's. */
  readonly fields: Field[] = [];
  readonly byNumber = new Map<number, Field>();
  sorted: Field[] = [];
  /** `.package.Name`, as protobufjs names a type in its errors. */
  readonly fullName: string;
  constructor(fullName: string) { this.fullName = fullName; }

  /** The wire bytes of `value` (protobufjs: fromObject, then encode). */
  encode(value: Record<string, unknown>): Buffer {
    const w = new Writer();
    encodeMessage(this, value, w, 0);
    return w.finish();
  }

  /** The object `bytes` hold (protobufjs: decode, then toObject with defaults). */
  decode(bytes: Uint8Array): Record<string, unknown> {
    const r = new Reader(bytes);
    return decodeMessage(this, r, r.len, 0);
  }
}

/** The message types and services of one descriptor, by full name (`kubevirt.cmd.v1.Cmd`, no leading dot). */
export class DescriptorSet {
  readonly messages = new Map<string, MessageType>();
  readonly enums = new Map<string, EnumType>();
  readonly services = new Map<string, Record<string, DescriptorMethod & { request: MessageType; response: MessageType }>>();

  constructor(root: DescriptorNamespace) {
    const pending: [MessageType, string[], Record<string, DescriptorField>][] = [];
    const svc: [string, string[], Record<string, DescriptorMethod>][] = [];
    const walk = (ns: DescriptorNamespace, path: string[]) => {
      for (const [name, child] of Object.entries(ns.nested ?? {})) {
        const p = [...path, name];
        const full = p.join('.');
        if (child.fields) {
          const t = new MessageType(`.${full}`);
          this.messages.set(full, t);
          pending.push([t, p, child.fields]);
        } else if (child.values) {
          const byId = new Map<number, string>();
          for (const [k, v] of Object.entries(child.values)) if (!byId.has(v)) byId.set(v, k);
          this.enums.set(full, { kind: 'enum', values: child.values, byId, first: Object.values(child.values)[0] ?? 0 });
        } else if (child.methods) svc.push([full, path, child.methods]);
        walk(child, p);
      }
    };
    walk(root, []);
    for (const [t, path, fields] of pending) {
      for (const [name, f] of Object.entries(fields)) {
        const field: Field = { name, id: f.id, type: 'message', repeated: f.rule === 'repeated', packed: false };
        if (isScalar(f.type)) field.type = f.type;
        else {
          const ref = this.resolve(f.type, path);
          if (ref instanceof MessageType) field.message = ref;
          else { field.type = 'enum'; field.enumType = ref; }
        }
        if (f.keyType) {
          if (!isScalar(f.keyType)) throw new Error(`${t.fullName}.${name}: map key type ${f.keyType}`);
          field.keyType = f.keyType;
        }
        // proto3: repeated numeric fields are packed unless the .proto says otherwise.
        field.packed = field.repeated && !field.keyType && f.options?.packed !== false && (field.type === 'enum' || (isScalar(field.type) && WIRE[field.type] !== 2));
        t.fields.push(field);
        t.byNumber.set(f.id, field);
      }
      t.sorted = [...t.fields].sort((a, b) => a.id - b.id);
    }
    for (const [full, path, methods] of svc) {
      const resolved: Record<string, DescriptorMethod & { request: MessageType; response: MessageType }> = {};
      for (const [name, m] of Object.entries(methods)) {
        const request = this.resolve(m.requestType, path);
        const response = this.resolve(m.responseType, path);
        if (!(request instanceof MessageType) || !(response instanceof MessageType)) throw new Error(`${full}.${name}: request and response must be messages`);
        resolved[name] = { ...m, request, response };
      }
      this.services.set(full, resolved);
    }
  }

  /** `name` as seen from the namespace `scope` (protobuf's scoping: innermost first; a leading dot is absolute). */
  private resolve(name: string, scope: string[]): MessageType | EnumType {
    const candidates = name.startsWith('.') ? [name.slice(1)] : scope.map((_, i) => [...scope.slice(0, scope.length - i), name].join('.')).concat(name);
    for (const c of candidates) {
      const t = this.messages.get(c) ?? this.enums.get(c);
      if (t) return t;
    }
    throw new Error(`no such type: ${name} (in ${scope.join('.')})`);
  }
}

// ---- encoding (protobufjs's fromObject conversions, then its encoder) ----

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object';

/** protobufjs's Long.fromValue for 64-bit fields, as a 64-bit two's complement BigInt. */
function toLong(v: unknown, unsigned: boolean): bigint {
  let n: bigint;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'number') {
    if (Number.isNaN(v)) return 0n;
    if (unsigned && v < 0) return 0n;
    if (unsigned && v >= 2 ** 64) return 2n ** 64n - 1n;
    if (!unsigned && v <= -(2 ** 63)) return -(2n ** 63n);
    if (!unsigned && v + 1 >= 2 ** 63) return 2n ** 63n - 1n;
    n = BigInt(Math.trunc(v));
  } else if (typeof v === 'string') {
    try { n = BigInt(v.trim() || '0'); } catch { n = 0n; }
  } else if (isObject(v)) n = (BigInt((v.high as number) >>> 0) << 32n) | BigInt((v.low as number) >>> 0);
  else n = 0n;
  return unsigned ? BigInt.asUintN(64, n) : BigInt.asIntN(64, n);
}

/** A value of a scalar field as fromObject converts it; undefined when fromObject would leave it unset. */
function scalarFrom(type: Scalar, v: unknown): unknown {
  switch (type) {
    case 'string': return String(v);
    case 'bool': return Boolean(v);
    case 'uint32': case 'fixed32': return (v as number) >>> 0;
    case 'int32': case 'sint32': case 'sfixed32': return (v as number) | 0;
    case 'double': case 'float': return Number(v);
    case 'bytes':
      if (typeof v === 'string') return Buffer.from(v, 'base64');
      return (v as { length?: number }).length! >= 0 ? v : undefined;
    default: return toLong(v, type === 'uint64' || type === 'fixed64');
  }
}

/** fromObject's enum switch: a known name or number, else a number as is; a singular unknown stays unset, a repeated one is the first value. */
function enumFrom(e: EnumType, v: unknown, repeated: boolean): number | undefined {
  if (typeof v === 'string' && Object.hasOwn(e.values, v)) return e.values[v];
  if (typeof v === 'number') return v;
  return repeated ? e.first : undefined;
}

function writeScalar(w: Writer, type: Scalar, v: unknown): void {
  switch (type) {
    case 'string': w.string(v as string); break;
    case 'bytes': w.bytes(v as Uint8Array | number[]); break;
    case 'bool': w.varint32(v ? 1 : 0); break;
    case 'uint32': w.varint32(v as number); break;
    case 'int32': if ((v as number) < 0) w.varint64(BigInt.asUintN(64, BigInt(v as number))); else w.varint32(v as number); break;
    case 'sint32': w.varint32((((v as number) << 1) ^ ((v as number) >> 31)) >>> 0); break;
    case 'fixed32': w.fixed32(v as number); break;
    case 'sfixed32': w.fixed32((v as number) >>> 0); break;
    case 'float': w.float(v as number); break;
    case 'double': w.double(v as number); break;
    case 'int64': case 'uint64': w.varint64(BigInt.asUintN(64, v as bigint)); break;
    case 'sint64': w.varint64(BigInt.asUintN(64, ((v as bigint) << 1n) ^ ((v as bigint) >> 63n))); break;
    case 'fixed64': case 'sfixed64': w.fixed64(BigInt.asUintN(64, v as bigint)); break;
  }
}

function encodeMessage(t: MessageType, obj: Record<string, unknown>, w: Writer, depth: number): void {
  if (!isObject(obj)) throw TypeError(`${t.fullName}: object expected`);
  if (depth > RECURSION_LIMIT) throw Error('maximum nesting depth exceeded');
  for (const f of t.sorted) {
    const v = obj[f.name];
    const where = `${t.fullName}.${f.name}`;
    if (f.keyType) {
      if (!v) continue;
      if (!isObject(v)) throw TypeError(`${where}: object expected`);
      for (const k of Object.keys(v)) {
        const entry = new Writer();
        writeTag(entry, 1, WIRE[f.keyType]);
        writeScalar(entry, f.keyType, f.keyType === 'string' ? k : f.keyType === 'bool' ? k === 'true' : scalarFrom(f.keyType, LONG.has(f.keyType) ? k : Number(k)));
        encodeValue(f, v[k], entry, 2, depth, where, false);
        writeTag(w, f.id, 2);
        w.bytes(entry.finish());
      }
    } else if (f.repeated) {
      if (!v) continue;
      if (!Array.isArray(v)) throw TypeError(`${where}: array expected`);
      if (f.packed) {
        const items = f.type === 'enum' ? v.map((x) => enumFrom(f.enumType!, x, true)!) : v.map((x) => scalarFrom(f.type as Scalar, x));
        if (items.length === 0) continue;
        const packed = new Writer();
        for (const x of items) writeScalar(packed, f.type === 'enum' ? 'int32' : (f.type as Scalar), x);
        writeTag(w, f.id, 2);
        w.bytes(packed.finish());
      } else for (const x of v) encodeValue(f, x, w, f.id, depth, where, true);
    } else if (v != null || f.type === 'enum') encodeValue(f, v, w, f.id, depth, where, false);
  }
}

/** One value of field `f` under field number `id` (the field's own, or 2 in a map entry). */
function encodeValue(f: Field, v: unknown, w: Writer, id: number, depth: number, where: string, repeated: boolean): void {
  if (f.type === 'message') {
    if (!isObject(v)) throw TypeError(`${where}: object expected`);
    const sub = new Writer();
    encodeMessage(f.message!, v, sub, depth + 1);
    writeTag(w, id, 2);
    w.bytes(sub.finish());
  } else if (f.type === 'enum') {
    const n = enumFrom(f.enumType!, v, repeated);
    if (n === undefined) return;
    writeTag(w, id, 0);
    writeScalar(w, 'int32', n);
  } else {
    const x = scalarFrom(f.type, v);
    if (x === undefined) return;
    writeTag(w, id, WIRE[f.type]);
    writeScalar(w, f.type, x);
  }
}

const writeTag = (w: Writer, id: number, wire: number) => w.varint32(((id << 3) | wire) >>> 0);

function scalarDefault(type: Scalar): unknown {
  return type === 'string' ? '' : type === 'bool' ? false : type === 'bytes' ? Buffer.alloc(0) : LONG.has(type) ? 0n : 0;
}

class Writer {
  private buf = Buffer.allocUnsafe(256);
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  varint32(v: number): void {
    this.ensure(5);
    while (v > 127) { this.buf[this.pos++] = (v & 127) | 128; v >>>= 7; }
    this.buf[this.pos++] = v;
  }
  varint64(v: bigint): void {
    this.ensure(10);
    while (v > 127n) { this.buf[this.pos++] = Number(v & 127n) | 128; v >>= 7n; }
    this.buf[this.pos++] = Number(v);
  }
  fixed32(v: number): void { this.ensure(4); this.buf.writeUInt32LE(v >>> 0, this.pos); this.pos += 4; }
  fixed64(v: bigint): void { this.ensure(8); this.buf.writeBigUInt64LE(v, this.pos); this.pos += 8; }
  float(v: number): void { this.ensure(4); this.buf.writeFloatLE(v, this.pos); this.pos += 4; }
  double(v: number): void { this.ensure(8); this.buf.writeDoubleLE(v, this.pos); this.pos += 8; }
  string(v: string): void {
    const n = Buffer.byteLength(v);
    this.varint32(n);
    this.ensure(n);
    this.pos += this.buf.write(v, this.pos, 'utf8');
  }
  bytes(v: Uint8Array | number[]): void {
    const n = v.length >>> 0;
    this.varint32(n);
    this.ensure(n);
    this.buf.set(v, this.pos);
    this.pos += n;
  }
  finish(): Buffer { return this.buf.subarray(0, this.pos); }
}

// ---- decoding (protobufjs's decoder, then toObject with defaults) ----

const outOfRange = (r: Reader, n = 1) => RangeError(`index out of range: ${r.pos} + ${n} > ${r.len}`);

class Reader {
  pos = 0;
  len: number;
  readonly buf: Buffer;
  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.len = this.buf.length;
  }
  uint32(): number {
    let v = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.len) throw outOfRange(this);
      const b = this.buf[this.pos++]!;
      if (i < 5) v = (v | ((b & 127) << (i * 7))) >>> 0;
      if (b < 128) return v;
    }
    throw outOfRange(this);
  }
  varint64(): bigint {
    let v = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.len) throw outOfRange(this);
      const b = this.buf[this.pos++]!;
      v |= BigInt(b & 127) << BigInt(i * 7);
      if (b < 128) return BigInt.asUintN(64, v);
    }
    throw outOfRange(this);
  }
  skip(n?: number): void {
    if (n === undefined) { this.uint32(); return; }
    if (this.pos + n > this.len) throw outOfRange(this, n);
    this.pos += n;
  }
  take(n: number): [number, number] {
    if (this.pos + n > this.len) throw outOfRange(this, n);
    const start = this.pos;
    this.pos += n;
    return [start, this.pos];
  }
  skipType(wire: number, depth: number): void {
    if (depth > RECURSION_LIMIT) throw Error('maximum nesting depth exceeded');
    switch (wire) {
      case 0: this.skip(); break;
      case 1: this.skip(8); break;
      case 2: this.skip(this.uint32()); break;
      case 3: for (let w; (w = this.uint32() & 7) !== 4;) this.skipType(w, depth + 1); break;
      case 5: this.skip(4); break;
      default: throw Error(`invalid wire type ${wire} at offset ${this.pos}`);
    }
  }
}

function readScalar(r: Reader, type: Scalar): unknown {
  switch (type) {
    // protobufjs's BufferReader cuts a string that runs past the end short instead of failing.
    case 'string': { const n = r.uint32(); const s = r.pos; r.pos = Math.min(s + n, r.len); return r.buf.toString('utf8', s, r.pos); }
    case 'bytes': { const [s, e] = r.take(r.uint32()); return s === e ? Buffer.alloc(0) : r.buf.subarray(s, e); }
    case 'bool': return r.uint32() !== 0;
    case 'uint32': return r.uint32();
    case 'int32': return r.uint32() | 0;
    case 'sint32': { const v = r.uint32(); return (v >>> 1) ^ -(v & 1) | 0; }
    case 'fixed32': { const [s] = r.take(4); return r.buf.readUInt32LE(s); }
    case 'sfixed32': { const [s] = r.take(4); return r.buf.readInt32LE(s); }
    case 'float': { const [s] = r.take(4); return r.buf.readFloatLE(s); }
    case 'double': { const [s] = r.take(8); return r.buf.readDoubleLE(s); }
    case 'int64': return Number(BigInt.asIntN(64, r.varint64()));
    case 'uint64': return Number(r.varint64());
    case 'sint64': { const v = r.varint64(); return Number((v >> 1n) ^ -(v & 1n)); }
    case 'fixed64': { const [s] = r.take(8); return Number(r.buf.readBigUInt64LE(s)); }
    case 'sfixed64': { const [s] = r.take(8); return Number(r.buf.readBigInt64LE(s)); }
  }
}

function defaultOf(f: Field): unknown {
  if (f.type === 'message') return null;
  if (f.type === 'enum') return f.enumType!.byId.get(f.enumType!.first) ?? f.enumType!.first;
  return f.type === 'bytes' ? Buffer.alloc(0) : LONG.has(f.type) ? 0 : scalarDefault(f.type);
}

const enumName = (e: EnumType, n: number): string | number => e.byId.get(n) ?? n;

function readValue(f: Field, r: Reader, depth: number): unknown {
  if (f.type === 'message') return decodeMessage(f.message!, r, r.uint32(), depth + 1);
  if (f.type === 'enum') return enumName(f.enumType!, r.uint32() | 0);
  return readScalar(r, f.type);
}

function decodeMessage(t: MessageType, r: Reader, length: number, depth: number): Record<string, unknown> {
  if (depth > RECURSION_LIMIT) throw Error('maximum nesting depth exceeded');
  const end = r.pos + length;
  if (end > r.len) throw RangeError('index out of range');
  const outer = r.len;
  r.len = end;
  // toObject's key order: repeated fields, then maps, then the others (declaration order in each).
  const out: Record<string, unknown> = {};
  for (const f of t.fields) if (f.repeated && !f.keyType) out[f.name] = [];
  for (const f of t.fields) if (f.keyType) out[f.name] = {};
  for (const f of t.fields) if (!f.repeated && !f.keyType) out[f.name] = defaultOf(f);
  while (r.pos < end) {
    const tag = r.uint32();
    const f = t.byNumber.get(tag >>> 3);
    if (!f) { r.skipType(tag & 7, depth); continue; }
    if (f.keyType) {
      const entryEnd = r.uint32() + r.pos;
      if (entryEnd > r.len) throw RangeError('index out of range');
      r.len = entryEnd;
      let k: unknown = scalarDefault(f.keyType);
      if (LONG.has(f.keyType)) k = 0;
      let value: unknown = f.type === 'message' ? undefined : defaultOf(f);
      while (r.pos < entryEnd) {
        const t2 = r.uint32();
        if (t2 >>> 3 === 1) k = readScalar(r, f.keyType);
        else if (t2 >>> 3 === 2) value = readValue(f, r, depth);
        else r.skipType(t2 & 7, depth);
      }
      if (r.pos !== entryEnd) throw RangeError('index out of range');
      r.len = end;
      const map = out[f.name] as Record<string, unknown>;
      const key = String(k);
      const v = value === undefined ? emptyObject(f.message!) : value;
      if (key === '__proto__') Object.defineProperty(map, key, { value: v, enumerable: true, writable: true, configurable: true });
      else map[key] = v;
    } else if (f.repeated) {
      const list = out[f.name] as unknown[];
      if (f.packed && (tag & 7) === 2) {
        const packedEnd = r.uint32() + r.pos;
        if (packedEnd > r.len) throw RangeError('index out of range');
        r.len = packedEnd;
        while (r.pos < packedEnd) list.push(readValue(f, r, depth));
        if (r.pos !== packedEnd) throw RangeError('index out of range');
        r.len = end;
      } else list.push(readValue(f, r, depth));
    } else out[f.name] = readValue(f, r, depth);
  }
  if (r.pos !== end) throw RangeError('index out of range');
  r.len = outer;
  return out;
}

/** A message with every field at its default (a map entry that carries no value). */
function emptyObject(t: MessageType): Record<string, unknown> {
  return decodeMessage(t, new Reader(Buffer.alloc(0)), 0, 0);
}
