// A unary gRPC server on HTTP/2 over a unix socket (node:net; no node:http2): requests `POST
// /pkg.Service/Method` with `content-type: application/grpc`, one 5-byte-prefixed message each way,
// `grpc-timeout` deadlines (DEADLINE_EXCEEDED), status and percent-encoded message in the trailers,
// cancellation by the client's RST_STREAM. A handler that throws becomes INTERNAL with the error's
// message (protocol-level failures; the launcher's command handlers report their own failures in
// `Response{success:false}`), an unknown method UNIMPLEMENTED. A peer breaking HTTP/2 gets GOAWAY and
// its connection closed; the server goes on serving the others.
import { createServer, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import { GrpcStatus, encodeMessage, type CallContext, type MethodDefinition, type ServiceDefinition, type UnaryHandlers, type UnaryMethods } from '../service.ts';
import { ErrorCode } from './frame.ts';
import { H2Connection, type H2Stream } from './connection.ts';
import type { HeaderField } from './hpack.ts';
import {
  DEFAULT_MAX_RECEIVE_MESSAGE_BYTES, GrpcError, declaredMessageLength, frameMessage, parseGrpcTimeout, percentEncode, unframeUnaryMessage,
} from './grpc-wire.ts';

type Handler = (request: unknown, ctx: CallContext) => Promise<unknown>;
interface Route { readonly method: MethodDefinition; readonly handler: Handler }

export class GrpcServer {
  private readonly routes = new Map<string, Route>();
  private readonly connections = new Set<H2Connection>();
  private server: Server | null = null;
  private socketPath = '';

  /** Registers `handlers` for every method of `service`. */
  addUnaryService<M extends UnaryMethods>(service: ServiceDefinition, handlers: UnaryHandlers<M>): void {
    for (const [name, method] of Object.entries(service.methods)) {
      const handler = (handlers as Record<string, Handler | undefined>)[name];
      if (!handler) throw new Error(`no handler for ${service.fullName}.${name}`);
      if (method.requestStream || method.responseStream) throw new Error(`${method.path} is streaming: only unary methods are served`);
      this.routes.set(method.path, { method, handler });
    }
  }

  /** Listens on `socketPath`, removing a stale socket file first (as KubeVirt's CreateSocket does). */
  async listen(socketPath: string): Promise<void> {
    rmSync(socketPath, { force: true });
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new Error(`cannot listen on gRPC socket ${socketPath}: ${err.message}`)));
      server.listen(socketPath, () => resolve());
    });
    this.server = server;
    this.socketPath = socketPath;
  }

  /** Stops: no new connections, GOAWAY to each; calls in flight get up to `graceMs`, then connections are cut. */
  async shutdown(graceMs = 1000): Promise<void> {
    const server = this.server;
    this.server = null;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    for (const c of this.connections) c.close();
    const allGone = new Promise<void>((resolve) => {
      const check = () => (this.connections.size === 0 ? resolve() : setTimeout(check, 10));
      check();
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([allGone, new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); })]);
    clearTimeout(timer);
    for (const c of this.connections) c.destroy();
    await closed;
  }

  private accept(socket: Socket): void {
    const conn: H2Connection = new H2Connection(socket, {
      isServer: true,
      onStream: (stream) => this.serve(stream),
      onClose: () => this.connections.delete(conn),
    });
    this.connections.add(conn);
  }

  private serve(stream: H2Stream): void {
    const chunks: Buffer[] = [];
    let received = 0;
    let route: Route | undefined;
    let finished = false;
    let cancelled = false;
    let deadline: NodeJS.Timeout | undefined;
    const metadata = new Map<string, string[]>();

    const finish = (fields: HeaderField[], message?: Buffer) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      if (message) {
        stream.sendHeaders([[':status', '200'], ['content-type', 'application/grpc']]);
        stream.sendData(frameMessage(message));
        stream.sendHeaders(fields, true);
      } else {
        stream.sendHeaders([[':status', '200'], ['content-type', 'application/grpc'], ...fields], true);
      }
      // The answer does not wait for the rest of a request it did not need (HTTP/2 §8.1).
      if (!stream.remoteEnded) stream.reset(ErrorCode.NO_ERROR);
    };
    const fail = (code: number, details: string) => finish([['grpc-status', String(code)], ['grpc-message', percentEncode(details)]]);

    stream.onReset = () => {
      cancelled = true;
      finished = true;
      clearTimeout(deadline);
    };
    stream.onHeaders = (fields, endStream) => {
      if (route !== undefined || finished) return; // trailers of a request carry nothing a unary call reads
      const h = new Map<string, string>();
      for (const [name, value] of fields) {
        if (!name.startsWith(':') && name !== 'content-type' && name !== 'te' && !name.startsWith('grpc-')) {
          const list = metadata.get(name) ?? [];
          list.push(value);
          metadata.set(name, list);
        }
        h.set(name, value);
      }
      if (h.get(':method') !== 'POST') return fail(GrpcStatus.INTERNAL, `method ${h.get(':method') ?? ''} is not POST`);
      if (!(h.get('content-type') ?? '').startsWith('application/grpc')) {
        finished = true;
        stream.sendHeaders([[':status', '415'], ['grpc-status', String(GrpcStatus.INTERNAL)], ['grpc-message', 'content-type is not application/grpc']], true);
        if (!stream.remoteEnded) stream.reset(ErrorCode.NO_ERROR);
        return;
      }
      const path = h.get(':path') ?? '';
      route = this.routes.get(path);
      if (!route) return fail(GrpcStatus.UNIMPLEMENTED, `The server does not implement the method ${path}`);
      const timeout = h.get('grpc-timeout');
      if (timeout !== undefined) {
        const ms = parseGrpcTimeout(timeout);
        if (ms === undefined) return fail(GrpcStatus.INTERNAL, `invalid grpc-timeout ${timeout}`);
        deadline = setTimeout(() => {
          cancelled = true;
          fail(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
        }, ms);
      }
      if (endStream) dispatch();
    };
    stream.onData = (data, endStream) => {
      if (finished || !route) return;
      chunks.push(data);
      received += data.length;
      const declared = declaredMessageLength(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      if (declared > DEFAULT_MAX_RECEIVE_MESSAGE_BYTES || received > DEFAULT_MAX_RECEIVE_MESSAGE_BYTES + 5) {
        return fail(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${Math.max(declared, received - 5)} vs. ${DEFAULT_MAX_RECEIVE_MESSAGE_BYTES})`);
      }
      if (endStream) dispatch();
    };

    const dispatch = () => {
      if (finished || !route) return;
      const { method, handler } = route;
      let request: unknown;
      try {
        request = method.request.decode(unframeUnaryMessage(Buffer.concat(chunks)));
      } catch (err) {
        if (err instanceof GrpcError) return fail(err.code, err.details);
        return fail(GrpcStatus.INTERNAL, `Error deserializing request: ${err instanceof Error ? err.message : String(err)}`);
      }
      const ctx: CallContext = { peer: `unix:${this.socketPath}`, metadata, cancelled: () => cancelled };
      handler(request, ctx).then(
        (response) => {
          if (finished) return;
          let bytes: Buffer;
          try {
            bytes = encodeMessage(method.response, response);
          } catch (err) {
            return fail(GrpcStatus.INTERNAL, err instanceof Error ? err.message : String(err));
          }
          finish([['grpc-status', '0']], bytes);
        },
        (err: unknown) => fail(GrpcStatus.INTERNAL, err instanceof Error ? err.message : String(err)),
      );
    };
  }
}
