// Authentication and the local mode's PKI: a CA, a serving certificate for loopback and an admin
// client certificate (O=system:masters), made by the project's X.509 issuer (src/pki), plus a
// random admin bearer token. Requests authenticate with the token or a client certificate signed by
// the CA; `writeKubeconfig` writes the admin kubeconfig kubectl and @kubernetes/client-node read.
import { randomBytes, timingSafeEqual, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { ensureCaFiles, ensureCertFiles } from '../pki/cert-files.ts';
import { userOfCertificate } from '../pki/certificate-user.ts';
import type { UserInfo } from '../kube/user-info.ts';
import type { EndEntityProfile } from '../pki/x509.ts';

export interface Pki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  /** The local node's kubelet serving certificate (same names as the API server's). */
  kubeletCert: string;
  kubeletKey: string;
  /** What the API server presents to kubelets (pods/log). */
  kubeletClientCert: string;
  kubeletClientKey: string;
}

/** A request's user: Kubernetes' UserInfo (src/kube/user-info.ts). */
export type User = UserInfo;

/**
 * The PKI under `dir` (`ca.crt`, `apiserver.crt`, `admin.crt` and keys), created on first use and
 * reused afterwards so kubeconfigs stay valid across restarts. The serving certificates name
 * 127.0.0.1, ::1 and localhost plus `hosts` (made anew when they do not name them all).
 */
export function ensurePki(dir: string, hosts: readonly string[] = []): Pki {
  const ca = ensureCaFiles(dir, 'qvirt-ca');
  const serving: EndEntityProfile = { usages: ['serverAuth'], hosts: ['127.0.0.1', '::1', 'localhost', ...hosts] };
  const client: EndEntityProfile = { usages: ['clientAuth'] };
  const server = ensureCertFiles(dir, 'apiserver', { commonName: 'qvirt-apiserver' }, serving);
  const admin = ensureCertFiles(dir, 'admin', { organizations: ['system:masters'], commonName: 'qvirt-admin' }, client);
  const kubelet = ensureCertFiles(dir, 'kubelet', { commonName: 'qvirt-kubelet' }, serving);
  const kubeletClient = ensureCertFiles(dir, 'apiserver-kubelet-client', { organizations: ['system:masters'], commonName: 'kube-apiserver-kubelet-client' }, client);
  return { caCert: ca.certPem, caKey: ca.keyPem, serverCert: server.certPem, serverKey: server.keyPem, adminCert: admin.certPem, adminKey: admin.keyPem,
    kubeletCert: kubelet.certPem, kubeletKey: kubelet.keyPem, kubeletClientCert: kubeletClient.certPem, kubeletClientKey: kubeletClient.keyPem };
}

/** The admin bearer token stored in `dir/token`, created on first use. */
export function ensureToken(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = join(dir, 'token');
  if (existsSync(f)) return readFileSync(f, 'utf8').trim();
  const t = randomBytes(24).toString('base64url');
  writeFileSync(f, `${t}\n`, { mode: 0o600 });
  return t;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Who the admin tokens authenticate as. */
export const ADMIN_USER: User = { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] };

/** A bearer token known to the server besides the admin tokens, and who it authenticates as. */
export interface TokenUser {
  token: string;
  user: User;
}

/** Who a bearer token belongs to: an admin token, one of `users`, or nobody. */
export function userOfToken(token: string, tokens: readonly string[], users: readonly TokenUser[] = []): User | undefined {
  if (token && tokens.some((k) => safeEqual(k, token))) return ADMIN_USER;
  const u = token ? users.find((x) => safeEqual(x.token, token)) : undefined;
  return u ? { name: u.user.name, groups: [...u.user.groups.filter((g) => g !== 'system:authenticated'), 'system:authenticated'] } : undefined;
}

/**
 * The user of each verified client certificate, by connection and handshake (a TLS 1.2 renegotiation can
 * bring another certificate; its Finished message differs): reading the peer back as an X509Certificate at
 * every request cost the local mode ~4 ms of CPU per VM start (its components' ~40 requests).
 */
const certificateUsers = new WeakMap<object, { finished: Buffer | undefined; user: User }>();

/** Who sent a request: a valid bearer token, or a client certificate the TLS layer verified against the CA. */
export function authenticate(req: IncomingMessage, tokens: readonly string[], users: readonly TokenUser[] = []): User | undefined {
  const h = req.headers.authorization;
  if (h && /^bearer /i.test(h)) return userOfToken(h.slice(7).trim(), tokens, users);
  const sock = req.socket as Partial<TLSSocket>;
  if (sock.authorized && typeof sock.getPeerX509Certificate === 'function') {
    const finished = sock.getPeerFinished?.();
    const known = certificateUsers.get(sock);
    if (known && finished && known.finished?.equals(finished)) return { name: known.user.name, groups: [...known.user.groups] };
    const cert: X509Certificate | undefined = sock.getPeerX509Certificate();
    if (cert) {
      const user = userOfCertificate(cert);
      certificateUsers.set(sock, { finished, user });
      return { name: user.name, groups: [...user.groups] };
    }
  }
  return undefined;
}

export interface KubeconfigAccess {
  server: string;
  /** PEM of the CA that signed the serving certificate (https). */
  caCert?: string | undefined;
  token?: string | undefined;
  clientCert?: string | undefined;
  clientKey?: string | undefined;
  /** Context, cluster and user name (default `qvirt`). */
  name?: string;
  namespace?: string;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Writes `dir/kubeconfig` (mode 0600) for the given access and returns its path. */
export function writeKubeconfig(dir: string, a: KubeconfigAccess): string {
  mkdirSync(dir, { recursive: true });
  const name = a.name ?? 'qvirt';
  const cluster: Record<string, string> = { server: a.server };
  if (a.caCert) cluster['certificate-authority-data'] = b64(a.caCert);
  const user: Record<string, string> = {};
  if (a.token) user.token = a.token;
  if (a.clientCert && a.clientKey) {
    user['client-certificate-data'] = b64(a.clientCert);
    user['client-key-data'] = b64(a.clientKey);
  }
  const ctx: Record<string, string> = { cluster: name, user: name };
  if (a.namespace) ctx.namespace = a.namespace;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: ctx }],
    'current-context': name,
    preferences: {},
  };
  const path = join(dir, 'kubeconfig');
  // JSON is YAML: kubectl and client-node both read it.
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return path;
}
