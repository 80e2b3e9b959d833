// The delegated-auth reviews other components post to the API server, the way aggregated API
// servers and kubelets check their callers: `TokenReview` (authentication.k8s.io/v1: who does this
// bearer token belong to?) and `SubjectAccessReview` (authorization.k8s.io/v1: may this user do
// this?). Both are create-only and never stored: the answer comes back in `status`.
//
// The embedded server has no RBAC: every authenticated request it serves is allowed, and so is
// every SubjectAccessReview unless an `Authorizer` says otherwise (local mode has none; tests pass
// one to check how a component handles a denial).
import { badRequest } from './errors.ts';
import type { User } from './auth.ts';

export const TOKEN_REVIEWS_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
export const SUBJECT_ACCESS_REVIEWS_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** spec.resourceAttributes of a SubjectAccessReview. */
export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

export interface AccessRequest {
  user: string;
  groups: string[];
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
}

export interface AccessDecision {
  allowed: boolean;
  reason: string;
}

/** What SubjectAccessReviews answer. */
export type Authorizer = (req: AccessRequest) => AccessDecision;

export const allowAllAuthorizer: Authorizer = () => ({ allowed: true, reason: 'the embedded API server has no RBAC: every authenticated user is allowed' });

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const strings = (v: unknown, field: string): string[] => {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw badRequest(`${field}: must be a list of strings`);
  return v as string[];
};

function reviewSpec(body: unknown, kind: string, apiVersion: string): Record<string, unknown> {
  const o = obj(body);
  if (!o) throw badRequest(`the request body must be a ${kind} object`);
  if (o.kind !== undefined && o.kind !== kind) throw badRequest(`kind: expected ${kind}, got ${String(o.kind)}`);
  if (o.apiVersion !== undefined && o.apiVersion !== apiVersion) throw badRequest(`apiVersion: expected ${apiVersion}, got ${String(o.apiVersion)}`);
  const spec = obj(o.spec);
  if (!spec) throw badRequest(`spec: Required value: a ${kind} needs a spec`);
  return spec;
}

/** Answers a TokenReview: `identify` maps a token to its user (undefined: not a token this server knows). */
export function tokenReview(body: unknown, identify: (token: string) => User | undefined): Record<string, unknown> {
  const apiVersion = 'authentication.k8s.io/v1';
  const spec = reviewSpec(body, 'TokenReview', apiVersion);
  if (typeof spec.token !== 'string' || spec.token === '') throw badRequest('spec.token: Required value: the token to review');
  const audiences = strings(spec.audiences, 'spec.audiences');
  const user = identify(spec.token);
  const status = user
    ? { authenticated: true, user: { username: user.name, groups: user.groups }, ...(audiences.length ? { audiences } : {}) }
    : { authenticated: false, error: 'the token is not known to this API server' };
  return { apiVersion, kind: 'TokenReview', metadata: { creationTimestamp: null }, spec: { token: spec.token, ...(audiences.length ? { audiences } : {}) }, status };
}

/** Answers a SubjectAccessReview with `authorize`. */
export function subjectAccessReview(body: unknown, authorize: Authorizer): Record<string, unknown> {
  const apiVersion = 'authorization.k8s.io/v1';
  const spec = reviewSpec(body, 'SubjectAccessReview', apiVersion);
  const user = typeof spec.user === 'string' ? spec.user : '';
  const groups = strings(spec.groups, 'spec.groups');
  if (!user && groups.length === 0) throw badRequest('spec.user: Required value: at least one of user or groups must be given');
  const ra = obj(spec.resourceAttributes);
  const nra = obj(spec.nonResourceAttributes);
  if (!ra && !nra) throw badRequest('spec.resourceAttributes: Required value: exactly one of resourceAttributes or nonResourceAttributes must be given');
  if (ra && nra) throw badRequest('spec.nonResourceAttributes: Forbidden: resourceAttributes and nonResourceAttributes cannot both be given');
  const text = (o: Record<string, unknown>, k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  const resourceAttributes = ra ? Object.fromEntries(['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'].flatMap((k) => (text(ra, k) !== undefined ? [[k, text(ra, k)]] : []))) as ResourceAttributes : undefined;
  const nonResourceAttributes = nra ? { ...(text(nra, 'path') !== undefined ? { path: text(nra, 'path') } : {}), ...(text(nra, 'verb') !== undefined ? { verb: text(nra, 'verb') } : {}) } : undefined;
  const d = authorize({ user, groups, ...(resourceAttributes ? { resourceAttributes } : {}), ...(nonResourceAttributes ? { nonResourceAttributes } : {}) });
  return {
    apiVersion, kind: 'SubjectAccessReview', metadata: { creationTimestamp: null },
    spec: { ...spec },
    status: { allowed: d.allowed, ...(d.allowed ? {} : { denied: true }), reason: d.reason },
  };
}
