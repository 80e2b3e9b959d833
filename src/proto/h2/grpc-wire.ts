// gRPC over HTTP/2's own rules (grpc/doc/PROTOCOL-HTTP2.md), pure: the 5-byte message prefix, the
// grpc-timeout header, grpc-message's percent-encoding, a call's error, and an HTTP status without
// grpc-status mapped to a gRPC code (grpc/doc/http-grpc-status-mapping.md).
import { GrpcStatus, grpcStatusName } from '../service.ts';

/** What a server accepts in one message unless told otherwise (grpc-js's and grpc-go's default, 4 MiB). */
export const DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

/** A call's failure, shaped as grpc-js's ServiceError: `code`, `details`, message `<code> <NAME>: <details>`. */
export class GrpcError extends Error {
  readonly code: number;
  readonly details: string;
  constructor(code: number, details: string) {
    super(`${code} ${grpcStatusName(code)}: ${details}`);
    this.code = code;
    this.details = details;
  }
}

/** One message with its prefix: uncompressed flag 0, 4-byte big-endian length. */
export function frameMessage(message: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

/**
 * The single message of a unary call's body (all its DATA, concatenated). Throws a GrpcError: more or
 * less than one message, a compressed one (this end announces no encoding), or one above `maxBytes`.
 */
export function unframeUnaryMessage(body: Buffer, maxBytes = DEFAULT_MAX_RECEIVE_MESSAGE_BYTES): Buffer {
  if (body.length < 5) throw new GrpcError(body.length === 0 ? GrpcStatus.UNIMPLEMENTED : GrpcStatus.INTERNAL, body.length === 0 ? 'no message in a unary call' : 'truncated message');
  if (body[0] !== 0) throw new GrpcError(GrpcStatus.UNIMPLEMENTED, 'compressed messages are not supported');
  const length = body.readUInt32BE(1);
  if (length > maxBytes) throw new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs. ${maxBytes})`);
  if (body.length < 5 + length) throw new GrpcError(GrpcStatus.INTERNAL, 'truncated message');
  if (body.length > 5 + length) throw new GrpcError(GrpcStatus.UNIMPLEMENTED, 'more than one message in a unary call');
  return body.subarray(5);
}

/** The declared length of the message at the start of a body so far, or −1 before its prefix is complete. */
export function declaredMessageLength(body: Buffer): number {
  return body.length < 5 ? -1 : body.readUInt32BE(1);
}

const TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/** `grpc-timeout` for a deadline `ms` away: at most 8 digits, in the finest unit that fits. */
export function encodeGrpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1e8) return `${whole}m`;
  if (whole / 1000 < 1e8) return `${Math.ceil(whole / 1000)}S`;
  if (whole / 60_000 < 1e8) return `${Math.ceil(whole / 60_000)}M`;
  return `${Math.min(99_999_999, Math.ceil(whole / 3_600_000))}H`;
}

/** A `grpc-timeout` value in ms, or undefined when it is malformed. */
export function parseGrpcTimeout(value: string): number | undefined {
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) return undefined;
  return Number(m[1]) * TIMEOUT_UNITS[m[2]!]!;
}

/** grpc-message's encoding: bytes outside printable ASCII and `%` as `%XX` of their UTF-8. */
export function percentEncode(message: string): string {
  let out = '';
  for (const b of Buffer.from(message, 'utf8')) {
    out += b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The reverse; a `%` not followed by two hex digits stays as it is (as grpc-go decodes). */
export function percentDecode(value: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25 && i + 2 < value.length && /^[0-9a-fA-F]{2}$/.test(value.slice(i + 1, i + 3))) {
      bytes.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(c & 0xff);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The gRPC code of a response whose HTTP status is not 200 (or that carries no grpc-status). */
export function grpcStatusFromHttp(httpStatus: number): number {
  switch (httpStatus) {
    case 400: return GrpcStatus.INTERNAL;
    case 401: return GrpcStatus.UNAUTHENTICATED;
    case 403: return GrpcStatus.PERMISSION_DENIED;
    case 404: return GrpcStatus.UNIMPLEMENTED;
    case 429: case 502: case 503: case 504: return GrpcStatus.UNAVAILABLE;
    default: return GrpcStatus.UNKNOWN;
  }
}
