// launcher/convert/sha256.ts against node:crypto: the same digest for every length around the block
// boundaries, multi-byte UTF-8, random strings, and the MACs derivedMac gave when it used createHash.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { sha256 } from '../../launcher/convert/sha256.ts';
import { derivedMac } from '../../launcher/convert/interfaces.ts';

const nodeSha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

test('FIPS 180-4 vectors', () => {
  assert.is(hex(sha256('')), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.is(hex(sha256('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.is(hex(sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')), '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
});

test('every length from 0 to 300 bytes (one, two and several blocks, padding across a block boundary)', () => {
  for (let n = 0; n <= 300; n++) {
    const s = Array.from({ length: n }, (_, i) => String.fromCharCode(32 + ((i * 7 + n) % 95))).join('');
    assert.is(hex(sha256(s)), nodeSha256(s), `length ${n}`);
  }
});

test('multi-byte UTF-8 and random strings', () => {
  for (const s of ['é', '日本語のインターフェース', '🙂/default', 'uid-ä/ñet']) assert.is(hex(sha256(s)), nodeSha256(s), s);
  let seed = 1;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2000; i++) {
    const s = Array.from({ length: Math.floor(rnd() * 200) }, () => String.fromCodePoint(rnd() < 0.9 ? 32 + Math.floor(rnd() * 95) : 0xa0 + Math.floor(rnd() * 0x2000))).join('');
    assert.is(hex(sha256(s)), nodeSha256(s), JSON.stringify(s));
  }
});

test('derivedMac gives the MAC createHash gave, for many VMI uids and interface names', () => {
  const old = (uid: string, iface: string) => {
    const h = createHash('sha256').update(`${uid}/${iface}`).digest();
    return ['52', '54', '00', ...[h[0], h[1], h[2]].map((x) => x!.toString(16).padStart(2, '0'))].join(':');
  };
  assert.is(derivedMac('5f3c0e8a-2d7b-4c1e-9a6f-1b2c3d4e5f60', 'default'), old('5f3c0e8a-2d7b-4c1e-9a6f-1b2c3d4e5f60', 'default'));
  assert.is(derivedMac('', ''), old('', ''));
  for (let i = 0; i < 3000; i++) {
    const uid = `${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}-2d7b-4c1e-9a6f-${i.toString(16).padStart(12, '0')}`;
    for (const iface of ['default', `net${i % 17}`, 'a-very-long-interface-name-that-kubevirt-allows']) assert.is(derivedMac(uid, iface), old(uid, iface), `${uid}/${iface}`);
  }
});

test.run();
