// Authentication and the local mode's PKI: a CA, a serving certificate for loopback and an admin
// client certificate (O=system:masters), all made with the `openssl` CLI (Node's crypto can parse
// X.509 but cannot sign certificates), plus a random admin bearer token. Requests authenticate
// with the token or a client certificate signed by the CA; `writeKubeconfig` writes the admin
// kubeconfig kubectl and @kubernetes/client-node read.
import { randomBytes, timingSafeEqual, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { execa } from 'execa';

export interface Pki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
}

export interface User {
  name: string;
  groups: string[];
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execa('openssl', args, { cwd });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed while creating the API server's certificates in ${cwd}: ${err.stderr || err.message}`);
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/**
 * The PKI under `dir` (`ca.crt`, `apiserver.crt`, `admin.crt` and keys), created on first use and
 * reused afterwards so kubeconfigs stay valid across restarts. The serving certificate names
 * 127.0.0.1, ::1 and localhost plus `hosts`.
 */
export async function ensurePki(dir: string, hosts: readonly string[] = []): Promise<Pki> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = (n: string): string => join(dir, n);
  if (!existsSync(p('ca.crt')) || !existsSync(p('ca.key'))) {
    await openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=qvirt-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'], dir);
  }
  const sign = async (name: string, subj: string, ext: string): Promise<void> => {
    if (existsSync(p(`${name}.crt`)) && existsSync(p(`${name}.key`))) return;
    await openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj], dir);
    writeFileSync(p(`${name}.ext`), ext);
    await openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '3650', '-extfile', `${name}.ext`], dir);
  };
  const sans = ['IP:127.0.0.1', 'IP:::1', 'DNS:localhost', ...hosts.map((h) => (/^[0-9.:]+$/.test(h) ? `IP:${h}` : `DNS:${h}`))];
  await sign('apiserver', '/CN=qvirt-apiserver', `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${[...new Set(sans)].join(',')}\n`);
  await sign('admin', '/O=system:masters/CN=qvirt-admin', 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  const read = (n: string): string => readFileSync(p(n), 'utf8');
  return { caCert: read('ca.crt'), caKey: read('ca.key'), serverCert: read('apiserver.crt'), serverKey: read('apiserver.key'), adminCert: read('admin.crt'), adminKey: read('admin.key') };
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

/** Who sent a request: a valid bearer token, or a client certificate the TLS layer verified against the CA. */
export function authenticate(req: IncomingMessage, tokens: readonly string[]): User | undefined {
  const h = req.headers.authorization;
  if (h && /^bearer /i.test(h)) {
    const t = h.slice(7).trim();
    if (tokens.some((k) => safeEqual(k, t))) return { name: 'qvirt-admin', groups: ['system:masters', 'system:authenticated'] };
    return undefined;
  }
  const sock = req.socket as Partial<TLSSocket>;
  if (sock.authorized && typeof sock.getPeerX509Certificate === 'function') {
    const cert: X509Certificate | undefined = sock.getPeerX509Certificate();
    if (cert) {
      const fields = Object.fromEntries(cert.subject.split('\n').map((l) => l.split('=') as [string, string]));
      return { name: fields.CN ?? 'unknown', groups: [...(fields.O ? [fields.O] : []), 'system:authenticated'] };
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
