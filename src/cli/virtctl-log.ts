// The log lines virtctl's long-running verbs write to stderr (kubevirt.io/client-go/log): one JSON
// object per line, `{"component":"portforward","level":"info","msg":"forwarding tcp 127.0.0.1:8080
// to 80","timestamp":"..."}` — what scripts around `virtctl port-forward` wait for. virtctl adds
// the Go source position ("pos"), which means nothing here and is left out.

export type VirtctlLogLevel = 'info' | 'warning' | 'error';

/** One line (with its newline). Pure: the time is given. */
export function virtctlLogLine(component: string, level: VirtctlLogLevel, msg: string, now: Date): string {
  return `${JSON.stringify({ component, level, msg, timestamp: now.toISOString() })}\n`;
}

/** A logger writing those lines to `out` (stderr by default). */
export function virtctlLogger(component: string, out: { write(s: string): unknown } = process.stderr): Record<VirtctlLogLevel, (msg: string) => void> {
  const at = (level: VirtctlLogLevel) => (msg: string) => { out.write(virtctlLogLine(component, level, msg, new Date())); };
  return { info: at('info'), warning: at('warning'), error: at('error') };
}
