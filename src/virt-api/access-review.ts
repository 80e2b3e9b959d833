// virt-api's authorizer (pkg/virt-api/rest/authorizer.go): may this user do this to this
// subresource? Asked of the API server as a SubjectAccessReview with the caller's name, groups,
// uid and extra, so RBAC (or the embedded server's authorizer) decides, as for any other request.
import type { KubeClient, KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import type { ResourceAttributes } from './subresource-routes.ts';
import type { AccessVerdict, RequestUser } from './subresource-api.ts';

interface SubjectAccessReview extends KubeObject {
  spec: Record<string, unknown>;
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** The SubjectAccessReview's spec for a caller and attributes. Pure. */
export function accessReviewSpec(user: RequestUser, attrs: ResourceAttributes): Record<string, unknown> {
  return {
    user: user.name,
    groups: [...user.groups],
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.extra && Object.keys(user.extra).length ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) } : {}),
    resourceAttributes: { ...attrs },
  };
}

/** An authorizer that asks the API server. */
export function accessReviewAuthorizer(client: KubeClient): (user: RequestUser, attrs: ResourceAttributes) => Promise<AccessVerdict> {
  return async (user, attrs) => {
    const sar = await client.create<SubjectAccessReview>(Resources.subjectAccessReviews, {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec: accessReviewSpec(user, attrs),
    });
    const s = sar.status ?? {};
    return { allowed: s.allowed === true && s.denied !== true, ...(s.reason || s.evaluationError ? { reason: s.reason || s.evaluationError } : {}) };
  };
}
