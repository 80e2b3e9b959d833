// Who made a request, as Kubernetes' authenticators hand it on (authentication.k8s.io/v1
// UserInfo: the name and groups; extra and uid are not used here). The embedded API server's
// authenticators produce it, admission plugins and the node agent's endpoint read it.

export interface UserInfo {
  name: string;
  groups: string[];
}
