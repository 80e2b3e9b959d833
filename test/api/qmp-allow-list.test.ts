// The passthrough's decision: read-only queries and HMP `info` lines run; the rest needs unsafe.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_QMP_ARGUMENTS_DEPTH, passthroughDecision, qmpArgumentsProblem, READ_ONLY_QMP_COMMANDS, type PassthroughDecision } from '../../src/api/qmp-allow-list.ts';

const hmp = (line: string, more: Record<string, unknown> = {}) => ({ 'command-line': line, ...more });

// [command, unsafe, arguments, allowed, reason: the exact one when allowed, a pattern when refused]
const table: [string, boolean, Record<string, unknown> | undefined, boolean, string | RegExp][] = [
  ['query-status', false, undefined, true, 'read-only'],
  ['query-block', false, { flat: true }, true, 'read-only'],
  ['query-status', true, undefined, true, 'read-only'],
  ['stop', false, undefined, false, /'stop' is not a read-only query on the passthrough allow-list; set unsafe/],
  ['stop', true, undefined, true, 'unsafe'],
  ['system_reset', false, undefined, false, /not a read-only query/],
  ['qom-get', false, { path: '/machine', property: 'type' }, false, /not a read-only query/],
  ['query-qmp-schema', false, undefined, false, /not a read-only query/],
  ['query-qmp-schema', true, undefined, true, 'unsafe'],
  ['qmp_capabilities', false, undefined, false, /belongs to the launcher's own connection/],
  ['qmp_capabilities', true, undefined, false, /belongs to the launcher's own connection/],
  ['query status', false, undefined, false, /'query status' is not a QMP command name/],
  ['{"execute":"query-status"}', false, undefined, false, /is not a QMP command name/],
  ['', false, undefined, false, /is not a QMP command name/],
  // human-monitor-command: a single HMP `info` line is read-only
  ['human-monitor-command', false, hmp('info status'), true, 'read-only'],
  ['human-monitor-command', false, hmp('info registers', { 'cpu-index': 1 }), true, 'read-only'],
  ['human-monitor-command', false, hmp('info'), true, 'read-only'],
  ['human-monitor-command', true, hmp('info status'), true, 'read-only'],
  ['human-monitor-command', false, hmp('stop'), false, /HMP 'stop' is not an `info` command.*; set unsafe to run it$/],
  ['human-monitor-command', true, hmp('stop'), true, 'unsafe'],
  ['human-monitor-command', false, hmp('info status; stop'), false, /";".*set unsafe/],
  ['human-monitor-command', false, hmp('info status\nstop'), false, /control character.*set unsafe/],
  ['human-monitor-command', false, hmp('i 0x64'), false, /HMP 'i'/],
  ['human-monitor-command', false, hmp('info status', { extra: true }), false, /not "extra"/],
  ['human-monitor-command', false, undefined, false, /needs "command-line"/],
  ['human-monitor-command', true, undefined, true, 'unsafe'],
];

for (const [command, unsafe, args, allowed, reason] of table) {
  test(`passthroughDecision(${JSON.stringify(command)}, unsafe=${unsafe}, ${JSON.stringify(args)}) → ${allowed ? 'allowed' : 'refused'}`, () => {
    const d: PassthroughDecision = passthroughDecision(command, unsafe, args);
    assert.is(d.allowed, allowed, d.reason);
    if (typeof reason === 'string') assert.is(d.reason, reason);
    else assert.match(d.reason, reason);
  });
}

test('arguments decide nothing for commands other than human-monitor-command', () => {
  for (const command of READ_ONLY_QMP_COMMANDS) assert.is(passthroughDecision(command, false, { 'command-line': 'stop' }).allowed, true, command);
  assert.is(passthroughDecision('stop', false, { 'command-line': 'info status' }).allowed, false);
});

test('arguments nested past MAX_QMP_ARGUMENTS_DEPTH are refused before QEMU sees them, whatever the command; a long name is cut in the reason', () => {
  const nest = (n: number): unknown => { let v: unknown = 1; for (let i = 0; i < n; i++) v = i % 2 ? { a: v } : [v]; return v; };
  assert.is(qmpArgumentsProblem(undefined), undefined);
  assert.is(qmpArgumentsProblem({ x: nest(MAX_QMP_ARGUMENTS_DEPTH - 1) }), undefined);
  assert.is(qmpArgumentsProblem({ x: nest(MAX_QMP_ARGUMENTS_DEPTH) }), `arguments: nested deeper than ${MAX_QMP_ARGUMENTS_DEPTH} levels`);
  assert.is(qmpArgumentsProblem({ x: nest(100_000) }), `arguments: nested deeper than ${MAX_QMP_ARGUMENTS_DEPTH} levels`);
  for (const [command, unsafe] of [['query-status', false], ['stop', true]] as const) {
    const d = passthroughDecision(command, unsafe, { x: nest(2000) });
    assert.is(d.allowed, false, command);
    assert.match(d.reason, 'arguments: nested deeper than');
  }
  const long = passthroughDecision('x y'.repeat(1000), true);
  assert.is(long.allowed, false);
  assert.ok(long.reason.length < 200, long.reason);
});

test.run();
