// KubeVirt's own example manifests (copied unchanged from kubevirt/kubevirt `examples/`), loaded for tests.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

export const EXAMPLES_DIR = new URL('../fixtures/kubevirt-examples/', import.meta.url).pathname;

export interface Example {
  readonly file: string;
  readonly doc: Record<string, unknown>;
}

export function loadExamples(): Example[] {
  const out: Example[] = [];
  for (const file of readdirSync(EXAMPLES_DIR).sort()) {
    if (!file.endsWith('.yaml')) continue;
    for (const doc of yaml.loadAll(readFileSync(join(EXAMPLES_DIR, file), 'utf8'))) {
      if (doc && typeof doc === 'object') out.push({ file, doc: doc as Record<string, unknown> });
    }
  }
  return out;
}

export function loadExample(file: string): Record<string, unknown> {
  const ex = loadExamples().find((e) => e.file === file);
  if (!ex) throw new Error(`no example ${file} in ${EXAMPLES_DIR}`);
  return structuredClone(ex.doc);
}

/** KubeVirt's instance type, preference and VM-with-instancetype examples (kubevirt/kubevirt `examples/`, unchanged). */
export const INSTANCETYPE_EXAMPLES_DIR = join(EXAMPLES_DIR, 'instancetype');

export function loadInstancetypeExamples(): Example[] {
  const out: Example[] = [];
  for (const file of readdirSync(INSTANCETYPE_EXAMPLES_DIR).sort()) {
    if (!file.endsWith('.yaml')) continue;
    for (const doc of yaml.loadAll(readFileSync(join(INSTANCETYPE_EXAMPLES_DIR, file), 'utf8'))) {
      if (doc && typeof doc === 'object') out.push({ file, doc: doc as Record<string, unknown> });
    }
  }
  return out;
}
