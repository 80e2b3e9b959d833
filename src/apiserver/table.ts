// Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), which is what
// `kubectl get` asks for: the columns kube-apiserver prints for built-in kinds (pods: NAME READY
// STATUS RESTARTS AGE ...), and for custom resources their CRD's additionalPrinterColumns evaluated
// as kubectl-style JSONPath (`.status.conditions[?(@.type=='Ready')].status`), `date` columns turned
// into ages as the apiextensions server does.
import type { Obj } from './store.ts';
import type { PrinterColumn, ResourceDef } from './resources.ts';
import { printPod } from './pod-printer.ts';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

// ---------------------------------------------------------------- durations

/** apimachinery's duration.HumanDuration: `45s`, `3m12s`, `2h5m`, `4d3h`, `2y10d`. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** A timestamp as an age (`<unknown>` when absent), as kubectl prints AGE. */
export function age(ts: unknown, now: number): string {
  if (typeof ts !== 'string' || ts === '') return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<invalid>';
  return humanDuration(now - t);
}

// ---------------------------------------------------------------- JSONPath

type Step =
  | { k: 'field'; name: string }
  | { k: 'index'; i: number }
  | { k: 'slice'; start: number | undefined; end: number | undefined }
  | { k: 'all' }
  | { k: 'recurse'; name: string }
  | { k: 'filter'; path: string[]; op: string | undefined; value: unknown };

export class JsonPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPathError';
  }
}

function parseFilterValue(raw: string): unknown {
  const s = raw.trim();
  if ((s.startsWith("'") && s.endsWith("'")) || (s.startsWith('"') && s.endsWith('"'))) return s.slice(1, -1);
  if (s === 'true' || s === 'false') return s === 'true';
  if (s !== '' && !Number.isNaN(Number(s))) return Number(s);
  throw new JsonPathError(`unsupported filter value ${raw}`);
}

/** Parses the JSONPath subset printer columns use; `{...}` wrapping is optional. */
export function parseJsonPath(expr: string): Step[] {
  let s = expr.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1).trim();
  if (s.startsWith('$')) s = s.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    if (s.startsWith('..', i)) {
      const m = /^\.\.([A-Za-z0-9_-]+)/.exec(s.slice(i));
      if (!m) throw new JsonPathError(`unsupported recursive descent in ${expr}`);
      steps.push({ k: 'recurse', name: m[1]! });
      i += m[0].length;
    } else if (s[i] === '.') {
      const m = /^\.([A-Za-z0-9_\-/]*)/.exec(s.slice(i))!;
      if (m[1] === '') { i += 1; continue; }
      steps.push({ k: 'field', name: m[1]! });
      i += m[0].length;
    } else if (s[i] === '[') {
      const end = s.indexOf(']', i);
      if (end < 0) throw new JsonPathError(`unterminated [ in ${expr}`);
      const body = s.slice(i + 1, end).trim();
      i = end + 1;
      let m: RegExpMatchArray | null;
      if (body === '*') steps.push({ k: 'all' });
      else if ((m = body.match(/^-?[0-9]+$/))) steps.push({ k: 'index', i: Number(body) });
      else if ((m = body.match(/^(-?[0-9]*):(-?[0-9]*)$/))) steps.push({ k: 'slice', start: m[1] ? Number(m[1]) : undefined, end: m[2] ? Number(m[2]) : undefined });
      else if ((m = body.match(/^'([^']*)'$|^"([^"]*)"$/))) steps.push({ k: 'field', name: m[1] ?? m[2]! });
      else if ((m = body.match(/^\?\(\s*@((?:\.[A-Za-z0-9_\-/]+)+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)$/))) {
        steps.push({ k: 'filter', path: m[1]!.slice(1).split('.'), op: m[2], value: m[2] ? parseFilterValue(m[3]!) : undefined });
      } else throw new JsonPathError(`unsupported JSONPath segment [${body}] in ${expr}`);
    } else throw new JsonPathError(`unexpected character '${s[i]}' in JSONPath ${expr}`);
  }
  return steps;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function digPath(v: unknown, path: string[]): unknown {
  let cur = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

/** All values the path selects (kubectl JSONPath semantics for the supported subset). */
export function evalJsonPath(steps: readonly Step[], root: unknown): unknown[] {
  let cur: unknown[] = [root];
  for (const st of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      switch (st.k) {
        case 'field':
          if (isObj(v) && v[st.name] !== undefined) next.push(v[st.name]);
          break;
        case 'index':
          if (Array.isArray(v)) {
            const idx = st.i < 0 ? v.length + st.i : st.i;
            if (idx >= 0 && idx < v.length) next.push(v[idx]);
          }
          break;
        case 'slice':
          if (Array.isArray(v)) next.push(...v.slice(st.start, st.end));
          break;
        case 'all':
          if (Array.isArray(v)) next.push(...v);
          else if (isObj(v)) next.push(...Object.values(v));
          break;
        case 'recurse': {
          const walk = (x: unknown): void => {
            if (isObj(x)) {
              if (x[st.name] !== undefined) next.push(x[st.name]);
              Object.values(x).forEach(walk);
            } else if (Array.isArray(x)) x.forEach(walk);
          };
          walk(v);
          break;
        }
        case 'filter': {
          const items = Array.isArray(v) ? v : isObj(v) ? Object.values(v) : [];
          for (const it of items) {
            const got = digPath(it, st.path);
            if (st.op === undefined) { if (got !== undefined && got !== null && got !== false) next.push(it); continue; }
            if (got === undefined) continue;
            const a = got as number | string;
            const b = st.value as number | string;
            const ok = st.op === '==' ? got === st.value : st.op === '!=' ? got !== st.value : st.op === '<' ? a < b : st.op === '>' ? a > b : st.op === '<=' ? a <= b : a >= b;
            if (ok) next.push(it);
          }
          break;
        }
      }
    }
    cur = next;
  }
  return cur;
}

// ---------------------------------------------------------------- cells

type Cell = string | number | boolean | null;

function printValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A custom resource column's cell, as apiextensions' table convertor computes it. */
export function customColumnCell(col: PrinterColumn, obj: Obj, now: number, steps: readonly Step[]): Cell {
  const results = evalJsonPath(steps, obj);
  if (results.length === 0) return null;
  const v = results[0];
  if (v === null || v === undefined) return null;
  switch (col.type) {
    case 'string': return printValue(v);
    case 'integer': return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number': return typeof v === 'number' ? v : null;
    case 'boolean': return typeof v === 'boolean' ? v : null;
    case 'date': return typeof v === 'string' ? (Number.isNaN(Date.parse(v)) ? '<invalid>' : age(v, now)) : null;
  }
  return null;
}

const NAME_COLUMN: ColumnDefinition = { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names', priority: 0 };
const col = (name: string, type = 'string', priority = 0, format = '', description = ''): ColumnDefinition => ({ name, type, format, description, priority });

const DEFAULT_CR_COLUMNS: PrinterColumn[] = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];

// ---------------------------------------------------------------- built-in printers

interface Printer {
  columns: ColumnDefinition[];
  cells(obj: Obj, now: number): Cell[];
  /** The row's conditions (meta.k8s.io TableRowCondition), e.g. Completed for finished pods. */
  conditions?(obj: Obj): Obj[] | undefined;
}

const meta = (o: Obj): Obj => (o.metadata ?? {}) as Obj;
const spec = (o: Obj): Obj => (o.spec ?? {}) as Obj;
const status = (o: Obj): Obj => (o.status ?? {}) as Obj;
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const none = (s: unknown): string => (typeof s === 'string' && s !== '' ? s : '<none>');
const created = (o: Obj, now: number): string => age(meta(o).creationTimestamp, now);

const PRINTERS: Record<string, Printer> = {
  '/pods': {
    columns: [NAME_COLUMN, col('Ready'), col('Status'), col('Restarts'), col('Age'), col('IP', 'string', 1), col('Node', 'string', 1), col('Nominated Node', 'string', 1), col('Readiness Gates', 'string', 1)],
    cells: (o, now) => {
      const r = printPod(o);
      const restarts = r.lastRestart ? `${r.restarts} (${age(r.lastRestart, now)} ago)` : r.restarts;
      const gates = arr(spec(o).readinessGates);
      const conds = arr(status(o).conditions);
      const gatesTrue = gates.filter((g) => conds.some((c) => c.type === g.conditionType && c.status === 'True')).length;
      return [String(meta(o).name), r.ready, r.status, restarts, created(o, now), none(status(o).podIP), none(spec(o).nodeName), none(status(o).nominatedNodeName), gates.length ? `${gatesTrue}/${gates.length}` : '<none>'];
    },
    conditions: (o) => {
      const c = printPod(o).completed;
      return c ? [{ type: 'Completed', status: 'True', reason: c.reason, message: c.message }] : undefined;
    },
  },
  '/namespaces': { columns: [NAME_COLUMN, col('Status'), col('Age')], cells: (o, now) => [String(meta(o).name), String(status(o).phase ?? ''), created(o, now)] },
  '/nodes': {
    columns: [NAME_COLUMN, col('Status'), col('Roles'), col('Age'), col('Version'), col('Internal-IP', 'string', 1), col('External-IP', 'string', 1), col('OS-Image', 'string', 1), col('Kernel-Version', 'string', 1), col('Container-Runtime', 'string', 1)],
    cells: (o, now) => {
      const ready = arr(status(o).conditions).find((c) => c.type === 'Ready');
      let st = ready ? (ready.status === 'True' ? 'Ready' : ready.status === 'False' ? 'NotReady' : 'Unknown') : 'Unknown';
      if (spec(o).unschedulable === true) st += ',SchedulingDisabled';
      const roles = Object.keys((meta(o).labels ?? {}) as Obj).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.slice('node-role.kubernetes.io/'.length)).filter(Boolean);
      const info = (status(o).nodeInfo ?? {}) as Obj;
      const addr = (t: string): string => none(arr(status(o).addresses).find((a) => a.type === t)?.address);
      return [String(meta(o).name), st, roles.length ? roles.sort().join(',') : '<none>', created(o, now), String(info.kubeletVersion ?? ''), addr('InternalIP'), addr('ExternalIP'), none(info.osImage), none(info.kernelVersion), none(info.containerRuntimeVersion)];
    },
  },
  '/configmaps': { columns: [NAME_COLUMN, col('Data', 'integer'), col('Age')], cells: (o, now) => [String(meta(o).name), Object.keys((o.data ?? {}) as Obj).length + Object.keys((o.binaryData ?? {}) as Obj).length, created(o, now)] },
  '/secrets': { columns: [NAME_COLUMN, col('Type'), col('Data', 'integer'), col('Age')], cells: (o, now) => [String(meta(o).name), String(o.type ?? 'Opaque'), Object.keys((o.data ?? {}) as Obj).length, created(o, now)] },
  '/serviceaccounts': { columns: [NAME_COLUMN, col('Secrets', 'integer'), col('Age')], cells: (o, now) => [String(meta(o).name), arr(o.secrets).length, created(o, now)] },
  '/persistentvolumeclaims': {
    columns: [NAME_COLUMN, col('Status'), col('Volume'), col('Capacity'), col('Access Modes'), col('StorageClass'), col('VolumeAttributesClass'), col('Age'), col('VolumeMode', 'string', 1)],
    cells: (o, now) => {
      const st = status(o);
      const cap = ((st.capacity ?? {}) as Obj).storage;
      const modes = (Array.isArray(st.accessModes) ? st.accessModes : []).map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[String(m)] ?? String(m)).join(',');
      return [String(meta(o).name), String(st.phase ?? ''), String(spec(o).volumeName ?? ''), typeof cap === 'string' ? cap : '', modes, none(spec(o).storageClassName), none(spec(o).volumeAttributesClassName), created(o, now), String(spec(o).volumeMode ?? 'Filesystem')];
    },
  },
  '/events': {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Message'), col('Source', 'string', 1), col('First Seen', 'string', 1), col('Count', 'string', 1), NAME_COLUMN],
    cells: (o, now) => {
      const io = (o.involvedObject ?? {}) as Obj;
      const last = o.lastTimestamp ?? o.eventTime ?? meta(o).creationTimestamp;
      const src = (o.source ?? {}) as Obj;
      return [age(last, now), String(o.type ?? ''), String(o.reason ?? ''), `${String(io.kind ?? '').toLowerCase()}/${String(io.name ?? '')}`, String(o.message ?? ''), String(src.component ?? o.reportingComponent ?? ''), age(o.firstTimestamp ?? last, now), String(o.count ?? 1), String(meta(o).name)];
    },
  },
  'events.k8s.io/events': {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Message'), NAME_COLUMN],
    cells: (o, now) => {
      const r = (o.regarding ?? {}) as Obj;
      return [age(o.eventTime ?? meta(o).creationTimestamp, now), String(o.type ?? ''), String(o.reason ?? ''), `${String(r.kind ?? '').toLowerCase()}/${String(r.name ?? '')}`, String(o.note ?? ''), String(meta(o).name)];
    },
  },
  'scheduling.k8s.io/priorityclasses': {
    columns: [NAME_COLUMN, col('Value', 'integer'), col('Global-Default', 'boolean'), col('Age'), col('PreemptionPolicy')],
    cells: (o, now) => [String(meta(o).name), Number(o.value ?? 0), o.globalDefault === true, created(o, now), String(o.preemptionPolicy ?? '')],
  },
  'coordination.k8s.io/leases': { columns: [NAME_COLUMN, col('Holder'), col('Age')], cells: (o, now) => [String(meta(o).name), String(spec(o).holderIdentity ?? ''), created(o, now)] },
  'apps/deployments': {
    columns: [NAME_COLUMN, col('Ready'), col('Up-to-date', 'integer'), col('Available', 'integer'), col('Age')],
    cells: (o, now) => [String(meta(o).name), `${Number(status(o).readyReplicas ?? 0)}/${Number(spec(o).replicas ?? 1)}`, Number(status(o).updatedReplicas ?? 0), Number(status(o).availableReplicas ?? 0), created(o, now)],
  },
  'apps/daemonsets': {
    columns: [NAME_COLUMN, col('Desired', 'integer'), col('Current', 'integer'), col('Ready', 'integer'), col('Up-to-date', 'integer'), col('Available', 'integer'), col('Node Selector'), col('Age')],
    cells: (o, now) => {
      const st = status(o);
      const sel = Object.entries((((spec(o).template ?? {}) as Obj).spec as Obj | undefined)?.nodeSelector ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(',');
      return [String(meta(o).name), Number(st.desiredNumberScheduled ?? 0), Number(st.currentNumberScheduled ?? 0), Number(st.numberReady ?? 0), Number(st.updatedNumberScheduled ?? 0), Number(st.numberAvailable ?? 0), none(sel), created(o, now)];
    },
  },
};

/** Built-ins without their own printer: NAME and CREATED AT (RFC 3339), like the default convertor. */
const DEFAULT_PRINTER: Printer = {
  columns: [NAME_COLUMN, col('Created At', 'date', 0, '', 'CreationTimestamp is a timestamp representing the server time when this object was created.')],
  cells: (o) => [String(meta(o).name), String(meta(o).creationTimestamp ?? '')],
};

const pathCache = new Map<string, Step[]>();
function steps(path: string): Step[] {
  let s = pathCache.get(path);
  if (!s) {
    s = parseJsonPath(path);
    pathCache.set(path, s);
  }
  return s;
}

function printerFor(r: ResourceDef, version: string): Printer {
  if (r.builtin) return PRINTERS[`${r.group}/${r.plural}`] ?? DEFAULT_PRINTER;
  const cols = r.columns.get(version);
  const crCols = cols && cols.length ? cols : DEFAULT_CR_COLUMNS;
  return {
    columns: [NAME_COLUMN, ...crCols.map((c) => col(c.name, c.type, c.priority ?? 0, c.format ?? '', c.description ?? ''))],
    cells: (o, now) => [String(meta(o).name), ...crCols.map((c) => {
      try { return customColumnCell(c, o, now, steps(c.jsonPath)); } catch { return null; }
    })],
  };
}

function rowObject(o: Obj, include: IncludeObject): Obj | undefined {
  if (include === 'None') return undefined;
  if (include === 'Object') return o;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

/** The Table for a list (or one object) of a resource, as served to `kubectl get`. */
export function toTable(r: ResourceDef, version: string, objs: readonly Obj[], opts: { include: IncludeObject; noHeaders?: boolean; resourceVersion?: string; continueToken?: string; now?: number }): Obj {
  const p = printerFor(r, version);
  const now = opts.now ?? Date.now();
  const listMeta: Obj = {};
  if (opts.resourceVersion) listMeta.resourceVersion = opts.resourceVersion;
  if (opts.continueToken) listMeta.continue = opts.continueToken;
  const table: Obj = {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: opts.noHeaders ? null : p.columns,
    rows: objs.map((o) => {
      const row: Obj = { cells: p.cells(o, now) };
      const conditions = p.conditions?.(o);
      if (conditions) row.conditions = conditions;
      const ro = rowObject(o, opts.include);
      if (ro) row.object = ro;
      return row;
    }),
  };
  return table;
}
