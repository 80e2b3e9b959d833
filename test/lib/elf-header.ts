// The first bytes of an ELF file: magic, class (2 = 64-bit) and type (4 = core), for tests of memory dumps.
import { closeSync, openSync, readSync } from 'node:fs';

export function elfHeader(path: string): { magic: string; cls: number; type: number } {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(18);
    readSync(fd, b, 0, 18, 0);
    return { magic: b.subarray(0, 4).toString('latin1'), cls: b[4]!, type: b.readUInt16LE(16) };
  } finally {
    closeSync(fd);
  }
}
