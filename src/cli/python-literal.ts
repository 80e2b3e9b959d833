// The Python literal subset QEMU's qmp-shell falls back to for a `{...}` / `[...]` value that is not
// JSON: what `ast.literal_eval` accepts after qmp-shell's FuzzyJSON pass turns `true`/`false`/`null`
// into `True`/`False`/`None`, as the JSON `json.dumps` then sends. So `{'node':'drive0'}`,
// `[1,2,]`, `(1,2)` (a tuple: a JSON array), `{'a':None}` and `{"a":true}` all read. Dict keys
// become JSON strings as json.dumps makes them (1 → "1", True → "true", None → "null").
// Not read (qmp-shell keeps such a value as a string, or crashes on it): sets, complex numbers,
// bytes, triple-quoted and prefixed strings, NaN/infinity. Pure.

export class PythonLiteralError extends Error {
  override name = 'PythonLiteralError';
}

/** An integer JavaScript cannot hold exactly (beyond 2^53): refused rather than sent rounded. */
export class InexactIntegerError extends PythonLiteralError {
  override name = 'InexactIntegerError';
}

const NAMES: Readonly<Record<string, unknown>> = { True: true, False: false, None: null, true: true, false: false, null: null };
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\n': '' };

/** Sets an own property (also `__proto__`), as a Python dict or JSON.parse would. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The value of a Python literal (the subset above), as JSON would carry it. Throws PythonLiteralError. */
export function parsePythonLiteral(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => { throw new PythonLiteralError(`${what} at offset ${i} of ${text}`); };
  const ws = () => { while (i < text.length && /\s/.test(text[i]!)) i++; };
  const eat = (c: string) => { ws(); if (text[i] !== c) return false; i++; return true; };

  const str = (): string => {
    const q = text[i]!;
    i++;
    let out = '';
    for (;;) {
      const c = text[i];
      if (c === undefined || c === '\n') fail('unterminated string');
      if (c === q) { i++; return out; }
      if (c !== '\\') { out += c; i++; continue; }
      const e = text[i + 1];
      if (e === undefined) fail('unterminated string');
      if (Object.hasOwn(SIMPLE_ESCAPES, e!)) { out += SIMPLE_ESCAPES[e!]; i += 2; continue; }
      const hex = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
      if (hex) {
        const h = text.slice(i + 2, i + 2 + hex);
        if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(h)) fail(`bad \\${e} escape`);
        const cp = parseInt(h, 16);
        if (cp > 0x10ffff) fail(`bad \\${e} escape`);
        out += String.fromCodePoint(cp);
        i += 2 + hex;
        continue;
      }
      const oct = /^[0-7]{1,3}/.exec(text.slice(i + 1));
      if (oct) { out += String.fromCodePoint(parseInt(oct[0], 8)); i += 1 + oct[0].length; continue; }
      out += `\\${e}`; // Python keeps an unknown escape as it is
      i += 2;
    }
  };

  const num = (): number => {
    const m = /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:\d(?:_?\d)*)?\.?(?:\d(?:_?\d)*)?(?:[eE][+-]?\d(?:_?\d)*)?)/.exec(text.slice(i));
    const lit = m?.[0] ?? '';
    if (!/\d/.test(lit)) fail('expected a value');
    const clean = lit.replace(/_/g, '');
    const integer = /^0[xob]/i.test(clean) || /^\d+$/.test(clean);
    if (/^0\d/.test(clean) && /^\d+$/.test(clean) && /[1-9]/.test(clean)) fail('leading zeros in an integer'); // 007 is a Python syntax error
    const n = Number(/^0[xob]/i.test(clean) ? clean.toLowerCase() : clean);
    if (!Number.isFinite(n)) fail(`${lit} is not a finite number`);
    if (integer && !Number.isSafeInteger(n)) throw new InexactIntegerError(`${lit} is beyond 2^53 and cannot be sent exactly`);
    i += lit.length;
    return n;
  };

  const key = (v: unknown): string => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean' || v === null) return JSON.stringify(v);
    return fail('a dict key must be a string, number, True, False or None');
  };

  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = {};
      if (eat('}')) return obj;
      for (;;) {
        const k = key(value());
        if (!eat(':')) fail('expected ":"');
        setOwn(obj, k, value());
        if (eat('}')) return obj;
        if (!eat(',')) fail('expected "," or "}"');
        if (eat('}')) return obj;
      }
    }
    if (c === '[' || c === '(') {
      const close = c === '[' ? ']' : ')';
      i++;
      const arr: unknown[] = [];
      if (eat(close)) return arr;
      let commas = 0;
      for (;;) {
        arr.push(value());
        if (eat(close)) return c === '(' && commas === 0 ? arr[0] : arr; // (x) is x, (x,) a tuple
        if (!eat(',')) fail(`expected "," or "${close}"`);
        commas++;
        if (eat(close)) return arr;
      }
    }
    if (c === "'" || c === '"') {
      let s = str();
      for (;;) { // 'a' 'b' is 'ab'
        ws();
        if (text[i] !== "'" && text[i] !== '"') return s;
        s += str();
      }
    }
    if (c === '-' || c === '+') {
      i++;
      ws();
      const n = num();
      return c === '-' ? -n : n;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0];
    if (name !== undefined) {
      if (!Object.hasOwn(NAMES, name)) fail(`'${name}' is not a literal`);
      i += name.length;
      return NAMES[name];
    }
    return num();
  };

  const v = value();
  ws();
  if (i < text.length) fail('unexpected text');
  return v;
}
