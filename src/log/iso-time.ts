// Date.prototype.toISOString without calling it: in V8 it reads the host's time zone (ICU's
// detectHostTimeZone and its zone data) the first time it runs, ~0.9 MiB of RSS in every process that
// logs a line or stamps a time — a launcher among them (bench/launcher-memory.md). The UTC getters do not.

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;

/** `ms` since the epoch as `YYYY-MM-DDTHH:mm:ss.sssZ`, exactly what `new Date(ms).toISOString()` gives. */
export function isoTime(ms: number): string {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  // Years outside 0–9999 have the extended ±YYYYYY form (and an invalid date throws): toISOString's own.
  if (!(y >= 0 && y <= 9999)) return d.toISOString();
  const msPart = d.getUTCMilliseconds();
  return `${String(y).padStart(4, '0')}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}T${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.${msPart < 10 ? '00' : msPart < 100 ? '0' : ''}${msPart}Z`;
}

/** `ms` since the epoch at whole seconds, `YYYY-MM-DDTHH:mm:ssZ`: a Kubernetes metav1.Time as it serializes (RFC 3339). */
export function rfc3339(ms: number): string {
  return isoTime(ms).replace(/\.\d{3}Z$/, 'Z');
}
