// HPACK (RFC 7541): header blocks to header lists and back. Pure. The decoder takes everything a peer
// may send (indexed fields, literals with and without indexing, never-indexed, dynamic table size
// updates, Huffman-coded strings); the encoder uses the static table and Huffman coding where it is
// shorter, and adds nothing to the peer's dynamic table (literals without indexing: valid for any
// decoder, and the few headers of a unary gRPC call gain little from indexing).
import { ErrorCode, H2ConnectionError } from './frame.ts';
import { HUFFMAN_CODES, HUFFMAN_LENGTHS, STATIC_TABLE } from './hpack-tables.ts';

export type HeaderField = readonly [name: string, value: string];

const compressionError = (message: string) => new H2ConnectionError(ErrorCode.COMPRESSION_ERROR, message);

/** An integer with an N-bit prefix (§5.1) at `off`: its value and the offset after it. */
export function decodeInteger(buf: Buffer, off: number, prefixBits: number): [value: number, next: number] {
  if (off >= buf.length) throw compressionError('header block ends inside an integer');
  const max = (1 << prefixBits) - 1;
  let value = buf[off]! & max;
  off++;
  if (value < max) return [value, off];
  let shift = 0;
  for (;;) {
    if (off >= buf.length) throw compressionError('header block ends inside an integer');
    const b = buf[off++]!;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (value > 2 ** 32) throw compressionError('integer too large');
    if (!(b & 0x80)) return [value, off];
  }
}

/** Appends an integer with an N-bit prefix; `firstByte` holds the bits above the prefix. */
export function encodeInteger(out: number[], value: number, prefixBits: number, firstByte = 0): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(firstByte | value);
    return;
  }
  out.push(firstByte | max);
  value -= max;
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
}

// Huffman coding a symbol at a time, not a bit at a time: RFC 7541's code is canonical (within a length,
// codes are consecutive in symbol order; each length's first code follows the previous length's last),
// so a 32-bit window of input, left-aligned, is below `limit[L]` exactly when it starts with a code of
// length ≤ L. The tables come from the code table in one short pass on first use. (A bit-at-a-time
// decoder's loops were hot enough for V8 to optimize them in every launcher, which touched ~5 MiB more
// of the node binary's compiler code: bench/launcher-memory.md.)
interface Canonical {
  /** Per length 0..30: the window bound (exclusive), the first code, its index in `sorted`. */
  readonly limit: Float64Array;
  readonly first: Float64Array;
  readonly offset: Int32Array;
  /** Symbols ordered by (code length, symbol). */
  readonly sorted: Uint16Array;
}
let canonical: Canonical | null = null;
const MAX_CODE_LENGTH = 30;

function buildCanonical(): Canonical {
  const count = new Int32Array(MAX_CODE_LENGTH + 1);
  for (const len of HUFFMAN_LENGTHS) count[len]!++;
  const offset = new Int32Array(MAX_CODE_LENGTH + 1);
  for (let len = 1; len <= MAX_CODE_LENGTH; len++) offset[len] = offset[len - 1]! + count[len - 1]!;
  const sorted = new Uint16Array(257);
  const next = Int32Array.from(offset);
  HUFFMAN_LENGTHS.forEach((len, sym) => { sorted[next[len]!++] = sym; });
  const first = new Float64Array(MAX_CODE_LENGTH + 1);
  const limit = new Float64Array(MAX_CODE_LENGTH + 1);
  for (let len = 1; len <= MAX_CODE_LENGTH; len++) {
    first[len] = count[len]! > 0 ? HUFFMAN_CODES[sorted[offset[len]!]!]! : 0;
    limit[len] = count[len]! > 0 ? (first[len]! + count[len]!) * 2 ** (32 - len) : limit[len - 1]!;
  }
  return { limit, first, offset, sorted };
}

export function huffmanDecode(bytes: Buffer): string {
  const { limit, first, offset, sorted } = (canonical ??= buildCanonical());
  const out = Buffer.allocUnsafe(Math.ceil((bytes.length * 8) / 5));
  let n = 0;
  let acc = 0; // the undecoded bits, `bits` of them
  let bits = 0;
  let i = 0;
  for (;;) {
    while (bits <= 40 && i < bytes.length) {
      acc = acc * 256 + bytes[i++]!;
      bits += 8;
    }
    if (bits === 0) break;
    const window = bits >= 32 ? Math.floor(acc / 2 ** (bits - 32)) : acc * 2 ** (32 - bits);
    let len = 5;
    while (len < MAX_CODE_LENGTH && window >= limit[len]!) len++;
    if (len > bits) {
      // Padding: at most 7 bits, all ones (the EOS code's prefix).
      if (bits > 7 || acc !== 2 ** bits - 1) throw compressionError('invalid Huffman padding');
      break;
    }
    const sym = sorted[offset[len]! + Math.floor(window / 2 ** (32 - len)) - first[len]!]!;
    if (sym === 256) throw compressionError('EOS in a Huffman-coded string');
    out[n++] = sym;
    bits -= len;
    acc %= 2 ** bits;
  }
  return out.toString('latin1', 0, n);
}

export function huffmanEncode(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(huffmanLength(bytes));
  let n = 0;
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    const len = HUFFMAN_LENGTHS[b]!;
    acc = acc * 2 ** len + HUFFMAN_CODES[b]!;
    bits += len;
    while (bits >= 8) {
      bits -= 8;
      out[n++] = Math.floor(acc / 2 ** bits);
      acc %= 2 ** bits;
    }
  }
  if (bits > 0) out[n++] = acc * 2 ** (8 - bits) + (2 ** (8 - bits) - 1);
  return out;
}

function huffmanLength(bytes: Buffer): number {
  let bits = 0;
  for (const b of bytes) bits += HUFFMAN_LENGTHS[b]!;
  return Math.ceil(bits / 8);
}

function decodeString(buf: Buffer, off: number): [string, number] {
  if (off >= buf.length) throw compressionError('header block ends before a string');
  const huffman = (buf[off]! & 0x80) !== 0;
  const [len, start] = decodeInteger(buf, off, 7);
  if (start + len > buf.length) throw compressionError('string longer than the header block');
  const raw = buf.subarray(start, start + len);
  return [huffman ? huffmanDecode(raw) : raw.toString('latin1'), start + len];
}

function encodeString(out: number[], s: string): void {
  const raw = Buffer.from(s, 'latin1');
  const hlen = huffmanLength(raw);
  if (hlen < raw.length) {
    encodeInteger(out, hlen, 7, 0x80);
    for (const b of huffmanEncode(raw)) out.push(b);
  } else {
    encodeInteger(out, raw.length, 7);
    for (const b of raw) out.push(b);
  }
}

const entrySize = (name: string, value: string) => name.length + value.length + 32;

/** A decoder's state: its dynamic table, bounded by the size this end announced (SETTINGS_HEADER_TABLE_SIZE). */
export class HpackDecoder {
  private readonly table: HeaderField[] = []; // newest first
  private size = 0;
  private maxSize: number;
  private readonly settingsMaxSize: number;

  constructor(settingsMaxSize = 4096) {
    this.settingsMaxSize = settingsMaxSize;
    this.maxSize = settingsMaxSize;
  }

  /** Entries of the dynamic table, newest first (for tests). */
  get dynamicTable(): readonly HeaderField[] { return this.table; }

  private field(index: number): HeaderField {
    if (index === 0) throw compressionError('header field index 0');
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!;
    const f = this.table[index - STATIC_TABLE.length - 1];
    if (!f) throw compressionError(`header field index ${index} is not in the table`);
    return f;
  }

  private add(name: string, value: string): void {
    const size = entrySize(name, value);
    this.table.unshift([name, value]);
    this.size += size;
    this.evict();
  }

  private evict(): void {
    while (this.size > this.maxSize && this.table.length > 0) {
      const [n, v] = this.table.pop()!;
      this.size -= entrySize(n, v);
    }
  }

  decode(block: Buffer): HeaderField[] {
    const out: HeaderField[] = [];
    let off = 0;
    let fieldSeen = false;
    while (off < block.length) {
      const b = block[off]!;
      if (b & 0x80) { // indexed (§6.1)
        const [index, next] = decodeInteger(block, off, 7);
        out.push(this.field(index));
        off = next;
        fieldSeen = true;
      } else if ((b & 0xe0) === 0x20) { // dynamic table size update (§6.3): only before the first field
        if (fieldSeen) throw compressionError('dynamic table size update after a header field');
        const [size, next] = decodeInteger(block, off, 5);
        if (size > this.settingsMaxSize) throw compressionError(`dynamic table size ${size} above the announced ${this.settingsMaxSize}`);
        this.maxSize = size;
        this.evict();
        off = next;
      } else { // literal: with incremental indexing (01), without (0000) or never indexed (0001)
        const incremental = (b & 0xc0) === 0x40;
        const [index, afterIndex] = decodeInteger(block, off, incremental ? 6 : 4);
        let name: string;
        off = afterIndex;
        if (index === 0) [name, off] = decodeString(block, off);
        else name = this.field(index)[0];
        let value: string;
        [value, off] = decodeString(block, off);
        if (incremental) this.add(name, value);
        out.push([name, value]);
        fieldSeen = true;
      }
    }
    return out;
  }
}

const staticIndex = new Map<string, number>();
const staticNameIndex = new Map<string, number>();
STATIC_TABLE.forEach(([n, v], i) => {
  const key = `${n}\0${v}`;
  if (!staticIndex.has(key)) staticIndex.set(key, i + 1);
  if (!staticNameIndex.has(n)) staticNameIndex.set(n, i + 1);
});

/** A header block for `fields`: static-table matches indexed, the rest literals without indexing. */
export function encodeHeaderBlock(fields: readonly HeaderField[]): Buffer {
  const out: number[] = [];
  for (const [name, value] of fields) {
    const full = staticIndex.get(`${name}\0${value}`);
    if (full !== undefined) {
      encodeInteger(out, full, 7, 0x80);
      continue;
    }
    const nameIndex = staticNameIndex.get(name);
    if (nameIndex !== undefined) encodeInteger(out, nameIndex, 4, 0x00);
    else {
      out.push(0x00);
      encodeString(out, name);
    }
    encodeString(out, value);
  }
  return Buffer.from(out);
}
