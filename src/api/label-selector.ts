/**
 * Label selectors, once for the whole house: the `metav1.LabelSelector` API type, its conversion to
 * a `labels.Selector` (`metav1.LabelSelectorAsSelector`) with apimachinery's refusals, the string
 * form both ways (`labels.Parse`, as kube-apiserver reads `?labelSelector=`, and `Selector.String()`,
 * what `status.labelSelector` carries), and matching. Used by the admitters, the controllers and the
 * embedded API server. Pure.
 *
 * A `Selector` holds its requirements sorted by key, as apimachinery's `internalSelector` does:
 * `kubevirt.io/vmReplicaSet=foo,tier in (a,b),!legacy`. A nil `LabelSelector` is `labels.Nothing()`
 * (matches no object), an empty one `labels.Everything()`.
 */
import { fieldError, type FieldError, type FieldPath } from './field-error.ts';
import { LABEL_VALUE, QUALIFIED_NAME } from './validation/formats.ts';

// ------------------------------------------------------------------------------------------------
// metav1.LabelSelector
// ------------------------------------------------------------------------------------------------

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

// ------------------------------------------------------------------------------------------------
// labels.Selector
// ------------------------------------------------------------------------------------------------

/** `selection.Operator` (the ones a label selector uses). */
export type SelectorOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!';

/** `labels.Requirement`. */
export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

/** `labels.Selector`. */
export interface Selector {
  /** `labels.Nothing()`: matches no object. */
  readonly nothing: boolean;
  /** Sorted by key; none: everything matches. */
  readonly requirements: readonly Requirement[];
}

/** A selector apimachinery refuses; `reason` is its error text, `at` where in the selector (empty for the string form). */
export class InvalidLabelSelectorError extends Error {
  override name = 'InvalidLabelSelectorError';
  readonly at: string;
  readonly reason: string;
  constructor(at: string, reason: string) {
    super(at ? `${at}: ${reason}` : reason);
    this.at = at;
    this.reason = reason;
  }
}

const EXPRESSION_OPERATORS: Readonly<Record<LabelSelectorOperator, SelectorOperator>> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

const byKey = (a: Requirement, b: Requirement): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** `metav1.LabelSelectorAsSelector`; throws InvalidLabelSelectorError with apimachinery's reason. */
export function labelSelectorAsSelector(sel: LabelSelector | undefined | null): Selector {
  if (sel === undefined || sel === null) return { nothing: true, requirements: [] };
  const reqs: Requirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) reqs.push({ key, operator: '=', values: [value] });
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const at = `matchExpressions[${i}]`;
    const operator = Object.hasOwn(EXPRESSION_OPERATORS, e.operator) ? EXPRESSION_OPERATORS[e.operator] : undefined;
    if (operator === undefined) throw new InvalidLabelSelectorError(at, `${JSON.stringify(e.operator)} is not a valid label selector operator`);
    const values = [...(e.values ?? [])];
    if ((operator === 'in' || operator === 'notin') && values.length === 0) {
      throw new InvalidLabelSelectorError(at, `values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty`);
    }
    if ((operator === 'exists' || operator === '!') && values.length > 0) {
      throw new InvalidLabelSelectorError(at, `values: Invalid value: ${JSON.stringify(values)}: values set must be empty for exists and does not exist`);
    }
    reqs.push({ key: e.key, operator, values });
  });
  return { nothing: false, requirements: reqs.sort(byKey) };
}

/**
 * The cause KubeVirt's admitters report for a selector `LabelSelectorAsSelector` refuses: Invalid
 * at the selector's path, apimachinery's error as the message.
 */
export function validateLabelSelector(sel: LabelSelector | undefined | null, path: FieldPath | string): FieldError[] {
  try {
    labelSelectorAsSelector(sel);
    return [];
  } catch (e) {
    if (!(e instanceof InvalidLabelSelectorError)) throw e;
    return [fieldError.invalid(path, e.reason)];
  }
}

/** `Selector.Matches(labels.Set(labels))`. */
export function selectorMatches(sel: Selector, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (sel.nothing) return false;
  for (const r of sel.requirements) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    switch (r.operator) {
      case '=':
      case '==':
      case 'in':
        if (!has || !r.values.includes(labels[r.key]!)) return false;
        break;
      case '!=':
      case 'notin':
        if (has && r.values.includes(labels[r.key]!)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** Does `selector` select `labels` (`LabelSelectorAsSelector(selector).Matches(labels)`)? Throws InvalidLabelSelectorError. */
export function labelSelectorMatches(selector: LabelSelector | undefined | null, labels: Readonly<Record<string, string>> | undefined): boolean {
  return selectorMatches(labelSelectorAsSelector(selector), labels ?? {});
}

// ------------------------------------------------------------------------------------------------
// The string form
// ------------------------------------------------------------------------------------------------

/** `Selector.String()`: requirements by key, `in`/`notin` values sorted. */
export function selectorString(sel: Selector): string {
  return sel.requirements
    .map((r) => {
      switch (r.operator) {
        case '=':
        case '==':
        case '!=':
          return `${r.key}${r.operator}${r.values[0]}`;
        case 'in':
        case 'notin':
          return `${r.key} ${r.operator} (${[...r.values].sort().join(',')})`;
        case 'exists':
          return r.key;
        case '!':
          return `!${r.key}`;
      }
    })
    .join(',');
}

function checkKey(k: string, whole: string): string {
  if (!QUALIFIED_NAME.test(k)) throw new InvalidLabelSelectorError('', `unable to parse requirement: invalid label key "${k}" in selector "${whole}"`);
  return k;
}
function checkValue(v: string, whole: string): string {
  if (v.length > 63 || !LABEL_VALUE.test(v)) throw new InvalidLabelSelectorError('', `unable to parse requirement: invalid label value: "${v}" in selector "${whole}"`);
  return v;
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t !== '');
}

/**
 * `labels.Parse`, as kube-apiserver reads `labelSelector=`: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, comma-joined (AND). Throws InvalidLabelSelectorError.
 */
export function parseLabelSelector(input: string): Selector {
  const reqs: Requirement[] = [];
  for (const term of splitTerms(input)) {
    let m: RegExpMatchArray | null;
    if ((m = term.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const values = m[3]!.split(',').map((v) => v.trim());
      reqs.push({ key: checkKey(m[1]!, input), operator: m[2] as 'in' | 'notin', values: values.filter((v) => v !== '' || values.length === 1).map((v) => checkValue(v, input)) });
    } else if ((m = term.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const key = checkKey(m[1]!, input);
      reqs.push({ key, operator: m[2] as '=' | '==' | '!=', values: [checkValue(m[3]!, input)] });
    } else if ((m = term.match(/^!\s*(\S+)$/))) {
      reqs.push({ key: checkKey(m[1]!, input), operator: '!', values: [] });
    } else if ((m = term.match(/^(\S+)$/))) {
      reqs.push({ key: checkKey(m[1]!, input), operator: 'exists', values: [] });
    } else {
      throw new InvalidLabelSelectorError('', `unable to parse requirement: found '${term}', expected: identifier, !, in, notin, =, ==, !=`);
    }
  }
  return { nothing: false, requirements: reqs.sort(byKey) };
}
