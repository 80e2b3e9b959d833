// HTTP/2 frames (RFC 9113 §4, §6): the 9-byte header, each frame type's payload, encoding and decoding.
// Pure: bytes in, frames out, and the reverse; the connection (connection.ts) decides what they mean.

export const FrameType = {
  DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7,
  WINDOW_UPDATE: 8, CONTINUATION: 9,
} as const;

export const Flags = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** Error codes of RST_STREAM and GOAWAY (§7). */
export const ErrorCode = {
  NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, FLOW_CONTROL_ERROR: 3, SETTINGS_TIMEOUT: 4, STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6, REFUSED_STREAM: 7, CANCEL: 8, COMPRESSION_ERROR: 9, CONNECT_ERROR: 10, ENHANCE_YOUR_CALM: 11,
  INADEQUATE_SECURITY: 12, HTTP_1_1_REQUIRED: 13,
} as const;

export const SettingId = {
  HEADER_TABLE_SIZE: 1, ENABLE_PUSH: 2, MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4, MAX_FRAME_SIZE: 5,
  MAX_HEADER_LIST_SIZE: 6,
} as const;

/** The client's connection preface (§3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME_HEADER_SIZE = 9;
/** SETTINGS_MAX_FRAME_SIZE's initial value and floor. */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const DEFAULT_WINDOW_SIZE = 65_535;
export const MAX_WINDOW_SIZE = 2 ** 31 - 1;

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** A connection error (§5.4.1): the connection ends with GOAWAY carrying `code`. */
export class H2ConnectionError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

export function encodeFrame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_SIZE + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, 5);
  payload.copy(out, FRAME_HEADER_SIZE);
  return out;
}

/**
 * The complete frames at the start of `buf` and the bytes left over. A frame longer than `maxFrameSize`
 * (what this end announced) is a FRAME_SIZE_ERROR.
 */
export function decodeFrames(buf: Buffer, maxFrameSize: number): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let off = 0;
  while (buf.length - off >= FRAME_HEADER_SIZE) {
    const length = buf.readUIntBE(off, 3);
    if (length > maxFrameSize) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `frame of ${length} bytes exceeds the maximum frame size ${maxFrameSize}`);
    if (buf.length - off < FRAME_HEADER_SIZE + length) break;
    frames.push({
      type: buf[off + 3]!,
      flags: buf[off + 4]!,
      streamId: buf.readUInt32BE(off + 5) & 0x7fffffff,
      payload: buf.subarray(off + FRAME_HEADER_SIZE, off + FRAME_HEADER_SIZE + length),
    });
    off += FRAME_HEADER_SIZE + length;
  }
  return { frames, rest: buf.subarray(off) };
}

/** A DATA or HEADERS frame's payload without its padding (and, for HEADERS, its priority fields). */
export function unpaddedPayload(frame: Frame): Buffer {
  let p = frame.payload;
  let pad = 0;
  if (frame.flags & Flags.PADDED) {
    if (p.length < 1) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'padded frame without its pad length');
    pad = p[0]!;
    p = p.subarray(1);
  }
  if (frame.type === FrameType.HEADERS && frame.flags & Flags.PRIORITY) {
    if (p.length < 5) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS with PRIORITY shorter than 5 bytes');
    p = p.subarray(5);
  }
  if (pad > p.length) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padding longer than the frame');
  return p.subarray(0, p.length - pad);
}

export type Settings = ReadonlyArray<readonly [id: number, value: number]>;

export function encodeSettings(settings: Settings): Buffer {
  const out = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    out.writeUInt16BE(id, 6 * i);
    out.writeUInt32BE(value, 6 * i + 2);
  });
  return out;
}

export function decodeSettings(payload: Buffer): [number, number][] {
  if (payload.length % 6 !== 0) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS length is not a multiple of 6');
  const out: [number, number][] = [];
  for (let i = 0; i < payload.length; i += 6) out.push([payload.readUInt16BE(i), payload.readUInt32BE(i + 2)]);
  return out;
}

export function encodeUInt32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value >>> 0);
  return out;
}

/** A WINDOW_UPDATE's increment (§6.9); 0 is a PROTOCOL_ERROR, left to the caller (stream or connection level). */
export function decodeWindowUpdate(payload: Buffer): number {
  if (payload.length !== 4) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE is not 4 bytes');
  return payload.readUInt32BE(0) & 0x7fffffff;
}

export function decodeRstStream(payload: Buffer): number {
  if (payload.length !== 4) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM is not 4 bytes');
  return payload.readUInt32BE(0);
}

export function encodeGoaway(lastStreamId: number, code: number, debug = ''): Buffer {
  const d = Buffer.from(debug);
  const out = Buffer.allocUnsafe(8 + d.length);
  out.writeUInt32BE(lastStreamId & 0x7fffffff, 0);
  out.writeUInt32BE(code, 4);
  d.copy(out, 8);
  return out;
}

export function decodeGoaway(payload: Buffer): { lastStreamId: number; code: number; debug: string } {
  if (payload.length < 8) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY shorter than 8 bytes');
  return { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, code: payload.readUInt32BE(4), debug: payload.subarray(8).toString() };
}
