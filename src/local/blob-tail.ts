// Reading a blob while skopeo is still writing it: skopeo's `dir:` destination writes each blob
// to a temporary file in the layout directory (`dir-put-blob*`) and renames it to its digest's hex
// when complete. A pull of a single-layer image (a container disk: `FROM scratch` + the disk) can
// then unpack the layer as it arrives instead of after the transfer. Only a hint: the caller checks
// that the file it read is the finished layer blob (the same inode, renamed; skopeo verified its
// digest and writes a blob once, front to back) and that it read all of it, and unpacks the
// finished blob again otherwise (skopeo retried, the tag moved, a file was mistaken for the layer).
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The file that is (or is becoming) the layer: its final name, or the temporary file larger than
 * every other blob of the image (`otherMax`: the config's size). Undefined once `done()` says the
 * copy ended without one.
 */
export async function findGrowingBlob(dir: string, hex: string, otherMax: number, done: () => boolean): Promise<string | undefined> {
  for (;;) {
    const finished = done();
    const names = await readdir(dir).catch(() => [] as string[]);
    if (names.includes(hex)) return join(dir, hex);
    for (const n of names) {
      if (!n.startsWith('dir-put-blob')) continue;
      const st = await stat(join(dir, n)).catch(() => undefined);
      if (st && st.size > otherMax) return join(dir, n);
    }
    if (finished) return undefined;
    await sleep(10);
  }
}

export interface TailedBlob {
  /** Fills `buf` with the next bytes as they are written: 0 once `done()` is true and the end of the file is reached. */
  readonly read: (buf: Buffer) => Promise<number>;
  /** The file read (device and inode) and how many bytes were read. */
  readonly result: () => { dev: number; ino: number; size: number };
  /**
   * Closes the file. Not awaited where the file may be the last link to a large blob (unlinked
   * meanwhile): the kernel frees its blocks on this last close, off the caller's path.
   */
  readonly close: () => Promise<void>;
}

/** Reads a file as it is written, ending when `done()` is true and the end of the file is reached. The file may be renamed meanwhile (the handle stays valid). */
export async function tailFile(path: string, done: () => boolean): Promise<TailedBlob> {
  const fh: FileHandle = await open(path, 'r');
  const { dev, ino } = await fh.stat();
  let pos = 0;
  const read = async (buf: Buffer): Promise<number> => {
    for (;;) {
      const finished = done();
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead > 0) { pos += bytesRead; return bytesRead; }
      // Nothing new: the writer is done (one last read after it said so came back empty) or we wait.
      if (finished) return 0;
      await sleep(5);
    }
  };
  return { read, result: () => ({ dev, ino, size: pos }), close: () => fh.close() };
}
