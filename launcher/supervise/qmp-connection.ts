// The slice of the QMP client (qmp/client.ts) the launcher runtime relies on. Written as a
// structural interface so the runtime's logic does not depend on the client's internals, and the
// shapes it consumes are stated in one place. QMP events reach each consumer through a
// subscription of its own (onQmpEvents), never through a shared listener.

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

/**
 * The client's own event subscription (qmp/events.ts): the events asked for, in order, in a bounded
 * buffer of their own; it ends when closed, when the connection ends, or (with an error) on overflow.
 */
export interface QmpEventStream extends AsyncIterable<QmpEventMessage> {
  close(): void;
}

export interface QmpConnection {
  execute(command: string, args?: Record<string, unknown>, opts?: QmpExecuteOptions): Promise<unknown>;
  /** Events named `names` (all when omitted) from now on. */
  subscribe(opts?: { names?: string | readonly string[] }): QmpEventStream;
  close(): void;
}

/**
 * Takes a subscription of `names` on `qmp` and hands each event, in order, to `handle` until the
 * subscription ends (closed, the connection gone). Delivery never waits for the handler; a handler
 * that throws is logged and the next event still comes. Returns the subscription (close it to stop).
 */
export function onQmpEvents(
  qmp: QmpConnection,
  names: readonly string[] | undefined,
  handle: (ev: QmpEventMessage) => void,
  log: { error(fields: Record<string, unknown>, msg: string): void },
): QmpEventStream {
  const sub = qmp.subscribe(names === undefined ? {} : { names });
  void (async () => {
    try {
      for await (const ev of sub) {
        try {
          handle(ev);
        } catch (err) {
          log.error({ event: ev.event, err: errorMessage(err) }, 'QMP event handler failed');
        }
      }
    } catch (err) {
      log.error({ names, err: errorMessage(err) }, 'QMP event subscription ended with an error');
    }
  })();
  return sub;
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
