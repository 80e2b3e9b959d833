// A PNG read back for tests (the screenshots of `vnc screenshot`): the chunks checked (signature,
// CRC-32 of each), IHDR, the IDAT stream inflated and unfiltered (PNG's five filter types), so a test
// can ask for the size and how many colours the picture has. 8-bit RGB and RGBA only, as QEMU writes.
import { crc32, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface DecodedPng {
  readonly width: number;
  readonly height: number;
  /** Bytes per pixel: 3 (RGB) or 4 (RGBA). */
  readonly channels: number;
  /** Rows of width × channels bytes, unfiltered. */
  readonly pixels: Buffer;
}

/** Throws naming what is wrong with `data` as a PNG. */
export function decodePng(data: Buffer): DecodedPng {
  if (data.length < 8 || !data.subarray(0, 8).equals(SIGNATURE)) throw new Error(`not a PNG: it begins ${JSON.stringify(data.subarray(0, 16).toString('latin1'))}`);
  let off = 8;
  let header: { width: number; height: number; channels: number } | undefined;
  const idat: Buffer[] = [];
  let ended = false;
  while (off < data.length && !ended) {
    if (off + 12 > data.length) throw new Error(`PNG: a chunk header is cut off at byte ${off}`);
    const len = data.readUInt32BE(off);
    const type = data.toString('latin1', off + 4, off + 8);
    if (off + 12 + len > data.length) throw new Error(`PNG: chunk ${type} (${len} bytes) runs past the end`);
    const body = data.subarray(off + 8, off + 8 + len);
    if (crc32(data.subarray(off + 4, off + 8 + len)) !== data.readUInt32BE(off + 8 + len)) throw new Error(`PNG: chunk ${type} has a bad CRC`);
    if (type === 'IHDR') {
      const bitDepth = body[8]!;
      const colorType = body[9]!;
      if (bitDepth !== 8 || (colorType !== 2 && colorType !== 6) || body[12] !== 0) throw new Error(`PNG: bit depth ${bitDepth}, colour type ${colorType}, interlace ${body[12]}: only 8-bit RGB/RGBA, not interlaced`);
      header = { width: body.readUInt32BE(0), height: body.readUInt32BE(4), channels: colorType === 2 ? 3 : 4 };
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      ended = true;
    }
    off += 12 + len;
  }
  if (!header) throw new Error('PNG: no IHDR');
  if (!ended) throw new Error('PNG: no IEND');
  const { width, height, channels } = header;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG: ${raw.length} bytes of image data, expected ${height} rows of ${stride + 1}`);
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = pixels.subarray(y * stride, (y + 1) * stride);
    const up = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? row[x - channels]! : 0;
      const b = up[x]!;
      const c = x >= channels ? up[x - channels]! : 0;
      let p: number;
      switch (filter) {
        case 0: p = 0; break;
        case 1: p = a; break;
        case 2: p = b; break;
        case 3: p = (a + b) >> 1; break;
        case 4: { const e = a + b - c; const pa = Math.abs(e - a), pb = Math.abs(e - b), pc = Math.abs(e - c); p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c; break; }
        default: throw new Error(`PNG: row ${y} has filter type ${filter}`);
      }
      row[x] = (src[x]! + p) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** How many different colours the picture has (up to `limit`). */
export function distinctColours(png: DecodedPng, limit = 1000): number {
  const seen = new Set<number>();
  for (let i = 0; i < png.pixels.length && seen.size < limit; i += png.channels) {
    seen.add(png.pixels.readUIntBE(i, 3));
  }
  return seen.size;
}
