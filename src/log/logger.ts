// Structured logging for every qvirt component: pino, one JSON object a line.
// Every line carries `component`; loggers for one object add namespace, name and uid.
import { pino, type Logger, type LevelWithSilent } from 'pino';
import { isoTime } from './iso-time.ts';
import { fdDestination } from './fd-destination.ts';

export type { Logger } from 'pino';

/** The object a log line is about, in KubeVirt's terms. */
export interface ObjectRef {
  namespace?: string | undefined;
  name?: string | undefined;
  uid?: string | undefined;
  kind?: string | undefined;
}

const levelFromEnv = (): LevelWithSilent => {
  const raw = process.env.QVIRT_LOG_LEVEL ?? process.env.LOG_LEVEL ?? 'info';
  const allowed: LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  return (allowed as string[]).includes(raw) ? (raw as LevelWithSilent) : 'info';
};

/**
 * The root logger of a component (`launcher`, `handler`, `controller`, `apiserver`, `cli`, ...).
 * Writes to stderr by default so a command's stdout stays for its output; pass a destination
 * (a file descriptor or a stream) to send it elsewhere.
 */
export function componentLogger(component: string, opts: { level?: LevelWithSilent; destination?: number | NodeJS.WritableStream } = {}): Logger {
  const dest = opts.destination ?? 2;
  const stream = typeof dest === 'number' ? fdDestination(dest) : dest;
  return pino(
    {
      level: opts.level ?? levelFromEnv(),
      base: { component },
      // pino.stdTimeFunctions.isoTime's output, without Date.prototype.toISOString (src/log/iso-time.ts).
      timestamp: () => `,"time":"${isoTime(Date.now())}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
}

/** A child logger for one object: every line it writes names namespace, name and uid. */
export function forObject(log: Logger, ref: ObjectRef): Logger {
  const fields: Record<string, string> = {};
  if (ref.kind) fields.kind = ref.kind;
  if (ref.namespace) fields.namespace = ref.namespace;
  if (ref.name) fields.name = ref.name;
  if (ref.uid) fields.uid = ref.uid;
  return log.child(fields);
}
