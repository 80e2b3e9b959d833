// src/log/iso-time.ts against Date.prototype.toISOString, and the logger's "time" field in its format.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Writable } from 'node:stream';
import { isoTime, rfc3339 } from '../../src/log/iso-time.ts';
import { componentLogger } from '../../src/log/logger.ts';

test('the same string as toISOString: edges, leap days, every millisecond width, years 0–9999', () => {
  const edges = [0, 1, 9, 10, 99, 100, 999, -1, -999, -1000, Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(1900, 1, 28), Date.UTC(2100, 2, 1),
    Date.UTC(2026, 10, 27, 6, 5, 4, 3), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(0, 0, 1) - 0, -62167219200000, Date.now()];
  for (const ms of edges) assert.is(isoTime(ms), new Date(ms).toISOString(), String(ms));
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20000; i++) {
    const ms = Math.floor((rnd() - 0.5) * 2 * 253402300799999);
    if (ms < -62167219200000) continue; // before year 0: toISOString's extended form, tested below
    assert.is(isoTime(ms), new Date(ms).toISOString(), String(ms));
  }
  for (let ms = Date.UTC(2024, 0, 1); ms < Date.UTC(2025, 0, 1); ms += 3_600_000 + 1) assert.is(isoTime(ms), new Date(ms).toISOString());
});

test('outside years 0–9999 and for an invalid time, what toISOString does', () => {
  for (const ms of [-62167219200001, 253402300800000, 8.64e15, -8.64e15]) assert.is(isoTime(ms), new Date(ms).toISOString());
  assert.throws(() => isoTime(NaN), RangeError);
});

test('rfc3339: whole seconds, as toISOString with its milliseconds dropped (metav1.Time)', () => {
  for (const ms of [0, 999, -1, Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 10, 27, 6, 5, 4, 3), Date.UTC(9999, 11, 31, 23, 59, 59, 999), 8.64e15, Date.now()]) {
    assert.is(rfc3339(ms), new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'), String(ms));
  }
  assert.is(rfc3339(Date.UTC(2026, 10, 27, 6, 5, 4, 3)), '2026-11-27T06:05:04Z');
});

test('a log line\'s "time" is an ISO 8601 UTC timestamp of when it was written', () => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  const before = Date.now();
  componentLogger('test', { level: 'info', destination: sink }).info('hello');
  const after = Date.now();
  const line = JSON.parse(lines[0]!) as { time: string };
  assert.match(line.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const t = Date.parse(line.time);
  assert.ok(t >= before && t <= after, `${line.time} not within the call`);
});

test.run();
