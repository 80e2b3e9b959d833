// What `qvirt qmp`'s shell reads on a line: QMP JSON objects, qmp-shell's key=value (as QEMU's
// python/qemu/qmp/qmp_shell.py reads it, but for the differences its header lists), and
// `COMMAND {json}`; with -H, HMP lines.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHmpShellLine, parseQmpShellArgv, parseQmpShellLine, qmpShellValue, qmpShellWords, type ShellLine } from '../../src/cli/qmp-shell-syntax.ts';

const call = (execute: string, args?: Record<string, unknown>): ShellLine => ({ kind: 'call', call: { execute, ...(args ? { arguments: args } : {}) } });

// [line, what it asks for: a call, or a pattern the error matches]
const lines: [string, ShellLine | RegExp][] = [
  // QMP JSON objects, as pasted from QEMU's docs
  ['{"execute":"query-status"}', call('query-status')],
  ['{ "execute": "query-status" }', call('query-status')],
  ['  {\t"execute" :\t"query-status"  }  ', call('query-status')],
  ['{"execute": "query-named-block-nodes", "arguments": {"flat": true}}', call('query-named-block-nodes', { flat: true })],
  ['{"execute": "query-status", "id": "abc"}', call('query-status')],
  ['{"execute": "query-status", "id": 7, "arguments": {}}', call('query-status', {})],
  ['{"execute": "query-status"', /^not JSON \(.*\): a QMP command object looks like \{"execute": "query-named-block-nodes"/],
  ['{execute: query-status}', /^not JSON/],
  ['{"arguments": {}}', /"execute" must name the command, e\.g\. \{"execute": "query-status"\}/],
  ['{"execute": 5}', /"execute" must name the command/],
  ['{"execute": "query status"}', /'query status' is not a QMP command name/],
  ['{"execute": "query-named-block-nodes", "arguments": [1]}', /"arguments" must be a JSON object/],
  ['{"execute": "query-named-block-nodes", "arguments": null}', /"arguments" must be a JSON object/],
  ['{"exec-oob": "migrate-pause"}', /"exec-oob": out-of-band execution is not offered/],
  ['{"execute": "query-status", "control": {}}', /"control" is not a member of a QMP command \(execute, arguments, id\)/],
  ['{"execute": "x", "arguments": {"size": 18446744073709551615}}', /18446744073709551615 is beyond 2\^53/],
  ['{"execute": "x", "arguments": {"size": 9007199254740991, "f": 1.5e300}}', call('x', { size: 9007199254740991, f: 1.5e300 })],
  // a command alone
  ['query-status', call('query-status')],
  ['   query-status   ', call('query-status')],
  ['x-query-ramblock', call('x-query-ramblock')],
  ['"execute"', /'"execute"' is not a QMP command name; a command is one of: query-status \| query-named-block-nodes flat=true/],
  ['query.status', /'query\.status' is not a QMP command name/],
  // qmp-shell's key=value
  ['human-monitor-command command-line="info status"', call('human-monitor-command', { 'command-line': 'info status' })],
  ["human-monitor-command command-line='info status'", call('human-monitor-command', { 'command-line': 'info status' })],
  ['human-monitor-command command-line="info status" cpu-index=1', call('human-monitor-command', { 'command-line': 'info status', 'cpu-index': 1 })],
  ['query-named-block-nodes flat=true', call('query-named-block-nodes', { flat: true })],
  ['device_add driver=e1000 id=net1', call('device_add', { driver: 'e1000', id: 'net1' })],
  ['device_add driver=virtio-net-pci addr=5.0 bus=pcie.0', call('device_add', { driver: 'virtio-net-pci', addr: '5.0', bus: 'pcie.0' })],
  ['x a=-3 b=+4 c=007 d=1_000 e=1.5 f=0x10 g=1e3 h=-0', call('x', { a: -3, b: 4, c: 7, d: 1000, e: '1.5', f: '0x10', g: '1e3', h: 0 })],
  ['x a=true b=FALSE c=True d=null e=None f=yes', call('x', { a: true, b: false, c: true, d: 'null', e: 'None', f: 'yes' })],
  ['x id="1" n=1', call('x', { id: '1', n: 1 })], // a quoted number is a string
  ['x a={"k":1} b=[1,2,3] c={} d=[]', call('x', { a: { k: 1 }, b: [1, 2, 3], c: {}, d: [] })],
  ["x a={'k':'v'} b=[True,None,false,null] c={'t':(1,2)} d=[1,2,] e={1:2}", call('x', { a: { k: 'v' }, b: [true, null, false, null], c: { t: [1, 2] }, d: [1, 2], e: { 1: 2 } })],
  ['x a={bad b=[1,2', call('x', { a: '{bad', b: '[1,2' })], // neither JSON nor Python: a string, as qmp-shell keeps it
  ['x a.b.c=1 a.b.d=2 a.e=3 f=4', call('x', { a: { b: { c: 1, d: 2 }, e: 3 }, f: 4 })],
  ['x a={"x":1} a.y=2', call('x', { a: { x: 1, y: 2 } })],
  ['x a=b=c', call('x', { a: 'b=c' })], // split at the first =
  ['x a=', call('x', { a: '' })],
  ['x a=x"y z"q', call('x', { a: 'x"y z"q' })], // quotes inside a word stay
  ['x __proto__=1', call('x', JSON.parse('{"__proto__": 1}') as Record<string, unknown>)],
  ['x a=1 a.b=2', /x: cannot use "a" as both a value and an object/],
  ['x a.b=2 a=1', /x: cannot use "a" as both a value and an object/],
  ['x a=1 a=2', /x: "a" is set more than once/],
  ['x =1', /the key "" has an empty part, e\.g\. a\.b=1 sets/],
  ['x a..b=1', /the key "a\.\.b" has an empty part/],
  ['x flat', /x: 'flat' is not a key=value argument, e\.g\. query-named-block-nodes flat=true/],
  ['x a={"k": 1}', /'1}' is not a key=value argument: a \{\.\.\.\} or \[\.\.\.\] value is one word, without blanks .* or give all the arguments as JSON: x \{"key"/],
  ['x a="unterminated', /unterminated double quote in "\\"unterminated"; a command is one of/],
  ["x a='unterminated", /unterminated single quote/],
  ['x n=18446744073709551616', /x: 18446744073709551616 is beyond 2\^53/],
  ['x n=[18446744073709551616]', /beyond 2\^53/],
  ["x n={'n':18446744073709551616}", /beyond 2\^53/],
  // COMMAND {json}
  ['query-named-block-nodes {"flat": true}', call('query-named-block-nodes', { flat: true })],
  ['query-named-block-nodes   {  "flat" :  true }', call('query-named-block-nodes', { flat: true })],
  ['query-named-block-nodes {"flat": true', /query-named-block-nodes: the arguments are not JSON \(.*\), e\.g\. query-named-block-nodes \{"flat": true\}, or as key=value: query-named-block-nodes flat=true/],
  ['query-named-block-nodes {"n": 18446744073709551615}', /query-named-block-nodes: 18446744073709551615 is beyond 2\^53/],
  // qmp-shell's transaction sub-shell
  ['transaction(', /transaction\( \.\.\. \) sub-shell is not supported: send the transaction as JSON, e\.g\. transaction \{"actions": \[/],
  ['transaction( block-dirty-bitmap-add node=drive0 name=bitmap1 )', /sub-shell is not supported/],
  [')', /sub-shell is not supported/],
  // nothing
  ['', { kind: 'empty' }],
  ['   \t ', { kind: 'empty' }],
];

for (const [line, want] of lines) {
  test(`parseQmpShellLine(${JSON.stringify(line)})`, () => {
    const got = parseQmpShellLine(line);
    if (want instanceof RegExp) {
      assert.is(got.kind, 'error', JSON.stringify(got));
      if (got.kind === 'error') assert.match(got.message, want);
    } else {
      assert.equal(got, want);
    }
  });
}

test('__proto__ is an own key, not a prototype', () => {
  const got = parseQmpShellLine('x __proto__.polluted=1');
  assert.is(got.kind, 'call');
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  if (got.kind === 'call') assert.is(JSON.stringify(got.call.arguments), '{"__proto__":{"polluted":1}}');
});

// [words the shell split, what they ask for]
const argvs: [string[], ShellLine | RegExp][] = [
  [['query-status'], call('query-status')],
  [['{"execute":"query-status"}'], call('query-status')],
  [['{ "execute": "query-named-block-nodes", "arguments": { "flat": true } }'], call('query-named-block-nodes', { flat: true })],
  [['query-named-block-nodes', '{"flat":true}'], call('query-named-block-nodes', { flat: true })],
  [['query-named-block-nodes', 'flat=true'], call('query-named-block-nodes', { flat: true })],
  [['human-monitor-command', 'command-line=info status'], call('human-monitor-command', { 'command-line': 'info status' })],
  [['human-monitor-command', 'command-line="info status"'], call('human-monitor-command', { 'command-line': 'info status' })],
  [['human-monitor-command command-line="info status"'], call('human-monitor-command', { 'command-line': 'info status' })], // one quoted line
  [['x', 'a.b=1', 'c=2'], call('x', { a: { b: 1 }, c: 2 })],
  [['{"execute":"query-status"}', 'extra'], /a QMP JSON object is the whole command: quote it as one argument/],
  [['query-named-block-nodes', '{"flat":true}', 'extra'], /JSON arguments are one argument.*unexpected: extra/],
  [['query-named-block-nodes', '{"flat":'], /the arguments are not JSON/],
  [['query-named-block-nodes', 'flat'], /'flat' is not a key=value argument/],
  [['not a name!', '{}'], /'not a name!' is not a QMP command name/],
  [[], { kind: 'empty' }],
];

for (const [words, want] of argvs) {
  test(`parseQmpShellArgv(${JSON.stringify(words)})`, () => {
    const got = parseQmpShellArgv(words);
    if (want instanceof RegExp) {
      assert.is(got.kind, 'error', JSON.stringify(got));
      if (got.kind === 'error') assert.match(got.message, want);
    } else {
      assert.equal(got, want);
    }
  });
}

const hmpCall = (line: string): ShellLine => call('human-monitor-command', { 'command-line': line });
const hmpLines: [string, ShellLine][] = [
  ['info status', hmpCall('info status')],
  ['  info   registers -a  ', hmpCall('info   registers -a')],
  ['stop', hmpCall('stop')], // the passthrough decides whether it may run
  ['info status; stop', hmpCall('info status; stop')],
  ['cpu 1', { kind: 'cpu', index: 1 }],
  ['cpu  0', { kind: 'cpu', index: 0 }],
  ['cpu', { kind: 'error', message: 'cpu takes a CPU number, e.g. cpu 1' }],
  ['cpu x', { kind: 'error', message: 'cpu takes a CPU number, e.g. cpu 1' }],
  ['cpu -1', { kind: 'error', message: 'cpu takes a CPU number, e.g. cpu 1' }],
  ['cpu 1 2', { kind: 'error', message: 'cpu takes a CPU number, e.g. cpu 1' }],
  ['', { kind: 'empty' }],
];

for (const [line, want] of hmpLines) {
  test(`parseHmpShellLine(${JSON.stringify(line)})`, () => assert.equal(parseHmpShellLine(line), want));
}

// qmp-shell's words: quoted strings keep their blanks and their quotes
const words: [string, string[] | RegExp][] = [
  ['a b  c', ['a', 'b', 'c']],
  ['x a="b c" d=\'e f\'', ['x', 'a="b c"', "d='e f'"]],
  ['x a="b \\" c"', ['x', 'a="b \\" c"']],
  ['x a=p"q r"s t', ['x', 'a=p"q r"s', 't']],
  ['x a="b', /unterminated double quote/],
  ['', []],
];
for (const [line, want] of words) {
  test(`qmpShellWords(${JSON.stringify(line)})`, () => {
    if (want instanceof RegExp) assert.throws(() => qmpShellWords(line), want);
    else assert.equal(qmpShellWords(line), want);
  });
}

// one value, as qmp-shell's _parse_value reads it (quoted strings unquoted: qvirt's addition)
const values: [string, unknown][] = [
  ['42', 42], ['-42', -42], ['+42', 42], ['0', 0], ['-0', 0], ['007', 7], ['1_000', 1000],
  ['1.5', '1.5'], ['1e3', '1e3'], ['0x10', '0x10'], ['1__0', '1__0'], ['_1', '_1'],
  ['true', true], ['TRUE', true], ['False', false], ['null', 'null'], ['None', 'None'],
  ['{"a": 1}', { a: 1 }], ['[1, "x"]', [1, 'x']], ["{'a':None}", { a: null }], ['{a}', '{a}'], ['[', '['],
  ['"a b"', 'a b'], ["'a b'", 'a b'], ['"a\\"b"', 'a"b'], ["'a\\'b'", "a'b"], ['"\\u00e9"', 'é'], ['"\\x41"', 'A'], ['"1"', '1'],
  ['a"b"', 'a"b"'], ['"a"b', '"a"b'], ['text', 'text'], ['', ''],
];
for (const [text, want] of values) {
  test(`qmpShellValue(${JSON.stringify(text)}) → ${JSON.stringify(want)}`, () => assert.equal(qmpShellValue(text), want));
}

test.run();
