// Attaching a terminal to a guest's serial console, as `virtctl console` does: raw mode on a TTY,
// Ctrl-] (0x1d) detaches. The console is a byte stream: a unix socket QEMU serves (`qvirt run`) or
// the node agent's upgraded HTTPS connection (`qvirt console` against a cluster). Without
// `interactive` the console is read-only output.
import net from 'node:net';
import type { Duplex } from 'node:stream';

export const DETACH_BYTE = 0x1d; // Ctrl-]

export interface ConsoleSession {
  /** Resolves when the user detached or the stream closed. */
  readonly closed: Promise<'detached' | 'closed'>;
  detach(): void;
}

export interface ConsoleIo {
  readonly input: NodeJS.ReadStream;
  readonly output: NodeJS.WritableStream;
  readonly interactive: boolean;
}

/** Joins an open console stream to the terminal until Ctrl-] or the stream's end. */
export function attachStream(sock: Duplex, io: ConsoleIo): ConsoleSession {
  let done!: (why: 'detached' | 'closed') => void;
  const closed = new Promise<'detached' | 'closed'>((r) => { done = r; });
  let wasRaw = false;
  let finished = false;
  const onInput = (chunk: Buffer) => {
    const i = chunk.indexOf(DETACH_BYTE);
    if (i >= 0) {
      if (i > 0) sock.write(chunk.subarray(0, i));
      finish('detached');
      return;
    }
    sock.write(chunk);
  };
  const onInputEnd = () => { /* stdin closed (a pipe): keep showing output until the stream ends */ };
  const finish = (why: 'detached' | 'closed') => {
    if (finished) return;
    finished = true;
    if (io.interactive) {
      io.input.off('data', onInput);
      io.input.off('end', onInputEnd);
      if (io.input.isTTY) io.input.setRawMode(wasRaw);
      io.input.pause();
    }
    sock.destroy();
    done(why);
  };
  if (io.interactive) {
    if (io.input.isTTY) { wasRaw = io.input.isRaw; io.input.setRawMode(true); }
    io.input.on('data', onInput);
    io.input.on('end', onInputEnd);
    io.input.resume();
  }
  sock.on('data', (d: Buffer) => io.output.write(d));
  sock.on('error', () => finish('closed'));
  sock.on('close', () => finish('closed'));
  sock.on('end', () => finish('closed'));
  return { closed, detach: () => finish('detached') };
}

/** Connects to a serial console unix socket and attaches it. */
export function attachConsole(socketPath: string, io: ConsoleIo): Promise<ConsoleSession> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socketPath);
    sock.once('connect', () => {
      sock.off('error', onError);
      resolve(attachStream(sock, io));
    });
    const onError = (err: Error) => reject(new Error(`cannot attach to the serial console ${socketPath}: ${err.message}`));
    sock.once('error', onError);
  });
}
