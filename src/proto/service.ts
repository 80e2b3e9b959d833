// A gRPC service as the launcher protocols describe it, apart from any transport: the .proto files next
// to this module are read as descriptors at run time (no code generation) and each service becomes its
// methods' paths and message types (src/proto/codec.ts: field names exactly as in the .proto — KubeVirt
// mixes `vmiJson` and `Command` —, 64-bit integers as numbers, bytes as Buffers, unset fields as their
// defaults). A TypeScript map `method → [request, response]` per service gives the promise-based
// clients and the server handler types. Two transports carry them: src/proto/grpc.ts (grpc-js: the
// node agent, the CLI) and src/proto/h2/ (a unary gRPC on node:net: the launcher).
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { DescriptorSet, type MessageType } from './codec.ts';
import { loadProtoDescriptor } from './descriptor.ts';

const protoDir = fileURLToPath(new URL('.', import.meta.url));

export interface MethodDefinition {
  /** `/package.Service/Method` */
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  readonly request: MessageType;
  readonly response: MessageType;
}

export interface ServiceDefinition {
  /** e.g. `kubevirt.cmd.v1.Cmd` */
  readonly fullName: string;
  readonly methods: Readonly<Record<string, MethodDefinition>>;
}

const descriptors = new Map<string, DescriptorSet>();
const services = new Map<string, ServiceDefinition>();

/** The service `fullName` (e.g. `kubevirt.cmd.v1.Cmd`) from `file` in src/proto. */
export function loadService(file: string, fullName: string): ServiceDefinition {
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
  const methods: Record<string, MethodDefinition> = {};
  for (const [name, m] of Object.entries(service)) {
    methods[name] = { path: `/${fullName}/${name}`, requestStream: !!m.requestStream, responseStream: !!m.responseStream, request: m.request, response: m.response };
  }
  const def: ServiceDefinition = { fullName, methods };
  services.set(key, def);
  return def;
}

/** A message's encoder as gRPC serializers are: an array is refused as grpc-js's generated code refuses it. */
export function encodeMessage(type: MessageType, value: unknown): Buffer {
  if (Array.isArray(value)) {
    const name = type.fullName.slice(type.fullName.lastIndexOf('.') + 1);
    throw new Error(`Failed to serialize message: expected object with ${name} structure, got array instead`);
  }
  return type.encode(value as Record<string, unknown>);
}

/** A service's unary methods: name → [request, response]. */
export type UnaryMethods = { [method: string]: [unknown, unknown] };

export type RequestOf<M extends UnaryMethods, K extends keyof M> = M[K][0];
export type ResponseOf<M extends UnaryMethods, K extends keyof M> = M[K][1];

/** What a server implementation sees besides the request. */
export interface CallContext {
  /** The peer as the transport reports it (for unix sockets usually `unix:…` or empty). */
  readonly peer: string;
  /** The request's custom metadata: lower-case keys, each key's values in order. */
  readonly metadata: ReadonlyMap<string, readonly string[]>;
  readonly cancelled: () => boolean;
}

/** Server-side implementation of every method of a service. */
export type UnaryHandlers<M extends UnaryMethods> = {
  [K in keyof M]: (request: M[K][0], ctx: CallContext) => Promise<M[K][1]>;
};

export interface CallOptions {
  /** Deadline for this call; default the client's. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What both transports' clients offer. */
export interface UnaryRpc<M extends UnaryMethods> {
  call<K extends keyof M & string>(method: K, request: M[K][0], opts?: CallOptions): Promise<M[K][1]>;
  waitForReady(timeoutMs?: number): Promise<void>;
  close(): void;
}

/** gRPC status codes (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, ABORTED: 10, OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14, DATA_LOSS: 15, UNAUTHENTICATED: 16,
} as const;

/** A status code's name (`UNAVAILABLE`), or the number for an unknown one. */
export function grpcStatusName(code: number): string {
  return Object.entries(GrpcStatus).find(([, v]) => v === code)?.[0] ?? String(code);
}

/** Whether an error from a call is a gRPC error worth retrying (connection trouble, deadline). */
export function isTransientGrpcError(err: unknown): boolean {
  if (!err || typeof err !== 'object' || !('code' in err)) return true;
  const code = (err as { code: unknown }).code;
  return code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED || code === GrpcStatus.ABORTED;
}
