// The contracts between components have one home each (issue 21): the domain a launcher reports is
// typed and decoded only in src/api/domain; KubeVirt's strings are src/api/constants.ts's, which
// controller/constants.ts does not spell again; the final-phase set is isFinalVMIPhase /
// isFinalMigrationPhase, not a set of strings kept by a component.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, tsFiles } from './import-graph.ts';

const read = (f: string) => readFileSync(join(root, f), 'utf8');
const code = (f: string) => read(f).replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
const sources = ['handler', 'launcher', 'controller', 'qmp', 'src'].flatMap((d) => tsFiles(d));

/** Every string literal a constants file gives a name (`Key: '…'` and `const X = '…'`). */
function spelled(f: string): Set<string> {
  const s = code(f);
  return new Set([...s.matchAll(/\b\w+:\s*'([^']*)'/g), ...s.matchAll(/\bconst \w+ = '([^']*)';/g)].map((m) => m[1]!));
}

test('the domain (launcher ↔ node agent) is declared and decoded in src/api/domain only', () => {
  const bad = sources.filter((f) => !f.startsWith('src/api/domain/') && /\bexport (interface|type) (Domain|DomainStatus|KubeVirtMetadata|GracePeriodMetadata|MigrationMetadata)\b/.test(code(f)));
  assert.equal(bad, [], 'declare the domain contract in src/api/domain');
  const parsers = sources.filter((f) => /\bdomainJSON\b/.test(code(f)) && !f.startsWith('src/proto/') && !f.startsWith('launcher/notify/') && !/\bdecodeDomain\(/.test(code(f)));
  assert.equal(parsers, [], 'a domain that arrives is read with decodeDomain');
});

test('controller/constants.ts spells none of the strings src/api/constants.ts spells', () => {
  const api = spelled('src/api/constants.ts');
  // Kubernetes' pod phases and conditions (not KubeVirt's, equal by chance to VMI phases and condition
  // types), and the kernel boot volume named like its container.
  const allowed = new Set(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown', 'Ready', 'PodScheduled', 'kernel-boot-volume']);
  const twice = [...spelled('controller/constants.ts')].filter((v) => api.has(v) && !allowed.has(v));
  assert.equal(twice, [], 'import these from src/api/constants.ts instead');
});

test('no component keeps its own final-phase set', () => {
  const sets = /new Set\(\[\s*'(Succeeded|Failed)',\s*'(Succeeded|Failed)'\s*\]\)|\[\s*'(Succeeded|Failed)',\s*'(Succeeded|Failed)'\s*\]\.includes/;
  const bad = sources.filter((f) => !f.startsWith('src/api/') && sets.test(code(f)));
  assert.equal(bad, [], 'use isFinalVMIPhase / isFinalMigrationPhase (src/api/constants.ts)');
});

test.run();
