// No import cycles (issue 21): none between the files of the shipped code, none between the rooms of
// the house (docs/architecture.md), none between the launcher's folders — each depends one way. A
// cycle is reported as the files (or rooms, or folders) that reach one another, and for the rooms and
// folders with the imports that make each edge.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dirname } from 'node:path';
import { cycles, groupedGraph, importGraph } from './import-graph.ts';
import { roomOf, under } from './rooms.ts';

const SHIPPED = ['qmp', 'launcher', 'handler', 'controller', 'src', 'scripts'];
const graph = importGraph(SHIPPED);

/** For a cycle of groups, the file imports that make its edges (first few per edge). */
function edges(members: readonly string[], group: (f: string) => string | undefined): string[] {
  const out: string[] = [];
  for (const [f, deps] of graph) {
    const a = group(f);
    if (a === undefined || !members.includes(a)) continue;
    for (const d of deps) {
      const b = group(d);
      if (b !== undefined && b !== a && members.includes(b)) out.push(`${a} → ${b}: ${f} imports ${d}`);
    }
  }
  return out.sort().slice(0, 40);
}

test('cycles() finds the strongly connected components, and only those', () => {
  const g = (edgeList: string): Map<string, Set<string>> => {
    const m = new Map<string, Set<string>>();
    for (const e of edgeList.split(' ').filter(Boolean)) {
      const [a, b] = e.split('>') as [string, string];
      if (!m.has(a)) m.set(a, new Set());
      if (!m.has(b)) m.set(b, new Set());
      m.get(a)!.add(b);
    }
    return m;
  };
  const table: [string, string[][]][] = [
    ['a>b b>c', []],
    ['a>b b>a', [['a', 'b']]],
    ['a>b b>c c>a c>d', [['a', 'b', 'c']]],
    ['a>b b>a c>d d>e e>c e>f', [['a', 'b'], ['c', 'd', 'e']]],
    ['a>b a>c b>d c>d', []],
  ];
  for (const [edgesText, want] of table) assert.equal(cycles(g(edgesText)), want, edgesText);
});

test('the import graph is read from the tree (sanity: it has the files and the edges it should)', () => {
  assert.ok(graph.size > 400, `only ${graph.size} files`);
  assert.ok(graph.get('launcher/main.ts')?.has('launcher/runtime.ts'), 'launcher/main.ts imports launcher/runtime.ts');
});

test('no import cycle between the files of the shipped code', () => {
  const found = cycles(graph);
  assert.equal(found, [], found.map((c) => c.join(' ⇄ ')).join('\n'));
});

test('no import cycle between the rooms of the house', () => {
  const found = cycles(groupedGraph(graph, roomOf));
  assert.equal(found, [], found.map((c) => `${c.join(' ⇄ ')}\n  ${edges(c, roomOf).join('\n  ')}`).join('\n'));
});

test("no import cycle between the launcher's folders", () => {
  const folder = (f: string) => (under(f, 'launcher') ? dirname(f) : undefined);
  const found = cycles(groupedGraph(graph, folder));
  assert.equal(found, [], found.map((c) => `${c.join(' ⇄ ')}\n  ${edges(c, folder).join('\n  ')}`).join('\n'));
});

test.run();
