// The source tree's import graph, read the way Node resolves it: every static and dynamic import
// and re-export of every .ts file, resolved to a repo path (relative to the root) or to
// `pkg:<name>` / `node:<module>`. Type-only imports count: a cycle of types is a cycle of concepts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

export const root = normalize(join(import.meta.dirname, '../..'));

/** Every .ts file under `dir` (repo-relative), declaration files aside. */
export function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(root, dir))) {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) tsFiles(rel, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** Import specifiers of a file: `import … from`, `export … from`, side-effect `import '…'`, `import('…')`. */
export function importSpecifiers(source: string): string[] {
  const noComments = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const re = /(?:^|[;\n])\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of noComments.matchAll(re)) out.push((m[1] ?? m[2])!);
  return out;
}

/** The specifiers a module loads as it is evaluated: static imports and re-exports, not `import type` nor `import()`. */
export function staticValueImports(source: string): string[] {
  const noComments = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const re = /(?:^|[;\n])\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g;
  for (const m of noComments.matchAll(re)) if (!m[2]) out.push(m[3]!);
  return out;
}

/** What an import points at: a repo path or `pkg:<name>` / `node:<mod>`. */
export function target(fromFile: string, spec: string): string {
  if (spec.startsWith('.')) return normalize(join(dirname(fromFile), spec));
  if (spec.startsWith('node:')) return spec;
  const parts = spec.split('/');
  return `pkg:${spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]}`;
}

/** file → the repo files it imports (packages and node modules left out). */
export function importGraph(dirs: readonly string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const dir of dirs) {
    for (const f of tsFiles(dir)) {
      const deps = new Set<string>();
      for (const spec of importSpecifiers(readFileSync(join(root, f), 'utf8'))) {
        const t = target(f, spec);
        if (!t.startsWith('pkg:') && !t.startsWith('node:')) deps.add(t);
      }
      graph.set(f, deps);
    }
  }
  return graph;
}

/** The graph with each node mapped by `group` (a file to its folder, its component…); self-edges dropped. */
export function groupedGraph(graph: Map<string, Set<string>>, group: (file: string) => string | undefined): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [f, deps] of graph) {
    const a = group(f);
    if (a === undefined) continue;
    if (!out.has(a)) out.set(a, new Set());
    for (const d of deps) {
      const b = group(d);
      if (b !== undefined && b !== a) out.get(a)!.add(b);
    }
  }
  return out;
}

/**
 * The strongly connected components with more than one member (Tarjan): each is a set of nodes
 * that reach one another — an import cycle. Members sorted, components sorted by first member.
 */
export function cycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      for (;;) { const w = stack.pop()!; onStack.delete(w); comp.push(w); if (w === v) break; }
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
