// Who may use the handler's subresource endpoint, decided the way aggregated API servers decide:
// the caller presents their own Kubernetes credentials — a bearer token, checked with a
// TokenReview, or a client certificate, verified by TLS against the cluster's client CA
// (kube-system/extension-apiserver-authentication `client-ca-file`) — and a SubjectAccessReview
// asks the API server whether that user may use the subresource (group subresources.kubevirt.io,
// resource virtualmachineinstances). Answers are cached briefly per token / per request.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { KubeClient, KubeObject } from '../../src/kube/client.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { Logger } from '../../src/log/logger.ts';
import { CLIENT_CA_CONFIGMAP } from '../../src/kube/extension-apiserver-authentication.ts';
import { userOfCertificate } from '../../src/pki/certificate-user.ts';
import { GROUP, SUBRESOURCE_GROUP } from '../../src/api/constants.ts';

export const SUBRESOURCE_VERSION = 'v1';

interface ClientCaConfigMap extends KubeObject { data?: Record<string, string> }
interface TokenReview extends KubeObject {
  spec: { token: string };
  status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] }; error?: string };
}
interface SubjectAccessReview extends KubeObject {
  spec: { user: string; groups: readonly string[]; resourceAttributes: Record<string, string> };
  status?: { allowed?: boolean; reason?: string; evaluationError?: string };
}

interface NonResourceAccessReview extends KubeObject {
  spec: { user: string; groups: readonly string[]; nonResourceAttributes: { path: string; verb: string } };
  status?: { allowed?: boolean; reason?: string; evaluationError?: string };
}

export interface EndpointUser {
  readonly name: string;
  readonly groups: readonly string[];
  /** How the user proved who they are. */
  readonly via: 'token' | 'client-certificate';
}

export interface Access {
  readonly verb: 'get' | 'update';
  /** The subresource of subresources.kubevirt.io's virtualmachineinstances; '' with `group` kubevirt.io: the VMI itself. */
  readonly subresource: string;
  readonly group?: typeof GROUP;
}


/** How an access reads in a refusal: `get virtualmachineinstances/pause in group subresources.kubevirt.io`. Pure. */
export function describeAccess(a: Access): string {
  return a.group ? `${a.verb} virtualmachineinstances in group ${a.group}` : `${a.verb} virtualmachineinstances/${a.subresource} in group ${SUBRESOURCE_GROUP}`;
}

/** Subresources that only read (verb get); every other one changes the VM (verb update). */
const READ_SUBRESOURCES = new Set(['console', 'vnc', 'vnc/screenshot', 'guestosinfo', 'userlist', 'filesystemlist', 'qmp']);

/** The permission a request needs: `get` to read or attach, `update` to change; unsafe QMP is `update` on `qmp-unsafe`. Pure. */
export function subresourceAccess(subresource: string, unsafe = false): Access {
  if (subresource === 'qmp' && unsafe) return { verb: 'update', subresource: 'qmp-unsafe' };
  // A VMI's usage is read by whoever may read the VMI (kubectl top pod: whoever may get pods' metrics;
  // KubeVirt's view role reads VMIs).
  if (subresource === 'usage') return { verb: 'get', subresource: '', group: GROUP };
  return { verb: READ_SUBRESOURCES.has(subresource) ? 'get' : 'update', subresource };
}

export class AuthUnavailableError extends Error {
  override name = 'AuthUnavailableError';
}

export interface Decision {
  readonly allowed: boolean;
  readonly reason: string;
}

export interface EndpointAuthOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  /** How long TokenReview and SubjectAccessReview answers are reused (default 10 s). */
  readonly cacheMs?: number;
}

type Cached<T> = { value: T; expires: number };

export class EndpointAuth {
  private readonly o: EndpointAuthOptions;
  private readonly tokens = new Map<string, Cached<EndpointUser | undefined>>();
  private readonly decisions = new Map<string, Cached<Decision>>();
  /** PEM of the client CA, when the cluster publishes one. */
  clientCa: string | undefined;

  constructor(o: EndpointAuthOptions) {
    this.o = o;
  }

  /** Reads the cluster's client CA (absent: client certificates are not accepted, tokens still are). */
  async loadClientCa(): Promise<string | undefined> {
    try {
      const cm = await this.o.client.get<ClientCaConfigMap>(Resources.configMaps, CLIENT_CA_CONFIGMAP.namespace, CLIENT_CA_CONFIGMAP.name);
      this.clientCa = cm.data?.[CLIENT_CA_CONFIGMAP.key] || undefined;
    } catch (err) {
      if (!isNotFound(err)) this.o.log.warn({ err: (err as Error).message }, 'cannot read the cluster\'s client CA; client certificates are not accepted');
      this.clientCa = undefined;
    }
    return this.clientCa;
  }

  /** The caller, or undefined when they sent no valid credentials. Throws AuthUnavailableError when the API server cannot be asked. */
  async authenticate(req: IncomingMessage): Promise<EndpointUser | undefined> {
    const h = req.headers.authorization;
    if (h !== undefined) {
      if (!/^bearer /i.test(h)) return undefined;
      return this.reviewToken(h.slice(7).trim());
    }
    const sock = req.socket as Partial<TLSSocket>;
    if (this.clientCa && sock.authorized === true && typeof sock.getPeerX509Certificate === 'function') {
      const cert = sock.getPeerX509Certificate();
      if (cert) {
        const user = userOfCertificate(cert);
        return user.name && user.name !== 'unknown' ? { ...user, via: 'client-certificate' } : undefined;
      }
    }
    return undefined;
  }

  private async reviewToken(token: string): Promise<EndpointUser | undefined> {
    if (!token) return undefined;
    const key = createHash('sha256').update(token).digest('hex');
    const hit = this.cached(this.tokens, key);
    if (hit) return hit.value;
    let review: TokenReview;
    try {
      review = await this.o.client.create<TokenReview>(Resources.tokenReviews, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token } });
    } catch (err) {
      throw new AuthUnavailableError(`TokenReview failed: ${(err as Error).message}`);
    }
    const s = review.status;
    const user: EndpointUser | undefined = s?.authenticated === true && s.user?.username
      ? { name: s.user.username, groups: s.user.groups ?? [], via: 'token' }
      : undefined;
    this.tokens.set(key, { value: user, expires: Date.now() + (this.o.cacheMs ?? 10_000) });
    return user;
  }

  /** Whether `user` may use `access` on the VMI `namespace/name`. */
  async authorize(user: EndpointUser, access: Access, namespace: string, name: string): Promise<Decision> {
    const resourceAttributes: Record<string, string> = access.group
      ? { namespace, name, verb: access.verb, group: access.group, version: 'v1', resource: 'virtualmachineinstances' }
      : { namespace, name, verb: access.verb, group: SUBRESOURCE_GROUP, version: SUBRESOURCE_VERSION, resource: 'virtualmachineinstances', subresource: access.subresource };
    const key = JSON.stringify([user.name, user.groups, resourceAttributes]);
    const hit = this.cached(this.decisions, key);
    if (hit) return hit.value;
    let sar: SubjectAccessReview;
    try {
      sar = await this.o.client.create<SubjectAccessReview>(Resources.subjectAccessReviews, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec: { user: user.name, groups: user.groups, resourceAttributes } });
    } catch (err) {
      throw new AuthUnavailableError(`SubjectAccessReview failed: ${(err as Error).message}`);
    }
    const d: Decision = { allowed: sar.status?.allowed === true, reason: sar.status?.reason || sar.status?.evaluationError || '' };
    this.decisions.set(key, { value: d, expires: Date.now() + (this.o.cacheMs ?? 10_000) });
    return d;
  }

  /**
   * Whether `user` may `verb` the non-resource URL `path` (kube-rbac-proxy's check in front of a
   * component's /metrics: a ClusterRole rule `nonResourceURLs: ["/metrics"], verbs: ["get"]`).
   */
  async authorizeNonResource(user: EndpointUser, path: string, verb: 'get'): Promise<Decision> {
    const nonResourceAttributes = { path, verb };
    const key = JSON.stringify([user.name, user.groups, nonResourceAttributes]);
    const hit = this.cached(this.decisions, key);
    if (hit) return hit.value;
    let sar: NonResourceAccessReview;
    try {
      sar = await this.o.client.create<NonResourceAccessReview>(Resources.subjectAccessReviews, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec: { user: user.name, groups: user.groups, nonResourceAttributes } });
    } catch (err) {
      throw new AuthUnavailableError(`SubjectAccessReview failed: ${(err as Error).message}`);
    }
    const d: Decision = { allowed: sar.status?.allowed === true, reason: sar.status?.reason || sar.status?.evaluationError || '' };
    this.decisions.set(key, { value: d, expires: Date.now() + (this.o.cacheMs ?? 10_000) });
    return d;
  }

  private cached<T>(m: Map<string, Cached<T>>, key: string): Cached<T> | undefined {
    const c = m.get(key);
    if (!c) return undefined;
    if (c.expires > Date.now()) return c;
    m.delete(key);
    if (m.size > 10_000) m.clear();
    return undefined;
  }
}
