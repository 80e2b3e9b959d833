// A unary gRPC client on HTTP/2 over a unix socket (node:net; no node:http2), the counterpart of
// grpc-server.ts with grpc-js's client semantics: one connection per client, opened at the first call
// and opened again after the server went away (GOAWAY or a closed socket); a call while the socket
// cannot be reached fails at once with UNAVAILABLE (grpc-js without waitForReady); the deadline travels
// as `grpc-timeout` and ends the call with DEADLINE_EXCEEDED here too; an AbortSignal cancels
// (RST_STREAM CANCEL, CANCELLED); calls beyond the server's MAX_CONCURRENT_STREAMS wait for a stream.
// Errors are GrpcError (`code`, `details`).
import { connect, type Socket } from 'node:net';
import { GrpcStatus, encodeMessage, type CallOptions, type ServiceDefinition, type UnaryMethods, type UnaryRpc } from '../service.ts';
import { ErrorCode } from './frame.ts';
import { H2Connection } from './connection.ts';
import { GrpcError, encodeGrpcTimeout, frameMessage, grpcStatusFromHttp, percentDecode, unframeUnaryMessage } from './grpc-wire.ts';

export class GrpcClient<M extends UnaryMethods> implements UnaryRpc<M> {
  readonly socketPath: string;
  readonly defaultTimeoutMs: number;
  private readonly service: ServiceDefinition;
  private conn: Promise<H2Connection> | null = null;
  private closed = false;
  /** Calls waiting for a stream under the server's MAX_CONCURRENT_STREAMS. */
  private readonly slotWaiters: (() => void)[] = [];

  constructor(service: ServiceDefinition, socketPath: string, opts: { timeoutMs?: number } = {}) {
    this.service = service;
    this.socketPath = socketPath;
    this.defaultTimeoutMs = opts.timeoutMs ?? 10_000;
  }

  /** The open connection, or a new one once the server's SETTINGS arrived. */
  private connection(): Promise<H2Connection> {
    if (this.closed) return Promise.reject(new GrpcError(GrpcStatus.UNAVAILABLE, 'client closed'));
    if (this.conn) return this.conn;
    const attempt: Promise<H2Connection> = new Promise((resolve, reject) => {
      const socket: Socket = connect(this.socketPath);
      let ready = false;
      const forget = () => { if (this.conn === attempt) this.conn = null; };
      socket.once('error', (err) => {
        forget();
        if (!ready) reject(new GrpcError(GrpcStatus.UNAVAILABLE, `No connection established. Last error: ${err.message}`));
      });
      socket.once('connect', () => {
        const conn = new H2Connection(socket, {
          isServer: false,
          onReady: () => { ready = true; resolve(conn); },
          onGoaway: forget,
          onStreamClosed: () => this.slotWaiters.shift()?.(),
          onClose: () => {
            forget();
            for (const wake of this.slotWaiters.splice(0)) wake();
            if (!ready) reject(new GrpcError(GrpcStatus.UNAVAILABLE, 'connection closed before the server\'s SETTINGS'));
          },
        });
      });
    });
    this.conn = attempt;
    attempt.catch(() => {});
    return attempt;
  }

  /** Calls `method`; rejects with a GrpcError on transport or server errors. */
  call<K extends keyof M & string>(method: K, request: M[K][0], opts: CallOptions = {}): Promise<M[K][1]> {
    const def = this.service.methods[method];
    if (!def) return Promise.reject(new Error(`gRPC method ${method} is not part of this service`));
    let body: Buffer;
    try {
      body = frameMessage(encodeMessage(def.request, request));
    } catch (err) {
      return Promise.reject(new GrpcError(GrpcStatus.INTERNAL, `Request message serialization failure: ${err instanceof Error ? err.message : String(err)}`));
    }
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    const deadlineAt = Date.now() + timeoutMs;
    return new Promise<M[K][1]>((resolve, reject) => {
      let done = false;
      let cancelStream: (() => void) | null = null;
      const settle = (err: GrpcError | null, value?: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(value as M[K][1]);
      };
      const timer = setTimeout(() => {
        cancelStream?.();
        settle(new GrpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'));
      }, timeoutMs);
      const onAbort = () => {
        cancelStream?.();
        settle(new GrpcError(GrpcStatus.CANCELLED, 'Cancelled on client'));
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });

      this.connection().then(async (conn) => {
        while (!done && conn.usable && !conn.canOpenStream) await new Promise<void>((r) => this.slotWaiters.push(r));
        if (done) {
          if (conn.canOpenStream) this.slotWaiters.shift()?.(); // the slot this call leaves unused
          return;
        }
        if (!conn.usable) {
          this.conn = null;
          return settle(new GrpcError(GrpcStatus.UNAVAILABLE, 'connection is closing'));
        }
        const stream = conn.openStream();
        cancelStream = () => stream.reset(ErrorCode.CANCEL);
        let httpStatus = 0;
        const data: Buffer[] = [];
        const complete = (fields: ReadonlyMap<string, string>) => {
          const statusField = fields.get('grpc-status');
          if (statusField === undefined) {
            return settle(new GrpcError(httpStatus === 200 ? GrpcStatus.UNKNOWN : grpcStatusFromHttp(httpStatus), `Received HTTP status code ${httpStatus} without grpc-status`));
          }
          const code = Number(statusField);
          if (code !== GrpcStatus.OK) return settle(new GrpcError(code, percentDecode(fields.get('grpc-message') ?? '')));
          try {
            settle(null, def.response.decode(unframeUnaryMessage(Buffer.concat(data))));
          } catch (err) {
            settle(err instanceof GrpcError ? err : new GrpcError(GrpcStatus.INTERNAL, `Response message parsing error: ${err instanceof Error ? err.message : String(err)}`));
          }
        };
        stream.onHeaders = (fields, endStream) => {
          const h = new Map(fields);
          if (httpStatus === 0) httpStatus = Number(h.get(':status') ?? 0);
          if (httpStatus !== 200 && !h.has('grpc-status')) {
            cancelStream!();
            return settle(new GrpcError(grpcStatusFromHttp(httpStatus), `Received HTTP status code ${httpStatus}`));
          }
          if (endStream || h.has('grpc-status')) {
            complete(h);
            // The answer came before the whole request was sent (an early error): stop sending it.
            if (!endStream || stream.queue.length > 0) cancelStream!();
          }
        };
        stream.onData = (chunk, endStream) => {
          data.push(chunk);
          if (endStream) settle(new GrpcError(GrpcStatus.INTERNAL, 'response ended without trailers'));
        };
        stream.onReset = (code, connectionLost) => {
          if (connectionLost) return settle(new GrpcError(GrpcStatus.UNAVAILABLE, 'Connection dropped'));
          if (code === ErrorCode.REFUSED_STREAM) return settle(new GrpcError(GrpcStatus.UNAVAILABLE, 'Stream refused by server'));
          if (code === ErrorCode.CANCEL) return settle(new GrpcError(GrpcStatus.CANCELLED, 'Call cancelled by the server'));
          settle(new GrpcError(GrpcStatus.INTERNAL, `Received RST_STREAM with code ${code}`));
        };
        const headers: [string, string][] = [
          [':method', 'POST'], [':scheme', 'http'], [':path', def.path], [':authority', 'localhost'],
          ['content-type', 'application/grpc'], ['te', 'trailers'], ['grpc-timeout', encodeGrpcTimeout(deadlineAt - Date.now())],
        ];
        stream.sendHeaders(headers);
        stream.sendData(body, true);
      }, (err: unknown) => settle(err instanceof GrpcError ? err : new GrpcError(GrpcStatus.UNAVAILABLE, String(err))))
        .catch((err: unknown) => settle(new GrpcError(GrpcStatus.UNAVAILABLE, err instanceof Error ? err.message : String(err))));
    });
  }

  /** Resolves once connected, retrying while the socket cannot be reached; rejects after `timeoutMs`. */
  async waitForReady(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let delay = 20;
    for (;;) {
      try {
        const conn = await Promise.race([
          this.connection(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new GrpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Failed to connect before the deadline')), Math.max(0, deadline - Date.now())).unref()),
        ]);
        if (conn.usable) return;
        this.conn = null;
      } catch (err) {
        if (this.closed || Date.now() + delay >= deadline) throw err instanceof GrpcError && err.code === GrpcStatus.DEADLINE_EXCEEDED ? err : new GrpcError(GrpcStatus.DEADLINE_EXCEEDED, `Failed to connect before the deadline: ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }

  /** Closes the connection (calls in flight fail with UNAVAILABLE); later calls fail. */
  close(): void {
    this.closed = true;
    const conn = this.conn;
    this.conn = null;
    void conn?.then((c) => c.destroy(), () => {});
  }
}
