// Custom resources against their CRD's structural OpenAPI v3 schema, in the order kube-apiserver
// applies it: prune unknown fields (unless `x-kubernetes-preserve-unknown-fields`), drop nulls of
// non-nullable fields, apply `default`s, then validate (types, required, enum, pattern, bounds,
// lengths, item and property counts, `x-kubernetes-int-or-string`, list-type set/map uniqueness)
// and the CEL rules of `x-kubernetes-validations` (transition rules, which read `oldSelf`, only on
// update and only where the old object has a value at the same place).
import { compileCel, CelCompileError, type CelProgram } from './cel.ts';
import { CauseTypes, type FieldError } from './errors.ts';
import { deepEqual } from './patch.ts';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
}

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  anyOf?: Schema[];
  allOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  description?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface CompiledRule {
  rule: ValidationRule;
  program: CelProgram;
  message: CelProgram | undefined;
}

/** CEL programs of one schema, keyed by the schema node that carries them. */
export interface CompiledSchema {
  readonly schema: Schema;
  readonly rules: WeakMap<Schema, CompiledRule[]>;
  /** Whether any node carries rules (kube-apiserver has no CEL validator otherwise). */
  readonly hasRules: boolean;
}

/**
 * Compiles every `x-kubernetes-validations` rule of a schema. Returns field errors (paths inside
 * the CRD, under `fieldPrefix`) for rules this server cannot compile, so the CRD is refused.
 */
export function compileSchema(schema: Schema, fieldPrefix: string): { compiled: CompiledSchema; errors: FieldError[] } {
  const rules = new WeakMap<Schema, CompiledRule[]>();
  const errors: FieldError[] = [];
  let hasRules = false;
  const walk = (s: Schema, path: string): void => {
    if (!isObj(s)) return;
    const list = s['x-kubernetes-validations'];
    if (Array.isArray(list)) {
      const out: CompiledRule[] = [];
      list.forEach((r, i) => {
        const at = `${path}.x-kubernetes-validations[${i}]`;
        if (!isObj(r) || typeof r.rule !== 'string') {
          errors.push({ type: CauseTypes.FieldValueRequired, field: `${at}.rule` });
          return;
        }
        try {
          const program = compileCel(r.rule);
          const message = typeof r.messageExpression === 'string' ? compileCel(r.messageExpression) : undefined;
          out.push({ rule: r as unknown as ValidationRule, program, message });
        } catch (e) {
          const msg = e instanceof CelCompileError ? e.message : String(e);
          errors.push({ type: CauseTypes.FieldValueInvalid, field: `${at}.rule`, value: r.rule, detail: `compilation failed: ${msg}` });
        }
      });
      rules.set(s, out);
      hasRules ||= list.length > 0;
    }
    for (const [k, p] of Object.entries(s.properties ?? {})) walk(p, `${path}.properties[${k}]`);
    if (isObj(s.additionalProperties)) walk(s.additionalProperties as Schema, `${path}.additionalProperties`);
    if (s.items) walk(s.items, `${path}.items`);
    for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
      const list = (s as Schema)[key];
      list?.forEach((x, i) => walk(x, `${path}.${key}[${i}]`));
    }
  };
  walk(schema, fieldPrefix);
  return { compiled: { schema, rules, hasRules }, errors };
}

const ROOT_KEEP = new Set(['apiVersion', 'kind', 'metadata']);

/** Drops fields the schema does not know, and nulls where the schema does not allow them. */
export function prune(value: unknown, s: Schema | undefined, root = false): unknown {
  if (!s) return value;
  if (isObj(value)) {
    if (s['x-kubernetes-int-or-string']) return value;
    const props = s.properties;
    const addl = s.additionalProperties;
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    for (const k of Object.keys(value)) {
      const v = value[k];
      if ((root || embedded) && k === 'metadata') continue;
      const ps = props?.[k] ?? (isObj(addl) ? (addl as Schema) : undefined);
      if (ps) {
        if (v === null && !ps.nullable && ps.default === undefined) { delete value[k]; continue; }
        value[k] = prune(v, ps);
      } else if ((root || embedded) && ROOT_KEEP.has(k)) {
        continue;
      } else if (!preserve && addl !== true) {
        delete value[k];
      }
    }
    return value;
  }
  if (Array.isArray(value) && s.items) return value.map((x) => prune(x, s.items));
  return value;
}

/** Fills `default`s of absent properties, recursively (defaults are structural: no CEL). */
export function applyDefaults(value: unknown, s: Schema | undefined): unknown {
  if (!s) return value;
  if (isObj(value)) {
    for (const [k, ps] of Object.entries(s.properties ?? {})) {
      if (value[k] === undefined && ps.default !== undefined) value[k] = structuredClone(ps.default);
      if (value[k] !== undefined) value[k] = applyDefaults(value[k], ps);
    }
    if (isObj(s.additionalProperties)) for (const k of Object.keys(value)) value[k] = applyDefaults(value[k], s.additionalProperties as Schema);
  } else if (Array.isArray(value) && s.items) {
    return value.map((x) => applyDefaults(x, s.items));
  }
  return value;
}

/** The OpenAPI type of a JSON value (a type error shows it as the value too: `Invalid value: "string": ...`). */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(type: string, v: unknown): boolean {
  switch (type) {
    case 'object': return isObj(v);
    case 'array': return Array.isArray(v);
    case 'string': return typeof v === 'string';
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'number': return typeof v === 'number';
    case 'boolean': return typeof v === 'boolean';
    default: return true;
  }
}

const regexCache = new Map<string, RegExp | null>();
function compilePattern(p: string): RegExp | null {
  if (!regexCache.has(p)) {
    let r: RegExp | null = null;
    try { r = new RegExp(p, 'u'); } catch { r = null; }
    regexCache.set(p, r);
  }
  return regexCache.get(p)!;
}

const join = (path: string, k: string): string => (path ? `${path}.${k}` : k);

const BLOCKING = new Set<string>([CauseTypes.FieldValueNotSupported, CauseTypes.FieldValueRequired, CauseTypes.FieldValueTooLong, CauseTypes.FieldValueTooMany, CauseTypes.FieldValueTypeInvalid]);

/**
 * Structural validation, then `between` (errors the caller found meanwhile: kube-apiserver checks
 * the scale paths there), then the CEL rules, which (as in kube-apiserver) are not evaluated when a
 * blocking error (wrong type, missing required field, unsupported enum value, too long, too many)
 * was found: a single cause says so instead, where the schema has rules at all.
 */
export function validate(value: unknown, c: CompiledSchema, old: unknown, between: readonly FieldError[] = []): FieldError[] {
  const errs: FieldError[] = [];
  check(value, c.schema, '', old, errs, c.rules, true, 'schema');
  errs.push(...between);
  if (!c.hasRules) return errs;
  if (errs.some((e) => BLOCKING.has(e.type))) {
    errs.push({ type: CauseTypes.FieldValueInvalid, field: '<nil>', value: null, detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' });
    return errs;
  }
  check(value, c.schema, '', old, errs, c.rules, true, 'cel');
  return errs;
}

function check(v: unknown, s: Schema, path: string, old: unknown, out: FieldError[], rules: WeakMap<Schema, CompiledRule[]>, root = false, mode: 'schema' | 'cel' = 'schema'): void {
  const display = path || '<root>';
  // Structural errors go to `out` in the schema pass; the CEL pass reports only rule failures.
  const errs: FieldError[] = mode === 'schema' ? out : [];
  if (v === null) {
    if (!s.nullable && s.type && !s['x-kubernetes-int-or-string']) errs.push({ type: CauseTypes.FieldValueTypeInvalid, field: path, value: 'null', detail: `${display} in body must be of type ${s.type}: "null"` });
    return;
  }
  if (s['x-kubernetes-int-or-string']) {
    if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))))
      errs.push({ type: CauseTypes.FieldValueTypeInvalid, field: path, value: jsonType(v), detail: `${display} in body must be of type integer,string: "${jsonType(v)}"` });
  } else if (s.type && !typeMatches(s.type, v)) {
    errs.push({ type: CauseTypes.FieldValueTypeInvalid, field: path, value: jsonType(v), detail: `${display} in body must be of type ${s.type}: "${jsonType(v)}"` });
    return;
  }
  if (s.enum && !s.enum.some((e) => deepEqual(e, v))) {
    errs.push({ type: CauseTypes.FieldValueNotSupported, field: path, value: v, detail: `supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  }
  if (typeof v === 'string') {
    const len = [...v].length;
    if (s.maxLength !== undefined && len > s.maxLength) errs.push({ type: CauseTypes.FieldValueTooLong, field: path, value: v, hasValue: false, detail: `may not be more than ${s.maxLength} bytes` });
    if (s.minLength !== undefined && len < s.minLength) errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body should be at least ${s.minLength} chars long` });
    if (s.pattern !== undefined) {
      const r = compilePattern(s.pattern);
      if (r && !r.test(v)) errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body should match '${s.pattern}'` });
    }
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
      errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}` });
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
      errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}` });
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems) errs.push({ type: CauseTypes.FieldValueTooMany, field: path, value: v.length, detail: `must have at most ${s.maxItems} items` });
    if (s.minItems !== undefined && v.length < s.minItems) errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body should have at least ${s.minItems} items` });
    const lt = s['x-kubernetes-list-type'];
    if (lt === 'set') {
      v.forEach((x, i) => { if (v.findIndex((y) => deepEqual(x, y)) < i) errs.push({ type: CauseTypes.FieldValueDuplicate, field: `${path}[${i}]`, value: x }); });
    } else if (lt === 'map' && s['x-kubernetes-list-map-keys']) {
      const keys = s['x-kubernetes-list-map-keys'];
      const seen: unknown[][] = [];
      v.forEach((x, i) => {
        const k = keys.map((key) => (isObj(x) ? x[key] : undefined));
        if (seen.some((o) => deepEqual(o, k))) errs.push({ type: CauseTypes.FieldValueDuplicate, field: `${path}[${i}]`, value: Object.fromEntries(keys.map((key, j) => [key, k[j]])) });
        seen.push(k);
      });
    }
    if (s.items) v.forEach((x, i) => check(x, s.items!, `${path}[${i}]`, undefined, out, rules, false, mode));
  }
  if (isObj(v)) {
    for (const r of s.required ?? []) {
      if (v[r] === undefined) errs.push({ type: CauseTypes.FieldValueRequired, field: join(path, r) });
    }
    const n = Object.keys(v).length;
    if (s.maxProperties !== undefined && n > s.maxProperties) errs.push({ type: CauseTypes.FieldValueTooMany, field: path, value: n, detail: `must have at most ${s.maxProperties} items` });
    if (s.minProperties !== undefined && n < s.minProperties) errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: n, detail: `${display} in body should have at least ${s.minProperties} properties` });
    const oldObj = isObj(old) ? old : undefined;
    for (const [k, x] of Object.entries(v)) {
      if (root && k === 'metadata') continue;
      const ps = s.properties?.[k] ?? (isObj(s.additionalProperties) ? (s.additionalProperties as Schema) : undefined);
      if (ps && x !== undefined) check(x, ps, join(path, k), oldObj?.[k], out, rules, false, mode);
    }
  }
  for (const sub of s.allOf ?? []) check(v, { ...sub, 'x-kubernetes-validations': undefined }, path, old, errs, rules);
  if (s.anyOf && !s['x-kubernetes-int-or-string'] && !s.anyOf.some((sub) => shapeMatches(v, sub)))
    errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body must match at least one schema in anyOf` });
  if (s.oneOf && s.oneOf.filter((sub) => shapeMatches(v, sub)).length !== 1)
    errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body must match exactly one schema in oneOf` });
  if (s.not && shapeMatches(v, s.not))
    errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: `${display} in body must not validate the schema (not)` });
  const compiled = mode === 'cel' ? rules.get(s) : undefined;
  if (compiled) {
    for (const cr of compiled) {
      if (cr.program.usesOldSelf && old === undefined) continue;
      const field = cr.rule.fieldPath ? path + cr.rule.fieldPath : path;
      const type = (cr.rule.reason as FieldError['type'] | undefined) ?? CauseTypes.FieldValueInvalid;
      const reason = ({ FieldValueRequired: CauseTypes.FieldValueRequired, FieldValueForbidden: CauseTypes.FieldValueForbidden, FieldValueDuplicate: CauseTypes.FieldValueDuplicate } as Record<string, FieldError['type']>)[type] ?? CauseTypes.FieldValueInvalid;
      let ok: unknown;
      try {
        ok = cr.program.eval({ self: v, oldSelf: old });
      } catch (e) {
        out.push({ type: CauseTypes.FieldValueInvalid, field, hasValue: false, detail: `${cr.rule.rule}: evaluation error: ${(e as Error).message}` });
        continue;
      }
      if (ok !== true) {
        let message = cr.rule.message ?? `failed rule: ${cr.rule.rule}`;
        if (cr.message) {
          try {
            const m = cr.message.eval({ self: v, oldSelf: old });
            if (typeof m === 'string' && m !== '') message = m;
          } catch { /* fall back to message */ }
        }
        // kube-apiserver ≥ 1.3x leaves the value out of a rule's failure (`spec: Invalid value: <message>`).
        out.push({ type: reason, field, hasValue: false, detail: message });
      }
    }
  }
}

/** Whether a value satisfies a schema's shape (used for anyOf/oneOf/not, as structural checks). */
function shapeMatches(v: unknown, s: Schema): boolean {
  const errs: FieldError[] = [];
  check(v, { ...s, 'x-kubernetes-validations': undefined }, '', undefined, errs, new WeakMap());
  return errs.length === 0;
}
