// The shapes of QMP server messages (qemu docs/interop/qmp-spec.rst) and their validation.
// Everything the server sends is one of: the greeting, an event, a success reply, an error reply.
import { QmpProtocolError, excerpt } from './errors.ts';

export interface QmpVersion {
  qemu: { major: number; minor: number; micro: number };
  /** Distribution package string, e.g. `Debian 1:7.2+dfsg-7+deb12u18+b3`; may be empty. */
  package: string;
}

/** `{"QMP": {"version": …, "capabilities": […]}}`, sent unprompted on every new connection. */
export interface QmpGreeting {
  version: QmpVersion;
  /** What the server offers (`oob` on QEMU ≥ 2.12 monitors with an iothread-capable chardev). */
  capabilities: string[];
}

export interface QmpTimestamp {
  seconds: number;
  microseconds: number;
}

/** An asynchronous event. `data` is `{}` when QEMU sent none. */
export interface QmpEvent {
  event: string;
  data: Record<string, unknown>;
  timestamp: QmpTimestamp;
  /**
   * Client-local sequence number, 1 for the first event on this connection, strictly
   * increasing. Usable as a `since` cursor (`waitEvent(name, { since: ev.seq })`).
   */
  seq: number;
}

/** The body of an error reply. */
export interface QmpErrorBody {
  class: string;
  desc: string;
}

export type QmpServerMessage =
  | { kind: 'greeting'; greeting: QmpGreeting }
  | { kind: 'event'; event: string; data: Record<string, unknown>; timestamp: QmpTimestamp }
  /** `id` is `undefined` when the reply carried none (it then answers an id-less or unparsable input). */
  | { kind: 'return'; id: unknown; value: unknown }
  | { kind: 'error'; id: unknown; error: QmpErrorBody };

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function bad(what: string, msg: unknown): never {
  let text: string;
  try {
    text = JSON.stringify(msg);
  } catch {
    text = String(msg);
  }
  throw new QmpProtocolError(what, excerpt(text));
}

/** Classify and validate one parsed server message. Throws `QmpProtocolError` naming the bad field. */
export function parseServerMessage(msg: unknown): QmpServerMessage {
  if (!isObject(msg)) bad('server message is not a JSON object', msg);
  // Hot path first: replies.
  if ('return' in msg) return { kind: 'return', id: msg.id, value: msg.return };
  if ('error' in msg) {
    const e = msg.error;
    if (!isObject(e) || typeof e.class !== 'string' || typeof e.desc !== 'string') bad("error reply without string 'error.class' and 'error.desc'", msg);
    return { kind: 'error', id: msg.id, error: { class: e.class, desc: e.desc } };
  }
  if ('event' in msg) {
    if (typeof msg.event !== 'string') bad("event with non-string 'event'", msg);
    const data = msg.data === undefined ? {} : msg.data;
    if (!isObject(data)) bad(`event ${msg.event}: 'data' is not an object`, msg);
    return { kind: 'event', event: msg.event, data, timestamp: parseTimestamp(msg.timestamp) };
  }
  if ('QMP' in msg) return { kind: 'greeting', greeting: parseGreeting(msg) };
  bad("message is none of greeting ('QMP'), event ('event'), reply ('return'/'error')", msg);
}

function parseTimestamp(ts: unknown): QmpTimestamp {
  // QEMU always sends one; tolerate its absence (fake peers, future servers) with -1/-1 rather than fail.
  if (!isObject(ts)) return { seconds: -1, microseconds: -1 };
  return {
    seconds: typeof ts.seconds === 'number' ? ts.seconds : -1,
    microseconds: typeof ts.microseconds === 'number' ? ts.microseconds : -1,
  };
}

/** Validate `{"QMP": {"version": {"qemu": {major, minor, micro}, "package"}, "capabilities": [...]}}`. */
export function parseGreeting(msg: Obj): QmpGreeting {
  const qmp = msg.QMP;
  if (!isObject(qmp)) bad("greeting: 'QMP' is not an object", msg);
  const version = qmp.version;
  if (!isObject(version)) bad("greeting: 'QMP.version' is not an object", msg);
  const qemu = version.qemu;
  if (!isObject(qemu)) bad("greeting: 'QMP.version.qemu' is not an object", msg);
  for (const k of ['major', 'minor', 'micro'] as const) {
    if (typeof qemu[k] !== 'number') bad(`greeting: 'QMP.version.qemu.${k}' is not a number`, msg);
  }
  const pkg = version.package === undefined ? '' : version.package;
  if (typeof pkg !== 'string') bad("greeting: 'QMP.version.package' is not a string", msg);
  const caps = qmp.capabilities === undefined ? [] : qmp.capabilities;
  if (!Array.isArray(caps) || !caps.every((c) => typeof c === 'string')) bad("greeting: 'QMP.capabilities' is not a list of strings", msg);
  return {
    version: { qemu: { major: qemu.major as number, minor: qemu.minor as number, micro: qemu.micro as number }, package: pkg },
    capabilities: caps as string[],
  };
}

/** Commands QEMU 7.2 allows with `exec-oob` (`allow-oob: true` in query-qmp-schema). */
export const OOB_COMMANDS_QEMU_7_2 = ['migrate-recover', 'migrate-pause', 'yank', 'query-yank'] as const;
