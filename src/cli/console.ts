// Attaching a terminal to a guest's serial console (a unix socket QEMU serves), as `virtctl console`
// does: raw mode on a TTY, Ctrl-] (0x1d) detaches. Without a TTY the console is read-only output.
import net from 'node:net';

export const DETACH_BYTE = 0x1d; // Ctrl-]

export interface ConsoleSession {
  /** Resolves when the user detached or the socket closed. */
  readonly closed: Promise<'detached' | 'closed'>;
  detach(): void;
}

export function attachConsole(socketPath: string, io: { input: NodeJS.ReadStream; output: NodeJS.WritableStream; interactive: boolean }): Promise<ConsoleSession> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socketPath);
    let done!: (why: 'detached' | 'closed') => void;
    const closed = new Promise<'detached' | 'closed'>((r) => { done = r; });
    let wasRaw = false;
    const onInput = (chunk: Buffer) => {
      const i = chunk.indexOf(DETACH_BYTE);
      if (i >= 0) {
        if (i > 0) sock.write(chunk.subarray(0, i));
        finish('detached');
        return;
      }
      sock.write(chunk);
    };
    const finish = (why: 'detached' | 'closed') => {
      if (io.interactive) {
        io.input.off('data', onInput);
        if (io.input.isTTY) io.input.setRawMode(wasRaw);
        io.input.pause();
      }
      sock.destroy();
      done(why);
    };
    sock.once('connect', () => {
      if (io.interactive) {
        if (io.input.isTTY) { wasRaw = io.input.isRaw; io.input.setRawMode(true); }
        io.input.on('data', onInput);
        io.input.resume();
      }
      sock.on('data', (d: Buffer) => io.output.write(d));
      sock.on('close', () => finish('closed'));
      resolve({ closed, detach: () => finish('detached') });
    });
    sock.once('error', (err) => reject(new Error(`cannot attach to the serial console ${socketPath}: ${err.message}`)));
  });
}
