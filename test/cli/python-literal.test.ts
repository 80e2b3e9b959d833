// The Python literal subset qmp-shell reads a non-JSON {...} / [...] value with (ast.literal_eval
// after true/false/null become True/False/None), as the JSON json.dumps makes of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InexactIntegerError, parsePythonLiteral, PythonLiteralError } from '../../src/cli/python-literal.ts';

const ok: [string, unknown][] = [
  ["{'key':'value'}", { key: 'value' }],
  ["{'a':{'b':\"c\"}}", { a: { b: 'c' } }],
  ['{}', {}], ['[]', []], ['()', []],
  ['[1,2,]', [1, 2]], ["{'a':1,}", { a: 1 }],
  ['(1,2)', [1, 2]], ['(1,)', [1]], ['(1)', 1], ["('x')", 'x'],
  ['[True,False,None,true,false,null]', [true, false, null, true, false, null]],
  ['[-5, +5, 1.25, -1.5e3, .5, 1., 0x1F, 0o17, 0b101, 1_000, 00]', [-5, 5, 1.25, -1500, 0.5, 1, 31, 15, 5, 1000, 0]],
  ["{1:'a', None:'c', 'd':1, False:2}", { 1: 'a', null: 'c', d: 1, false: 2 }], // json.dumps' key strings
  ["'a' 'b'", 'ab'], ["['a' \"b\"]", ['ab']],
  ["'it\\'s'", "it's"], ['"q\\"d"', 'q"d'], ["'\\n\\t\\\\'", '\n\t\\'], ["'\\x41\\u00e9\\U0001F600\\101'", 'Aé😀A'], ["'\\d'", '\\d'],
  [" { 'a' : [ 1 , 2 ] } ", { a: [1, 2] }],
  ["{'a':1,'a':2}", { a: 2 }],
];
for (const [text, want] of ok) test(`parsePythonLiteral(${JSON.stringify(text)})`, () => assert.equal(parsePythonLiteral(text), want));

const bad: [string, RegExp][] = [
  ['{bad', /expected a value|is not a literal/],
  ['[1,2', /expected "," or "\]"/],
  ["{'a' 1}", /expected ":"/],
  ['{x:1}', /'x' is not a literal/],
  ['{1,2}', /expected ":"/], // a set: json.dumps cannot send it
  ['[1][0]', /unexpected text/],
  ['007', /leading zeros/],
  ['1e', /unexpected text/],
  ["'abc", /unterminated string/],
  ["'\\x4'", /bad \\x escape/],
  ['[-True]', /expected a value/],
  ['{{}:1}', /a dict key must be/],
  ['', /expected a value/],
];
for (const [text, want] of bad) {
  test(`parsePythonLiteral(${JSON.stringify(text)}) fails`, () => {
    assert.throws(() => parsePythonLiteral(text), (err: Error) => err instanceof PythonLiteralError && want.test(err.message));
  });
}

test('an integer beyond 2^53 is refused, not rounded', () => {
  assert.throws(() => parsePythonLiteral('[18446744073709551615]'), (err: Error) => err instanceof InexactIntegerError && /18446744073709551615 is beyond 2\^53/.test(err.message));
  assert.throws(() => parsePythonLiteral('0xFFFFFFFFFFFFFFFF'), (err: Error) => err instanceof InexactIntegerError);
  assert.equal(parsePythonLiteral('[9007199254740991, 1.5e300]'), [9007199254740991, 1.5e300]);
});

test('__proto__ is an own key', () => {
  const v = parsePythonLiteral("{'__proto__':{'x':1}}") as Record<string, unknown>;
  assert.is(Object.getPrototypeOf(v), Object.prototype);
  assert.is(JSON.stringify(v), '{"__proto__":{"x":1}}');
});

test.run();
