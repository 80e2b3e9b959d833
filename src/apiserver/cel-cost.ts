/**
 * kube-apiserver's static cost estimate of a CRD's CEL rules (`x-kubernetes-validations`): the check
 * that refuses a CRD one of whose rules could cost more than {@link StaticEstimatedCostLimit} in one
 * evaluation (times the number of times its schema node can occur in an object), or whose rules
 * together could cost more than {@link StaticEstimatedCRDCostLimit}. A port, for the CEL subset the
 * embedded API server evaluates (./cel.ts), of
 * - k8s.io/apiserver `pkg/cel/common/schemas.go` SchemaDeclType: the size bound of every schema
 *   node — `maxItems` / `maxProperties`, `maxLength` × 4 (bytes: a code point takes up to four), a
 *   string enum's longest value, a date-time's 32 bytes; without a bound, as many as fit in a 3 MiB
 *   request at the node's minimal serialized size;
 * - cel-go `checker/cost.go`: the cost of every expression, with `all`, `exists`, `exists_one`, `map`
 *   and `filter` expanded into comprehensions exactly as cel-go's parser expands them (their
 *   accumulator, loop condition and step count too), and field paths tracked into iteration
 *   variables so `x.name` of `self.disks.all(x, ...)` is bounded by the items' `maxLength`;
 * - k8s.io/apiextensions-apiserver `pkg/apis/apiextensions/validation`: a rule's cardinality (the
 *   product of the `maxItems` / `maxProperties` of the lists and maps above its node, or — under an
 *   unbounded one — as many nodes as fit in a request) and the two limits.
 *
 * Cost models: the estimator changed between releases, and a CRD must pass every server qvirt
 * supports. {@link CostModels} has the ones that differ for these rules, plus a pessimistic one that
 * bounds them all from above (a rule that passes it passes every supported server and the older ones).
 */
import { isCelDouble, parseCel, type CelNode } from './cel.ts';

/** `StaticEstimatedCostLimit`: one rule's estimated cost, times its cardinality. */
export const StaticEstimatedCostLimit = 10_000_000;
/** `StaticEstimatedCRDCostLimit`: every rule of the CRD's schema, each times its cardinality. */
export const StaticEstimatedCRDCostLimit = 100_000_000;
/** `DefaultMaxRequestSizeBytes`: what an unbounded list, map or string is assumed to fill. */
export const MaxRequestSizeBytes = 3 * 1024 * 1024;
/** `math.MaxUint64` (as a double): an unknown size or a cost that overflowed. */
export const UNBOUNDED = 2 ** 64;

export interface CostModel {
  readonly name: string;
  /**
   * The size of a `map()` / `filter()` result: that of the list it iterates (cel-go ≥ 0.20, kube ≥ 1.31),
   * or unknown (older: iterating such a result is unbounded).
   */
  readonly listResultSize: 'range' | 'unknown';
  /** The size of an `all` / `exists` / `exists_one` result: the iterated list's (cel-go 0.20–0.22) or 1 (cel-go ≥ 0.23). */
  readonly scalarResultSize: 'range' | 'one';
  /** Whether a string enum bounds the string's length (kube ≥ 1.29), without `maxLength`. */
  readonly enumBoundsLength: boolean;
}

export const CostModels = {
  /** kube-apiserver 1.31–1.32 (cel-go 0.20–0.22). */
  kube132: { name: 'kube-apiserver 1.32 (cel-go 0.22)', listResultSize: 'range', scalarResultSize: 'range', enumBoundsLength: true },
  /** kube-apiserver 1.33–1.36 (cel-go 0.23–0.26). */
  kube136: { name: 'kube-apiserver 1.36 (cel-go 0.26)', listResultSize: 'range', scalarResultSize: 'one', enumBoundsLength: true },
  /**
   * Above every estimator qvirt supports and the older ones (kube-apiserver 1.25–1.30: a filter/map
   * result is unbounded, enums do not bound length): a rule within the limits here is within them on
   * every server.
   */
  pessimistic: { name: 'pessimistic (kube-apiserver ≤ 1.30 and ≥ 1.31 at once)', listResultSize: 'unknown', scalarResultSize: 'range', enumBoundsLength: false },
} as const satisfies Record<string, CostModel>;

/** The CEL declaration of a schema node, as much as the cost estimate reads of it. */
export interface DeclType {
  readonly kind: 'object' | 'list' | 'map' | 'string' | 'bytes' | 'timestamp' | 'duration' | 'bool' | 'int' | 'double' | 'dyn';
  /** Most items / properties / bytes (0 for scalars and objects, as kube-apiserver leaves them). */
  readonly maxElements: number;
  /** Whether maxElements comes from the schema (maxItems, maxProperties, maxLength, enum, format) rather than the request size. */
  readonly bounded: boolean;
  readonly minSerializedSize: number;
  readonly fields?: ReadonlyMap<string, DeclType>;
  /** List items, map values. */
  readonly elem?: DeclType;
  /** Map keys. */
  readonly key?: DeclType;
}

export type JSONSchemaProps = { readonly [key: string]: unknown };

const MIN_STRING = 2; // ""
const MIN_BOOL = 4; // true
const MIN_NUMBER = 1; // 0
const MAX_DATETIME_JSON = 32;
const MIN_DATETIME_JSON = 21;
const JSON_DATE = 12;
const MAX_DURATION_JSON = 32;
const MIN_DURATION_JSON = 3;

const scalar = (kind: DeclType['kind'], minSerializedSize: number): DeclType => ({ kind, maxElements: 0, bounded: true, minSerializedSize });
/** kube-apiserver's shared StringType: a map key (maxElements 0, as it is there). */
const MAP_KEY = scalar('string', MIN_STRING);

const num = (v: unknown): number | undefined => (typeof v === 'number' ? Math.max(0, v) : undefined);
const obj = (v: unknown): JSONSchemaProps | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JSONSchemaProps) : undefined);

const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/** A property's name in CEL (`apiservercel.Escape`), or undefined when it cannot be spelled. */
export function celFieldName(name: string): string | undefined {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !name.includes('__')) return name;
  if (!/^[A-Za-z0-9_./-]+$/.test(name)) return undefined;
  return name.replace(/__|[-./]/g, (m) => ({ __: '__underscores__', '-': '__dash__', '.': '__dot__', '/': '__slash__' })[m]!);
}

/** SchemaDeclType: the CEL declaration of an OpenAPI schema node, or undefined where CEL cannot see it. */
export function schemaDeclType(s: JSONSchemaProps, model: CostModel, isResourceRoot = false): DeclType | undefined {
  if (s['x-kubernetes-int-or-string'] === true) {
    const maxLength = num(s.maxLength);
    return { kind: 'dyn', maxElements: maxLength !== undefined ? maxLength * 4 : MaxRequestSizeBytes - 2, bounded: maxLength !== undefined, minSerializedSize: 1 };
  }
  if (isResourceRoot) s = withTypeAndObjectMeta(s);
  switch (s.type) {
    case 'array': {
      const items = obj(s.items);
      const it = items && schemaDeclType(items, model, items['x-kubernetes-embedded-resource'] === true);
      if (!it) return undefined;
      const maxItems = num(s.maxItems);
      return { kind: 'list', elem: it, maxElements: maxItems ?? Math.floor((MaxRequestSizeBytes - 2) / (it.minSerializedSize + 1)), bounded: maxItems !== undefined, minSerializedSize: 2 };
    }
    case 'object': {
      const ap = obj(s.additionalProperties);
      if (ap) {
        const vt = schemaDeclType(ap, model, ap['x-kubernetes-embedded-resource'] === true);
        if (!vt) return undefined;
        const maxProps = num(s.maxProperties);
        return { kind: 'map', key: MAP_KEY, elem: vt, maxElements: maxProps ?? Math.floor((MaxRequestSizeBytes - 2) / (vt.minSerializedSize + 6)), bounded: maxProps !== undefined, minSerializedSize: 2 };
      }
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      const fields = new Map<string, DeclType>();
      let minSerializedSize = 2;
      for (const [name, p] of Object.entries(obj(s.properties) ?? {})) {
        const prop = obj(p)!;
        const ft = schemaDeclType(prop, model, prop['x-kubernetes-embedded-resource'] === true);
        if (!ft) continue;
        const celName = celFieldName(name);
        if (celName) fields.set(celName, ft);
        if (required.has(name) && prop.default === undefined) minSerializedSize += name.length + ft.minSerializedSize + 4;
      }
      return { kind: 'object', fields, maxElements: 0, bounded: true, minSerializedSize };
    }
    case 'string': {
      const maxLength = num(s.maxLength);
      switch (s.format) {
        case 'byte':
          return { kind: 'bytes', maxElements: maxLength ?? MaxRequestSizeBytes - 2, bounded: maxLength !== undefined, minSerializedSize: MIN_STRING };
        case 'duration':
          return { kind: 'duration', maxElements: MAX_DURATION_JSON, bounded: true, minSerializedSize: MIN_DURATION_JSON };
        case 'date':
          return { kind: 'timestamp', maxElements: JSON_DATE, bounded: true, minSerializedSize: JSON_DATE };
        case 'date-time':
          return { kind: 'timestamp', maxElements: MAX_DATETIME_JSON, bounded: true, minSerializedSize: MIN_DATETIME_JSON };
      }
      if (maxLength !== undefined) return { kind: 'string', maxElements: maxLength * 4, bounded: true, minSerializedSize: MIN_STRING };
      const en = Array.isArray(s.enum) ? s.enum.filter((v): v is string => typeof v === 'string') : [];
      if (model.enumBoundsLength && en.length > 0) return { kind: 'string', maxElements: Math.max(...en.map((v) => v.length)), bounded: true, minSerializedSize: MIN_STRING };
      return { kind: 'string', maxElements: MaxRequestSizeBytes - 2, bounded: false, minSerializedSize: MIN_STRING };
    }
    case 'boolean':
      return scalar('bool', MIN_BOOL);
    case 'number':
      return scalar('double', MIN_NUMBER);
    case 'integer':
      return scalar('int', MIN_NUMBER);
  }
  return undefined;
}

/** apiVersion, kind, metadata.name and metadata.generateName are always there at a resource's root. */
function withTypeAndObjectMeta(s: JSONSchemaProps): JSONSchemaProps {
  const props = { ...(obj(s.properties) ?? {}) };
  const str = { type: 'string' };
  props.kind = str;
  props.apiVersion = str;
  props.metadata = { type: 'object', properties: { name: str, generateName: str } };
  return { ...s, properties: props };
}

/** MaxCardinality: how many nodes of this minimal size fit in a request (a rule under an unbounded list or map). */
export const maxCardinality = (minSerializedSize: number): number => Math.floor(MaxRequestSizeBytes / (minSerializedSize + 1));

// ------------------------------------------------------------------------------------------------
// The cost of one expression (cel-go's coster)
// ------------------------------------------------------------------------------------------------

type Kind = 'bool' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'null' | 'timestamp' | 'duration' | 'list' | 'map' | 'object' | 'dyn';
interface CelType { readonly kind: Kind; readonly decl?: DeclType; readonly elem?: CelType; readonly key?: CelType }

const typeOfDecl = (d: DeclType): CelType => ({
  kind: d.kind,
  decl: d,
  ...(d.elem ? { elem: typeOfDecl(d.elem) } : {}),
  ...(d.key ? { key: typeOfDecl(d.key) } : {}),
});
const SCALARS = new Set<Kind>(['bool', 'int', 'uint', 'double', 'timestamp', 'duration']);
const isScalar = (t: CelType) => SCALARS.has(t.kind);

const sat = (x: number) => (x >= UNBOUNDED ? UNBOUNDED : x);
const add = (...xs: number[]) => sat(xs.reduce((a, b) => a + b, 0));
const mul = (a: number, b: number) => (a === 0 || b === 0 ? 0 : sat(a * b));
/** multiplyByCostFactor: rounded up. */
const factor = (x: number, f: number) => sat(Math.ceil(x * f));
const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const LIST_CREATE = 10;
const MAP_CREATE = 30;

/** What the coster knows of an expression: its cost, type, field path (from a variable) and computed size. */
interface Est {
  readonly cost: number;
  readonly type: CelType;
  readonly path?: readonly string[];
  /** A size derived from the expression itself (a literal's, a comprehension's result, a ternary's). */
  readonly size?: number;
  /** Where `size` came from an unbounded one. */
  readonly sizeUse?: UnboundedUse;
  /** What the expression is, where it has no field path (for messages). */
  readonly what?: string;
}

export class CelCostError extends Error {
  override readonly name = 'CelCostError';
}

/** A size that came from the request-size fallback rather than a bound in the schema, and what read it. */
export interface UnboundedUse {
  /** The field path (`self.spec.disks`, `self.a.@items.name`) or the expression kind. */
  readonly what: string;
  readonly size: number;
}

class Coster {
  readonly unbounded: UnboundedUse[] = [];
  private readonly locals = new Map<string, { path: readonly string[]; type: CelType }[]>();
  private readonly root: DeclType;
  private readonly model: CostModel;
  private readonly source: string;
  constructor(root: DeclType, model: CostModel, source: string) {
    this.root = root;
    this.model = model;
    this.source = source;
  }

  private fail(why: string): never {
    throw new CelCostError(`cannot estimate ${JSON.stringify(this.source)}: ${why}`);
  }

  /** The k8s size estimator: the node the field path leads to, from the rule's root (the path's first element is the variable). */
  private declAt(path: readonly string[]): DeclType | undefined {
    if (path.length === 0) return undefined;
    let cur: DeclType | undefined = this.root;
    for (const p of path.slice(1)) {
      if (!cur) return undefined;
      if (p === '@items' || p === '@values') cur = cur.elem;
      else if (p === '@keys') cur = cur.key;
      else cur = cur.fields?.get(p);
    }
    return cur;
  }

  /** sizeEstimate: computed size, else the path's bound, else 1 for scalars, else unknown — and whether that came from no bound. */
  private sized(e: Est): { n: number; u?: UnboundedUse } {
    if (e.size !== undefined) return { n: e.size, ...(e.sizeUse ? { u: e.sizeUse } : {}) };
    if (e.path) {
      const d = this.declAt(e.path);
      if (d) return { n: d.maxElements, ...(d.bounded ? {} : { u: { what: e.path.join('.'), size: d.maxElements } }) };
    }
    if (isScalar(e.type)) return { n: 1 };
    return { n: UNBOUNDED, u: { what: e.what ?? `a ${e.type.kind} with no field path`, size: UNBOUNDED } };
  }

  /** The size the cost is computed from, noting it when the schema does not bound it. */
  private size(e: Est): number {
    const s = this.sized(e);
    if (s.u) this.unbounded.push(s.u);
    return s.n;
  }

  /** The smaller of two sizes (comparisons), noting it when that one is unbounded. */
  private minSize(a: Est, b: Est): number {
    const x = this.sized(a);
    const y = this.sized(b);
    const m = x.n <= y.n ? x : y;
    if (m.u) this.unbounded.push(m.u);
    return m.n;
  }

  private lookupLocal(name: string) {
    const s = this.locals.get(name);
    return s && s.length ? s[s.length - 1] : undefined;
  }

  estimate(n: CelNode): Est {
    switch (n.k) {
      case 'lit': {
        const v = n.v;
        if (typeof v === 'string') return { cost: 0, type: { kind: 'string' }, size: [...v].length };
        if (typeof v === 'boolean') return { cost: 0, type: { kind: 'bool' }, size: 1 };
        if (v === null) return { cost: 0, type: { kind: 'null' }, size: 1 };
        if (isCelDouble(v)) return { cost: 0, type: { kind: 'double' }, size: 1 };
        if (typeof v === 'number') return { cost: 0, type: { kind: 'int' }, size: 1 };
        return this.fail(`literal ${String(v)}`);
      }
      case 'id': {
        const local = this.lookupLocal(n.name);
        if (local) return { cost: 1, type: local.type, path: local.path };
        if (n.name === 'self' || n.name === 'oldSelf') return { cost: 1, type: typeOfDecl(this.root), path: [n.name] };
        return this.fail(`unknown variable ${n.name}`);
      }
      case 'sel': {
        const o = this.estimate(n.obj);
        const path = [...(o.path ?? []), n.field];
        if (o.type.kind === 'object') {
          const f = o.type.decl?.fields?.get(n.field);
          if (!f) return this.fail(`no field ${n.field} (at ${path.join('.')})`);
          return { cost: o.cost + 1, type: typeOfDecl(f), path };
        }
        if (o.type.kind === 'map') return { cost: o.cost + 1, type: o.type.elem ?? { kind: 'dyn' }, path };
        if (o.type.kind === 'dyn') return { cost: o.cost, type: { kind: 'dyn' }, path };
        return this.fail(`selecting ${n.field} from a ${o.type.kind}`);
      }
      case 'has': {
        // has() costs nothing itself (kube-apiserver sets PresenceTestHasCost(false)); its operand is evaluated.
        const o = this.estimate(n.obj);
        return { cost: o.cost, type: { kind: 'bool' } };
      }
      case 'idx': {
        const o = this.estimate(n.obj);
        const i = this.estimate(n.index);
        const step = o.type.kind === 'list' ? '@items' : o.type.kind === 'map' ? '@values' : undefined;
        if (!step) return this.fail(`indexing a ${o.type.kind}`);
        return { cost: add(1, o.cost, i.cost), type: o.type.elem ?? { kind: 'dyn' }, path: [...(o.path ?? []), step] };
      }
      case 'list': {
        const items = n.items.map((x) => this.estimate(x));
        return { cost: add(LIST_CREATE, ...items.map((x) => x.cost)), type: { kind: 'list', ...(items[0] ? { elem: items[0].type } : {}) }, size: items.length };
      }
      case 'map': {
        const es = n.entries.flatMap(([k, v]) => [this.estimate(k), this.estimate(v)]);
        return { cost: add(MAP_CREATE, ...es.map((x) => x.cost)), type: { kind: 'map' }, size: n.entries.length };
      }
      case 'un': {
        const e = this.estimate(n.e);
        return { cost: add(1, e.cost), type: n.op === '!' ? { kind: 'bool' } : e.type };
      }
      case 'cond': {
        const c = this.estimate(n.c);
        const t = this.estimate(n.t);
        const f = this.estimate(n.f);
        const ts = this.sized(t);
        const fs = this.sized(f);
        const big = ts.n >= fs.n ? ts : fs;
        const type = t.type.kind === 'list' && t.type.elem === undefined ? f.type : t.type;
        return { cost: add(c.cost, Math.max(t.cost, f.cost)), type, size: big.n, ...(big.u ? { sizeUse: big.u } : {}) };
      }
      case 'bin':
        return this.binary(n.op, n.l, n.r);
      case 'call':
        return this.call(n.fn, n.target, n.args);
      case 'comp':
        return this.comprehension(n);
    }
  }

  private binary(op: string, ln: CelNode, rn: CelNode): Est {
    const l = this.estimate(ln);
    const r = this.estimate(rn);
    const args = add(l.cost, r.cost);
    switch (op) {
      case '&&':
      case '||':
        return { cost: args, type: { kind: 'bool' } };
      case '==':
      case '!=':
        return { cost: add(factor(this.minSize(l, r), STRING_TRAVERSAL), args), type: { kind: 'bool' } };
      case '<':
      case '<=':
      case '>':
      case '>=':
        if (l.type.kind === 'string' || l.type.kind === 'bytes') return { cost: add(factor(this.minSize(l, r), STRING_TRAVERSAL), args), type: { kind: 'bool' } };
        return { cost: add(1, args), type: { kind: 'bool' } };
      case 'in':
        if (r.type.kind === 'list') return { cost: add(factor(this.size(r), 1), args), type: { kind: 'bool' } };
        return { cost: add(1, args), type: { kind: 'bool' } };
      case '+':
        if (l.type.kind === 'string' || l.type.kind === 'bytes') {
          const size = add(this.size(l), this.size(r));
          return { cost: add(factor(size, STRING_TRAVERSAL), args), type: l.type, size };
        }
        if (l.type.kind === 'list') {
          const a = this.sized(l);
          const b = this.sized(r);
          const u = a.u ?? b.u;
          return { cost: add(1, args), type: l.type, size: add(a.n, b.n), ...(u ? { sizeUse: u } : {}) };
        }
        return { cost: add(1, args), type: l.type };
      default:
        return { cost: add(1, args), type: l.type };
    }
  }

  private call(fn: string, targetNode: CelNode | undefined, argNodes: readonly CelNode[]): Est {
    const args = argNodes.map((a) => this.estimate(a));
    const target = targetNode ? this.estimate(targetNode) : undefined;
    const argCost = add(...args.map((a) => a.cost), target?.cost ?? 0);
    switch (fn) {
      case 'size':
        return { cost: add(1, argCost), type: { kind: 'int' } };
      case 'int':
      case 'uint':
      case 'double':
      case 'bool':
        return { cost: add(1, argCost), type: { kind: fn } };
      case 'startsWith':
      case 'endsWith':
        return { cost: add(factor(this.size(args[0]!), STRING_TRAVERSAL), argCost), type: { kind: 'bool' } };
      case 'contains':
        return { cost: add(mul(factor(this.size(target!), STRING_TRAVERSAL), factor(this.size(args[0]!), STRING_TRAVERSAL)), argCost), type: { kind: 'bool' } };
      case 'matches':
        return { cost: add(mul(factor(add(this.size(target!), 1), STRING_TRAVERSAL), factor(this.size(args[0]!), REGEX_LENGTH)), argCost), type: { kind: 'bool' } };
    }
    return this.fail(`no cost model for ${fn}() (add one, from k8s.io/apiserver pkg/cel/library/cost.go, before using it in a CRD rule)`);
  }

  private comprehension(n: CelNode & { k: 'comp' }): Est {
    const range = this.estimate(n.target);
    if (range.type.kind !== 'list' && range.type.kind !== 'map') return this.fail(`${n.macro}() over a ${range.type.kind}`);
    const v = range.type.kind === 'list'
      ? { path: [...(range.path ?? []), '@items'], type: range.type.elem ?? { kind: 'dyn' as const } }
      : { path: [...(range.path ?? []), '@keys'], type: range.type.key ?? { kind: 'string' as const } };
    const stack = this.locals.get(n.v) ?? [];
    this.locals.set(n.v, stack);
    stack.push(v);
    let body: Est;
    let body2: Est | undefined;
    try {
      body = this.estimate(n.body);
      body2 = n.body2 ? this.estimate(n.body2) : undefined;
    } finally {
      stack.pop();
    }
    // cel-go's parser: init, loop condition, step and result of each macro's fold.
    let init = 0;
    let loopCondition = 0;
    let step: number;
    let result: number;
    let type: CelType = { kind: 'bool' };
    switch (n.macro) {
      case 'all': // init true; cond @not_strictly_false(acc); step acc && p; result acc
        loopCondition = 2;
        step = add(1, body.cost);
        result = 1;
        break;
      case 'exists': // init false; cond @not_strictly_false(!acc); step acc || p; result acc
        loopCondition = 3;
        step = add(1, body.cost);
        result = 1;
        break;
      case 'exists_one': // init 0; cond true; step p ? acc + 1 : acc; result acc == 1
        step = add(body.cost, 2);
        result = 2;
        break;
      case 'map': // init []; cond true; step acc + [t] (or p ? acc + [t] : acc); result acc
        init = LIST_CREATE;
        step = body2 ? add(body.cost, Math.max(add(body2.cost, 12), 1)) : add(body.cost, 12);
        result = 1;
        type = { kind: 'list', elem: (body2 ?? body).type };
        break;
      case 'filter': // init []; cond true; step p ? acc + [x] : acc; result acc
        init = LIST_CREATE;
        step = add(body.cost, 13);
        result = 1;
        type = { kind: 'list', elem: v.type };
        break;
    }
    const counted = this.sized(range);
    if (counted.u) this.unbounded.push(counted.u);
    const count = counted.n;
    const cost = add(range.cost, init, result, mul(count, add(loopCondition, step)));
    const what = `the result of ${n.macro}()`;
    if (type.kind === 'list') {
      return this.model.listResultSize === 'range'
        ? { cost, type, size: count, ...(counted.u ? { sizeUse: counted.u } : {}), what }
        : { cost, type, what };
    }
    return { cost, type, size: this.model.scalarResultSize === 'range' ? count : 1, what };
  }
}

export interface RuleEstimate {
  /** The rule's estimated cost for one evaluation (cel-go's estimate, max). */
  readonly cost: number;
  /** Sizes the estimate took from the request-size fallback: a list, map or string with no bound in the schema. */
  readonly unbounded: readonly UnboundedUse[];
}

/** The estimated cost of `rule` on a node declared as `root`. Throws CelCostError on CEL outside the modelled subset. */
export function estimateRuleCost(rule: string, root: DeclType, model: CostModel): RuleEstimate {
  const c = new Coster(root, model, rule);
  const e = c.estimate(parseCel(rule));
  return { cost: e.cost, unbounded: c.unbounded };
}

export interface CrdRuleCost {
  /** Where the API server reports it: `openAPIV3Schema.properties[spec]....x-kubernetes-validations[i].rule`. */
  readonly field: string;
  readonly rule: string;
  readonly cost: number;
  /** How many times the rule's node can occur in one object (product of the bounds above it). */
  readonly cardinality: number;
  /** Whether the cardinality is bounded by the schema (else: nodes that fit in a request). */
  readonly cardinalityBounded: boolean;
  /** cost × cardinality: what the per-rule limit and the CRD total count. */
  readonly total: number;
  readonly unbounded: readonly UnboundedUse[];
}

/** One entry per rule of the schema, with the schema's total, as the API server estimates them. */
export function crdRuleCosts(openAPIV3Schema: JSONSchemaProps, model: CostModel): { rules: CrdRuleCost[]; total: number } {
  const rules: CrdRuleCost[] = [];
  const walk = (s: JSONSchemaProps, field: string, card: number | undefined, isRoot: boolean) => {
    const validations = Array.isArray(s['x-kubernetes-validations']) ? (s['x-kubernetes-validations'] as { rule?: unknown }[]) : [];
    if (validations.length) {
      const decl = schemaDeclType(s, model, isRoot || s['x-kubernetes-embedded-resource'] === true);
      if (!decl) throw new CelCostError(`${field}: rules on a node CEL cannot see`);
      validations.forEach((v, i) => {
        const rule = String(v.rule);
        const est = estimateRuleCost(rule, decl, model);
        const cardinality = card ?? maxCardinality(decl.minSerializedSize);
        rules.push({ field: `${field}.x-kubernetes-validations[${i}].rule`, rule, cost: est.cost, cardinality, cardinalityBounded: card !== undefined, total: mul(est.cost, cardinality), unbounded: est.unbounded });
      });
    }
    // extractMaxElements: what one occurrence of `s` multiplies its children by.
    let times: number | undefined = 1;
    if (s.type === 'array') times = num(s.maxItems);
    else if (s.type === 'object' && s.additionalProperties !== undefined) times = num(s.maxProperties);
    const childCard = card === undefined || times === undefined ? undefined : mul(card, times);
    for (const [name, p] of Object.entries(obj(s.properties) ?? {})) walk(obj(p)!, `${field}.properties[${name}]`, childCard, false);
    const items = obj(s.items);
    if (items) walk(items, `${field}.items`, childCard, false);
    const ap = obj(s.additionalProperties);
    if (ap) walk(ap, `${field}.additionalProperties`, childCard, false);
  };
  walk(openAPIV3Schema, 'openAPIV3Schema', 1, true);
  return { rules, total: rules.reduce((t, r) => add(t, r.total), 0) };
}
