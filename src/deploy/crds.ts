// KubeVirt's CustomResourceDefinitions (deploy/crds, generated from src/api/schema by
// scripts/gen-crds.ts) put into a cluster through its API: each created or replaced, then waited for
// until the API server serves its kind. `qvirt apiserver` and the local mode apply them at start.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlreadyExists, isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';
import { Resources, type ResourceType } from '../kube/resource.ts';

export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../../deploy/crds/', import.meta.url));

export interface Crd extends KubeObject {
  spec: { group: string; names: { plural: string; kind: string }; scope: string; versions: { name: string; served?: boolean; storage?: boolean }[] };
}

/** Creates (or replaces) one CRD and waits until the API server serves its kind. */
export async function applyCrd(client: KubeClient, crd: Crd, timeoutMs = 10_000): Promise<void> {
  try {
    await client.create(Resources.customResourceDefinitions, crd);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const cur = await client.get<Crd>(Resources.customResourceDefinitions, undefined, crd.metadata!.name!);
    await client.update(Resources.customResourceDefinitions, { ...crd, metadata: { ...crd.metadata, resourceVersion: cur.metadata?.resourceVersion } });
  }
  const version = crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]!.name;
  const r: ResourceType = { group: crd.spec.group, version, plural: crd.spec.names.plural, kind: crd.spec.names.kind, namespaced: crd.spec.scope === 'Namespaced' };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.list(r, { limit: 1 });
      return;
    } catch (err) {
      if (!isNotFound(err) || Date.now() > deadline) throw new Error(`CRD ${crd.metadata?.name} is not served: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      await new Promise((res) => setTimeout(res, 50));
    }
  }
}

/** Creates (or replaces) every CRD in `dir` and waits until each of its resources is served. */
export async function applyCrdFiles(client: KubeClient, dir: string = DEFAULT_CRD_DIR, timeoutMs = 10_000): Promise<string[]> {
  const { default: yaml } = await import('js-yaml');
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  const applied: string[] = [];
  for (const f of files) {
    for (const doc of yaml.loadAll(readFileSync(join(dir, f), 'utf8'))) {
      const crd = doc as Crd | null;
      if (!crd || crd.kind !== 'CustomResourceDefinition') continue;
      await applyCrd(client, crd, timeoutMs).catch((err: unknown) => { throw new Error(`applying ${join(dir, f)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }); });
      applied.push(crd.metadata?.name ?? f);
    }
  }
  return applied;
}
