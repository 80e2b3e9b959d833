// A small CEL (Common Expression Language) evaluator for the `x-kubernetes-validations` rules CRD
// authors write. Supported: literals (int, uint, double, string incl. raw and triple-quoted, bool,
// null, lists, maps), `self` / `oldSelf` and macro variables, field selection and indexing,
// `! - * / % + - < <= > >= == != in && || ?:`, `has()`, `size()`, the macros `all`, `exists`,
// `exists_one`, `map`, `filter`, string functions `startsWith`, `endsWith`, `contains`, `matches`,
// `lowerAscii`, `upperAscii`, `trim`, `indexOf`, `lastIndexOf`, `split`, `join`, and conversions
// `int`, `uint`, `double`, `string`, `bool`. Anything else fails at compile time with
// `CelCompileError`, so a CRD carrying a rule this server cannot evaluate is rejected when created
// instead of being silently accepted.

export class CelCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelCompileError';
  }
}

export class CelEvalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelEvalError';
  }
}

/** A CEL double (int and double differ in CEL: `7 / 2` is 3, `7.0 / 2.0` is 3.5). */
class Dbl {
  readonly v: number;
  constructor(v: number) {
    this.v = v;
  }
}
const unbox = (v: unknown): unknown => (v instanceof Dbl ? v.v : v);
function unboxDeep(v: unknown): unknown {
  if (v instanceof Dbl) return v.v;
  if (Array.isArray(v)) return v.map(unboxDeep);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unboxDeep(x)]));
  return v;
}
/** JSON numbers: integral ones are CEL ints, others doubles. */
const isDouble = (v: unknown): boolean => v instanceof Dbl || (typeof v === 'number' && !Number.isInteger(v));

type Node =
  | { k: 'lit'; v: unknown }
  | { k: 'id'; name: string }
  | { k: 'sel'; obj: Node; field: string }
  | { k: 'idx'; obj: Node; index: Node }
  | { k: 'call'; fn: string; target: Node | undefined; args: Node[] }
  | { k: 'list'; items: Node[] }
  | { k: 'map'; entries: [Node, Node][] }
  | { k: 'un'; op: '!' | '-'; e: Node }
  | { k: 'bin'; op: string; l: Node; r: Node }
  | { k: 'cond'; c: Node; t: Node; f: Node }
  | { k: 'has'; obj: Node; field: string }
  | { k: 'comp'; macro: 'all' | 'exists' | 'exists_one' | 'map' | 'filter'; target: Node; v: string; body: Node; body2: Node | undefined };

type Tok = { t: 'num'; v: number; int: boolean } | { t: 'str'; v: string } | { t: 'id'; v: string } | { t: 'op'; v: string } | { t: 'eof' };

const OPS = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '.', ',', '(', ')', '[', ']', '{', '}'];

function unescape(s: string, expr: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{3}|.)/g, (_m, e: string) => {
    switch (e[0]) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'a': return '\x07';
      case 'b': return '\b';
      case 'f': return '\f';
      case 'v': return '\v';
      case '\\': case '"': case "'": case '`': case '?': return e;
      case 'u': case 'U': case 'x': return String.fromCodePoint(parseInt(e.slice(1), 16));
      default:
        if (/^[0-7]{3}$/.test(e)) return String.fromCodePoint(parseInt(e, 8));
        throw new CelCompileError(`invalid escape sequence \\${e} in ${expr}`);
    }
  });
}

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === '/' && src[i + 1] === '/') { while (i < src.length && src[i] !== '\n') i++; continue; }
    // strings, with optional r (raw) / b (bytes) prefix
    const m = /^([rRbB]{0,2})('''|"""|'|")/.exec(src.slice(i));
    if (m && (m[1] === '' || /^[rRbB]+$/.test(m[1]!))) {
      const raw = /[rR]/.test(m[1]!);
      const q = m[2]!;
      let j = i + m[0].length;
      let body = '';
      while (true) {
        if (j >= src.length) throw new CelCompileError(`unterminated string literal in: ${src}`);
        if (src.startsWith(q, j)) break;
        if (src[j] === '\\' && !raw) { body += src[j]! + src[j + 1]!; j += 2; continue; }
        if (q.length === 1 && src[j] === '\n') throw new CelCompileError(`newline in string literal in: ${src}`);
        body += src[j]!;
        j++;
      }
      out.push({ t: 'str', v: raw ? body : unescape(body, src) });
      i = j + q.length;
      continue;
    }
    const num = /^(0x[0-9a-fA-F]+|[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?)([uU]?)/.exec(src.slice(i));
    if (num && !(c === '.' && !/[0-9]/.test(src[i + 1] ?? ''))) {
      const text = num[1]!;
      const isInt = !/[.eE]/.test(text) || text.startsWith('0x');
      out.push({ t: 'num', v: text.startsWith('0x') ? parseInt(text, 16) : Number(text), int: isInt });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) { out.push({ t: 'id', v: id[0] }); i += id[0].length; continue; }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new CelCompileError(`Syntax error: token recognition error at: '${c}' in: ${src}`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  out.push({ t: 'eof' });
  return out;
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** Functions, with the receiver-style arities they accept (-1: any). */
const METHODS: Record<string, number[]> = {
  size: [0], startsWith: [1], endsWith: [1], contains: [1], matches: [1], lowerAscii: [0], upperAscii: [0],
  trim: [0], indexOf: [1], lastIndexOf: [1], split: [1], join: [0, 1],
};
const GLOBALS: Record<string, number[]> = { size: [1], int: [1], uint: [1], double: [1], string: [1], bool: [1], matches: [2], has: [1] };

class Parser {
  private pos = 0;
  private readonly toks: Tok[];
  private readonly src: string;
  private readonly scope: string[];
  constructor(src: string, vars: readonly string[]) {
    this.src = src;
    this.toks = tokenize(src);
    this.scope = [...vars];
  }
  private peek(): Tok { return this.toks[this.pos]!; }
  private next(): Tok { return this.toks[this.pos++]!; }
  private isOp(v: string): boolean { const t = this.peek(); return t.t === 'op' && t.v === v; }
  private expect(v: string): void {
    const t = this.next();
    if (t.t !== 'op' || t.v !== v) throw new CelCompileError(`Syntax error: expected '${v}' in: ${this.src}`);
  }
  parse(): Node {
    const n = this.expr();
    if (this.peek().t !== 'eof') throw new CelCompileError(`Syntax error: unexpected input after expression in: ${this.src}`);
    return n;
  }
  private expr(): Node {
    const c = this.or();
    if (this.isOp('?')) {
      this.next();
      const t = this.or();
      this.expect(':');
      const f = this.expr();
      return { k: 'cond', c, t, f };
    }
    return c;
  }
  private or(): Node {
    let l = this.and();
    while (this.isOp('||')) { this.next(); l = { k: 'bin', op: '||', l, r: this.and() }; }
    return l;
  }
  private and(): Node {
    let l = this.rel();
    while (this.isOp('&&')) { this.next(); l = { k: 'bin', op: '&&', l, r: this.rel() }; }
    return l;
  }
  private rel(): Node {
    let l = this.add();
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && ['<', '<=', '>', '>=', '==', '!='].includes(t.v)) { this.next(); l = { k: 'bin', op: t.v, l, r: this.add() }; }
      else if (t.t === 'id' && t.v === 'in') { this.next(); l = { k: 'bin', op: 'in', l, r: this.add() }; }
      else return l;
    }
  }
  private add(): Node {
    let l = this.mul();
    while (this.isOp('+') || this.isOp('-')) { const op = (this.next() as { v: string }).v; l = { k: 'bin', op, l, r: this.mul() }; }
    return l;
  }
  private mul(): Node {
    let l = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) { const op = (this.next() as { v: string }).v; l = { k: 'bin', op, l, r: this.unary() }; }
    return l;
  }
  private unary(): Node {
    if (this.isOp('!')) { this.next(); return { k: 'un', op: '!', e: this.unary() }; }
    if (this.isOp('-')) {
      this.next();
      const t = this.peek();
      if (t.t === 'num') { this.next(); return this.member({ k: 'lit', v: t.int ? -t.v : new Dbl(-t.v) }); }
      return { k: 'un', op: '-', e: this.unary() };
    }
    return this.member(this.primary());
  }
  private args(): Node[] {
    const out: Node[] = [];
    if (this.isOp(')')) { this.next(); return out; }
    for (;;) {
      out.push(this.expr());
      if (this.isOp(',')) { this.next(); continue; }
      this.expect(')');
      return out;
    }
  }
  private member(n: Node): Node {
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        const t = this.next();
        if (t.t !== 'id') throw new CelCompileError(`Syntax error: expected field name after '.' in: ${this.src}`);
        if (this.isOp('(')) {
          this.next();
          if (MACROS.has(t.v)) {
            const vt = this.next();
            if (vt.t !== 'id') throw new CelCompileError(`${t.v}() requires a variable name as its first argument in: ${this.src}`);
            this.expect(',');
            this.scope.push(vt.v);
            const body = this.expr();
            let body2: Node | undefined;
            if (t.v === 'map' && this.isOp(',')) { this.next(); body2 = this.expr(); }
            this.scope.pop();
            this.expect(')');
            n = { k: 'comp', macro: t.v as 'all', target: n, v: vt.v, body, body2 };
            continue;
          }
          const args = this.args();
          const ar = METHODS[t.v];
          if (!ar) throw new CelCompileError(`undeclared reference to '${t.v}' (in container '') in: ${this.src}`);
          if (!ar.includes(args.length)) throw new CelCompileError(`found no matching overload for '${t.v}' with ${args.length} argument(s) in: ${this.src}`);
          if (t.v === 'matches') this.checkRegex(args[0]!);
          n = { k: 'call', fn: t.v, target: n, args };
        } else n = { k: 'sel', obj: n, field: t.v };
        continue;
      }
      if (this.isOp('[')) {
        this.next();
        const index = this.expr();
        this.expect(']');
        n = { k: 'idx', obj: n, index };
        continue;
      }
      return n;
    }
  }
  private checkRegex(n: Node): void {
    if (n.k === 'lit' && typeof n.v === 'string') {
      try { new RegExp(n.v, 'u'); } catch (e) { throw new CelCompileError(`invalid regular expression ${JSON.stringify(n.v)}: ${(e as Error).message}`); }
    }
  }
  private primary(): Node {
    const t = this.next();
    if (t.t === 'num') return { k: 'lit', v: t.int ? t.v : new Dbl(t.v) };
    if (t.t === 'str') return { k: 'lit', v: t.v };
    if (t.t === 'op' && t.v === '(') { const e = this.expr(); this.expect(')'); return e; }
    if (t.t === 'op' && t.v === '[') {
      const items: Node[] = [];
      while (!this.isOp(']')) {
        items.push(this.expr());
        if (this.isOp(',')) this.next(); else break;
      }
      this.expect(']');
      return { k: 'list', items };
    }
    if (t.t === 'op' && t.v === '{') {
      const entries: [Node, Node][] = [];
      while (!this.isOp('}')) {
        const key = this.expr();
        this.expect(':');
        entries.push([key, this.expr()]);
        if (this.isOp(',')) this.next(); else break;
      }
      this.expect('}');
      return { k: 'map', entries };
    }
    if (t.t === 'op' && t.v === '.') return this.primary();
    if (t.t === 'id') {
      if (t.v === 'true') return { k: 'lit', v: true };
      if (t.v === 'false') return { k: 'lit', v: false };
      if (t.v === 'null') return { k: 'lit', v: null };
      if (this.isOp('(')) {
        this.next();
        if (t.v === 'has') {
          const arg = this.expr();
          this.expect(')');
          if (arg.k !== 'sel') throw new CelCompileError(`invalid argument to has() macro in: ${this.src}`);
          return { k: 'has', obj: arg.obj, field: arg.field };
        }
        const args = this.args();
        const ar = GLOBALS[t.v];
        if (!ar) throw new CelCompileError(`undeclared reference to '${t.v}' (in container '') in: ${this.src}`);
        if (!ar.includes(args.length)) throw new CelCompileError(`found no matching overload for '${t.v}' with ${args.length} argument(s) in: ${this.src}`);
        if (t.v === 'matches') { this.checkRegex(args[1]!); return { k: 'call', fn: 'matches', target: args[0], args: [args[1]!] }; }
        return { k: 'call', fn: t.v, target: undefined, args };
      }
      if (!this.scope.includes(t.v)) throw new CelCompileError(`undeclared reference to '${t.v}' (in container '') in: ${this.src}`);
      return { k: 'id', name: t.v };
    }
    throw new CelCompileError(`Syntax error: unexpected token in: ${this.src}`);
  }
}

export interface CelProgram {
  readonly source: string;
  /** Whether the expression reads `oldSelf` (a transition rule: only checked on update). */
  readonly usesOldSelf: boolean;
  eval(vars: Readonly<Record<string, unknown>>): unknown;
}

function mentions(n: Node, name: string): boolean {
  switch (n.k) {
    case 'lit': return false;
    case 'id': return n.name === name;
    case 'sel': case 'has': return mentions(n.obj, name);
    case 'idx': return mentions(n.obj, name) || mentions(n.index, name);
    case 'call': return (n.target ? mentions(n.target, name) : false) || n.args.some((a) => mentions(a, name));
    case 'list': return n.items.some((a) => mentions(a, name));
    case 'map': return n.entries.some(([a, b]) => mentions(a, name) || mentions(b, name));
    case 'un': return mentions(n.e, name);
    case 'bin': return mentions(n.l, name) || mentions(n.r, name);
    case 'cond': return mentions(n.c, name) || mentions(n.t, name) || mentions(n.f, name);
    case 'comp': return mentions(n.target, name) || mentions(n.body, name) || (n.body2 ? mentions(n.body2, name) : false);
  }
}

/** A parsed expression: macros (`all`, `exists`, ...) stay `comp` nodes, `has()` a `has` node. */
export type CelNode = Node;

/** The syntax tree of `source` over the given variables, for analyses such as the static cost estimate. */
export function parseCel(source: string, vars: readonly string[] = ['self', 'oldSelf']): CelNode {
  return new Parser(source, vars).parse();
}

/** Whether a `lit` node's value is a CEL double (ints are plain numbers). */
export const isCelDouble = (v: unknown): boolean => v instanceof Dbl;

/** Parses and checks an expression over the given variables (`self`, `oldSelf`). */
export function compileCel(source: string, vars: readonly string[] = ['self', 'oldSelf']): CelProgram {
  const ast = new Parser(source, vars).parse();
  return { source, usesOldSelf: mentions(ast, 'oldSelf'), eval: (v) => unboxDeep(evaluate(ast, v)) };
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RegExp);

function typeName(v: unknown): string {
  if (v instanceof Dbl) return 'double';
  if (v === null || v === undefined) return 'null_type';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'double';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  return 'map';
}

function celEquals(x: unknown, y: unknown): boolean {
  const a = unbox(x);
  const b = unbox(y);
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && celEquals(a[k], b[k]));
  }
  return false;
}

function want<T>(raw: unknown, ok: (v: unknown) => v is T, what: string, op: string): T {
  const v = unbox(raw);
  if (!ok(v)) throw new CelEvalError(`no such overload: ${op} applied to ${typeName(v)} (expected ${what})`);
  return v;
}
const isStr = (v: unknown): v is string => typeof v === 'string';
const isNum = (v: unknown): v is number => typeof v === 'number';
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isList = (v: unknown): v is unknown[] => Array.isArray(v);

const regexCache = new Map<string, RegExp>();
function regex(p: string): RegExp {
  let r = regexCache.get(p);
  if (!r) {
    try { r = new RegExp(p, 'u'); } catch (e) { throw new CelEvalError(`invalid regular expression ${JSON.stringify(p)}: ${(e as Error).message}`); }
    regexCache.set(p, r);
  }
  return r;
}

function evaluate(n: Node, vars: Readonly<Record<string, unknown>>): unknown {
  switch (n.k) {
    case 'lit': return n.v;
    case 'id': {
      if (!(n.name in vars)) throw new CelEvalError(`no such attribute: ${n.name}`);
      return vars[n.name];
    }
    case 'sel': {
      const o = evaluate(n.obj, vars);
      if (!isMap(o)) throw new CelEvalError(`no such key: ${n.field} (selecting from ${typeName(o)})`);
      if (!Object.prototype.hasOwnProperty.call(o, n.field) || o[n.field] === undefined) throw new CelEvalError(`no such key: ${n.field}`);
      return o[n.field];
    }
    case 'has': {
      const o = evaluate(n.obj, vars);
      if (!isMap(o)) throw new CelEvalError(`invalid type for field selection: has() on ${typeName(o)}`);
      return Object.prototype.hasOwnProperty.call(o, n.field) && o[n.field] !== undefined && o[n.field] !== null;
    }
    case 'idx': {
      const o = evaluate(n.obj, vars);
      const i = evaluate(n.index, vars);
      if (isList(o)) {
        const idx = want(i, isNum, 'int', '_[_]');
        if (!Number.isInteger(idx) || idx < 0 || idx >= o.length) throw new CelEvalError(`index out of bounds: ${idx}`);
        return o[idx];
      }
      if (isMap(o)) {
        const key = String(i);
        if (!Object.prototype.hasOwnProperty.call(o, key)) throw new CelEvalError(`no such key: ${key}`);
        return o[key];
      }
      throw new CelEvalError(`no such overload: _[_] applied to ${typeName(o)}`);
    }
    case 'list': return n.items.map((x) => evaluate(x, vars));
    case 'map': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of n.entries) out[String(evaluate(k, vars))] = evaluate(v, vars);
      return out;
    }
    case 'un': {
      const v = evaluate(n.e, vars);
      if (n.op === '!') return !want(v, isBool, 'bool', '!_');
      return v instanceof Dbl ? new Dbl(-v.v) : -want(v, isNum, 'number', '-_');
    }
    case 'cond': return want(evaluate(n.c, vars), isBool, 'bool', '_?_:_') ? evaluate(n.t, vars) : evaluate(n.f, vars);
    case 'bin': return binary(n.op, n.l, n.r, vars);
    case 'call': return call(n, vars);
    case 'comp': return comprehension(n, vars);
  }
}

function logical(op: '&&' | '||', l: Node, r: Node, vars: Readonly<Record<string, unknown>>): boolean {
  // CEL's logical operators are commutative over errors: `false && error` is false either way round.
  const short = op === '||';
  let le: unknown;
  let lv: boolean | undefined;
  try { lv = want(evaluate(l, vars), isBool, 'bool', op); } catch (e) { le = e; }
  if (lv === short) return short;
  const rv = want(evaluate(r, vars), isBool, 'bool', op);
  if (rv === short) return short;
  if (le) throw le;
  return !short;
}

function binary(op: string, ln: Node, rn: Node, vars: Readonly<Record<string, unknown>>): unknown {
  if (op === '&&' || op === '||') return logical(op, ln, rn, vars);
  const lb = evaluate(ln, vars);
  const rb = evaluate(rn, vars);
  const dbl = isDouble(lb) || isDouble(rb);
  const l = unbox(lb);
  const r = unbox(rb);
  const num = (n: number): unknown => (dbl ? new Dbl(n) : n);
  switch (op) {
    case '==': return celEquals(l, r);
    case '!=': return !celEquals(l, r);
    case 'in':
      if (isList(r)) return r.some((x) => celEquals(x, l));
      if (isMap(r)) return Object.prototype.hasOwnProperty.call(r, String(l));
      throw new CelEvalError(`no such overload: in applied to ${typeName(r)}`);
    case '<': case '<=': case '>': case '>=': {
      if (!((isNum(l) && isNum(r)) || (isStr(l) && isStr(r)) || (isBool(l) && isBool(r))))
        throw new CelEvalError(`no such overload: ${op} applied to (${typeName(l)}, ${typeName(r)})`);
      const a = l as number | string;
      const b = r as number | string;
      return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
    }
    case '+':
      if (isNum(l) && isNum(r)) return num(l + r);
      if (isStr(l) && isStr(r)) return l + r;
      if (isList(l) && isList(r)) return [...(lb as unknown[]), ...(rb as unknown[])];
      throw new CelEvalError(`no such overload: + applied to (${typeName(l)}, ${typeName(r)})`);
    case '-': return num(want(l, isNum, 'number', '-') - want(r, isNum, 'number', '-'));
    case '*': return num(want(l, isNum, 'number', '*') * want(r, isNum, 'number', '*'));
    case '/': case '%': {
      const a = want(l, isNum, 'number', op);
      const b = want(r, isNum, 'number', op);
      if (!dbl && b === 0) throw new CelEvalError(op === '/' ? 'division by zero' : 'modulus by zero');
      if (op === '%') return num(a % b);
      return dbl ? new Dbl(a / b) : Math.trunc(a / b);
    }
  }
  throw new CelEvalError(`unknown operator ${op}`);
}

function call(n: Extract<Node, { k: 'call' }>, vars: Readonly<Record<string, unknown>>): unknown {
  const args = n.args.map((a) => evaluate(a, vars));
  if (n.target === undefined) {
    const v = args[0];
    switch (n.fn) {
      case 'size': return size(v);
      case 'int': case 'uint':
        if (v instanceof Dbl) return Math.trunc(v.v);
        if (isNum(v)) return Math.trunc(v);
        if (isStr(v) && /^-?[0-9]+$/.test(v)) return Number(v);
        throw new CelEvalError(`cannot convert ${typeName(v)} to ${n.fn}`);
      case 'double':
        if (v instanceof Dbl) return v;
        if (isNum(v)) return new Dbl(v);
        if (isStr(v) && v.trim() !== '' && !Number.isNaN(Number(v))) return new Dbl(Number(v));
        throw new CelEvalError(`cannot convert ${typeName(v)} to double`);
      case 'string':
        if (v instanceof Dbl) return String(v.v);
        if (isStr(v) || isNum(v) || isBool(v)) return String(v);
        throw new CelEvalError(`cannot convert ${typeName(v)} to string`);
      case 'bool':
        if (isBool(v)) return v;
        if (v === 'true' || v === 'false') return v === 'true';
        throw new CelEvalError(`cannot convert ${typeName(v)} to bool`);
    }
    throw new CelEvalError(`unknown function ${n.fn}`);
  }
  const t = evaluate(n.target, vars);
  switch (n.fn) {
    case 'size': return size(t);
    case 'startsWith': return want(t, isStr, 'string', 'startsWith').startsWith(want(args[0], isStr, 'string', 'startsWith'));
    case 'endsWith': return want(t, isStr, 'string', 'endsWith').endsWith(want(args[0], isStr, 'string', 'endsWith'));
    case 'contains': return want(t, isStr, 'string', 'contains').includes(want(args[0], isStr, 'string', 'contains'));
    case 'matches': return regex(want(args[0], isStr, 'string', 'matches')).test(want(t, isStr, 'string', 'matches'));
    case 'lowerAscii': return want(t, isStr, 'string', 'lowerAscii').replace(/[A-Z]/g, (c) => c.toLowerCase());
    case 'upperAscii': return want(t, isStr, 'string', 'upperAscii').replace(/[a-z]/g, (c) => c.toUpperCase());
    case 'trim': return want(t, isStr, 'string', 'trim').trim();
    case 'indexOf': return [...want(t, isStr, 'string', 'indexOf')].join('').indexOf(want(args[0], isStr, 'string', 'indexOf'));
    case 'lastIndexOf': return want(t, isStr, 'string', 'lastIndexOf').lastIndexOf(want(args[0], isStr, 'string', 'lastIndexOf'));
    case 'split': return want(t, isStr, 'string', 'split').split(want(args[0], isStr, 'string', 'split'));
    case 'join': return want(t, isList, 'list', 'join').map((x) => want(x, isStr, 'string', 'join')).join(args.length ? want(args[0], isStr, 'string', 'join') : '');
  }
  throw new CelEvalError(`unknown function ${n.fn}`);
}

function size(v: unknown): number {
  if (isStr(v)) return [...v].length;
  if (isList(v)) return v.length;
  if (isMap(v)) return Object.keys(v).length;
  throw new CelEvalError(`no such overload: size applied to ${typeName(v)}`);
}

function comprehension(n: Extract<Node, { k: 'comp' }>, vars: Readonly<Record<string, unknown>>): unknown {
  const target = evaluate(n.target, vars);
  let items: unknown[];
  if (isList(target)) items = target;
  else if (isMap(target)) items = Object.keys(target);
  else throw new CelEvalError(`${n.macro}() applied to ${typeName(target)}`);
  const run = (body: Node, x: unknown): unknown => evaluate(body, { ...vars, [n.v]: x });
  switch (n.macro) {
    case 'all': {
      let err: unknown;
      for (const x of items) {
        try { if (!want(run(n.body, x), isBool, 'bool', 'all')) return false; } catch (e) { err ??= e; }
      }
      if (err) throw err;
      return true;
    }
    case 'exists': {
      let err: unknown;
      for (const x of items) {
        try { if (want(run(n.body, x), isBool, 'bool', 'exists')) return true; } catch (e) { err ??= e; }
      }
      if (err) throw err;
      return false;
    }
    case 'exists_one': return items.filter((x) => want(run(n.body, x), isBool, 'bool', 'exists_one')).length === 1;
    case 'filter': return items.filter((x) => want(run(n.body, x), isBool, 'bool', 'filter'));
    case 'map':
      if (n.body2) return items.filter((x) => want(run(n.body, x), isBool, 'bool', 'map')).map((x) => run(n.body2!, x));
      return items.map((x) => run(n.body, x));
  }
}
