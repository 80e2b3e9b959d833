// Label and field selectors, parsed as kube-apiserver parses `labelSelector=` and `fieldSelector=`.
// Label: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma-joined (AND).
// Field: `path=value`, `path==value`, `path!=value`, comma-joined; the path must be one the resource
// supports (checked by the caller through `fieldValue`).

export type LabelRequirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | '!' };

export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(k: string, whole: string): string {
  if (!LABEL_KEY.test(k)) throw new SelectorError(`unable to parse requirement: invalid label key "${k}" in selector "${whole}"`);
  return k;
}
function checkValue(v: string, whole: string): string {
  if (v.length > 63 || !LABEL_VALUE.test(v)) throw new SelectorError(`unable to parse requirement: invalid label value: "${v}" in selector "${whole}"`);
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

export function parseLabelSelector(input: string): LabelRequirement[] {
  const reqs: LabelRequirement[] = [];
  for (const term of splitTerms(input)) {
    let m: RegExpMatchArray | null;
    if ((m = term.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const values = m[3]!.split(',').map((v) => v.trim());
      reqs.push({ key: checkKey(m[1]!, input), op: m[2] as 'in' | 'notin', values: values.filter((v) => v !== '' || values.length === 1).map((v) => checkValue(v, input)) });
    } else if ((m = term.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const key = checkKey(m[1]!, input);
      const value = checkValue(m[3]!, input);
      reqs.push({ key, op: m[2] === '!=' ? 'notin' : 'in', values: [value] });
    } else if ((m = term.match(/^!\s*(\S+)$/))) {
      reqs.push({ key: checkKey(m[1]!, input), op: '!' });
    } else if ((m = term.match(/^(\S+)$/))) {
      reqs.push({ key: checkKey(m[1]!, input), op: 'exists' });
    } else {
      throw new SelectorError(`unable to parse requirement: found '${term}', expected: identifier, !, in, notin, =, ==, !=`);
    }
  }
  return reqs;
}

export function matchesLabels(reqs: readonly LabelRequirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const r of reqs) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.op) {
      case 'exists': if (!has) return false; break;
      case '!': if (has) return false; break;
      case 'in': if (!has || !r.values.includes(labels[r.key]!)) return false; break;
      case 'notin': if (has && r.values.includes(labels[r.key]!)) return false; break;
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Field selector values may escape `\,` `\=` `\\`. */
export function parseFieldSelector(input: string): FieldRequirement[] {
  const reqs: FieldRequirement[] = [];
  const terms: string[] = [];
  let cur = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i]!;
    if (ch === '\\' && i + 1 < input.length) { cur += ch + input[++i]; continue; }
    if (ch === ',') { terms.push(cur); cur = ''; continue; }
    cur += ch;
  }
  terms.push(cur);
  for (const raw of terms) {
    const term = raw.trim();
    if (term === '') continue;
    const m = term.match(/^([^=!]+?)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw new SelectorError(`invalid selector: '${term}'; can't understand '${term}'`);
    reqs.push({ field: m[1]!.trim(), op: m[2] === '!=' ? '!=' : '=', value: m[3]!.replace(/\\(.)/g, '$1') });
  }
  return reqs;
}

/** The string value of a selectable field of an object, or undefined when the field is not selectable. */
export type FieldGetter = (obj: Record<string, unknown>, field: string) => string | undefined;

export function matchesFields(reqs: readonly FieldRequirement[], obj: Record<string, unknown>, get: FieldGetter): boolean {
  for (const r of reqs) {
    const v = get(obj, r.field) ?? '';
    if (r.op === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

/** Builds `a=b,c=d` from a label map (for printing and for scale's `selector`). */
export function formatLabelSelector(sel: unknown): string {
  if (!sel || typeof sel !== 'object') return '';
  const s = sel as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const parts: string[] = [];
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    const op = e.operator.toLowerCase();
    if (op === 'in' || op === 'notin') parts.push(`${e.key} ${op} (${(e.values ?? []).join(',')})`);
    else if (op === 'exists') parts.push(e.key);
    else if (op === 'doesnotexist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}
