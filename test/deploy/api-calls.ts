// Every Kubernetes API call a component's code can make, found in its sources: the import closure
// of its CLI entry (static and dynamic relative imports), then in each file the KubeClient calls
// (`client.list|get|create|update|updateStatus|patch|delete|watch(Resources.x, …)`) and the
// informers (`new Informer(client, Resources.x)` = list + watch). The client's and the informer's
// own generic bodies are plumbing; any other call whose resource is not a `Resources.x` literal
// must be listed in INDIRECT with the resources it can be, or the scan fails.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';

export const repoRoot = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');

export interface ApiCall {
  readonly group: string;
  /** plural, or plural/subresource */
  readonly resource: string;
  readonly verb: string;
  readonly where: string;
}

/** Files whose calls go through a variable by design (the client itself, the informer). */
const PLUMBING = new Set(['src/kube/client.ts', 'src/kube/informer.ts']);

/** Calls whose resource is a variable: file → identifier → the Resources keys it can hold (checked to exist). */
export const INDIRECT: Readonly<Record<string, Readonly<Record<string, readonly (keyof typeof Resources)[]>>>> = {
  // removeFinalizer(obj, finalizer, resource = Resources.virtualMachines): VM and VMI finalizers.
  'controller/vm/controller.ts': { resource: ['virtualMachines', 'virtualMachineInstances'] },
};

const CLIENT_VERBS: Record<string, string> = { list: 'list', get: 'get', create: 'create', update: 'update', updateStatus: 'update', patch: 'patch', delete: 'delete', watch: 'watch' };

/** Relative imports (static, re-exports and dynamic) of a TypeScript file, resolved to repo paths. */
export function importsOf(file: string): string[] {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  const out = new Set<string>();
  const re = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const m of text.matchAll(re)) {
    const target = relative(repoRoot, resolve(dirname(join(repoRoot, file)), m[1]!));
    if (target.endsWith('.ts') && existsSync(join(repoRoot, target))) out.add(target);
  }
  // `import type` brings no code.
  for (const m of text.matchAll(/import\s+type\s+[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = relative(repoRoot, resolve(dirname(join(repoRoot, file)), m[1]!));
    if (!new RegExp(`import\\s+(?!type)[^;]*from\\s+['"]${m[1]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"]`).test(text)) out.delete(target);
  }
  return [...out];
}

export function importClosure(entry: string): string[] {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length) for (const f of importsOf(queue.shift()!)) if (!seen.has(f)) { seen.add(f); queue.push(f); }
  return [...seen].sort();
}

/** The top-level comma-separated arguments of the call whose `(` is at `open`. */
export function callArgs(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let cur = '';
  let quote: string | undefined;
  for (let i = open + 1; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) { cur += ch; if (ch === quote && text[i - 1] !== '\\') quote = undefined; continue; }
    if (ch === '\'' || ch === '"' || ch === '`') { quote = ch; cur += ch; continue; }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    if (ch === ')' || ch === ']' || ch === '}') {
      if (depth === 0) { if (cur.trim()) args.push(cur.trim()); return args; }
      depth--;
    }
    if (ch === ',' && depth === 0) { args.push(cur.trim()); cur = ''; continue; }
    cur += ch;
  }
  return args;
}

function resourceKeys(file: string, arg: string, unresolved: string[], where: string): (keyof typeof Resources)[] {
  const m = /^Resources\.(\w+)$/.exec(arg);
  if (m) {
    if (!(m[1]! in Resources)) throw new Error(`${where}: Resources.${m[1]} does not exist`);
    return [m[1] as keyof typeof Resources];
  }
  const indirect = INDIRECT[file]?.[arg];
  if (indirect) return [...indirect];
  unresolved.push(`${where}: resource ${JSON.stringify(arg)}`);
  return [];
}

/** Source with comments blanked out (quotes respected), so examples in comments are not calls. */
export function stripComments(src: string): string {
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (quote) {
      out += ch;
      if (ch === '\\') { out += src[++i] ?? ''; continue; }
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '/' && src[i + 1] === '/') { while (i < src.length && src[i] !== '\n') i++; out += '\n'; continue; }
    if (ch === '/' && src[i + 1] === '*') { const end = src.indexOf('*/', i + 2); const body = src.slice(i, end < 0 ? src.length : end + 2); out += body.replace(/[^\n]/g, ' '); i = (end < 0 ? src.length : end + 2) - 1; continue; }
    if (ch === '\'' || ch === '"' || ch === '`') quote = ch;
    out += ch;
  }
  return out;
}

/** The index just past a balanced `<…>` starting at `i` (type arguments), or `i` if there is none. */
function skipTypeArgs(text: string, i: number): number {
  if (text[i] !== '<') return i;
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    if (text[j] === '<') depth++;
    else if (text[j] === '>' && text[j - 1] !== '=') { depth--; if (depth === 0) return j + 1; }
  }
  return i;
}

const METHOD_VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** `/apis/<group>/<version>/[namespaces/<ns>/]<plural>[/<name>[/<sub>]]` or `/api/v1/...` → group and resource. */
export function resourceOfPath(path: string): { group: string; resource: string } | undefined {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/(?:namespaces\/[^/]+\/)?([a-z]+)(?:\/[^/]+(?:\/([a-z]+))?)?$/.exec(path);
  if (!m) return undefined;
  return { group: m[1] ?? '', resource: m[3] ? `${m[2]}/${m[3]}` : m[2]! };
}

/** The API calls in one file. */
export function apiCallsIn(file: string, unresolved: string[]): ApiCall[] {
  if (PLUMBING.has(file)) return [];
  const text = stripComments(readFileSync(join(repoRoot, file), "utf8"));
  const calls: ApiCall[] = [];
  const lineOf = (i: number) => text.slice(0, i).split('\n').length;
  const add = (key: keyof typeof Resources, verb: string, sub: string | undefined, where: string) => {
    const r = Resources[key];
    calls.push({ group: r.group, resource: sub ? `${r.plural}/${sub}` : r.plural, verb, where });
  };
  for (const m of text.matchAll(/new Informer\b/g)) {
    const where = `${file}:${lineOf(m.index)}`;
    const open = skipTypeArgs(text, m.index + m[0].length);
    if (text[open] !== '(') continue;
    const args = callArgs(text, open);
    for (const k of resourceKeys(file, args[1] ?? '', unresolved, where)) { add(k, 'list', undefined, where); add(k, 'watch', undefined, where); }
  }
  for (const m of text.matchAll(/\b[cC]lient\.(request)\b/g)) {
    const where = `${file}:${lineOf(m.index)}`;
    const open = skipTypeArgs(text, m.index + m[0].length);
    if (text[open] !== '(') { unresolved.push(`${where}: client.request not called directly`); continue; }
    const [methodArg = '', pathArg = ''] = callArgs(text, open);
    const method = /^['"](\w+)['"]$/.exec(methodArg)?.[1];
    const constant = new RegExp(`const\\s+${pathArg.replace(/[^\w]/g, '')}\\s*=\\s*['"]([^'"]+)['"]`).exec(text)?.[1];
    const path = /^['"]([^'"]+)['"]$/.exec(pathArg)?.[1] ?? (/^\w+$/.test(pathArg) ? constant : undefined);
    const r = path ? resourceOfPath(path) : undefined;
    if (!method || !METHOD_VERBS[method] || !r) { unresolved.push(`${where}: client.request(${methodArg}, ${pathArg})`); continue; }
    calls.push({ group: r.group, resource: r.resource, verb: METHOD_VERBS[method]!, where });
  }
  for (const m of text.matchAll(/\b[cC]lient\.(list|get|create|update|updateStatus|patch|delete|watch)\b/g)) {
    const where = `${file}:${lineOf(m.index)}`;
    const method = m[1]!;
    const open = skipTypeArgs(text, m.index + m[0].length);
    if (text[open] !== '(') { unresolved.push(`${where}: client.${method} used without a call`); continue; }
    const args = callArgs(text, open);
    const subArgIndex: Record<string, number> = { get: 3, patch: 5, update: 2 };
    const subArg = subArgIndex[method] !== undefined ? args[subArgIndex[method]!] : undefined;
    let sub = method === 'updateStatus' ? 'status' : undefined;
    if (subArg !== undefined && subArg !== 'undefined') {
      const lit = /^['"]([\w-]+)['"]$/.exec(subArg);
      if (!lit) unresolved.push(`${where}: subresource ${JSON.stringify(subArg)}`);
      else sub = lit[1];
    }
    for (const k of resourceKeys(file, args[0] ?? '', unresolved, where)) add(k, CLIENT_VERBS[method]!, sub, where);
  }
  return calls;
}

/** Every API call of a component whose CLI entry is `entry` (e.g. src/cli/controller.ts). */
export function componentApiCalls(entry: string): { calls: ApiCall[]; unresolved: string[]; files: string[] } {
  const files = importClosure(entry);
  const unresolved: string[] = [];
  const calls = files.flatMap((f) => apiCallsIn(f, unresolved));
  return { calls, unresolved, files };
}

/** `group|resource|verb` keys, deduplicated and sorted. */
export function callKeys(calls: readonly ApiCall[]): string[] {
  return [...new Set(calls.map((c) => `${c.group}|${c.resource}|${c.verb}`))].sort();
}

/** What RBAC sees of one HTTP request (kube-apiserver's RequestInfo, for resource requests). */
export interface RequestAttributes {
  readonly verb: string;
  readonly group: string;
  /** plural, or plural/subresource */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** kube-apiserver's request → verb/resource mapping; undefined for non-resource paths (discovery, /version). */
export function requestAttributes(method: string, url: string): RequestAttributes | undefined {
  const u = new URL(url, 'http://x');
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(?:\/namespaces\/([^/]+))?\/([a-z]+)(?:\/([^/]+)(?:\/([a-z]+))?)?$/.exec(u.pathname);
  if (!m) return undefined;
  let [, group = '', namespace, plural, name, sub] = m;
  // /api/v1/namespaces/<name> is the namespace object itself.
  if (!namespace && plural === 'namespaces' && name) { /* kept */ } else if (!plural) return undefined;
  const watch = u.searchParams.get('watch') === 'true' || u.searchParams.get('watch') === '1';
  const verbs: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };
  let verb: string;
  if (method === 'GET') verb = watch ? 'watch' : name ? 'get' : 'list';
  else if (method === 'DELETE') verb = name ? 'delete' : 'deletecollection';
  else verb = verbs[method] ?? method.toLowerCase();
  return { verb, group, resource: sub ? `${plural}/${sub}` : plural!, ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) };
}

export interface RuleLike {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** Whether ClusterRole rules, or Role rules of the request's namespace, allow it (RBAC's evaluation). */
export function rbacAllows(a: RequestAttributes, clusterRules: readonly RuleLike[], namespaced: Readonly<Record<string, readonly RuleLike[]>>): boolean {
  const match = (r: RuleLike) => r.apiGroups.includes(a.group) && r.resources.includes(a.resource) && r.verbs.includes(a.verb) && (!r.resourceNames || (a.name !== undefined && r.resourceNames.includes(a.name)));
  return clusterRules.some(match) || (a.namespace !== undefined && (namespaced[a.namespace] ?? []).some(match));
}
