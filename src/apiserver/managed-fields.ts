// Field ownership (`metadata.managedFields`) as server-side apply keeps it, simplified: maps are
// walked, lists and scalars are owned whole (a list is one field).
//   - apply (manager M, configuration C): a field of C another manager owns with a different value
//     is a conflict — 409 naming each, unless `force`, which takes it from them; the same value is
//     owned jointly. Fields M applied before and no longer does go, unless someone else owns them.
//   - update (create, PUT, merge/JSON/strategic patch): the fields it changes become the updater's
//     (operation Update), taken from everyone else.
// The updater is the request's `fieldManager`, else its User-Agent up to the first '/'.
import { ApiError, StatusReasons } from './errors.ts';
import { appliedFieldPaths, deepEqual, fromFieldsV1, removePath, toFieldsV1, type Json } from './patch.ts';
import { metaOf, type Obj } from './store.ts';

type Mutable = Record<string, unknown>;
type Path = readonly string[];
const isObj = (v: unknown): v is Mutable => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Json;
  subresource?: string;
}

/** metadata an update does not own (identity and what the server sets). */
const UNOWNED_METADATA = new Set(['name', 'namespace', 'generateName', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink']);

const pathKey = (p: Path): string => p.join('\u0000');
const overlaps = (a: Path, b: Path): boolean => (a.length <= b.length ? a.every((s, i) => b[i] === s) : b.every((s, i) => a[i] === s));

function valueAt(o: unknown, p: Path): unknown {
  let cur = o;
  for (const s of p) {
    if (!isObj(cur)) return undefined;
    cur = cur[s];
  }
  return cur;
}

export function entriesOf(o: Obj | undefined): ManagedFieldsEntry[] {
  const mf = o ? metaOf(o).managedFields : undefined;
  return Array.isArray(mf) ? mf.filter((e): e is ManagedFieldsEntry => isObj(e) && typeof e.manager === 'string') : [];
}

const sameManager = (e: ManagedFieldsEntry, manager: string, operation: string, subresource: string | undefined): boolean =>
  e.manager === manager && e.operation === operation && (e.subresource ?? undefined) === subresource;

/** How kube-apiserver names a manager in a conflict (`"alice"`, `"carol" using v1`). */
function printManager(e: ManagedFieldsEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  return e.operation === 'Update' ? `${s} using ${e.apiVersion}` : s;
}

const printPath = (p: Path): string => p.map((s) => `.${s}`).join('');

/** 409 Conflict listing each field another manager owns, as kube-apiserver words it. */
export function applyConflict(conflicts: readonly { manager: string; path: string }[]): ApiError {
  let message: string;
  if (conflicts.length === 1) message = `Apply failed with 1 conflict: conflict with ${conflicts[0]!.manager}: ${conflicts[0]!.path}`;
  else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.path]);
    const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${m}:`, ...byManager.get(m)!.map((p) => `- ${p}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, StatusReasons.Conflict, message, { causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.manager}`, field: c.path })) });
}

const entry = (manager: string, operation: 'Apply' | 'Update', apiVersion: string, time: string, paths: readonly Path[], subresource?: string): ManagedFieldsEntry =>
  ({ manager, operation, apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(paths.map((p) => [...p])), ...(subresource ? { subresource } : {}) });

/** `e` without the fields `drop` says to drop; undefined when it owns nothing any more. */
function without(e: ManagedFieldsEntry, drop: (q: Path) => boolean): ManagedFieldsEntry | undefined {
  const paths = fromFieldsV1(e.fieldsV1);
  const left = paths.filter((q) => !drop(q));
  if (left.length === paths.length) return e;
  return left.length ? { ...e, fieldsV1: toFieldsV1(left) } : undefined;
}

/**
 * Ownership after `manager` applied `config` to `current` (undefined: the apply creates it), giving
 * `patched`: throws the 409 for conflicts unless `force`; writes `patched.metadata.managedFields`
 * and removes what the manager no longer applies and nobody else owns.
 */
export function applyOwnership(patched: Mutable, current: Obj | undefined, config: Mutable, manager: string, apiVersion: string, force: boolean, now: string): void {
  const entries = entriesOf(current);
  const mine = entries.find((e) => sameManager(e, manager, 'Apply', undefined));
  const applied = appliedFieldPaths(config as Json);
  // Each other manager's entry as it stays (undefined: it owns nothing any more).
  const others = new Map<ManagedFieldsEntry, ManagedFieldsEntry | undefined>(entries.filter((e) => e !== mine).map((e) => [e, e]));
  if (current) {
    const conflicts: { entry: ManagedFieldsEntry; path: Path }[] = [];
    for (const e of others.keys()) {
      for (const p of applied) {
        if (deepEqual(valueAt(current, p), valueAt(config, p))) continue;
        if (fromFieldsV1(e.fieldsV1).some((q) => overlaps(p, q))) conflicts.push({ entry: e, path: p });
      }
    }
    if (conflicts.length && !force) throw applyConflict(conflicts.map((c) => ({ manager: printManager(c.entry), path: printPath(c.path) })));
    for (const e of others.keys()) {
      const taken = conflicts.filter((c) => c.entry === e).map((c) => c.path);
      if (taken.length) others.set(e, without(e, (q) => taken.some((p) => overlaps(p, q))));
    }
  }
  const kept = [...others.values()].filter((e) => e !== undefined);
  const keep = new Set([...applied, ...kept.flatMap((e) => fromFieldsV1(e.fieldsV1))].map(pathKey));
  for (const p of fromFieldsV1(mine?.fieldsV1)) {
    if (!keep.has(pathKey(p)) && !keep.has(pathKey(p.slice(0, -1)))) removePath(patched as { [k: string]: Json }, p);
  }
  const fieldsV1 = toFieldsV1(applied);
  const time = mine && deepEqual(mine.fieldsV1, fieldsV1) && mine.apiVersion === apiVersion ? mine.time : now;
  const next = entry(manager, 'Apply', apiVersion, time, applied);
  const m = (isObj(patched.metadata) ? patched.metadata : (patched.metadata = {})) as Mutable;
  m.managedFields = sorted([...entries.map((e) => (e === mine ? next : others.get(e))), ...(mine ? [] : [next])].filter((e) => e !== undefined));
}

/** In kube-apiserver's order: Apply before Update, then by time (seconds), manager, subresource. */
function sorted(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return entries.sort((a, b) => cmp(a.operation, b.operation) || cmp(a.time, b.time) || cmp(a.manager, b.manager) || cmp(a.subresource ?? '', b.subresource ?? ''));
}

/** Leaf paths (maps walked; lists and scalars whole) whose values differ between two objects. */
function changedPaths(prev: unknown, next: unknown, prefix: string[] = []): Path[] {
  if (isObj(prev) && isObj(next)) {
    const out: Path[] = [];
    for (const k of new Set([...Object.keys(prev), ...Object.keys(next)])) {
      if (prev[k] === undefined && next[k] === undefined) continue;
      out.push(...changedPaths(prev[k], next[k], [...prefix, k]));
    }
    return out;
  }
  return deepEqual(prev, next) ? [] : [prefix];
}

/** The fields of an object an update can own: not its type, identity or server-set metadata. */
function ownable(o: Obj | undefined, statusToo: boolean): Mutable {
  const { apiVersion: _a, kind: _k, metadata, status, ...rest } = (o ?? {}) as Mutable;
  const meta = Object.fromEntries(Object.entries(isObj(metadata) ? metadata : {}).filter(([k]) => !UNOWNED_METADATA.has(k)));
  return { ...rest, ...(Object.keys(meta).length ? { metadata: meta } : {}), ...(statusToo && status !== undefined ? { status } : {}) };
}

/**
 * Ownership after an update by `manager` turned `prev` (undefined: a create) into `next`: the
 * changed fields become the manager's Update entry (for `subresource`, if any), and nobody else's.
 * Writes `next.metadata.managedFields`; nothing when the update changed no owned field.
 */
export function updateOwnership(prev: Obj | undefined, next: Mutable, manager: string, apiVersion: string, subresource: string | undefined, now: string): void {
  const statusToo = subresource === 'status' || prev === undefined;
  const changed = changedPaths(ownable(prev, statusToo), ownable(next as Obj, statusToo));
  if (!changed.length) return;
  const present = changed.filter((p) => valueAt(next, p) !== undefined);
  const entries = entriesOf(prev);
  const mine = entries.find((e) => sameManager(e, manager, 'Update', subresource));
  const out: ManagedFieldsEntry[] = [];
  let placed = false;
  for (const e of entries) {
    if (e === mine) {
      const kept = fromFieldsV1(e.fieldsV1).filter((q) => !changed.some((p) => overlaps(p, q)));
      const paths = [...kept, ...present];
      if (paths.length) out.push(entry(manager, 'Update', apiVersion, now, paths, subresource));
      placed = true;
      continue;
    }
    const left = without(e, (q) => changed.some((p) => overlaps(p, q)));
    if (left) out.push(left);
  }
  if (!placed && present.length) out.push(entry(manager, 'Update', apiVersion, now, present, subresource));
  const m = (isObj(next.metadata) ? next.metadata : (next.metadata = {})) as Mutable;
  if (out.length) m.managedFields = sorted(out);
  else delete m.managedFields;
}

/** The manager of an update without `fieldManager`: the User-Agent up to its first '/', as kube-apiserver names it. */
export const managerOfUserAgent = (userAgent: string | undefined): string => (userAgent ?? '').split('/')[0]!.slice(0, 128);
