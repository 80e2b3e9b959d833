// Where a component's log lines go when it logs to a file descriptor: each line written at once with
// writeSync, as pino.destination({ sync: true }) (sonic-boom) does, retried on a full non-blocking pipe.
// Not sonic-boom itself: pino then needs nothing of sonic-boom, thread-stream or worker_threads, and the
// launcher's bundle leaves them out (scripts/build.ts; ~1 MiB of RSS in every launcher:
// bench/launcher-memory.md).
import { writeSync } from 'node:fs';

/** How long to wait before writing again to a descriptor that is full (EAGAIN), as sonic-boom does. */
const BUSY_RETRY_MS = 100;

/** A pino destination writing each line to `fd` synchronously, completely, in order. */
export function fdDestination(fd: number): { write(line: string): boolean } {
  return {
    write(line: string): boolean {
      let buf = Buffer.from(line, 'utf8');
      while (buf.length > 0) {
        try {
          buf = buf.subarray(writeSync(fd, buf));
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code !== 'EAGAIN' && code !== 'EBUSY') throw err;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, BUSY_RETRY_MS);
        }
      }
      return true;
    },
  };
}
