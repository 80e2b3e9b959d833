// The slice of the QMP client (qmp/client.ts) the launcher runtime relies on. Written as a
// structural interface so the runtime's logic does not depend on the client's internals, and the
// shapes it consumes are stated in one place.

/** A QMP event as QEMU sends it. */
export interface QmpEventMessage {
  readonly event: string;
  readonly data?: Readonly<Record<string, unknown>> | undefined;
  readonly timestamp?: { readonly seconds: number; readonly microseconds: number } | undefined;
}

export interface QmpExecuteOptions {
  /** Milliseconds to wait for the reply. */
  timeout?: number;
  signal?: AbortSignal;
}

export interface QmpConnection {
  execute(command: string, args?: Record<string, unknown>, opts?: QmpExecuteOptions): Promise<unknown>;
  on(event: 'event', listener: (ev: QmpEventMessage) => void): unknown;
  on(event: 'close', listener: (err?: unknown) => void): unknown;
  /** Removes an event listener (optional: a connection that never outlives its listeners may lack it). */
  off?(event: 'event', listener: (ev: QmpEventMessage) => void): unknown;
  close(): void;
}

/** The error class QEMU reported, when `err` is a QMP command error. */
export function qmpErrorClass(err: unknown): string | undefined {
  if (err && typeof err === 'object' && 'class' in err && typeof (err as { class: unknown }).class === 'string') {
    return (err as { class: string }).class;
  }
  return undefined;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
