// What every controller shell shares: the controller contract the manager runs, owner-key lookup,
// a field-level JSON patch between two versions of an object, and error text for events.
import type { KubeObject } from '../src/kube/client.ts';
import type { WorkQueue, ReconcileResult } from '../src/kube/workqueue.ts';
import type { Expectations } from '../src/kube/expectations.ts';
import type { ObjectMeta } from '../src/api/types.ts';
import { controllerOf } from './pod-state.ts';
import { escapeJsonPointer } from '../src/kube/json-pointer.ts';

/** One reconcile loop: a queue of keys and the idempotent sync of one key (built by builder.ts). */
export interface Controller {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly workers: number;
  /** The creations and deletions it waits to see, when it makes objects. */
  readonly expectations?: Expectations;
  sync(key: string): Promise<ReconcileResult | void>;
}

/** `namespace/name` of the controller owning `obj` when it is of `kind`. */
export function ownerKey(obj: KubeObject, kind: string): string | undefined {
  const ref = controllerOf(obj.metadata as ObjectMeta | undefined);
  if (!ref || ref.kind !== kind) return undefined;
  return `${obj.metadata?.namespace ?? ''}/${ref.name}`;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface JsonPatchOp {
  op: 'add' | 'replace' | 'remove' | 'test';
  path: string;
  value?: unknown;
}

/**
 * JSON patch ops that turn `before` into `after` one level below each of `sections` (e.g.
 * `status`, `metadata`): a changed key is replaced, a new key added, a vanished key removed. The
 * way KubeVirt patches the fields the VMI controller owns without overwriting the node agent's.
 */
export function sectionPatch(before: Record<string, unknown>, after: Record<string, unknown>, sections: readonly string[]): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  for (const section of sections) {
    const b = (before[section] ?? undefined) as Record<string, unknown> | undefined;
    const a = (after[section] ?? undefined) as Record<string, unknown> | undefined;
    if (jsonEqual(a, b)) continue;
    if (!b) { ops.push({ op: 'add', path: `/${section}`, value: a }); continue; }
    if (!a) { ops.push({ op: 'remove', path: `/${section}` }); continue; }
    for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
      if (jsonEqual(a[key], b[key])) continue;
      const path = `/${section}/${escapeJsonPointer(key)}`;
      if (a[key] === undefined) ops.push({ op: 'remove', path });
      else if (b[key] === undefined) ops.push({ op: 'add', path, value: a[key] });
      else ops.push({ op: 'replace', path, value: a[key] });
    }
  }
  return ops;
}

/**
 * The controller's write of the sections it owns, as KubeVirt's Update is: `sectionPatch`'s ops
 * behind a uid test and the resourceVersion the change was computed from (an `add`, which sets it
 * whether or not the served object shows it) — so a decision made on a stale informer copy gets a
 * 409 and is made again on the fresh object instead of replacing a whole section (say
 * status.conditions) and dropping what the node agent wrote in the meantime (LiveMigratable).
 * Empty when nothing changed.
 */
export function optimisticSectionPatch(before: Record<string, unknown> & { metadata?: { uid?: string; resourceVersion?: string } }, after: Record<string, unknown>, sections: readonly string[]): JsonPatchOp[] {
  const ops = sectionPatch(before, after, sections);
  if (ops.length === 0) return ops;
  return [
    { op: 'test', path: '/metadata/uid', value: before.metadata?.uid },
    ...(before.metadata?.resourceVersion ? [{ op: 'add' as const, path: '/metadata/resourceVersion', value: before.metadata.resourceVersion }] : []),
    ...ops,
  ];
}
