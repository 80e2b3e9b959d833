// parseServerMessage: every shape QMP defines, and what is rejected (naming the bad field).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseServerMessage, QmpProtocolError } from '../../qmp/index.ts';

const ok: { name: string; msg: unknown; want: unknown }[] = [
  {
    name: 'QEMU 7.2 greeting',
    msg: { QMP: { version: { qemu: { micro: 22, minor: 2, major: 7 }, package: 'Debian 1:7.2+dfsg-7+deb12u18+b3' }, capabilities: ['oob'] } },
    want: { kind: 'greeting', greeting: { version: { qemu: { major: 7, minor: 2, micro: 22 }, package: 'Debian 1:7.2+dfsg-7+deb12u18+b3' }, capabilities: ['oob'] } },
  },
  {
    name: 'greeting without package or capabilities',
    msg: { QMP: { version: { qemu: { micro: 0, minor: 0, major: 9 } } } },
    want: { kind: 'greeting', greeting: { version: { qemu: { major: 9, minor: 0, micro: 0 }, package: '' }, capabilities: [] } },
  },
  { name: 'void return', msg: { return: {}, id: 'q1' }, want: { kind: 'return', id: 'q1', value: {} } },
  { name: 'list return', msg: { return: [1], id: 'q2' }, want: { kind: 'return', id: 'q2', value: [1] } },
  { name: 'non-string id is kept as sent', msg: { return: {}, id: 5 }, want: { kind: 'return', id: 5, value: {} } },
  { name: 'id-less return', msg: { return: {} }, want: { kind: 'return', id: undefined, value: {} } },
  {
    name: 'error reply',
    msg: { id: 'q3', error: { class: 'DeviceNotFound', desc: "Device 'nope' not found" } },
    want: { kind: 'error', id: 'q3', error: { class: 'DeviceNotFound', desc: "Device 'nope' not found" } },
  },
  {
    name: 'id-less parse error',
    msg: { error: { class: 'GenericError', desc: "JSON parse error, stray '\uFFFD'" } },
    want: { kind: 'error', id: undefined, error: { class: 'GenericError', desc: "JSON parse error, stray '\uFFFD'" } },
  },
  {
    name: 'event with data',
    msg: { timestamp: { seconds: 1795281257, microseconds: 593767 }, event: 'SHUTDOWN', data: { guest: true, reason: 'guest-shutdown' } },
    want: { kind: 'event', event: 'SHUTDOWN', data: { guest: true, reason: 'guest-shutdown' }, timestamp: { seconds: 1795281257, microseconds: 593767 } },
  },
  {
    name: 'event without data gets {}',
    msg: { timestamp: { seconds: 1, microseconds: 2 }, event: 'STOP' },
    want: { kind: 'event', event: 'STOP', data: {}, timestamp: { seconds: 1, microseconds: 2 } },
  },
  {
    name: 'event without timestamp gets -1/-1',
    msg: { event: 'RESUME' },
    want: { kind: 'event', event: 'RESUME', data: {}, timestamp: { seconds: -1, microseconds: -1 } },
  },
];

for (const c of ok) {
  test(`parse: ${c.name}`, () => {
    assert.equal(parseServerMessage(c.msg), c.want);
  });
}

const bad: { name: string; msg: unknown; err: RegExp }[] = [
  { name: 'array', msg: [1, 2], err: /not a JSON object/ },
  { name: 'string', msg: 'x', err: /not a JSON object/ },
  { name: 'null', msg: null, err: /not a JSON object/ },
  { name: 'unknown shape', msg: { foo: 1 }, err: /none of greeting/ },
  { name: 'error without desc', msg: { id: 'a', error: { class: 'GenericError' } }, err: /error\.desc/ },
  { name: 'error not an object', msg: { id: 'a', error: 'bad' }, err: /error\.class/ },
  { name: 'event name not a string', msg: { event: 5 }, err: /non-string 'event'/ },
  { name: 'event data not an object', msg: { event: 'STOP', data: [1] }, err: /STOP: 'data'/ },
  { name: 'greeting QMP not object', msg: { QMP: 1 }, err: /'QMP' is not an object/ },
  { name: 'greeting without version', msg: { QMP: {} }, err: /QMP\.version' is not/ },
  { name: 'greeting micro missing', msg: { QMP: { version: { qemu: { major: 7, minor: 2 } } } }, err: /QMP\.version\.qemu\.micro/ },
  { name: 'greeting package not string', msg: { QMP: { version: { qemu: { major: 7, minor: 2, micro: 0 }, package: 1 } } }, err: /package/ },
  { name: 'greeting capabilities not strings', msg: { QMP: { version: { qemu: { major: 7, minor: 2, micro: 0 } }, capabilities: [1] } }, err: /capabilities/ },
];

for (const c of bad) {
  test(`parse rejects: ${c.name}`, () => {
    assert.throws(() => parseServerMessage(c.msg), (e: unknown) => e instanceof QmpProtocolError && c.err.test(e.message));
  });
}

test.run();
