// Field selectors, parsed as kube-apiserver parses `fieldSelector=`: `path=value`, `path==value`,
// `path!=value`, comma-joined; the path must be one the resource supports (checked by the caller
// through `fieldValue`). Label selectors are `src/api/label-selector.ts`.

export class FieldSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldSelectorError';
  }
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
    if (!m) throw new FieldSelectorError(`invalid selector: '${term}'; can't understand '${term}'`);
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
