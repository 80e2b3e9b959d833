// Unix socket paths are limited to 107 bytes, and a pod's migration socket
// (<root>/var/run/kubevirt/migrationproxy/<uid>-49152-source.sock) can be longer. QEMU is then given
// (or a node agent binds or dials) the same file through a short symlink to its directory under the
// system temp dir (the kernel follows symlinks in the directory part of a socket path). Each call
// makes its own link; the caller removes it when nobody needs the path any more. node:crypto is loaded
// only when a link is made (a migration), not by every launcher (~2.4 MiB of RSS: bench/launcher-memory.md).
import { rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

export const MAX_UNIX_SOCKET_PATH = 107;
let seq = 0;

/** A path QEMU can bind or dial for `socket`, and how to drop the link made for it (a no-op if none). */
export function shortUnixPath(socket: string): { path: string; release: () => void } {
  if (Buffer.byteLength(socket) <= MAX_UNIX_SOCKET_PATH) return { path: socket, release: () => {} };
  const link = join(tmpdir(), `qvirt-m-${process.getBuiltinModule('node:crypto').createHash('sha256').update(dirname(socket)).digest('hex').slice(0, 8)}-${process.pid}-${++seq}`);
  rmSync(link, { force: true });
  symlinkSync(dirname(socket), link);
  const path = join(link, basename(socket));
  if (Buffer.byteLength(path) > MAX_UNIX_SOCKET_PATH) {
    rmSync(link, { force: true });
    throw new Error(`migration socket ${socket}: even through ${path} the path exceeds ${MAX_UNIX_SOCKET_PATH} bytes`);
  }
  return { path, release: () => rmSync(link, { force: true }) };
}
