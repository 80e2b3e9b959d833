// The errors a QMP client can raise. Every one says which command (or phase) failed and why,
// so a caller's log line is useful without extra context.

/** QEMU answered a command with `{"error": {"class", "desc"}}`. */
export class QmpError extends Error {
  override readonly name = 'QmpError';
  /** QEMU's error class: `GenericError`, `CommandNotFound`, `DeviceNotFound`, `DeviceNotActive`, `KVMMissingCap`. */
  readonly class: string;
  /** QEMU's human-readable description, verbatim. */
  readonly desc: string;
  /** The command that failed (`execute` / `exec-oob` name). */
  readonly command: string;
  /** The id the command was sent with. */
  readonly id: string;

  constructor(command: string, id: string, errorClass: string, desc: string) {
    super(`QMP command '${command}' failed: ${errorClass}: ${desc}`);
    this.class = errorClass;
    this.desc = desc;
    this.command = command;
    this.id = id;
  }
}

/** No reply (or no event) within the time the caller allowed. */
export class QmpTimeoutError extends Error {
  override readonly name = 'QmpTimeoutError';
  /** The command waited for, or a phase such as `(greeting)` or `(event STOP)`. */
  readonly command: string;
  readonly timeoutMs: number;

  constructor(command: string, timeoutMs: number, what = 'no reply') {
    super(`QMP ${command}: ${what} within ${timeoutMs} ms`);
    this.command = command;
    this.timeoutMs = timeoutMs;
  }
}

/** The connection ended (or was never usable) while a command or wait was outstanding. */
export class QmpDisconnectedError extends Error {
  override readonly name = 'QmpDisconnectedError';
  /** The command (or wait) that was cut off, if any. */
  readonly command: string | undefined;

  constructor(message: string, opts: { command?: string | undefined; cause?: unknown } = {}) {
    super(opts.command === undefined ? message : `QMP command '${opts.command}' interrupted: ${message}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.command = opts.command;
  }
}

/** The peer broke the protocol: unparsable bytes, an oversized message, an unexpected message shape. */
export class QmpProtocolError extends Error {
  override readonly name = 'QmpProtocolError';
  /** Up to 200 characters of the offending input, when there is one. */
  readonly excerpt: string | undefined;

  constructor(message: string, excerpt?: string) {
    super(excerpt === undefined ? `QMP protocol error: ${message}` : `QMP protocol error: ${message} (input: ${excerpt})`);
    this.excerpt = excerpt;
  }
}

/** A subscription's bounded buffer overflowed (with `overflow: 'error'`), or event history no longer covers a cursor. */
export class QmpEventOverflowError extends Error {
  override readonly name = 'QmpEventOverflowError';
  readonly dropped: number;

  constructor(message: string, dropped: number) {
    super(message);
    this.dropped = dropped;
  }
}

/** Cut a possibly huge input to something a log line can carry. */
export function excerpt(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
