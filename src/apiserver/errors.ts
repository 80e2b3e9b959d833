// Kubernetes `Status` errors: every failure the API server returns is one of these, with the
// reason, code and message shapes kube-apiserver uses (k8s.io/apimachinery/pkg/api/errors).

import type { StatusCause } from '../kube/admission.ts';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** What a resource is called in messages: `virtualmachines.kubevirt.io`, or `pods` in the core group. */
export interface GroupResource {
  group: string;
  resource: string;
}

export const grString = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

/** An API failure: thrown anywhere in a request, written out by the server as its Status body. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
  toStatus(): StatusBody {
    const s: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.details) s.details = this.details;
    return s;
  }
}

export const StatusReasons = {
  BadRequest: 'BadRequest',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  Conflict: 'Conflict',
  Gone: 'Gone',
  Expired: 'Expired',
  Invalid: 'Invalid',
  MethodNotAllowed: 'MethodNotAllowed',
  NotAcceptable: 'NotAcceptable',
  UnsupportedMediaType: 'UnsupportedMediaType',
  InternalError: 'InternalError',
  RequestEntityTooLarge: 'RequestEntityTooLarge',
} as const;

export const CauseTypes = {
  FieldValueRequired: 'FieldValueRequired',
  FieldValueInvalid: 'FieldValueInvalid',
  FieldValueNotSupported: 'FieldValueNotSupported',
  FieldValueTypeInvalid: 'FieldValueTypeInvalid',
  FieldValueTooMany: 'FieldValueTooMany',
  FieldValueTooLong: 'FieldValueTooLong',
  FieldValueForbidden: 'FieldValueForbidden',
  FieldValueDuplicate: 'FieldValueDuplicate',
  UnexpectedServerResponse: 'UnexpectedServerResponse',
} as const;

export const badRequest = (message: string): ApiError => new ApiError(400, StatusReasons.BadRequest, message);

export const unauthorized = (): ApiError => new ApiError(401, StatusReasons.Unauthorized, 'Unauthorized');

/** Status details naming an object: kube-apiserver leaves out the core group's empty name. */
const objectDetails = (gr: GroupResource, name: string): StatusDetails => ({ name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource });

export const forbidden = (gr: GroupResource, name: string, why: string): ApiError =>
  new ApiError(403, StatusReasons.Forbidden, `${grString(gr)} "${name}" is forbidden: ${why}`, objectDetails(gr, name));

export const notFound = (gr: GroupResource, name: string): ApiError =>
  new ApiError(404, StatusReasons.NotFound, `${grString(gr)} "${name}" not found`, objectDetails(gr, name));

/** A path that names no resource the server knows. */
export const pathNotFound = (): ApiError => new ApiError(404, StatusReasons.NotFound, 'the server could not find the requested resource', {});

export const alreadyExists = (gr: GroupResource, name: string): ApiError =>
  new ApiError(409, StatusReasons.AlreadyExists, `${grString(gr)} "${name}" already exists`, objectDetails(gr, name));

export const conflict = (gr: GroupResource, name: string, why: string): ApiError =>
  new ApiError(409, StatusReasons.Conflict, `Operation cannot be fulfilled on ${grString(gr)} "${name}": ${why}`, objectDetails(gr, name));

export const OBJECT_MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

export const staleUpdate = (gr: GroupResource, name: string): ApiError => conflict(gr, name, OBJECT_MODIFIED);

export const gone = (message: string): ApiError => new ApiError(410, StatusReasons.Gone, message);

export const expired = (message: string): ApiError => new ApiError(410, StatusReasons.Expired, message);

export const methodNotAllowed = (method: string): ApiError =>
  new ApiError(405, StatusReasons.MethodNotAllowed, `the server does not allow this method on the requested resource (${method})`);

export const notAcceptable = (message: string): ApiError => new ApiError(406, StatusReasons.NotAcceptable, message);

export const unsupportedMediaType = (contentType: string): ApiError =>
  new ApiError(415, StatusReasons.UnsupportedMediaType, `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got ${contentType || 'none'})`);

export const internalError = (message: string): ApiError =>
  new ApiError(500, StatusReasons.InternalError, `Internal error occurred: ${message}`, { causes: [{ message }] });

/** One field error, rendered the way apimachinery's field.Error renders. */
export interface FieldError {
  type: (typeof CauseTypes)[keyof typeof CauseTypes];
  field: string;
  /** The offending value, when the message shows it. */
  value?: unknown;
  /** The part after the value: `must be of type integer`, `supported values: ...`. */
  detail?: string;
  /** Whether `value` is shown (Required, Forbidden, TooMany have none). */
  hasValue?: boolean;
}

const typeLabel: Record<FieldError['type'], string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueTooMany: 'Too many',
  FieldValueTooLong: 'Too long',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
  UnexpectedServerResponse: 'Internal error',
};

function renderValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return Array.isArray(v) ? '[]interface {}' : '"object"';
  return String(v);
}

/** `spec.x: Invalid value: "y": detail` minus the field prefix (that is the cause's message). */
export function fieldErrorMessage(e: FieldError): string {
  let s = typeLabel[e.type];
  if (e.hasValue !== false && e.value !== undefined && e.type !== 'FieldValueRequired' && e.type !== 'FieldValueForbidden') s += `: ${renderValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** 422 Invalid, with one cause per field error: `Kind.group "name" is invalid: [a: ..., b: ...]`. */
export function invalid(kind: string, group: string, name: string, errs: FieldError[]): ApiError {
  const rendered = errs.map((e) => (e.field ? `${e.field}: ` : '') + fieldErrorMessage(e));
  const qualified = group ? `${kind}.${group}` : kind;
  const list = rendered.length === 1 ? rendered[0]! : `[${rendered.join(', ')}]`;
  return new ApiError(422, StatusReasons.Invalid, `${qualified} "${name}" is invalid: ${list}`, {
    ...(name ? { name } : {}),
    ...(group ? { group } : {}),
    kind,
    causes: errs.map((e) => ({ reason: e.type, message: fieldErrorMessage(e), field: e.field })),
  });
}
