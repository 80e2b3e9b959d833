// The validating-admission contract between an API server and the webhooks an operator registers
// (admission.k8s.io/v1 AdmissionReview: the request's attributes in, allowed or a Status out), in
// the form the embedded API server calls its in-process plugins with and virt-api's admitters
// (src/admission) implement; the webhook server (src/admission/webhook-server.ts) maps a real
// kube-apiserver's AdmissionReview onto the same attributes.
import type { UserInfo } from './user-info.ts';

/** An object as the API server holds it: its JSON. */
export type AdmissionObject = Record<string, unknown>;

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** metav1.StatusCause: one reason for a refusal, at a field. */
export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

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
  readonly object: AdmissionObject;
  readonly oldObject: AdmissionObject | undefined;
  readonly dryRun: boolean;
  readonly user: UserInfo | undefined;
}

/** What a plugin may do with the server's objects while it decides. */
export interface AdmissionApi {
  get(group: string, resource: string, namespace: string, name: string): AdmissionObject | undefined;
  /** Objects of a resource (one namespace, or all with undefined), optionally by label selector. */
  list(group: string, resource: string, namespace: string | undefined, labelSelector?: string): AdmissionObject[];
  /** A JSON patch (RFC 6902) of the object, as a webhook's client would send it; throws the API server's error. */
  jsonPatch(group: string, resource: string, namespace: string, name: string, ops: readonly object[], opts: { subresource?: 'status'; dryRun?: boolean }): AdmissionObject;
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

export const isDenial = (r: AdmissionResult): r is AdmissionDenial => r !== undefined && 'code' in r;

export interface ValidatingAdmissionPlugin {
  /** The webhook's name (`migration-create-validator.kubevirt.io`), quoted in denials. */
  readonly name: string;
  /** Its rules: which requests it sees. */
  matches(a: Pick<AdmissionAttributes, 'operation' | 'group' | 'resource' | 'subresource'>): boolean;
  /** undefined (or warnings) allows the request. */
  admit(a: AdmissionAttributes, api: AdmissionApi): AdmissionResult;
}
