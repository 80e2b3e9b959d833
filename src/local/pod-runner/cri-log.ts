// The CRI container log format kubelet reads (`<RFC3339Nano time> <stdout|stderr> <F|P> <content>`,
// one record per line, P for a fragment of a longer line) and kubelet's selection of what
// `GET /containerLogs` returns: `sinceTime`, `tailLines`, `timestamps`, `limitBytes`. Pure.

export type LogStream = 'stdout' | 'stderr';

export interface CriRecord {
  /** RFC 3339 with nanoseconds, as CRI writes it (`2026-01-01T00:00:00.123456789Z`). */
  readonly time: string;
  readonly stream: LogStream;
  /** P: a fragment continued by the next record of the same stream; F: ends a line. */
  readonly partial: boolean;
  /** Without the trailing newline. */
  readonly content: string;
}

/** Lines longer than this are split into P records, as containerd does (16 KiB). */
export const MAX_CRI_RECORD_CONTENT = 16 * 1024;

/**
 * An epoch time in milliseconds (fractional for sub-ms precision) as CRI's fixed 9-digit RFC 3339.
 * A double holds epoch milliseconds to about a microsecond, so the last three digits are 0.
 */
export function criTime(ms: number): string {
  const whole = Math.floor(ms);
  const iso = new Date(whole).toISOString(); // 2026-01-01T00:00:00.123Z
  const micros = Math.min(999, Math.round((ms - whole) * 1000));
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}000Z`;
}

export function formatCriRecord(r: CriRecord): string {
  return `${r.time} ${r.stream} ${r.partial ? 'P' : 'F'} ${r.content}\n`;
}

/**
 * Turns a chunk of a stream's output into CRI records. `pending` is the stream's unterminated
 * tail from earlier chunks; the returned `pending` is kept for the next chunk. `final` (the
 * container ended) writes an unterminated tail as a full record.
 */
export function splitIntoRecords(pending: string, chunk: string, stream: LogStream, time: string, final = false): { records: CriRecord[]; pending: string } {
  let text = pending + chunk;
  const records: CriRecord[] = [];
  for (;;) {
    const nl = text.indexOf('\n');
    if (nl < 0) break;
    let line = text.slice(0, nl);
    text = text.slice(nl + 1);
    while (line.length > MAX_CRI_RECORD_CONTENT) {
      records.push({ time, stream, partial: true, content: line.slice(0, MAX_CRI_RECORD_CONTENT) });
      line = line.slice(MAX_CRI_RECORD_CONTENT);
    }
    records.push({ time, stream, partial: false, content: line });
  }
  while (text.length > MAX_CRI_RECORD_CONTENT) {
    records.push({ time, stream, partial: true, content: text.slice(0, MAX_CRI_RECORD_CONTENT) });
    text = text.slice(MAX_CRI_RECORD_CONTENT);
  }
  if (final && text.length > 0) {
    records.push({ time, stream, partial: false, content: text });
    text = '';
  }
  return { records, pending: text };
}

const RECORD = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) (stdout|stderr) ([FP]) ?(.*)$/s;

/** One line of a CRI log file (without its newline); undefined for a malformed line. */
export function parseCriRecord(line: string): CriRecord | undefined {
  const m = RECORD.exec(line);
  if (!m) return undefined;
  return { time: m[1]!, stream: m[2] as LogStream, partial: m[3] === 'P', content: m[4]! };
}

/** Epoch milliseconds of an RFC 3339 time with any number of fractional digits. */
export function parseCriTime(t: string): number {
  return Date.parse(t.replace(/(\.\d{3})\d+/, '$1'));
}

export interface LogOptions {
  /** Only records at or after this time (epoch ms); kubelet turns sinceSeconds into this. */
  readonly sinceMs?: number;
  /** The last N lines (full lines: a P record counts with the F that ends it). */
  readonly tailLines?: number;
  /** Prefix each record with its time (kubelet's fixed 9-digit format) and a space. */
  readonly timestamps?: boolean;
  /** Stop after this many bytes of output. */
  readonly limitBytes?: number;
}

/** Validates kubelet's query parameters; the error names the parameter. */
export function parseLogQuery(q: URLSearchParams, nowMs: number): LogOptions & { follow: boolean; previous: boolean } {
  const int = (name: string, min: number): number | undefined => {
    const v = q.get(name);
    if (v === null || v === '') return undefined;
    if (!/^-?\d+$/.test(v) || Number(v) < min) throw new Error(`${name}: invalid value ${JSON.stringify(v)}: must be an integer ≥ ${min}`);
    return Number(v);
  };
  const bool = (name: string): boolean => {
    const v = q.get(name);
    if (v === null || v === '' || v === 'false' || v === '0') return false;
    if (v === 'true' || v === '1') return true;
    throw new Error(`${name}: invalid value ${JSON.stringify(v)}: must be true or false`);
  };
  const sinceSeconds = int('sinceSeconds', 1);
  const sinceTime = q.get('sinceTime');
  if (sinceSeconds !== undefined && sinceTime) throw new Error('sinceSeconds and sinceTime: at most one of them may be set');
  let sinceMs: number | undefined;
  if (sinceSeconds !== undefined) sinceMs = nowMs - sinceSeconds * 1000;
  if (sinceTime) {
    sinceMs = Date.parse(sinceTime);
    if (Number.isNaN(sinceMs)) throw new Error(`sinceTime: invalid value ${JSON.stringify(sinceTime)}: must be an RFC 3339 time`);
  }
  const tailLines = int('tailLines', 0);
  const limitBytes = int('limitBytes', 1);
  return {
    follow: bool('follow'), previous: bool('previous'), timestamps: bool('timestamps'),
    ...(sinceMs !== undefined ? { sinceMs } : {}), ...(tailLines !== undefined ? { tailLines } : {}), ...(limitBytes !== undefined ? { limitBytes } : {}),
  };
}

/** What one record contributes to the output: content, its newline when F, the time prefix when asked. */
export function renderRecord(r: CriRecord, timestamps: boolean): string {
  return `${timestamps ? `${r.time} ` : ''}${r.content}${r.partial ? '' : '\n'}`;
}

/**
 * The index of the first record to output for `tailLines` among complete file text: the start
 * of the N-th last full line (records after the last F — an unfinished line — count as one).
 */
export function tailStart(records: readonly CriRecord[], tailLines: number | undefined): number {
  if (tailLines === undefined) return 0;
  if (tailLines === 0) return records.length;
  let lines = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    // A record starts a line when the one before it ended a line (or it is the first).
    const startsLine = i === 0 || !records[i - 1]!.partial;
    if (startsLine) {
      lines++;
      if (lines === tailLines) return i;
    }
  }
  return 0;
}

/** kubelet's filter for one record: malformed lines are skipped, `sinceMs` compares record times. */
export function recordSelected(r: CriRecord, o: LogOptions): boolean {
  return o.sinceMs === undefined || parseCriTime(r.time) >= o.sinceMs;
}

/** The output for a whole log file's text, with the options applied (no follow). */
export function selectLog(fileText: string, o: LogOptions): string {
  const records = fileText.split('\n').filter((l) => l !== '').map(parseCriRecord).filter((r): r is CriRecord => r !== undefined);
  let out = '';
  for (let i = tailStart(records, o.tailLines); i < records.length; i++) {
    const r = records[i]!;
    if (!recordSelected(r, o)) continue;
    out += renderRecord(r, o.timestamps ?? false);
  }
  return o.limitBytes !== undefined ? truncateBytes(out, o.limitBytes) : out;
}

/** At most `limit` bytes of UTF-8 (a cut multi-byte character is dropped). */
export function truncateBytes(s: string, limit: number): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= limit) return s;
  return b.subarray(0, limit).toString('utf8').replace(/\uFFFD$/, '');
}
