// Which human-monitor-command calls are read-only: one HMP `info` command, nothing else.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hmpCommandLineReadOnly, humanMonitorCommandReadOnly } from '../../src/api/hmp-read-only.ts';

// [command line, read-only, what the reason says when it is not]
const lines: [string, boolean, RegExp?][] = [
  ['info status', true],
  ['info registers -a', true],
  ['info mtree -f', true],
  ['info qom-tree /machine', true],
  ['info', true], // the list of info commands
  ['info ', true],
  ['  info   status', true], // HMP skips leading and repeated blanks
  ['stop', false, /HMP 'stop' is not an `info` command/],
  ['quit', false, /'quit'/],
  ['i /x 0x64', false, /HMP 'i' is not/], // `i` reads an I/O port: not an abbreviation of info
  ['infostatus', false, /'infostatus'/],
  ['information', false, /'information'/],
  ['Info status', false, /'Info'/], // HMP command names are case-sensitive
  ['help', false, /'help'/],
  ['savevm snap1', false, /'savevm'/],
  ['', false, /is not an `info` command/],
  ['info status; stop', false, /contains ";"/],
  ['info status;stop', false, /contains ";"/],
  ['info status\nstop', false, /control character \(U\+000A\)/],
  ['info status\r\nstop', false, /control character \(U\+000D\)/],
  ['info\tstatus', false, /control character \(U\+0009\)/],
  ['info status\u0000', false, /control character \(U\+0000\)/],
  ['info status\u007f', false, /control character \(U\+007F\)/],
  ['stop info status', false, /'stop'/],
];

for (const [line, readOnly, why] of lines) {
  test(`hmpCommandLineReadOnly(${JSON.stringify(line)}) → ${readOnly}`, () => {
    const d = hmpCommandLineReadOnly(line);
    assert.is(d.readOnly, readOnly);
    if (!d.readOnly && why) assert.match(d.reason, why);
  });
}

// [human-monitor-command's arguments, read-only, reason]
const args: [Record<string, unknown> | undefined, boolean, RegExp?][] = [
  [{ 'command-line': 'info status' }, true],
  [{ 'command-line': 'info registers', 'cpu-index': 1 }, true],
  [{ 'command-line': 'info registers', 'cpu-index': 0 }, true],
  [undefined, false, /needs "command-line": a string/],
  [{}, false, /needs "command-line"/],
  [{ 'command-line': 42 }, false, /needs "command-line": a string/],
  [{ 'command-line': 'info status', extra: 1 }, false, /not "extra"/],
  [{ 'command-line': 'info status', 'cpu-index': -1 }, false, /"cpu-index" must be a CPU number/],
  [{ 'command-line': 'info status', 'cpu-index': '1' }, false, /"cpu-index"/],
  [{ 'command-line': 'info status', 'cpu-index': 1.5 }, false, /"cpu-index"/],
  [{ 'command-line': 'stop' }, false, /'stop'/],
  [{ 'command-line': 'info status; stop' }, false, /";"/],
];

for (const [a, readOnly, why] of args) {
  test(`humanMonitorCommandReadOnly(${JSON.stringify(a)}) → ${readOnly}`, () => {
    const d = humanMonitorCommandReadOnly(a);
    assert.is(d.readOnly, readOnly);
    if (!d.readOnly && why) assert.match(d.reason, why);
  });
}

test.run();
