// metav1.LabelSelector as apimachinery evaluates it (LabelSelectorAsSelector): matchLabels are
// equality requirements, matchExpressions In/NotIn/Exists/DoesNotExist; all must hold. The string
// form is Selector.String(): requirements sorted by key, values sorted, e.g.
// `kubevirt.io/vmReplicaSet=foo,tier in (a,b),!legacy` — what `status.labelSelector` carries.
import type { LabelSelector } from '../src/api/types.ts';

type Op = 'Equals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
interface Requirement {
  readonly key: string;
  readonly op: Op;
  readonly values: readonly string[];
}

export class InvalidLabelSelectorError extends Error {
  override name = 'InvalidLabelSelectorError';
  constructor(field: string, why: string) {
    super(`invalid label selector: ${field}: ${why}`);
  }
}

export interface CompiledSelector {
  /** `labels.Nothing()` for a nil selector: matches no object. */
  readonly nothing: boolean;
  readonly requirements: readonly Requirement[];
}

/** `LabelSelectorAsSelector`; throws InvalidLabelSelectorError naming the bad expression. */
export function compileLabelSelector(sel: LabelSelector | undefined | null): CompiledSelector {
  if (sel === undefined || sel === null) return { nothing: true, requirements: [] };
  const reqs: Requirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) reqs.push({ key, op: 'Equals', values: [value] });
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const field = `matchExpressions[${i}]`;
    const values = [...(e.values ?? [])].sort();
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) throw new InvalidLabelSelectorError(field, `operator ${e.operator} needs at least one value`);
        reqs.push({ key: e.key, op: e.operator, values });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) throw new InvalidLabelSelectorError(field, `operator ${e.operator} takes no values`);
        reqs.push({ key: e.key, op: e.operator, values: [] });
        break;
      default:
        throw new InvalidLabelSelectorError(field, `operator ${JSON.stringify(e.operator)} is not one of In, NotIn, Exists, DoesNotExist`);
    }
  });
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { nothing: false, requirements: reqs };
}

export function selectorMatches(sel: CompiledSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (sel.nothing) return false;
  for (const r of sel.requirements) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key]! : undefined;
    switch (r.op) {
      case 'Equals':
      case 'In':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'NotIn':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** `Selector.String()`. */
export function selectorString(sel: CompiledSelector): string {
  return sel.requirements
    .map((r) => {
      switch (r.op) {
        case 'Equals':
          return `${r.key}=${r.values[0]}`;
        case 'In':
          return `${r.key} in (${r.values.join(',')})`;
        case 'NotIn':
          return `${r.key} notin (${r.values.join(',')})`;
        case 'Exists':
          return r.key;
        case 'DoesNotExist':
          return `!${r.key}`;
      }
    })
    .join(',');
}
