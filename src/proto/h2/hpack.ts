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

// Huffman decoding walks a binary tree built from the code table on first use: node i's children are
// tree[2i] and tree[2i+1]; a child ≥ 0 is another node, −1 − symbol a leaf, undefined no code.
let huffmanTree: Int32Array | null = null;

function buildHuffmanTree(): Int32Array {
  const tree = new Int32Array(2 * 512).fill(0);
  let nodes = 1;
  for (let sym = 0; sym < 257; sym++) {
    const len = HUFFMAN_LENGTHS[sym]!;
    const code = HUFFMAN_CODES[sym]!;
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const bit = Math.floor(code / 2 ** i) & 1;
      const slot = 2 * node + bit;
      if (i === 0) tree[slot] = -1 - sym;
      else {
        if (tree[slot] === 0) tree[slot] = nodes++;
        node = tree[slot]!;
      }
    }
  }
  return tree;
}

export function huffmanDecode(bytes: Buffer): string {
  const tree = (huffmanTree ??= buildHuffmanTree());
  const out: number[] = [];
  let node = 0;
  let depth = 0; // bits since the last symbol
  let allOnes = true;
  for (const byte of bytes) {
    for (let i = 7; i >= 0; i--) {
      const bit = (byte >> i) & 1;
      const next = tree[2 * node + bit]!;
      depth++;
      allOnes &&= bit === 1;
      if (next < 0) {
        const sym = -1 - next;
        if (sym === 256) throw compressionError('EOS in a Huffman-coded string');
        out.push(sym);
        node = 0;
        depth = 0;
        allOnes = true;
      } else if (next === 0) {
        throw compressionError('invalid Huffman code');
      } else node = next;
    }
  }
  // Padding: at most 7 bits, all ones (the EOS code's prefix).
  if (depth > 7 || !allOnes) throw compressionError('invalid Huffman padding');
  return Buffer.from(out).toString('latin1');
}

export function huffmanEncode(bytes: Buffer): Buffer {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    const len = HUFFMAN_LENGTHS[b]!;
    const code = HUFFMAN_CODES[b]!;
    for (let i = len - 1; i >= 0; i--) {
      acc = (acc << 1) | (Math.floor(code / 2 ** i) & 1);
      if (++bits === 8) {
        out.push(acc);
        acc = 0;
        bits = 0;
      }
    }
  }
  if (bits > 0) out.push((acc << (8 - bits)) | ((1 << (8 - bits)) - 1));
  return Buffer.from(out);
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
