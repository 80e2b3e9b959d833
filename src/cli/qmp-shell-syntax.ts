// What `qvirt qmp`'s shell understands on a line (and its one-shot form on the command line), the
// ways QEMU users write a QMP command:
//   {"execute": "query-named-block-nodes", "arguments": {"flat": true}}   a QMP JSON object, as in QEMU's docs ("id" ignored)
//   query-named-block-nodes flat=true          QEMU's qmp-shell (python/qemu/qmp/qmp_shell.py)
//   query-named-block-nodes {"flat": true}     a command and its arguments as JSON
// and, with -H, an HMP line (`info status`) sent as human-monitor-command.
//
// qmp-shell's form as qmp-shell reads it: the words are its regex's (runs of non-blanks, and quoted
// strings with their blanks); each after the command is key=value (split at the first `=`); a key
// `a.b.c` builds nested objects; a value is an integer where Python's int() reads one (`-3`, `007`,
// `1_000` — not `1.5` or `0x10`, which stay strings: `device_add ... addr=5.0` is a PCI address),
// true/false in any case, a `{...}` / `[...]` as JSON, else as a Python literal (python-literal.ts),
// else a string. Where qvirt differs: a value that is one quoted string (`command-line="info status"`)
// is that string, unquoted — qmp-shell sends the quotes along (QEMU 7.2's HMP then answers
// `unknown command: '"info'`); an unterminated quote is an error (qmp-shell drops the quote); an
// integer beyond 2^53 is an error (it cannot be sent exactly); every key starts from the top
// (qmp-shell's loop keeps descending: after `a.b=1`, its `c=2` lands in "a" as {"a": {"b": 1, "c": 2}});
// and its `transaction( ... )` sub-shell is refused with the JSON to send instead. Pure.
import { QMP_COMMAND_NAME } from '../api/qmp-allow-list.ts';
import { InexactIntegerError, parsePythonLiteral, PythonLiteralError, setOwn } from './python-literal.ts';

/** One QMP command to send. */
export interface QmpCall {
  readonly execute: string;
  readonly arguments?: Record<string, unknown>;
}

export type ShellLine =
  | { readonly kind: 'empty' }
  | { readonly kind: 'call'; readonly call: QmpCall }
  /** HMP mode's `cpu N`: later lines run for CPU N (qmp-shell's HMP shell does the same). */
  | { readonly kind: 'cpu'; readonly index: number }
  | { readonly kind: 'error'; readonly message: string };

const FORMS = 'a command is one of: query-status | query-named-block-nodes flat=true | query-named-block-nodes {"flat": true} | {"execute": "query-named-block-nodes", "arguments": {"flat": true}}';

const error = (message: string): ShellLine => ({ kind: 'error', message });

class SyntaxProblem extends Error {
  override name = 'SyntaxProblem';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * JSON.parse, refusing integers JavaScript cannot hold exactly (JSON.parse would round
 * 18446744073709551615 to another number and QEMU would get that one).
 */
export function parseExactJson(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) => {
    if (typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context?.source ?? String(value))) {
      throw new SyntaxProblem(`${context?.source ?? value} is beyond 2^53 and cannot be sent exactly`);
    }
    return value;
  });
}

/** qmp-shell's words: runs of non-blanks and quoted strings (quotes kept), e.g. `a="x y"` is one word. */
export function qmpShellWords(line: string): string[] {
  const words: string[] = [];
  const re = /(?:[^\s"']|"(?:\\.|[^"])*"|'(?:\\.|[^'])*')+/y; // qmp_shell.py's argument_regex
  let i = 0;
  while (i < line.length) {
    const blank = /\s+/y;
    blank.lastIndex = i;
    if (blank.exec(line)) { i = blank.lastIndex; continue; }
    re.lastIndex = i;
    const m = re.exec(line);
    if (!m) throw new SyntaxProblem(`unterminated ${line[i] === '"' ? 'double' : 'single'} quote in ${JSON.stringify(line.slice(i))}`);
    words.push(m[0]);
    i = re.lastIndex;
  }
  return words;
}

/** One qmp-shell value: see the header for the rules. Throws SyntaxProblem. */
export function qmpShellValue(text: string): unknown {
  if (/^[+-]?\d+(?:_\d+)*$/.test(text)) {
    const n = Number(text.replace(/_/g, ''));
    if (!Number.isSafeInteger(n)) throw new SyntaxProblem(`${text} is beyond 2^53 and cannot be sent exactly`);
    return n === 0 ? 0 : n;
  }
  if (text.toLowerCase() === 'true') return true;
  if (text.toLowerCase() === 'false') return false;
  if (text.startsWith('{') || text.startsWith('[')) {
    try { return parseExactJson(text); } catch (err) { if (err instanceof SyntaxProblem) throw err; }
    try {
      return parsePythonLiteral(text);
    } catch (err) {
      if (err instanceof InexactIntegerError) throw new SyntaxProblem(err.message);
      if (!(err instanceof PythonLiteralError)) throw err;
    }
    return text;
  }
  if (/^"(?:\\.|[^"])*"$/.test(text)) {
    try { return JSON.parse(text) as string; } catch { /* a Python escape JSON lacks: below */ }
  }
  if (/^(?:"(?:\\.|[^"])*"|'(?:\\.|[^'])*')$/.test(text)) {
    try { return parsePythonLiteral(text) as string; } catch { /* kept as typed */ }
  }
  return text;
}

/** qmp-shell's key=value words into one arguments object (dotted keys nest). Throws SyntaxProblem. */
export function qmpShellArguments(command: string, words: readonly string[]): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const word of words) {
    const eq = word.indexOf('=');
    if (eq < 0) {
      throw new SyntaxProblem(words.some((w) => /=[{[]/.test(w) || /^[{[]/.test(w))
        ? `'${word}' is not a key=value argument: a {...} or [...] value is one word, without blanks (${command} key={"a":1}), or give all the arguments as JSON: ${command} {"key": {"a": 1}}`
        : `'${word}' is not a key=value argument, e.g. query-named-block-nodes flat=true or device_del id=net1`);
    }
    const key = word.slice(0, eq);
    const path = key.split('.');
    if (path.some((p) => !p)) throw new SyntaxProblem(`'${word}': the key ${JSON.stringify(key)} has an empty part, e.g. a.b=1 sets {"a": {"b": 1}}`);
    const value = qmpShellValue(word.slice(eq + 1));
    let parent = args;
    for (const [n, p] of path.slice(0, -1).entries()) {
      const next = Object.hasOwn(parent, p) ? parent[p] : {};
      if (!isObject(next)) throw new SyntaxProblem(`cannot use "${path.slice(0, n + 1).join('.')}" as both a value and an object`);
      setOwn(parent, p, next);
      parent = next;
    }
    const leaf = path[path.length - 1]!;
    if (Object.hasOwn(parent, leaf)) {
      throw new SyntaxProblem(isObject(parent[leaf]) ? `cannot use "${key}" as both a value and an object` : `"${key}" is set more than once`);
    }
    setOwn(parent, leaf, value);
  }
  return args;
}

/** A QMP JSON object as QEMU reads one: "execute", optional "arguments" object, "id" ignored. */
function qmpObject(text: string): ShellLine {
  let v: unknown;
  try {
    v = parseExactJson(text);
  } catch (err) {
    if (err instanceof SyntaxProblem) return error(err.message);
    return error(`not JSON (${(err as Error).message}): a QMP command object looks like {"execute": "query-named-block-nodes", "arguments": {"flat": true}}`);
  }
  if (!isObject(v)) return error('a QMP command is a JSON object, e.g. {"execute": "query-status"}');
  for (const k of Object.keys(v)) {
    if (k === 'exec-oob') return error('"exec-oob": out-of-band execution is not offered by the passthrough; use "execute", e.g. {"execute": "query-status"}');
    if (k !== 'execute' && k !== 'arguments' && k !== 'id') return error(`"${k}" is not a member of a QMP command (execute, arguments, id), e.g. {"execute": "query-named-block-nodes", "arguments": {"flat": true}}`);
  }
  if (typeof v.execute !== 'string') return error('"execute" must name the command, e.g. {"execute": "query-status"}');
  if (!QMP_COMMAND_NAME.test(v.execute)) return error(`"execute": '${v.execute}' is not a QMP command name, e.g. {"execute": "query-status"}`);
  if (v.arguments !== undefined && !isObject(v.arguments)) return error('"arguments" must be a JSON object, e.g. {"execute": "query-named-block-nodes", "arguments": {"flat": true}}');
  return { kind: 'call', call: { execute: v.execute, ...(v.arguments ? { arguments: v.arguments } : {}) } };
}

/** `COMMAND {json}`: a command and its arguments as one JSON object. */
function jsonArguments(command: string, text: string): ShellLine {
  let v: unknown;
  try {
    v = parseExactJson(text);
  } catch (err) {
    if (err instanceof SyntaxProblem) return error(`${command}: ${err.message}`);
    return error(`${command}: the arguments are not JSON (${(err as Error).message}), e.g. query-named-block-nodes {"flat": true}, or as key=value: query-named-block-nodes flat=true`);
  }
  if (!isObject(v)) return error(`${command}: the arguments must be a JSON object, e.g. query-named-block-nodes {"flat": true}`);
  return { kind: 'call', call: { execute: command, arguments: v } };
}

function badCommandName(name: string): ShellLine {
  if (name === 'transaction(' || name === ')') {
    return error('qmp-shell\'s transaction( ... ) sub-shell is not supported: send the transaction as JSON, e.g. transaction {"actions": [{"type": "block-dirty-bitmap-add", "data": {"node": "drive0", "name": "bitmap1"}}]}');
  }
  return error(`'${name}' is not a QMP command name; ${FORMS}`);
}

/** A command and its key=value words (qmp-shell's form), or its JSON arguments. */
function commandAndWords(command: string, words: readonly string[], rest: string): ShellLine {
  if (!QMP_COMMAND_NAME.test(command)) return badCommandName(command);
  if (words.length === 0) return { kind: 'call', call: { execute: command } };
  if (rest.startsWith('{')) return jsonArguments(command, rest);
  try {
    return { kind: 'call', call: { execute: command, arguments: qmpShellArguments(command, words) } };
  } catch (err) {
    if (err instanceof SyntaxProblem) return error(`${command}: ${err.message}`);
    throw err;
  }
}

/** One line of the QMP shell. Pure. */
export function parseQmpShellLine(line: string): ShellLine {
  const t = line.trim();
  if (!t) return { kind: 'empty' };
  if (t.startsWith('{')) return qmpObject(t);
  let words: string[];
  try {
    words = qmpShellWords(t);
  } catch (err) {
    if (err instanceof SyntaxProblem) return error(`${err.message}; ${FORMS}`);
    throw err;
  }
  const command = words[0]!;
  if (command.startsWith('transaction(')) return badCommandName('transaction(');
  return commandAndWords(command, words.slice(1), t.slice(command.length).trim());
}

/**
 * The one-shot form, `qvirt qmp VMI WORD...`: the shell already split the words, so each is one
 * key=value (no quoting needed: `command-line=info status` as one argument), or the only one after
 * the command is its JSON arguments, or the only word is a QMP JSON object. Pure.
 */
export function parseQmpShellArgv(words: readonly string[]): ShellLine {
  const [first, ...rest] = words;
  if (first === undefined || !first.trim()) return { kind: 'empty' };
  if (first.trim().startsWith('{')) {
    if (rest.length) return error('a QMP JSON object is the whole command: quote it as one argument, e.g. \'{"execute": "query-status"}\'');
    return qmpObject(first.trim());
  }
  if (rest.length === 0 && /\s/.test(first.trim())) return parseQmpShellLine(first); // one quoted shell line
  if (rest[0]?.trim().startsWith('{')) {
    if (rest.length > 1) return error(`${first}: JSON arguments are one argument, e.g. query-named-block-nodes '{"flat": true}'; unexpected: ${rest.slice(1).join(' ')}`);
    if (!QMP_COMMAND_NAME.test(first)) return badCommandName(first);
    return jsonArguments(first, rest[0].trim());
  }
  return commandAndWords(first, rest, '');
}

/** One line of the HMP shell (-H): `cpu N`, else the line for human-monitor-command. Pure. */
export function parseHmpShellLine(line: string): ShellLine {
  const t = line.trim();
  if (!t) return { kind: 'empty' };
  const [first, second, ...more] = t.split(/\s+/);
  if (first === 'cpu') {
    if (second === undefined || more.length || !/^\d+$/.test(second) || !Number.isSafeInteger(Number(second))) return error('cpu takes a CPU number, e.g. cpu 1');
    return { kind: 'cpu', index: Number(second) };
  }
  return { kind: 'call', call: { execute: 'human-monitor-command', arguments: { 'command-line': t } } };
}
