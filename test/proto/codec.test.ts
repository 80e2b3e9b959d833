// The descriptor-driven codec (src/proto/codec.ts) against protobufjs, which it replaces at run time:
// for every message of every .proto a launcher or the node agent speaks, and for a proto with every
// field kind (all scalars, an enum, maps, nested and recursive messages), random messages encode to
// the same bytes as protobufjs's fromObject + encode and decode to the same objects as its
// decode + toObject with the gRPC code's options; bad input fails as it failed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync } from 'node:fs';
import protobuf from 'protobufjs';
import { DescriptorSet, type DescriptorNamespace, type MessageType } from '../../src/proto/codec.ts';
import { parseProto } from '../../src/proto/descriptor.ts';

/** protobufjs's toObject options as the gRPC code used them (proto-loader's), which the codec keeps. */
const LOADER_OPTIONS = { longs: Number, enums: String, bytes: Buffer, defaults: true, oneofs: true } as const;

const srcDir = new URL('../../src/proto/', import.meta.url).pathname;

const ALL_KINDS = `syntax = "proto3"; package t;
enum Color { RED = 0; GREEN = 1; BLUE = 5; }
message Leaf { string s = 1; bytes b = 2; }
message All {
  double d = 1; float f = 2; int32 i32 = 3; uint32 u32 = 4; sint32 s32 = 5; fixed32 f32 = 6; sfixed32 sf32 = 7;
  int64 i64 = 8; uint64 u64 = 9; sint64 s64 = 10; fixed64 f64 = 11; sfixed64 sf64 = 12; bool ok = 13;
  string str = 14; bytes raw = 15; Color color = 16; Leaf leaf = 17; All next = 18;
  repeated int32 ri32 = 19; repeated string rstr = 20; repeated Leaf rleaf = 21; repeated Color rcolor = 22;
  repeated bytes rraw = 23; repeated double rd = 24; repeated sint64 rs64 = 25;
  map<string, string> mss = 26; map<string, Leaf> mleaf = 27; map<string, uint64> mu64 = 28;
  string camelCase = 31; uint32 Upper = 40;
}`;

/** A tiny seeded generator, so a failure reproduces. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function randomValue(type: protobuf.Type, r: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fieldsArray) {
    if (r() < 0.25) continue; // left out
    const one = (): unknown => {
      const rt = f.resolvedType;
      if (rt instanceof protobuf.Type) return depth > 3 ? {} : randomValue(rt, r, depth + 1);
      if (rt instanceof protobuf.Enum) { const names = Object.keys(rt.values); return r() < 0.8 ? names[Math.floor(r() * names.length)] : Math.floor(r() * 3); }
      switch (f.type) {
        case 'string': return ['', 'a', 'vmi-ü€😀', 'x'.repeat(Math.floor(r() * 300))][Math.floor(r() * 4)];
        case 'bytes': return Buffer.from(Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * 256)));
        case 'bool': return r() < 0.5;
        case 'double': case 'float': return [0, 1.5, -2.25, 1e10, Math.fround(r())][Math.floor(r() * 5)];
        case 'int32': case 'sint32': case 'sfixed32': return [0, -1, 7, 2 ** 31 - 1, -(2 ** 31)][Math.floor(r() * 5)];
        case 'uint32': case 'fixed32': return [0, 1, 300, 2 ** 32 - 1][Math.floor(r() * 4)];
        case 'int64': case 'sint64': case 'sfixed64': return [0, -1, 2 ** 40, -(2 ** 35) - 3, 2 ** 53 - 1][Math.floor(r() * 5)];
        default: return [0, 1, 2 ** 33 + 5, 2 ** 53 - 1, 16384][Math.floor(r() * 5)]; // uint64, fixed64
      }
    };
    if (f.map) out[f.name] = Object.fromEntries(Array.from({ length: Math.floor(r() * 3) }, (_, i) => [`k${i}`, one()]));
    else if (f.repeated) out[f.name] = Array.from({ length: Math.floor(r() * 4) }, one);
    else out[f.name] = one();
  }
  return out;
}

function both(json: DescriptorNamespace, root: protobuf.Root): [string, MessageType, protobuf.Type][] {
  const set = new DescriptorSet(json);
  return [...set.messages].map(([name, ours]) => [name, ours, root.lookupType(name)]);
}

function check(name: string, ours: MessageType, theirs: protobuf.Type, value: Record<string, unknown>): void {
  const expected = Buffer.from(theirs.encode(theirs.fromObject(value)).finish());
  const got = ours.encode(value);
  assert.equal(got.toString('hex'), expected.toString('hex'), `${name} encodes ${JSON.stringify(value)}`);
  const want = theirs.toObject(theirs.decode(expected), LOADER_OPTIONS);
  const decoded = ours.decode(expected);
  assert.equal(decoded, want, `${name} decodes`);
  assert.equal(Object.keys(decoded), Object.keys(want), `${name}: toObject's key order`);
}

const protoFiles = readdirSync(srcDir).filter((f) => f.endsWith('.proto'));

test('every message of every .proto: the same bytes and objects as protobufjs', () => {
  let messages = 0;
  for (const file of protoFiles) {
    const root = parseProto(srcDir, file);
    root.resolveAll();
    for (const [name, ours, theirs] of both(root.toJSON() as DescriptorNamespace, root)) {
      messages++;
      check(name, ours, theirs, {});
      const r = rng(name.length * 7919);
      for (let i = 0; i < 40; i++) check(name, ours, theirs, randomValue(theirs, r, 0));
    }
  }
  assert.ok(messages >= 60, `${messages} messages`);
});

test('every field kind (scalars, enum, maps, nested, recursive): the same bytes and objects as protobufjs', () => {
  const root = protobuf.parse(ALL_KINDS, { keepCase: true }).root;
  root.resolveAll();
  const [, ours, theirs] = both(root.toJSON() as DescriptorNamespace, root).find(([n]) => n === 't.All')!;
  const r = rng(42);
  for (let i = 0; i < 300; i++) check('t.All', ours, theirs, randomValue(theirs, r, 0));
  // fromObject's conversions: strings for 64-bit numbers, numbers as strings, base64 for bytes, enum numbers, null fields.
  check('t.All', ours, theirs, { i64: '-12345678901', u64: '18446744073709551615', s64: -3, str: 42, ok: 'yes', raw: 'aGVsbG8=', color: 5, leaf: null, rcolor: ['GREEN', 1, 'NOPE'], i32: 2 ** 32 + 5, u32: -1, d: '2.5' });
  check('t.All', ours, theirs, { color: 'NOPE', rraw: ['aGk=', Buffer.from('x')], mu64: { a: 2 ** 40 }, mleaf: { z: {} } });
  // Unknown fields are skipped, as protobufjs skips them.
  const unknown = Buffer.concat([Buffer.from([0xf8, 0x07, 0x01]), Buffer.from(theirs.encode(theirs.fromObject({ str: 'kept' })).finish()), Buffer.from([0xfa, 0x07, 0x02, 0x61, 0x62])]);
  assert.equal(ours.decode(unknown), theirs.toObject(theirs.decode(unknown), LOADER_OPTIONS));
});

test('bad input fails as with protobufjs: wrong shapes, truncated bytes, nesting past 100', () => {
  const root = protobuf.parse(ALL_KINDS, { keepCase: true }).root;
  root.resolveAll();
  const [, ours, theirs] = both(root.toJSON() as DescriptorNamespace, root).find(([n]) => n === 't.All')!;
  const message = (f: () => unknown) => { try { f(); } catch (err) { return `${(err as Error).name}: ${(err as Error).message}`; } return 'no error'; };
  for (const bad of [{ leaf: 'x' }, { rstr: 'x' }, { mss: 5 }, { rleaf: [1] }, { mleaf: { a: 1 } }, { next: { next: { leaf: 3 } } }]) {
    assert.is(message(() => ours.encode(bad)), message(() => theirs.encode(theirs.fromObject(bad))), JSON.stringify(bad));
  }
  assert.is(message(() => ours.encode(null as never)), message(() => theirs.fromObject(null as never)));
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 150; i++) deep = { next: deep };
  assert.is(message(() => ours.encode(deep)), message(() => theirs.encode(theirs.fromObject(deep))));
  // 150 levels on the wire (built by hand: protobufjs will not encode them).
  let wire = Buffer.alloc(0);
  for (let i = 0; i < 150; i++) wire = Buffer.concat([Buffer.from([0x92, 0x01]), encodeLength(wire.length), wire]);
  assert.is(message(() => ours.decode(wire)), message(() => theirs.decode(wire)));
  const good = Buffer.from(theirs.encode(theirs.fromObject({ str: 'hello', leaf: { s: 'x' }, rd: [1, 2] })).finish());
  for (let cut = 1; cut < good.length; cut++) {
    const part = good.subarray(0, cut);
    const them = message(() => theirs.toObject(theirs.decode(part), LOADER_OPTIONS));
    const us = message(() => ours.decode(part));
    assert.is(us.startsWith('RangeError'), them.startsWith('RangeError'), `cut at ${cut}: ${us} / ${them}`);
  }
  // An unknown field with wire type 7.
  const badWire = Buffer.from([0xa7, 0x06]);
  assert.match(message(() => ours.decode(badWire)), /invalid wire type 7/);
  assert.is(message(() => ours.decode(badWire)), message(() => theirs.decode(badWire)));
});

function encodeLength(n: number): Buffer {
  const out: number[] = [];
  while (n > 127) { out.push((n & 127) | 128); n >>>= 7; }
  out.push(n);
  return Buffer.from(out);
}

test.run();
