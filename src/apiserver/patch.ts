// The four PATCH content types kube-apiserver accepts, as pure functions on JSON values:
//   application/merge-patch+json          RFC 7386
//   application/json-patch+json           RFC 6902 (add, remove, replace, move, copy, test)
//   application/strategic-merge-patch+json  built-in kinds: lists merged by their merge keys
//   application/apply-patch+yaml          server-side apply, approximated as a strategic merge
//                                          (built-in kinds) or a merge patch (custom resources)
//                                          that never deletes fields

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

export const PatchTypes = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = (typeof PatchTypes)[keyof typeof PatchTypes];

export class PatchError extends Error {
  /** 422 for a failed `test` or impossible path as kube-apiserver answers; 400 for malformed patches. */
  readonly code: number;
  constructor(message: string, code = 422) {
    super(message);
    this.name = 'PatchError';
    this.code = code;
  }
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && deepEqual(ao[k], bo[k]));
}

// ---------------------------------------------------------------- RFC 7386

export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// ---------------------------------------------------------------- RFC 6902

interface JsonPatchOp { op: string; path: string; from?: string; value?: Json }

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new PatchError(`invalid JSON pointer "${p}": must start with /`, 400);
  return p.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parent(doc: Json, tokens: string[], path: string): { container: JsonObject | Json[]; key: string } {
  let cur: Json = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)] as Json;
    else if (isObject(cur)) cur = cur[t] as Json;
    else cur = undefined as unknown as Json;
    if (cur === undefined || cur === null || typeof cur !== 'object') throw new PatchError(`doc is missing path: "${path}": missing value`);
  }
  if (cur === null || typeof cur !== 'object') throw new PatchError(`doc is missing path: "${path}": missing value`);
  return { container: cur, key: tokens[tokens.length - 1]! };
}

function getAt(doc: Json, path: string): Json | undefined {
  let cur: Json | undefined = doc;
  for (const t of parsePointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = Object.prototype.hasOwnProperty.call(cur, t) ? cur[t] : undefined;
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function arrayIndex(arr: Json[], key: string, path: string, forAdd: boolean): number {
  if (forAdd && key === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw new PatchError(`unable to access invalid index: ${key} in path "${path}"`);
  const i = Number(key);
  if (i > arr.length || (!forAdd && i >= arr.length)) throw new PatchError(`unable to access invalid index: ${i} in path "${path}"`);
  return i;
}

function addAt(doc: Json, path: string, value: Json): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return clone(value);
  const { container, key } = parent(doc, tokens, path);
  if (Array.isArray(container)) container.splice(arrayIndex(container, key, path, true), 0, clone(value));
  else container[key] = clone(value);
  return doc;
}

function removeAt(doc: Json, path: string): Json {
  const tokens = parsePointer(path);
  if (tokens.length === 0) throw new PatchError('cannot remove the whole document');
  const { container, key } = parent(doc, tokens, path);
  if (Array.isArray(container)) container.splice(arrayIndex(container, key, path, false), 1);
  else {
    if (!Object.prototype.hasOwnProperty.call(container, key)) throw new PatchError(`Unable to remove nonexistent key: ${key}: missing value`);
    delete container[key];
  }
  return doc;
}

export function jsonPatch(target: Json, ops: unknown): Json {
  if (!Array.isArray(ops)) throw new PatchError('json patch must be an array of operations', 400);
  let doc = clone(target);
  for (const raw of ops as unknown[]) {
    if (!isObject(raw as Json) || typeof (raw as JsonPatchOp).op !== 'string' || typeof (raw as JsonPatchOp).path !== 'string')
      throw new PatchError('json patch operation needs string "op" and "path"', 400);
    const op = raw as JsonPatchOp;
    switch (op.op) {
      case 'add':
        if (!('value' in op)) throw new PatchError(`missing value for add at ${op.path}`, 400);
        doc = addAt(doc, op.path, op.value as Json);
        break;
      case 'remove':
        doc = removeAt(doc, op.path);
        break;
      case 'replace': {
        if (getAt(doc, op.path) === undefined) throw new PatchError(`replace operation does not apply: doc is missing key: ${op.path}: missing value`);
        doc = removeAt(doc, op.path);
        doc = addAt(doc, op.path, op.value as Json);
        break;
      }
      case 'move': {
        const v = getAt(doc, op.from ?? '');
        if (v === undefined) throw new PatchError(`move operation does not apply: doc is missing from path: ${op.from}: missing value`);
        doc = removeAt(doc, op.from!);
        doc = addAt(doc, op.path, v);
        break;
      }
      case 'copy': {
        const v = getAt(doc, op.from ?? '');
        if (v === undefined) throw new PatchError(`copy operation does not apply: doc is missing from path: ${op.from}: missing value`);
        doc = addAt(doc, op.path, v);
        break;
      }
      case 'test': {
        const v = getAt(doc, op.path);
        if (!deepEqual(v ?? null, op.value ?? null) || (v === undefined && op.value !== null))
          throw new PatchError(`testing value ${op.path} failed: test failed`);
        break;
      }
      default:
        throw new PatchError(`Unexpected kind: ${op.op}`, 400);
    }
  }
  return doc;
}

// ---------------------------------------------------------------- strategic merge

/**
 * Merge keys of the built-in list fields qvirt touches (the `patchMergeKey` tags of k8s.io/api),
 * keyed by field name: the same field name has the same key wherever it occurs in those kinds.
 * Lists not named here are replaced wholesale, except `finalizers`, a merged set of strings.
 */
export const STRATEGIC_MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  env: 'name',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  addresses: 'type',
  taints: 'key',
  readinessGates: 'conditionType',
  secrets: 'name',
};
const PRIMITIVE_MERGE_LISTS = new Set(['finalizers']);

const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

/**
 * The order kube-apiserver gives a merged list (strategicpatch's normalizeElementOrder): the items
 * the patch names in the patch's order, the others in the object's, interleaved where the object
 * orders both — so an item new to the object comes before the object's items that follow.
 */
function patchOrder(merged: Json[], patch: Json[], orig: Json[], same: (a: Json, b: Json) => boolean): Json[] {
  const inPatch = (x: Json): number => patch.findIndex((p) => same(p, x));
  const right = merged.filter((x) => inPatch(x) >= 0).sort((a, b) => inPatch(a) - inPatch(b));
  const left = merged.filter((x) => inPatch(x) < 0);
  const at = (x: Json): number => orig.findIndex((o) => same(o, x));
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]!);
    else if (i >= left.length) out.push(right[j++]!);
    else {
      const li = at(left[i]!);
      const ri = at(right[j]!);
      out.push(li >= 0 && ri >= 0 && li < ri ? left[i++]! : right[j++]!);
    }
  }
  return out;
}

function strategicList(field: string, orig: Json[] | undefined, patch: Json[], retainDeletes: boolean): Json[] {
  const key = STRATEGIC_MERGE_KEYS[field];
  if (key === undefined) {
    if (PRIMITIVE_MERGE_LISTS.has(field)) {
      const out = [...(orig ?? [])];
      for (const v of patch) if (!out.some((o) => deepEqual(o, v))) out.push(clone(v));
      return retainDeletes ? out : patchOrder(out, patch, orig ?? [], deepEqual);
    }
    // A replace list may still carry `{$patch: replace}` markers; drop them.
    return patch.filter((p) => !(isObject(p) && p.$patch !== undefined)).map(clone);
  }
  if (patch.some((p) => isObject(p) && p.$patch === 'replace')) return patch.filter((p) => !(isObject(p) && p.$patch === 'replace')).map(clone);
  const out = [...(orig ?? [])];
  for (const item of patch) {
    if (!isObject(item)) { out.push(clone(item)); continue; }
    const idx = out.findIndex((o) => isObject(o) && deepEqual(o[key], item[key]));
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item, retainDeletes);
    else out.push(strategicMergePatch(undefined, item, retainDeletes));
  }
  if (retainDeletes) return out;
  const sameKey = (a: Json, b: Json): boolean => isObject(a) && isObject(b) && deepEqual(a[key], b[key]);
  return patchOrder(out, patch.filter((p) => !(isObject(p) && p.$patch === 'delete')), orig ?? [], sameKey);
}

/**
 * Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch): maps merge recursively, `null`
 * deletes, lists with a merge key merge item by item, `$patch: replace|delete`, `$retainKeys`,
 * `$deleteFromPrimitiveList/<f>` and `$setElementOrder/<f>` (order hints, honoured for primitive lists).
 * With `applyMode` nothing is deleted by null (server-side apply semantics).
 */
export function strategicMergePatch(target: Json | undefined, patch: Json, applyMode = false): Json {
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return clone(rest);
  }
  if (patch.$patch === 'delete') return {};
  let out: JsonObject = isObject(target) ? { ...target } : {};
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) {
    const keep = new Set(retain.filter((k): k is string => typeof k === 'string'));
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys') continue;
    if (k.startsWith(SET_ORDER)) continue;
    if (k.startsWith(DELETE_PRIMITIVE)) {
      const field = k.slice(DELETE_PRIMITIVE.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.some((d) => deepEqual(d, x)));
      continue;
    }
    if (v === null) {
      if (!applyMode) delete out[k];
      continue;
    }
    if (Array.isArray(v)) {
      const cur = out[k];
      out[k] = strategicList(k, Array.isArray(cur) ? cur : undefined, v, applyMode);
      const order = patch[SET_ORDER + k];
      if (Array.isArray(order) && STRATEGIC_MERGE_KEYS[k] === undefined && PRIMITIVE_MERGE_LISTS.has(k)) {
        const list = out[k] as Json[];
        out[k] = [...order.filter((o) => list.some((x) => deepEqual(x, o))), ...list.filter((x) => !order.some((o) => deepEqual(x, o)))];
      }
      continue;
    }
    out[k] = isObject(v) ? strategicMergePatch(out[k], v, applyMode) : clone(v);
  }
  // An element-order directive whose list was not in the patch still prunes deleted merge-keyed items.
  for (const [k, order] of Object.entries(patch)) {
    if (!k.startsWith(SET_ORDER) || !Array.isArray(order)) continue;
    const field = k.slice(SET_ORDER.length);
    const key = STRATEGIC_MERGE_KEYS[field];
    const cur = out[field];
    if (key === undefined || !Array.isArray(cur)) continue;
    const rank = (x: Json): number => order.findIndex((o) => isObject(o) && isObject(x) && deepEqual(o[key], x[key]));
    out[field] = [...cur].sort((a, b) => {
      const ra = rank(a);
      const rb = rank(b);
      return (ra < 0 ? Infinity : ra) - (rb < 0 ? Infinity : rb);
    });
  }
  return out;
}

/** Server-side apply for custom resources: a merge that never deletes and replaces lists (atomic). */
export function applyMerge(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) continue;
    out[k] = applyMerge(out[k], v);
  }
  return out;
}

// ---------------------------------------------------------------- server-side apply ownership

/**
 * The field paths an apply configuration sets, for `managedFields` (FieldsV1). Maps are walked;
 * lists and scalars are leaves (atomic), so a list is owned as a whole. apiVersion, kind,
 * metadata.name and metadata.namespace are identity, not owned.
 */
export function appliedFieldPaths(config: Json, prefix: string[] = []): string[][] {
  if (!isObject(config)) return [prefix];
  const out: string[][] = [];
  for (const [k, v] of Object.entries(config)) {
    if (prefix.length === 0 && (k === 'apiVersion' || k === 'kind')) continue;
    if (prefix.length === 1 && prefix[0] === 'metadata' && (k === 'name' || k === 'namespace' || k === 'managedFields' || k === 'resourceVersion')) continue;
    if (v === null) continue;
    if (isObject(v) && Object.keys(v).length > 0) out.push(...appliedFieldPaths(v, [...prefix, k]));
    else out.push([...prefix, k]);
  }
  return out;
}

/** Paths as FieldsV1 (`{"f:spec":{"f:replicas":{}}}`). */
export function toFieldsV1(paths: readonly string[][]): JsonObject {
  const root: JsonObject = {};
  for (const p of paths) {
    let cur = root;
    for (const seg of p) {
      const k = `f:${seg}`;
      if (!isObject(cur[k])) cur[k] = {};
      cur = cur[k] as JsonObject;
    }
  }
  return root;
}

/** FieldsV1 back to leaf paths (the inverse of toFieldsV1 for the `f:` subset it writes). */
export function fromFieldsV1(f: Json | undefined, prefix: string[] = []): string[][] {
  if (!isObject(f)) return [];
  const keys = Object.keys(f).filter((k) => k.startsWith('f:'));
  if (keys.length === 0) return prefix.length ? [prefix] : [];
  return keys.flatMap((k) => fromFieldsV1(f[k], [...prefix, k.slice(2)]));
}

/** Removes the value at a path (and parents left empty by it), in place. */
export function removePath(obj: JsonObject, path: readonly string[]): void {
  const parents: JsonObject[] = [];
  let cur: JsonObject = obj;
  for (const seg of path.slice(0, -1)) {
    const next = cur[seg];
    if (!isObject(next)) return;
    parents.push(cur);
    cur = next;
  }
  delete cur[path[path.length - 1]!];
  for (let i = path.length - 2; i >= 0; i--) {
    const parentObj = parents[i]!;
    const child = parentObj[path[i]!];
    if (isObject(child) && Object.keys(child).length === 0) delete parentObj[path[i]!];
    else break;
  }
}
