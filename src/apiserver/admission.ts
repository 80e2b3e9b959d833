// Validating admission: what kube-apiserver's ValidatingAdmissionWebhook plugin does for the
// webhooks an operator registers, with the webhooks as in-process plugins (the embedded server
// calls no webhook services). A plugin sees the request's attributes and may read and patch
// objects; a denial becomes the Status kube-apiserver returns for a webhook's rejection
// (`admission webhook "<name>" denied the request: <message>`, the webhook's code and causes).
// Plugins run after schema validation and before the write, on API requests only (not on the
// server's own writes: garbage collection, namespace cleanup).
import type { User } from './auth.ts';
import { ApiError, type StatusCause } from './errors.ts';
import type { Obj } from './store.ts';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** The request as a webhook's AdmissionReview carries it. */
export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly group: string;
  readonly version: string;
  /** The resource's plural (`pods`, `virtualmachineinstancemigrations`). */
  readonly resource: string;
  readonly subresource: string | undefined;
  readonly namespace: string;
  readonly name: string;
  /** The object being written (for `pods/eviction`, the Eviction). */
  readonly object: Obj;
  readonly oldObject: Obj | undefined;
  readonly dryRun: boolean;
  readonly user: User | undefined;
}

/** What a plugin may do with the server's objects while it decides. */
export interface AdmissionApi {
  get(group: string, resource: string, namespace: string, name: string): Obj | undefined;
  /** Objects of a resource (one namespace, or all with undefined), optionally by label selector. */
  list(group: string, resource: string, namespace: string | undefined, labelSelector?: string): Obj[];
  /** A JSON patch (RFC 6902) of the object, as a webhook's client would send it; throws ApiError. */
  jsonPatch(group: string, resource: string, namespace: string, name: string, ops: readonly object[], opts: { subresource?: 'status'; dryRun?: boolean }): Obj;
}

/** A denial: the webhook's `Status` result (`code` ≥ 400; `causes` for field errors). */
export interface AdmissionDenial {
  readonly code: number;
  readonly message: string;
  readonly reason?: string;
  readonly causes?: readonly StatusCause[];
}

/** An admission with warnings (kube-apiserver returns them as `Warning` headers). */
export interface AdmissionWarnings {
  readonly warnings: readonly string[];
}

/** A plugin's answer: undefined or warnings admit, a denial refuses. */
export type AdmissionResult = AdmissionDenial | AdmissionWarnings | undefined;

const isDenial = (r: AdmissionResult): r is AdmissionDenial => r !== undefined && 'code' in r;

export interface ValidatingAdmissionPlugin {
  /** The webhook's name (`migration-create-validator.kubevirt.io`), quoted in denials. */
  readonly name: string;
  /** Its rules: which requests it sees. */
  matches(a: Pick<AdmissionAttributes, 'operation' | 'group' | 'resource' | 'subresource'>): boolean;
  /** undefined (or warnings) allows the request. */
  admit(a: AdmissionAttributes, api: AdmissionApi): AdmissionResult;
}

/** kube-apiserver's `webhookerrors.ToStatusErr`: the denial as the request's error. */
export function denialError(webhook: string, d: AdmissionDenial): ApiError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const message = d.message ? `${deniedBy}: ${d.message}` : d.reason ? `${deniedBy}: ${d.reason}` : `${deniedBy} without explanation`;
  return new ApiError(d.code >= 400 ? d.code : 400, d.reason ?? '', message, d.causes?.length ? { causes: [...d.causes] } : undefined);
}

/** Runs every matching plugin in order; the first denial is thrown, else the warnings are returned. */
export function runValidatingAdmission(plugins: readonly ValidatingAdmissionPlugin[], a: AdmissionAttributes, api: AdmissionApi): string[] {
  const warnings: string[] = [];
  for (const p of plugins) {
    if (!p.matches(a)) continue;
    const r = p.admit(a, api);
    if (isDenial(r)) throw denialError(p.name, r);
    if (r) warnings.push(...r.warnings);
  }
  return warnings;
}
