// UDP datagrams carried over a byte stream: the handler endpoint's `portforward/PORT/udp`.
//
// KubeVirt carries one datagram per WebSocket binary message (virtctl's udpProxy writes each
// datagram it reads as one message; virt-api's CopyFrom/CopyTo turn each message into one write to
// its connected UDP socket and each datagram read into one message). The handler endpoint's
// streams are raw bytes after the `plain.kubevirt.io` Upgrade, with no message boundaries, so each
// datagram travels as a frame: a 2-byte big-endian length, then that many bytes (the framing of DNS
// over TCP, RFC 1035 §4.2.2). Whoever bridges a WebSocket to this stream maps one binary message to
// one frame and back. A zero-length datagram is a frame of length 0. Pure.

/** The largest datagram a frame carries (a UDP payload is at most 65535 − 8 − IP header bytes anyway). */
export const MAX_DATAGRAM = 0xffff;

export class DatagramFrameError extends Error {
  override name = 'DatagramFrameError';
}

/** One datagram → its frame. */
export function frameDatagram(payload: Uint8Array): Buffer {
  if (payload.length > MAX_DATAGRAM) throw new DatagramFrameError(`a datagram of ${payload.length} bytes does not fit a frame (at most ${MAX_DATAGRAM})`);
  const out = Buffer.allocUnsafe(2 + payload.length);
  out.writeUInt16BE(payload.length, 0);
  out.set(payload, 2);
  return out;
}

/** Splits a byte stream back into datagrams, whatever the chunks' boundaries. */
export class DatagramDeframer {
  private buf: Buffer = Buffer.alloc(0);

  /** The datagrams completed by `chunk`, in order; a partial frame waits for the next chunk. */
  push(chunk: Uint8Array): Buffer[] {
    this.buf = this.buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buf, chunk]);
    const out: Buffer[] = [];
    let at = 0;
    while (this.buf.length - at >= 2) {
      const len = this.buf.readUInt16BE(at);
      if (this.buf.length - at - 2 < len) break;
      out.push(Buffer.from(this.buf.subarray(at + 2, at + 2 + len)));
      at += 2 + len;
    }
    this.buf = this.buf.subarray(at);
    return out;
  }

  /** Bytes of an unfinished frame (non-zero when the stream ended mid-frame). */
  get pending(): number {
    return this.buf.length;
  }
}
