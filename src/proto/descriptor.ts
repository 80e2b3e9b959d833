// A .proto file's descriptor (protobufjs's JSON form), from the file a build writes beside it when there
// is one (scripts/build.ts: the launcher bundle's directory), else parsed from the .proto text with
// protobufjs. Parsing the five .proto files a launcher serves and calls is ~15 ms of CPU at every
// launcher start; reading their descriptors ~9 ms. protobufjs is loaded only to parse: the launcher
// bundle, which always has the descriptors, neither contains nor loads it (src/proto/codec.ts encodes).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type protobuf from 'protobufjs';
import type { DescriptorNamespace } from './codec.ts';

/** The descriptor's file name beside `file` (`cmd.proto` → `cmd.proto.json`). */
export const descriptorFileName = (file: string): string => `${file}.json`;

/** Field names exactly as the .proto writes them (KubeVirt mixes `vmiJson` and `Command`). */
export const KEEP_CASE = true;

/** `dir/file` parsed as the gRPC code reads it. */
export function parseProto(dir: string, file: string): protobuf.Root {
  // A require the bundler does not follow: protobufjs stays out of the launcher bundle.
  const pb = createRequire(import.meta.url)('protobufjs') as typeof protobuf;
  return new pb.Root().loadSync(join(dir, file), { keepCase: KEEP_CASE });
}

/** The JSON descriptor of `dir/file` (with everything it imports), for the build to write beside it. */
export function protoDescriptorJson(dir: string, file: string): string {
  const root = parseProto(dir, file);
  root.resolveAll();
  return JSON.stringify(root.toJSON());
}

/** `dir/file`'s descriptor: the one beside it when there is one, else parsed from the .proto. */
export function loadProtoDescriptor(dir: string, file: string): DescriptorNamespace {
  const descriptor = join(dir, descriptorFileName(file));
  return JSON.parse(existsSync(descriptor) ? readFileSync(descriptor, 'utf8') : protoDescriptorJson(dir, file)) as DescriptorNamespace;
}
