// What kube-apiserver checks of a CRD's OpenAPI schema before it accepts the CRD, beyond compiling
// its CEL rules (schema-validation.ts): that the schema is structural (every field typed, every list
// with items; k8s.io/apiextensions-apiserver pkg/apiserver/schema/validation.go), and — where it is —
// the static checks of its rules: each field a rule selects is declared, and the rules' estimated
// costs (cel-cost.ts, the model of the kube-apiserver release the suite runs against) are within
// the per-rule and per-CRD budgets (pkg/apis/apiextensions/validation).
import { CelCostError, CostModels, crdRuleCosts, estimateRuleCost, schemaDeclType, StaticEstimatedCostLimit, StaticEstimatedCRDCostLimit, type JSONSchemaProps } from './cel-cost.ts';
import { CauseTypes, fieldErrorMessage, type FieldError } from './errors.ts';
import type { Schema } from './schema-validation.ts';

type Level = 'root' | 'item' | 'field';
const EMPTY_TYPE: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The structural-schema errors of `schema` (at `at`), in kube-apiserver's order (sorted by their text). */
export function structuralErrors(schema: Schema, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const walk = (s: Schema, path: string, level: Level): void => {
    if (!isObj(s)) return;
    if (s.type === 'array' && !s.items) errs.push({ type: CauseTypes.FieldValueRequired, field: `${path}.items`, detail: 'must be specified' });
    if (s.items) walk(s.items, `${path}.items`, 'item');
    for (const [k, p] of Object.entries(s.properties ?? {})) walk(p, `${path}.properties[${k}]`, 'field');
    if (isObj(s.additionalProperties)) walk(s.additionalProperties as Schema, `${path}.additionalProperties`, 'field');
    if (level === 'root' && s.additionalProperties !== undefined) errs.push({ type: CauseTypes.FieldValueForbidden, field: `${path}.additionalProperties`, detail: 'must not be used at the root' });
    if (s['x-kubernetes-embedded-resource'] && s.type !== 'object') {
      errs.push(s.type ? { type: CauseTypes.FieldValueInvalid, field: `${path}.type`, value: s.type, detail: 'must be object if x-kubernetes-embedded-resource is true' } : { type: CauseTypes.FieldValueRequired, field: `${path}.type`, detail: 'must be object if x-kubernetes-embedded-resource is true' });
    } else if (!s.type && !s['x-kubernetes-int-or-string'] && !s['x-kubernetes-preserve-unknown-fields']) {
      errs.push({ type: CauseTypes.FieldValueRequired, field: `${path}.type`, detail: EMPTY_TYPE[level] });
    }
    if (level === 'root' && s.type && s.type !== 'object') errs.push({ type: CauseTypes.FieldValueInvalid, field: `${path}.type`, value: s.type, detail: 'must be object at the root' });
  };
  walk(schema, at, 'root');
  const text = (e: FieldError): string => `${e.field}: ${fieldErrorMessage(e)}`;
  return errs.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

/** Which cost estimate the embedded server applies: the release its conformance suite runs against. */
const MODEL = CostModels.kube136;

/** getCostErrorMessage: how far over its budget an estimate is. */
function overBudget(what: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/**
 * The static checks of the (compiled) rules of a structural schema at `at`: a field a rule selects
 * that the schema does not declare fails compilation; then the cost budgets. The estimate is
 * kube-apiserver's for the CEL it models; a rule outside that (a function without a cost model)
 * is not estimated here, so the CRD is not refused for it.
 */
export function celStaticErrors(schema: Schema, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const walk = (s: Schema, path: string, root: boolean): void => {
    if (!isObj(s)) return;
    const rules = Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : [];
    const decl = rules.length ? schemaDeclType(s as JSONSchemaProps, MODEL, root || s['x-kubernetes-embedded-resource'] === true) : undefined;
    rules.forEach((r, i) => {
      if (!decl) return;
      try {
        estimateRuleCost(r.rule, decl, MODEL);
      } catch (e) {
        const undeclared = e instanceof CelCostError ? /: no field (\S+)/.exec(e.message) : null;
        if (undeclared) errs.push({ type: CauseTypes.FieldValueInvalid, field: `${path}.x-kubernetes-validations[${i}].rule`, value: r.rule, detail: `compilation failed: undefined field '${undeclared[1]}'` });
        else if (!(e instanceof CelCostError)) throw e;
      }
    });
    for (const [k, p] of Object.entries(s.properties ?? {})) walk(p, `${path}.properties[${k}]`, false);
    if (s.items) walk(s.items, `${path}.items`, false);
    if (isObj(s.additionalProperties)) walk(s.additionalProperties as Schema, `${path}.additionalProperties`, false);
  };
  walk(schema, at, true);
  if (errs.length) return errs;

  let costs: ReturnType<typeof crdRuleCosts>;
  try {
    costs = crdRuleCosts(schema as JSONSchemaProps, MODEL);
  } catch (e) {
    if (e instanceof CelCostError) return [];
    throw e;
  }
  const field = (f: string): string => at + f.slice('openAPIV3Schema'.length);
  for (const r of costs.rules) {
    if (r.total > StaticEstimatedCostLimit) errs.push({ type: CauseTypes.FieldValueForbidden, field: field(r.field), detail: overBudget('estimated rule cost', r.total, StaticEstimatedCostLimit) });
  }
  if (costs.total > StaticEstimatedCRDCostLimit) {
    // The (at most four) costliest rules that make up at least 1% of the limit each.
    const worst = costs.rules.filter((r) => r.total >= StaticEstimatedCRDCostLimit / 100).sort((a, b) => b.total - a.total).slice(0, 4);
    for (const r of worst) errs.push({ type: CauseTypes.FieldValueForbidden, field: field(r.field), detail: 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema' });
    errs.push({ type: CauseTypes.FieldValueForbidden, field: at, detail: overBudget('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', costs.total, StaticEstimatedCRDCostLimit) });
  }
  return errs;
}
