// Typed unary gRPC over unix sockets for the launcher protocols. The .proto files next to this
// module are read as descriptors at run time (no code generation) and each service becomes a
// grpc-js service definition whose messages src/proto/codec.ts encodes and decodes: field names
// exactly as in the .proto (KubeVirt mixes `vmiJson` and `Command`), 64-bit integers as numbers,
// bytes as Buffers, unset fields as their defaults. A TypeScript map `method → [request, response]`
// per service gives the promise-based client and the server handler types.
//
// What @grpc/proto-loader would make, minus the reflection descriptors: proto-loader also encodes a
// FileDescriptorProto and a DescriptorProto for every message of the file (for gRPC reflection, which
// nothing here serves); that was ≈15–25 ms of CPU per .proto file in every launcher's start.
import * as grpc from '@grpc/grpc-js';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { DescriptorSet, type MessageType } from './codec.ts';
import { loadProtoDescriptor } from './descriptor.ts';

const protoDir = fileURLToPath(new URL('.', import.meta.url));

const descriptors = new Map<string, DescriptorSet>();
const services = new Map<string, grpc.ServiceClientConstructor>();

function serializer(type: MessageType): (value: unknown) => Buffer {
  const name = type.fullName.slice(type.fullName.lastIndexOf('.') + 1);
  return (value) => {
    if (Array.isArray(value)) throw new Error(`Failed to serialize message: expected object with ${name} structure, got array instead`);
    return type.encode(value as Record<string, unknown>);
  };
}

function deserializer(type: MessageType): (bytes: Buffer) => unknown {
  return (bytes) => type.decode(bytes);
}

/** The service constructor `fullName` (e.g. `kubevirt.cmd.v1.Cmd`) from `file` in src/proto. */
export function loadService(file: string, fullName: string): grpc.ServiceClientConstructor {
  const key = `${file}#${fullName}`;
  const known = services.get(key);
  if (known) return known;
  let set = descriptors.get(file);
  if (!set) {
    set = new DescriptorSet(loadProtoDescriptor(protoDir, file));
    descriptors.set(file, set);
  }
  const service = set.services.get(fullName);
  if (!service) throw new Error(`gRPC service ${fullName} not found in ${join(protoDir, file)}`);
  const methods: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(service)) {
    methods[name] = {
      path: `/${fullName}/${name}`,
      requestStream: !!m.requestStream,
      responseStream: !!m.responseStream,
      requestSerialize: serializer(m.request),
      requestDeserialize: deserializer(m.request),
      responseSerialize: serializer(m.response),
      responseDeserialize: deserializer(m.response),
      originalName: name.charAt(0).toLowerCase() + name.slice(1),
    };
  }
  const ctor = grpc.makeClientConstructor(methods as grpc.ServiceDefinition, fullName) as grpc.ServiceClientConstructor;
  services.set(key, ctor);
  return ctor;
}

/** A service's unary methods: name → [request, response]. */
export type UnaryMethods = { [method: string]: [unknown, unknown] };

export type RequestOf<M extends UnaryMethods, K extends keyof M> = M[K][0];
export type ResponseOf<M extends UnaryMethods, K extends keyof M> = M[K][1];

/** What a server implementation sees besides the request. */
export interface CallContext {
  /** The peer as grpc-js reports it (for unix sockets usually `unix:…` or empty). */
  readonly peer: string;
  readonly metadata: grpc.Metadata;
  readonly cancelled: () => boolean;
}

/** Server-side implementation of every method of a service. */
export type UnaryHandlers<M extends UnaryMethods> = {
  [K in keyof M]: (request: M[K][0], ctx: CallContext) => Promise<M[K][1]>;
};

/** The grpc address of a unix socket path. */
export function unixAddress(socketPath: string): string {
  return `unix:${socketPath}`;
}

/**
 * Registers `handlers` for `service` on `server`. A handler that throws becomes a gRPC error
 * with status INTERNAL and the error's message (protocol-level failures; the launcher's command
 * handlers report their own failures in `Response{success:false}`).
 */
export function addUnaryService<M extends UnaryMethods>(
  server: grpc.Server,
  service: grpc.ServiceClientConstructor,
  handlers: UnaryHandlers<M>,
): void {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const name of Object.keys(service.service)) {
    const originalName = (service.service[name] as grpc.MethodDefinition<unknown, unknown> & { originalName?: string }).originalName;
    const handler = (handlers as Record<string, ((req: unknown, ctx: CallContext) => Promise<unknown>) | undefined>)[name];
    if (!handler) throw new Error(`no handler for ${service.serviceName}.${name}`);
    const fn: grpc.handleUnaryCall<unknown, unknown> = (call, callback) => {
      let cancelled = false;
      call.on('cancelled', () => { cancelled = true; });
      const ctx: CallContext = { peer: call.getPeer(), metadata: call.metadata, cancelled: () => cancelled };
      handler(call.request, ctx).then(
        (res) => callback(null, res),
        (err: unknown) => callback({ code: grpc.status.INTERNAL, details: err instanceof Error ? err.message : String(err) }),
      );
    };
    impl[name] = fn;
    if (originalName && originalName !== name) impl[originalName] = fn;
  }
  server.addService(service.service, impl);
}

export interface CallOptions {
  /** Deadline for this call; default the client's. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A promise-based client for one service over a unix socket. */
export class UnaryClient<M extends UnaryMethods> {
  readonly socketPath: string;
  readonly raw: grpc.Client;
  readonly defaultTimeoutMs: number;

  constructor(service: grpc.ServiceClientConstructor, socketPath: string, opts: { timeoutMs?: number; channel?: grpc.Channel } = {}) {
    this.socketPath = socketPath;
    this.defaultTimeoutMs = opts.timeoutMs ?? 10_000;
    const channelOptions: Partial<grpc.ChannelOptions> = opts.channel ? { channelOverride: opts.channel } : {};
    this.raw = new service(unixAddress(socketPath), grpc.credentials.createInsecure(), channelOptions);
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

/** Whether an error from a call is a gRPC error worth retrying (connection trouble, deadline). */
export function isTransientGrpcError(err: unknown): boolean {
  if (!err || typeof err !== 'object' || !('code' in err)) return true;
  const code = (err as { code: unknown }).code;
  return code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED || code === grpc.status.ABORTED;
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
