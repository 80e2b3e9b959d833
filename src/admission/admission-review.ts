/**
 * AdmissionReview v1 (`admission.k8s.io/v1`), what kube-apiserver POSTs to a validating webhook
 * and what it expects back: the request parsed into the attributes the in-process plugins decide on
 * (every malformed field named), and a plugin's answer as the review's response (uid echoed,
 * `allowed`, the denial's `status` with code, reason, message and causes, `warnings`).
 */
import type { AdmissionAttributes, AdmissionOperation, AdmissionResult, AdmissionObject } from '../kube/admission.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_REVIEW_KIND = 'AdmissionReview';

export class AdmissionReviewError extends Error {
  override name = 'AdmissionReviewError';
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

function str(o: Record<string, unknown>, key: string, path: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') {
    if (required) throw new AdmissionReviewError(`${path}.${key}: Required value`);
    return undefined;
  }
  if (typeof v !== 'string') throw new AdmissionReviewError(`${path}.${key}: must be a string`);
  return v;
}

export interface ParsedReview {
  readonly uid: string;
  /** undefined for CONNECT, which no plugin here handles. */
  readonly attributes: AdmissionAttributes | undefined;
}

/** The request of an AdmissionReview v1; throws AdmissionReviewError naming the bad field. */
export function parseAdmissionReview(body: unknown): ParsedReview {
  if (!isObj(body)) throw new AdmissionReviewError('the body must be an AdmissionReview object');
  if (body.apiVersion !== ADMISSION_API_VERSION) throw new AdmissionReviewError(`apiVersion: must be ${ADMISSION_API_VERSION} (got ${JSON.stringify(body.apiVersion)})`);
  if (body.kind !== ADMISSION_REVIEW_KIND) throw new AdmissionReviewError(`kind: must be ${ADMISSION_REVIEW_KIND} (got ${JSON.stringify(body.kind)})`);
  const r = body.request;
  if (!isObj(r)) throw new AdmissionReviewError('request: Required value');
  const uid = str(r, 'uid', 'request', true)!;
  const operation = str(r, 'operation', 'request', true)!;
  if (!OPERATIONS.includes(operation)) throw new AdmissionReviewError(`request.operation: must be one of ${OPERATIONS.join(', ')} (got ${JSON.stringify(operation)})`);
  const resource = r.resource;
  if (!isObj(resource)) throw new AdmissionReviewError('request.resource: Required value');
  const object = r.object;
  const oldObject = r.oldObject;
  if (object !== undefined && object !== null && !isObj(object)) throw new AdmissionReviewError('request.object: must be an object');
  if (oldObject !== undefined && oldObject !== null && !isObj(oldObject)) throw new AdmissionReviewError('request.oldObject: must be an object');
  if (operation === 'CONNECT') return { uid, attributes: undefined };
  const user = isObj(r.userInfo) ? r.userInfo : {};
  const groups = Array.isArray(user.groups) ? user.groups.filter((g): g is string => typeof g === 'string') : [];
  const username = typeof user.username === 'string' ? user.username : '';
  return {
    uid,
    attributes: {
      operation: operation as AdmissionOperation,
      group: str(resource, 'group', 'request.resource', false) ?? '',
      version: str(resource, 'version', 'request.resource', true)!,
      resource: str(resource, 'resource', 'request.resource', true)!,
      subresource: str(r, 'subResource', 'request', false),
      namespace: str(r, 'namespace', 'request', false) ?? '',
      name: str(r, 'name', 'request', false) ?? '',
      // DELETE sends the object being deleted as oldObject and no object.
      object: (isObj(object) ? object : isObj(oldObject) ? oldObject : {}) as AdmissionObject,
      oldObject: isObj(oldObject) ? oldObject as AdmissionObject : undefined,
      dryRun: r.dryRun === true,
      user: username ? { name: username, groups } : undefined,
    },
  };
}

/** The AdmissionReview answering `uid` with a plugin's result. */
export function admissionReviewResponse(uid: string, result: AdmissionResult): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: true };
  if (result && 'code' in result) {
    response.allowed = false;
    response.status = {
      code: result.code,
      message: result.message,
      ...(result.reason ? { reason: result.reason } : {}),
      ...(result.causes?.length ? { details: { causes: result.causes } } : {}),
    };
  } else if (result?.warnings.length) {
    response.warnings = [...result.warnings];
  }
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_REVIEW_KIND, response };
}
