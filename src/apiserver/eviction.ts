// pods/eviction (pkg/registry/core/pod/storage/eviction.go): what `kubectl drain` calls. Validating
// admission sees the Eviction first (KubeVirt's virt-launcher eviction interceptor refuses it with
// 429 and starts an evacuation instead); an allowed eviction deletes the pod with the Eviction's
// delete options and answers 201 with a Success Status. PodDisruptionBudgets are not served, so no
// budget can refuse an eviction here.
import type { User } from './auth.ts';
import { badRequest } from './errors.ts';
import type { DeleteOptions, Rest } from './rest.ts';
import type { Obj } from './store.ts';

export const EVICTION_SUBRESOURCE = 'eviction';

type Mutable = Record<string, unknown>;
const isObj = (v: unknown): v is Mutable => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The Eviction's `deleteOptions` as the delete verb takes them. */
function deleteOptionsOf(eviction: Mutable, dryRun: boolean): DeleteOptions {
  const d = isObj(eviction.deleteOptions) ? eviction.deleteOptions : {};
  const opts: DeleteOptions = { dryRun: dryRun || (Array.isArray(d.dryRun) && d.dryRun.includes('All')) };
  if (typeof d.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = d.gracePeriodSeconds;
  if (isObj(d.preconditions)) opts.preconditions = d.preconditions as DeleteOptions['preconditions'];
  if (typeof d.propagationPolicy === 'string') opts.propagationPolicy = d.propagationPolicy as DeleteOptions['propagationPolicy'];
  return opts;
}

/** POST pods/{name}/eviction: admission, then the pod's deletion; returns the Status to send (201). */
export function evictPod(rest: Rest, ns: string, name: string, body: unknown, opts: { dryRun: boolean; user: User | undefined }): Obj {
  if (!isObj(body)) throw badRequest('the request body must be an Eviction object');
  const meta = isObj(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  const eviction: Mutable = { ...body, metadata: { ...meta, name, namespace: ns } };
  const pods = rest.registry.get('', 'pods')!;
  rest.admit({ operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: EVICTION_SUBRESOURCE, namespace: ns, name, object: eviction, oldObject: undefined, dryRun: opts.dryRun, user: opts.user });
  rest.delete(pods, ns, name, deleteOptionsOf(eviction, opts.dryRun));
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}
