// The grpc-js transport of the launcher protocols (src/proto/service.ts): the node agent's and the
// CLI's clients, and servers registered on a grpc-js Server (the node agent's notify server, device
// plugins). The launcher speaks the same protocols over src/proto/h2/ instead, without node:http2.
import * as grpc from '@grpc/grpc-js';
import { encodeMessage, type CallContext, type CallOptions, type ServiceDefinition, type UnaryHandlers, type UnaryMethods, type UnaryRpc } from './service.ts';

const constructors = new WeakMap<ServiceDefinition, grpc.ServiceClientConstructor>();

/** `service` as a grpc-js client constructor (its `.service` is what grpc.Server.addService takes). */
export function grpcJsService(service: ServiceDefinition): grpc.ServiceClientConstructor {
  const known = constructors.get(service);
  if (known) return known;
  const methods: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(service.methods)) {
    methods[name] = {
      path: m.path,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestSerialize: (value) => encodeMessage(m.request, value),
      requestDeserialize: (bytes) => m.request.decode(bytes),
      responseSerialize: (value) => encodeMessage(m.response, value),
      responseDeserialize: (bytes) => m.response.decode(bytes),
      originalName: name.charAt(0).toLowerCase() + name.slice(1),
    };
  }
  const ctor = grpc.makeClientConstructor(methods as grpc.ServiceDefinition, service.fullName) as grpc.ServiceClientConstructor;
  constructors.set(service, ctor);
  return ctor;
}

/** The grpc address of a unix socket path. */
export function unixAddress(socketPath: string): string {
  return `unix:${socketPath}`;
}

function metadataMap(md: grpc.Metadata): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, values] of Object.entries(md.toJSON())) out.set(key, values.map((v) => (typeof v === 'string' ? v : v.toString('latin1'))));
  return out;
}

/**
 * Registers `handlers` for `service` on `server`. A handler that throws becomes a gRPC error
 * with status INTERNAL and the error's message (protocol-level failures).
 */
export function addUnaryService<M extends UnaryMethods>(server: grpc.Server, service: ServiceDefinition, handlers: UnaryHandlers<M>): void {
  const ctor = grpcJsService(service);
  const impl: grpc.UntypedServiceImplementation = {};
  for (const name of Object.keys(service.methods)) {
    const originalName = (ctor.service[name] as grpc.MethodDefinition<unknown, unknown> & { originalName?: string }).originalName;
    const handler = (handlers as Record<string, ((req: unknown, ctx: CallContext) => Promise<unknown>) | undefined>)[name];
    if (!handler) throw new Error(`no handler for ${service.fullName}.${name}`);
    const fn: grpc.handleUnaryCall<unknown, unknown> = (call, callback) => {
      let cancelled = false;
      call.on('cancelled', () => { cancelled = true; });
      const ctx: CallContext = { peer: call.getPeer(), metadata: metadataMap(call.metadata), cancelled: () => cancelled };
      handler(call.request, ctx).then(
        (res) => callback(null, res),
        (err: unknown) => callback({ code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : String(err) }),
      );
    };
    impl[name] = fn;
    if (originalName && originalName !== name) impl[originalName] = fn;
  }
  server.addService(ctor.service, impl);
}

/** A promise-based grpc-js client for one service over a unix socket. */
export class UnaryClient<M extends UnaryMethods> implements UnaryRpc<M> {
  readonly socketPath: string;
  readonly raw: grpc.Client;
  readonly defaultTimeoutMs: number;

  constructor(service: ServiceDefinition, socketPath: string, opts: { timeoutMs?: number; channel?: grpc.Channel } = {}) {
    this.socketPath = socketPath;
    this.defaultTimeoutMs = opts.timeoutMs ?? 10_000;
    const channelOptions: Partial<grpc.ChannelOptions> = opts.channel ? { channelOverride: opts.channel } : {};
    const ctor = grpcJsService(service);
    this.raw = new ctor(unixAddress(socketPath), grpc.credentials.createInsecure(), channelOptions);
  }

  /** Calls `method`; rejects with a gRPC ServiceError (with `.code`) on transport or server errors. */
  call<K extends keyof M & string>(method: K, request: M[K][0], opts: CallOptions = {}): Promise<M[K][1]> {
    const fn = (this.raw as unknown as Record<string, unknown>)[method];
    if (typeof fn !== 'function') return Promise.reject(new Error(`gRPC method ${method} is not part of this service`));
    const deadline = new Date(Date.now() + (opts.timeoutMs ?? this.defaultTimeoutMs));
    return new Promise<M[K][1]>((resolve, reject) => {
      const call = (fn as (req: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: unknown) => void) => grpc.ClientUnaryCall)
        .call(this.raw, request, new grpc.Metadata(), { deadline }, (err, res) => {
          opts.signal?.removeEventListener('abort', onAbort);
          if (err) reject(err);
          else resolve(res as M[K][1]);
        });
      const onAbort = () => call.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Resolves once the channel is connected, or rejects after `timeoutMs`. */
  waitForReady(timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.raw.waitForReady(new Date(Date.now() + timeoutMs), (err) => (err ? reject(err) : resolve()));
    });
  }

  close(): void {
    this.raw.close();
  }
}

/**
 * A gRPC server listening on a unix socket path. A stale socket file at the path is removed first
 * (as KubeVirt's CreateSocket does). Resolves once bound.
 */
export async function listenUnix(server: grpc.Server, socketPath: string): Promise<void> {
  const { rmSync } = await import('node:fs');
  rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(unixAddress(socketPath), grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(new Error(`cannot listen on gRPC socket ${socketPath}: ${err.message}`)) : resolve()));
  });
}

/** Stops a server: graceful for up to `graceMs`, then forced. */
export function shutdownServer(server: grpc.Server, graceMs = 1000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { server.forceShutdown(); resolve(); }, graceMs);
    server.tryShutdown(() => { clearTimeout(timer); resolve(); });
  });
}

export { grpc };
