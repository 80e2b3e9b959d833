// Reading a blob while skopeo is still writing it: skopeo's `dir:` destination writes each blob
// to a temporary file in the layout directory (`dir-put-blob*`) and renames it to its digest's hex
// when complete. A pull of a single-layer image (a container disk: `FROM scratch` + the disk) can
// then unpack the layer as it arrives instead of after the transfer. Only a hint: the caller checks
// that the file it read is the finished layer blob (the same inode, renamed; skopeo verified its
// digest and writes a blob once, front to back) and that it read all of it, and unpacks the
// finished blob again otherwise (skopeo retried, the tag moved, a file was mistaken for the layer).
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';

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
  readonly stream: Readable;
  /** The file read (device and inode) and how many bytes the stream delivered (when it has ended). */
  readonly result: () => { dev: number; ino: number; size: number };
}

/**
 * A stream of the file's bytes as they are written, ending when `done()` is true and the end of
 * the file is reached. The file may be renamed meanwhile (the handle stays valid).
 */
export async function tailFile(path: string, done: () => boolean): Promise<TailedBlob> {
  const fh: FileHandle = await open(path, 'r');
  const { dev, ino } = await fh.stat();
  let pos = 0;
  let pumping = false;
  let closed = false;
  const close = () => { if (!closed) { closed = true; void fh.close().catch(() => undefined); } };
  const stream = new Readable({
    highWaterMark: 1 << 20,
    read() { void pump(); },
    destroy(err, cb) { close(); cb(err); },
  });
  async function pump(): Promise<void> {
    if (pumping || closed) return;
    pumping = true;
    try {
      for (;;) {
        const finished = done();
        const buf = Buffer.allocUnsafe(1 << 20);
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead > 0) {
          const chunk = buf.subarray(0, bytesRead);
          pos += bytesRead;
          if (!stream.push(chunk)) return;
          continue;
        }
        // Nothing new: the writer is done (one last read after it said so came back empty) or we wait.
        if (finished) { close(); stream.push(null); return; }
        await sleep(5);
      }
    } catch (err) {
      stream.destroy(err as Error);
    } finally {
      pumping = false;
    }
  }
  return { stream, result: () => ({ dev, ino, size: pos }) };
}
