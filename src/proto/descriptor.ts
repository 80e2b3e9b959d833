// A .proto file's protobufjs Root, from the JSON descriptor a build writes beside it when there is one
// (scripts/build.ts: the launcher bundle's directory), else parsed from the .proto text. Parsing the five
// .proto files a launcher serves and calls is ~15 ms of CPU at every launcher start; reading their
// descriptors ~9 ms.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';

/** The descriptor's file name beside `file` (`cmd.proto` → `cmd.proto.json`). */
export const descriptorFileName = (file: string): string => `${file}.json`;

/** Field names exactly as the .proto writes them (KubeVirt mixes `vmiJson` and `Command`). */
export const KEEP_CASE = true;

/** `dir/file` parsed as the gRPC code reads it. */
export function parseProto(dir: string, file: string): protobuf.Root {
  return new protobuf.Root().loadSync(join(dir, file), { keepCase: KEEP_CASE });
}

/** The JSON descriptor of `dir/file` (with everything it imports), for the build to write beside it. */
export function protoDescriptorJson(dir: string, file: string): string {
  const root = parseProto(dir, file);
  root.resolveAll();
  return JSON.stringify(root.toJSON());
}

/** `dir/file`'s Root: from its descriptor when one is beside it, else parsed. Resolved. */
export function loadProtoRoot(dir: string, file: string): protobuf.Root {
  const descriptor = join(dir, descriptorFileName(file));
  const root = existsSync(descriptor)
    ? protobuf.Root.fromJSON(JSON.parse(readFileSync(descriptor, 'utf8')) as protobuf.INamespace)
    : parseProto(dir, file);
  root.resolveAll();
  return root;
}
