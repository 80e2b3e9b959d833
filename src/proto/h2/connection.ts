// One HTTP/2 connection (RFC 9113) over a stream socket, either end: the preface, SETTINGS and their
// ACK, PING ACK, flow control both ways (WINDOW_UPDATE sent as DATA is consumed; DATA sent only within
// the peer's connection and stream windows, split at its maximum frame size), header blocks over
// HEADERS + CONTINUATION, RST_STREAM, GOAWAY. A protocol violation by the peer ends the connection with
// GOAWAY and the error's code. No priorities, no server push (a client announces ENABLE_PUSH 0).
//
// The windows this end announces stay at the protocol's defaults (64 KiB): the launcher's messages are
// small, and a larger one is paced by WINDOW_UPDATEs rather than buffered.
import type { Socket } from 'node:net';
import {
  CLIENT_PREFACE, DEFAULT_MAX_FRAME_SIZE, DEFAULT_WINDOW_SIZE, ErrorCode, FrameType, Flags, H2ConnectionError,
  MAX_WINDOW_SIZE, SettingId, decodeFrames, decodeGoaway, decodeRstStream, decodeSettings, decodeWindowUpdate,
  encodeFrame, encodeGoaway, encodeSettings, encodeUInt32, unpaddedPayload, type Frame,
} from './frame.ts';
import { HpackDecoder, encodeHeaderBlock, type HeaderField } from './hpack.ts';

/** The largest header block accepted (HEADERS + CONTINUATION): far above what a gRPC call sends. */
const MAX_HEADER_BLOCK = 1024 * 1024;

type Outgoing = { headers: readonly HeaderField[]; end: boolean } | { data: Buffer; end: boolean };

/** One stream; its owner sets the callbacks. */
export class H2Stream {
  readonly id: number;
  /** Header block received (request or response headers, or trailers). */
  onHeaders: (fields: HeaderField[], endStream: boolean) => void = () => {};
  onData: (data: Buffer, endStream: boolean) => void = () => {};
  /**
   * The stream ended abnormally: RST_STREAM from the peer (`code`), refused by the peer's GOAWAY
   * (REFUSED_STREAM), or the connection is gone (`connectionLost`).
   */
  onReset: (code: number, connectionLost: boolean) => void = () => {};
  sendWindow: number;
  recvWindow = DEFAULT_WINDOW_SIZE;
  localEnded = false;
  remoteEnded = false;
  readonly queue: Outgoing[] = [];
  private readonly conn: H2Connection;

  constructor(conn: H2Connection, id: number, sendWindow: number) {
    this.conn = conn;
    this.id = id;
    this.sendWindow = sendWindow;
  }

  sendHeaders(fields: readonly HeaderField[], endStream = false): void {
    if (this.localEnded) return;
    this.localEnded = endStream;
    this.queue.push({ headers: fields, end: endStream });
    this.conn.flush();
  }

  sendData(data: Buffer, endStream = false): void {
    if (this.localEnded) return;
    this.localEnded = endStream;
    this.queue.push({ data, end: endStream });
    this.conn.flush();
  }

  /** Ends the stream with RST_STREAM `code` (CANCEL by default). */
  reset(code: number = ErrorCode.CANCEL): void {
    this.conn.resetStream(this, code);
  }
}

export interface H2ConnectionOptions {
  readonly isServer: boolean;
  /** Server: a stream the peer opened; its first header block follows through stream.onHeaders. */
  onStream?: (stream: H2Stream) => void;
  /** The peer's first SETTINGS arrived: the connection is usable. */
  onReady?: () => void;
  /** GOAWAY from the peer: no new streams on this connection. */
  onGoaway?: (code: number, debug: string) => void;
  /** The socket closed; every open stream has had onReset. */
  onClose?: () => void;
  /** A stream this end opened has closed: another may open (the peer's MAX_CONCURRENT_STREAMS). */
  onStreamClosed?: () => void;
}

export class H2Connection {
  readonly socket: Socket;
  private readonly opts: H2ConnectionOptions;
  private readonly streams = new Map<number, H2Stream>();
  private readonly decoder = new HpackDecoder();
  private buf: Buffer = Buffer.alloc(0);
  private prefaceLeft: number;
  private gotSettings = false;
  private nextStreamId = 1;
  private lastPeerStreamId = 0;
  private sendWindow = DEFAULT_WINDOW_SIZE;
  private recvWindow = DEFAULT_WINDOW_SIZE;
  private peerInitialWindow = DEFAULT_WINDOW_SIZE;
  private peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private peerMaxConcurrentStreams = Infinity;
  private headerBlock: { streamId: number; endStream: boolean; chunks: Buffer[]; size: number } | null = null;
  private goawaySent = false;
  private goawayReceived = false;
  private closed = false;

  constructor(socket: Socket, opts: H2ConnectionOptions) {
    this.socket = socket;
    this.opts = opts;
    this.prefaceLeft = opts.isServer ? CLIENT_PREFACE.length : 0;
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => {});
    socket.on('close', () => this.onSocketClose());
    const settings = opts.isServer ? [] : [[SettingId.ENABLE_PUSH, 0] as const];
    if (!opts.isServer) this.write(CLIENT_PREFACE);
    this.write(encodeFrame(FrameType.SETTINGS, 0, 0, encodeSettings(settings)));
  }

  /** Whether new streams may be opened here. */
  get usable(): boolean { return !this.closed && !this.goawaySent && !this.goawayReceived; }
  get openStreams(): number { return this.streams.size; }
  /** Whether the peer's MAX_CONCURRENT_STREAMS lets this end open one more stream now. */
  get canOpenStream(): boolean { return this.streams.size < this.peerMaxConcurrentStreams; }

  /** Client: a new stream; send its request headers with stream.sendHeaders. */
  openStream(): H2Stream {
    if (!this.usable) throw new Error('HTTP/2 connection is closing');
    const stream = new H2Stream(this, this.nextStreamId, this.peerInitialWindow);
    this.nextStreamId += 2;
    this.streams.set(stream.id, stream);
    return stream;
  }

  /** Graceful: GOAWAY(NO_ERROR), then the socket ends once no stream is left. */
  close(): void {
    if (this.closed) return;
    if (!this.goawaySent) {
      this.goawaySent = true;
      this.write(encodeFrame(FrameType.GOAWAY, 0, 0, encodeGoaway(this.lastPeerStreamId, ErrorCode.NO_ERROR)));
    }
    this.endIfIdle();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private endIfIdle(): void {
    if ((this.goawaySent || this.goawayReceived) && this.streams.size === 0 && !this.socket.destroyed) this.socket.end();
  }

  private write(buf: Buffer): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(buf);
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    try {
      if (this.prefaceLeft > 0) {
        const off = CLIENT_PREFACE.length - this.prefaceLeft;
        const n = Math.min(this.prefaceLeft, chunk.length);
        if (!chunk.subarray(0, n).equals(CLIENT_PREFACE.subarray(off, off + n))) {
          throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'invalid connection preface');
        }
        this.prefaceLeft -= n;
        chunk = chunk.subarray(n);
      }
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
      const { frames, rest } = decodeFrames(this.buf, DEFAULT_MAX_FRAME_SIZE);
      this.buf = rest.length === 0 ? Buffer.alloc(0) : Buffer.from(rest);
      for (const frame of frames) {
        if (this.closed) return;
        this.handle(frame);
      }
    } catch (err) {
      const code = err instanceof H2ConnectionError ? err.code : ErrorCode.INTERNAL_ERROR;
      this.fail(code, err instanceof Error ? err.message : String(err));
    }
  }

  /** A connection error: GOAWAY with `code`, then the socket ends. */
  private fail(code: number, message: string): void {
    if (this.closed) return;
    this.goawaySent = true;
    this.write(encodeFrame(FrameType.GOAWAY, 0, 0, encodeGoaway(this.lastPeerStreamId, code, message)));
    this.closed = true;
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.abortAll();
  }

  private abortAll(): void {
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const s of streams) s.onReset(ErrorCode.INTERNAL_ERROR, true);
  }

  private onSocketClose(): void {
    this.closed = true;
    this.abortAll();
    this.opts.onClose?.();
  }

  private handle(frame: Frame): void {
    if (this.headerBlock && (frame.type !== FrameType.CONTINUATION || frame.streamId !== this.headerBlock.streamId)) {
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'header block interrupted by another frame');
    }
    if (!this.gotSettings && frame.type !== FrameType.SETTINGS) {
      throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the first frame is not SETTINGS');
    }
    switch (frame.type) {
      case FrameType.DATA: return this.onDataFrame(frame);
      case FrameType.HEADERS: {
        if (frame.streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS on stream 0');
        const first = unpaddedPayload(frame);
        this.headerBlock = { streamId: frame.streamId, endStream: (frame.flags & Flags.END_STREAM) !== 0, chunks: [first], size: first.length };
        if (frame.flags & Flags.END_HEADERS) this.endHeaderBlock();
        return;
      }
      case FrameType.CONTINUATION: {
        if (!this.headerBlock) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without HEADERS');
        this.headerBlock.chunks.push(frame.payload);
        this.headerBlock.size += frame.payload.length;
        if (this.headerBlock.size > MAX_HEADER_BLOCK) throw new H2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, `header block above ${MAX_HEADER_BLOCK} bytes`);
        if (frame.flags & Flags.END_HEADERS) this.endHeaderBlock();
        return;
      }
      case FrameType.PRIORITY:
        if (frame.streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PRIORITY on stream 0');
        return;
      case FrameType.RST_STREAM: {
        if (frame.streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
        const code = decodeRstStream(frame.payload);
        if (this.isIdle(frame.streamId)) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on an idle stream');
        const stream = this.streams.get(frame.streamId);
        if (stream) {
          this.forget(stream);
          stream.onReset(code, false);
        }
        return;
      }
      case FrameType.SETTINGS: return this.onSettings(frame);
      case FrameType.PUSH_PROMISE: throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE is not accepted');
      case FrameType.PING:
        if (frame.streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
        if (frame.payload.length !== 8) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING is not 8 bytes');
        if (!(frame.flags & Flags.ACK)) this.write(encodeFrame(FrameType.PING, Flags.ACK, 0, frame.payload));
        return;
      case FrameType.GOAWAY: {
        if (frame.streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
        const { lastStreamId, code, debug } = decodeGoaway(frame.payload);
        this.goawayReceived = true;
        if (!this.opts.isServer) {
          for (const s of [...this.streams.values()]) {
            if (s.id > lastStreamId) {
              this.forget(s);
              s.onReset(ErrorCode.REFUSED_STREAM, false);
            }
          }
        }
        this.opts.onGoaway?.(code, debug);
        this.endIfIdle();
        return;
      }
      case FrameType.WINDOW_UPDATE: return this.onWindowUpdate(frame);
      default: return; // unknown frame types are ignored (§4.1)
    }
  }

  /** A stream id the peer could not have used yet. */
  private isIdle(id: number): boolean {
    const peerInitiated = this.opts.isServer ? id % 2 === 1 : id % 2 === 0;
    return peerInitiated ? id > this.lastPeerStreamId : id >= this.nextStreamId;
  }

  private onDataFrame(frame: Frame): void {
    if (frame.streamId === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on stream 0');
    const length = frame.payload.length;
    if (length > this.recvWindow) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
    if (length > 0) this.write(encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, encodeUInt32(length)));
    if (this.isIdle(frame.streamId)) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on an idle stream');
    const stream = this.streams.get(frame.streamId);
    if (!stream || stream.remoteEnded) {
      this.write(encodeFrame(FrameType.RST_STREAM, 0, frame.streamId, encodeUInt32(ErrorCode.STREAM_CLOSED)));
      return;
    }
    if (length > stream.recvWindow) {
      this.resetStream(stream, ErrorCode.FLOW_CONTROL_ERROR);
      stream.onReset(ErrorCode.FLOW_CONTROL_ERROR, false);
      return;
    }
    const end = (frame.flags & Flags.END_STREAM) !== 0;
    if (length > 0 && !end) this.write(encodeFrame(FrameType.WINDOW_UPDATE, 0, stream.id, encodeUInt32(length)));
    if (end) stream.remoteEnded = true;
    const data = unpaddedPayload(frame);
    this.closeIfDone(stream);
    stream.onData(data, end);
  }

  private endHeaderBlock(): void {
    const { streamId, endStream, chunks } = this.headerBlock!;
    this.headerBlock = null;
    // Decoded whatever the stream's state: the decoder's dynamic table follows every block.
    const fields = this.decoder.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    let stream = this.streams.get(streamId);
    if (!stream) {
      const peerInitiated = this.opts.isServer ? streamId % 2 === 1 : streamId % 2 === 0;
      if (!peerInitiated) {
        if (streamId >= this.nextStreamId) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS on an idle stream');
        return; // a stream this end has reset
      }
      if (!this.opts.isServer) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a server opened a stream');
      if (streamId <= this.lastPeerStreamId) throw new H2ConnectionError(ErrorCode.STREAM_CLOSED, 'HEADERS on a closed stream');
      this.lastPeerStreamId = streamId;
      if (this.goawaySent) {
        this.write(encodeFrame(FrameType.RST_STREAM, 0, streamId, encodeUInt32(ErrorCode.REFUSED_STREAM)));
        return;
      }
      stream = new H2Stream(this, streamId, this.peerInitialWindow);
      this.streams.set(streamId, stream);
      this.opts.onStream?.(stream);
    } else if (stream.remoteEnded) {
      this.resetStream(stream, ErrorCode.STREAM_CLOSED);
      stream.onReset(ErrorCode.STREAM_CLOSED, false);
      return;
    }
    if (endStream) stream.remoteEnded = true;
    this.closeIfDone(stream);
    stream.onHeaders(fields, endStream);
  }

  private onSettings(frame: Frame): void {
    if (frame.streamId !== 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if (frame.flags & Flags.ACK) {
      if (frame.payload.length !== 0) throw new H2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
      return;
    }
    for (const [id, value] of decodeSettings(frame.payload)) {
      if (id === SettingId.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW_SIZE) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'INITIAL_WINDOW_SIZE too large');
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const s of this.streams.values()) {
          s.sendWindow += delta;
          if (s.sendWindow > MAX_WINDOW_SIZE) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'stream window overflow');
        }
      } else if (id === SettingId.MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME_SIZE || value > 16_777_215) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'invalid MAX_FRAME_SIZE');
        this.peerMaxFrameSize = value;
      } else if (id === SettingId.MAX_CONCURRENT_STREAMS) {
        this.peerMaxConcurrentStreams = value;
      } else if (id === SettingId.ENABLE_PUSH) {
        if (value > 1) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'invalid ENABLE_PUSH');
      }
      // HEADER_TABLE_SIZE bounds the encoder's dynamic table, which this end does not use; the other
      // settings only limit what the peer accepts beyond what a unary call sends.
    }
    this.write(encodeFrame(FrameType.SETTINGS, Flags.ACK, 0));
    const first = !this.gotSettings;
    this.gotSettings = true;
    this.flush();
    if (first) this.opts.onReady?.();
  }

  private onWindowUpdate(frame: Frame): void {
    const inc = decodeWindowUpdate(frame.payload);
    if (frame.streamId === 0) {
      if (inc === 0) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0 on the connection');
      this.sendWindow += inc;
      if (this.sendWindow > MAX_WINDOW_SIZE) throw new H2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window overflow');
    } else {
      const stream = this.streams.get(frame.streamId);
      if (!stream) {
        if (this.isIdle(frame.streamId)) throw new H2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE on an idle stream');
        return;
      }
      if (inc === 0 || stream.sendWindow + inc > MAX_WINDOW_SIZE) {
        const code = inc === 0 ? ErrorCode.PROTOCOL_ERROR : ErrorCode.FLOW_CONTROL_ERROR;
        this.resetStream(stream, code);
        stream.onReset(code, false);
        return;
      }
      stream.sendWindow += inc;
    }
    this.flush();
  }

  /** Sends what the windows allow of every stream's queue, in order. */
  flush(): void {
    if (this.closed) return;
    for (const stream of this.streams.values()) {
      while (stream.queue.length > 0) {
        const item = stream.queue[0]!;
        if ('headers' in item) {
          this.writeHeaderBlock(stream.id, encodeHeaderBlock(item.headers), item.end);
          stream.queue.shift();
          continue;
        }
        if (item.data.length === 0) {
          this.write(encodeFrame(FrameType.DATA, item.end ? Flags.END_STREAM : 0, stream.id));
          stream.queue.shift();
          continue;
        }
        const n = Math.min(item.data.length, this.sendWindow, stream.sendWindow, this.peerMaxFrameSize);
        if (n <= 0) break;
        const last = n === item.data.length;
        this.write(encodeFrame(FrameType.DATA, last && item.end ? Flags.END_STREAM : 0, stream.id, item.data.subarray(0, n)));
        this.sendWindow -= n;
        stream.sendWindow -= n;
        if (last) stream.queue.shift();
        else item.data = item.data.subarray(n);
      }
      this.closeIfDone(stream);
    }
  }

  private writeHeaderBlock(streamId: number, block: Buffer, endStream: boolean): void {
    const max = this.peerMaxFrameSize;
    let off = 0;
    let type: number = FrameType.HEADERS;
    do {
      const chunk = block.subarray(off, off + max);
      off += chunk.length;
      const flags = (off >= block.length ? Flags.END_HEADERS : 0) | (type === FrameType.HEADERS && endStream ? Flags.END_STREAM : 0);
      this.write(encodeFrame(type, flags, streamId, chunk));
      type = FrameType.CONTINUATION;
    } while (off < block.length);
  }

  /** Sends RST_STREAM and forgets the stream (its owner learns of it from its own call). */
  resetStream(stream: H2Stream, code: number): void {
    if (!this.streams.has(stream.id)) return;
    this.forget(stream);
    this.write(encodeFrame(FrameType.RST_STREAM, 0, stream.id, encodeUInt32(code)));
  }

  private forget(stream: H2Stream): void {
    stream.queue.length = 0;
    stream.localEnded = true;
    stream.remoteEnded = true;
    this.streams.delete(stream.id);
    this.endIfIdle();
    if (!this.opts.isServer) this.opts.onStreamClosed?.();
  }

  private closeIfDone(stream: H2Stream): void {
    if (stream.remoteEnded && stream.localEnded && stream.queue.length === 0 && this.streams.get(stream.id) === stream) {
      this.streams.delete(stream.id);
      this.endIfIdle();
      if (!this.opts.isServer) this.opts.onStreamClosed?.();
    }
  }
}
