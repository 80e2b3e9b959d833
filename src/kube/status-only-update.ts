// Whether an informer's update event changed only an object's status: same generation (the API
// server bumps it on spec changes), labels, annotations, finalizers and deletion timestamp.
import type { KubeObject } from './client.ts';

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export function statusOnlyUpdate(o: KubeObject, n: KubeObject): boolean {
  const a = o.metadata ?? {};
  const b = n.metadata ?? {};
  return a.generation !== undefined && a.generation === b.generation && same(a.labels, b.labels) && same(a.annotations, b.annotations)
    && same(a.finalizers, b.finalizers) && a.deletionTimestamp === b.deletionTimestamp;
}
