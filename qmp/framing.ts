// QMP framing: the server writes one JSON object per line, terminated by `\r\n` (QEMU) or `\n`.
// This turns a byte stream, cut anywhere by the transport, into parsed JSON values.
//
// Cost model: one `indexOf(0x0a)` per line (native memchr), one UTF-8 decode and one JSON.parse
// per message. A line that arrives in one chunk is decoded straight from that chunk; only a
// line split across chunks is concatenated, once, when its end arrives (no quadratic re-copying).
// A `\n` byte never occurs inside a multi-byte UTF-8 sequence, so decoding whole lines is safe.
import { QmpProtocolError, excerpt } from './errors.ts';

/** libvirt's QEMU_MONITOR_MAX_RESPONSE and python qemu.qmp's read limit. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

const LF = 0x0a;

export class JsonLineFramer {
  readonly maxMessageBytes: number;
  /** Bytes of an incomplete line, in arrival order. */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private failed = false;

  constructor(maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES) {
    this.maxMessageBytes = maxMessageBytes;
  }

  /** Bytes held for a line whose end has not arrived yet. */
  get buffered(): number {
    return this.partsBytes;
  }

  /**
   * Feed one chunk. `onMessage` gets each complete message in order; returning `false` stops
   * processing (the connection is going away). Throws `QmpProtocolError` on an oversized line or
   * on input that is not JSON; after that the framer refuses further input.
   */
  push(chunk: Buffer, onMessage: (message: unknown) => boolean | void): void {
    if (this.failed) return;
    let start = 0;
    const len = chunk.length;
    while (start < len) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        const rest = len - start;
        if (this.partsBytes + rest > this.maxMessageBytes) this.fail(`message exceeds ${this.maxMessageBytes} bytes without a line end`);
        this.parts.push(start === 0 ? chunk : chunk.subarray(start));
        this.partsBytes += rest;
        return;
      }
      let text: string;
      if (this.partsBytes === 0) {
        if (nl - start > this.maxMessageBytes) this.fail(`message of ${nl - start} bytes exceeds ${this.maxMessageBytes}`);
        text = chunk.toString('utf8', start, nl);
      } else {
        const total = this.partsBytes + (nl - start);
        if (total > this.maxMessageBytes) this.fail(`message of ${total} bytes exceeds ${this.maxMessageBytes}`);
        this.parts.push(chunk.subarray(start, nl));
        text = Buffer.concat(this.parts, total).toString('utf8');
        this.parts = [];
        this.partsBytes = 0;
      }
      start = nl + 1;
      const message = this.parse(text);
      if (message === undefined) continue; // blank line
      if (onMessage(message) === false) return;
    }
  }

  private parse(text: string): unknown {
    // JSON.parse accepts surrounding whitespace, which covers the `\r` of `\r\n`.
    try {
      return JSON.parse(text);
    } catch (err) {
      if (text.trim() === '') return undefined;
      this.fail(`unparsable JSON (${(err as Error).message})`, excerpt(text));
    }
  }

  private fail(message: string, input?: string): never {
    this.failed = true;
    this.parts = [];
    this.partsBytes = 0;
    throw new QmpProtocolError(message, input);
  }
}
