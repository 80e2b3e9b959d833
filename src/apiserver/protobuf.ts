// Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`), decode only, for the
// kinds kubectl's typed clientset sends that way: `kubectl create namespace|configmap|secret|
// serviceaccount` POST protobuf bodies and there is no fallback to JSON. The envelope is the magic
// `k8s\0` followed by a runtime.Unknown {typeMeta, raw}; `raw` is the object's message, decoded
// here into its JSON form with the field numbers of k8s.io/api's generated.proto. Other kinds are
// refused with 415 (responses are always JSON, which every client accepts).

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export class ProtobufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufError';
  }
}

interface Field { no: number; wire: number; varint?: bigint; bytes?: Buffer }

function readVarint(buf: Buffer, pos: { i: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos.i >= buf.length) throw new ProtobufError('truncated varint');
    const b = buf[pos.i++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
    if (shift > 70n) throw new ProtobufError('varint too long');
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const pos = { i: 0 };
  while (pos.i < buf.length) {
    const key = Number(readVarint(buf, pos));
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: readVarint(buf, pos) });
    else if (wire === 2) {
      const len = Number(readVarint(buf, pos));
      if (pos.i + len > buf.length) throw new ProtobufError('truncated length-delimited field');
      out.push({ no, wire, bytes: buf.subarray(pos.i, pos.i + len) });
      pos.i += len;
    } else if (wire === 1) { pos.i += 8; } else if (wire === 5) { pos.i += 4; } else throw new ProtobufError(`unsupported wire type ${wire}`);
  }
  return out;
}

type Kind = 'string' | 'bytes' | 'bool' | 'int' | 'time' | 'strings' | 'map' | 'bytesmap' | { msg: string } | { msgs: string };
type Desc = Record<number, [string, Kind]>;

const MESSAGES: Record<string, Desc> = {
  ObjectMeta: {
    1: ['name', 'string'], 2: ['generateName', 'string'], 3: ['namespace', 'string'], 5: ['uid', 'string'], 6: ['resourceVersion', 'string'],
    7: ['generation', 'int'], 8: ['creationTimestamp', 'time'], 10: ['deletionGracePeriodSeconds', 'int'], 11: ['labels', 'map'], 12: ['annotations', 'map'],
    13: ['ownerReferences', { msgs: 'OwnerReference' }], 14: ['finalizers', 'strings'],
  },
  OwnerReference: { 1: ['kind', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'], 5: ['apiVersion', 'string'], 6: ['controller', 'bool'], 7: ['blockOwnerDeletion', 'bool'] },
  Namespace: { 1: ['metadata', { msg: 'ObjectMeta' }], 2: ['spec', { msg: 'NamespaceSpec' }] },
  NamespaceSpec: { 1: ['finalizers', 'strings'] },
  ConfigMap: { 1: ['metadata', { msg: 'ObjectMeta' }], 2: ['data', 'map'], 3: ['binaryData', 'bytesmap'], 4: ['immutable', 'bool'] },
  Secret: { 1: ['metadata', { msg: 'ObjectMeta' }], 2: ['data', 'bytesmap'], 3: ['type', 'string'], 4: ['stringData', 'map'], 5: ['immutable', 'bool'] },
  ServiceAccount: { 1: ['metadata', { msg: 'ObjectMeta' }], 2: ['secrets', { msgs: 'ObjectReference' }], 3: ['imagePullSecrets', { msgs: 'LocalObjectReference' }], 4: ['automountServiceAccountToken', 'bool'] },
  ObjectReference: { 1: ['kind', 'string'], 2: ['namespace', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'], 5: ['apiVersion', 'string'], 6: ['resourceVersion', 'string'], 7: ['fieldPath', 'string'] },
  LocalObjectReference: { 1: ['name', 'string'] },
  Time: { 1: ['seconds', 'int'], 2: ['nanos', 'int'] },
  MapEntry: { 1: ['key', 'string'], 2: ['value', 'string'] },
  BytesMapEntry: { 1: ['key', 'string'], 2: ['value', 'bytes'] },
};

/** The kinds whose protobuf bodies this server decodes. */
export const PROTOBUF_KINDS = ['Namespace', 'ConfigMap', 'Secret', 'ServiceAccount'] as const;

function decodeMessage(buf: Buffer, name: string): { [k: string]: Json } {
  const desc = MESSAGES[name]!;
  const out: { [k: string]: Json } = {};
  for (const f of fields(buf)) {
    const d = desc[f.no];
    if (!d) continue;
    const [key, kind] = d;
    const str = (): string => (f.bytes ?? Buffer.alloc(0)).toString('utf8');
    // gogo-protobuf writes empty strings and zero numbers that Go's JSON encoding omits (omitempty).
    if (kind === 'string') { if (str() !== '') out[key] = str(); }
    else if (kind === 'bytes') out[key] = (f.bytes ?? Buffer.alloc(0)).toString('base64');
    else if (kind === 'bool') out[key] = f.varint !== 0n;
    else if (kind === 'int') { const n = Number(BigInt.asIntN(64, f.varint ?? 0n)); if (n !== 0 || name !== 'ObjectMeta') out[key] = n; }
    else if (kind === 'time') {
      const t = decodeMessage(f.bytes!, 'Time');
      if (Number(t.seconds ?? 0) !== 0) out[key] = new Date(Number(t.seconds) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    } else if (kind === 'strings') ((out[key] ??= []) as Json[]).push(str());
    else if (kind === 'map' || kind === 'bytesmap') {
      const e = decodeMessage(f.bytes!, kind === 'map' ? 'MapEntry' : 'BytesMapEntry');
      ((out[key] ??= {}) as { [k: string]: Json })[String(e.key ?? '')] = e.value ?? '';
    } else if ('msg' in kind) out[key] = decodeMessage(f.bytes!, kind.msg);
    else ((out[key] ??= []) as Json[]).push(decodeMessage(f.bytes!, kind.msgs));
  }
  return out;
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decodes a `k8s\0`-enveloped protobuf object into its JSON form (apiVersion, kind, fields). */
export function decodeKubernetesProtobuf(body: Buffer): { [k: string]: Json } {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw new ProtobufError('the body does not start with the Kubernetes protobuf magic "k8s\\0"');
  let typeMeta: { apiVersion?: string; kind?: string } = {};
  let raw: Buffer | undefined;
  for (const f of fields(body.subarray(4))) {
    if (f.no === 1 && f.bytes) {
      for (const t of fields(f.bytes)) {
        if (t.no === 1) typeMeta = { ...typeMeta, apiVersion: t.bytes!.toString('utf8') };
        if (t.no === 2) typeMeta = { ...typeMeta, kind: t.bytes!.toString('utf8') };
      }
    }
    if (f.no === 2 && f.bytes) raw = f.bytes;
  }
  const kind = typeMeta.kind ?? '';
  if (!(PROTOBUF_KINDS as readonly string[]).includes(kind)) throw new ProtobufError(`protobuf bodies are decoded for ${PROTOBUF_KINDS.join(', ')} only, not ${kind || 'an unnamed kind'}; send JSON`);
  return { apiVersion: typeMeta.apiVersion ?? 'v1', kind, ...decodeMessage(raw ?? Buffer.alloc(0), kind) };
}
