// A real container registry for tests and benchmarks: Debian's docker-registry (the CNCF
// distribution registry, scripts/setup.sh installs it) on loopback, with TLS from a CA the project's
// PKI code makes and htpasswd (bcrypt, apache2-utils' htpasswd -B) basic auth, or token auth with a
// token server of its own (startTokenServer). Images are pushed
// with skopeo. Stop it with `stop()` (the process and its directory).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { sign as cryptoSign, X509Certificate } from 'node:crypto';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { ensureCaFiles, ensureCertFiles } from '../../src/pki/cert-files.ts';

export interface TestRegistry {
  /** `localhost:PORT` */
  readonly host: string;
  readonly port: number;
  /** The CA that signed the registry's certificate (PEM file). */
  readonly caFile: string;
  /** A certs.d directory: `<certsDir>/<host>/ca.crt`. */
  readonly certsDir: string;
  readonly user: string;
  readonly password: string;
  /** Pushes a skopeo source (`oci:DIR:TAG`, ...) as `<host>/<repo>` (async: a token server runs in this process). */
  push(src: string, repo: string): Promise<void>;
  /** How many tokens the token server issued (token auth). */
  tokensIssued(): number;
  /** What the registry printed (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    }).on('error', reject);
  });
}

const listening = (port: number) => new Promise<boolean>((resolve) => {
  const c = connect(port, '127.0.0.1').on('connect', () => { c.destroy(); resolve(true); }).on('error', () => resolve(false));
});

/**
 * A token server as the distribution registry's `auth: token` expects (docker's token auth, what
 * Docker Hub and quay.io do): GET /token with basic auth (the user and password) answers a JWT
 * (ES256, the signing certificate in its x5c header, issued by the CA that is the registry's
 * rootcertbundle) granting what the scope asks for.
 */
async function startTokenServer(pki: string, user: string, password: string): Promise<{ port: number; server: Server; issued: () => number }> {
  const signer = ensureCertFiles(pki, 'token-signer', { commonName: 'qvirt test token signer' }, { usages: ['serverAuth'] });
  const server = ensureCertFiles(pki, 'token-server', { commonName: 'localhost' }, { usages: ['serverAuth'], hosts: ['localhost', '127.0.0.1'] });
  const x5c = new X509Certificate(signer.certPem).raw.toString('base64');
  const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');
  let issued = 0;
  const srv = createHttpsServer({ key: server.keyPem, cert: server.certPem }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (url.pathname !== '/token' || !basic || Buffer.from(basic, 'base64').toString() !== `${user}:${password}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}');
      return;
    }
    const access = url.searchParams.getAll('scope').map((sc) => { const [type, name, actions] = sc.split(':'); return { type, name, actions: (actions ?? '').split(',') }; });
    const now = Math.floor(Date.now() / 1000);
    const head = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', x5c: [x5c] }));
    const body = b64url(JSON.stringify({ iss: 'qvirt-test-token', sub: user, aud: url.searchParams.get('service'), exp: now + 300, nbf: now - 10, iat: now, jti: String(now) + String(++issued), access }));
    // JOSE's ES256: r || s, 32 bytes each (not DER).
    const sig = b64url(cryptoSign('sha256', Buffer.from(`${head}.${body}`), { key: signer.keyPem, dsaEncoding: 'ieee-p1363' }));
    const token = `${head}.${body}.${sig}`;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { port: (srv.address() as { port: number }).port, server: srv, issued: () => issued };
}

export async function startRegistry(dir: string, o: { user?: string; password?: string; auth?: 'htpasswd' | 'token' } = {}): Promise<TestRegistry> {
  const user = o.user ?? 'qvirt';
  const password = o.password ?? 'registry-secret';
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const pki = join(dir, 'pki');
  ensureCaFiles(pki, 'qvirt test registry CA');
  ensureCertFiles(pki, 'registry', { commonName: 'localhost' }, { usages: ['serverAuth'], hosts: ['localhost', '127.0.0.1'] });
  execFileSync('htpasswd', ['-Bbc', join(dir, 'htpasswd'), user, password], { stdio: 'ignore' });
  const tokens = o.auth === 'token' ? await startTokenServer(pki, user, password) : undefined;
  const port = await freePort();
  const host = `localhost:${port}`;
  const config = join(dir, 'config.yml');
  writeFileSync(config, [
    'version: 0.1',
    'log: {level: warn, accesslog: {disabled: true}}',
    `storage: {filesystem: {rootdirectory: ${join(dir, 'storage')}}, delete: {enabled: true}}`,
    `http: {addr: "127.0.0.1:${port}", tls: {certificate: ${join(pki, 'registry.crt')}, key: ${join(pki, 'registry.key')}}}`,
    tokens
      ? `auth: {token: {realm: "https://localhost:${tokens.port}/token", service: qvirt-test-registry, issuer: qvirt-test-token, rootcertbundle: ${join(pki, 'ca.crt')}}}`
      : `auth: {htpasswd: {realm: qvirt-test, path: ${join(dir, 'htpasswd')}}}`,
    '',
  ].join('\n'));
  const certsDir = join(dir, 'certs.d');
  mkdirSync(join(certsDir, host), { recursive: true });
  execFileSync('cp', [join(pki, 'ca.crt'), join(certsDir, host, 'ca.crt')]);
  let out = '';
  const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const until = Date.now() + 30_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || Date.now() > until) { child.kill('SIGKILL'); throw new Error(`docker-registry did not start on ${host}: ${out.slice(-2000)}`); }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    host, port, caFile: join(pki, 'ca.crt'), certsDir, user, password,
    push: async (src, repo) => {
      await promisify(execFile)('skopeo', ['--insecure-policy', 'copy', '-q', '--dest-cert-dir', join(certsDir, host), '--dest-creds', `${user}:${password}`, src, `docker://${host}/${repo}`]);
    },
    output: () => out,
    tokensIssued: () => tokens?.issued() ?? 0,
    stop: async () => {
      if (tokens) await new Promise<void>((r) => tokens.server.close(() => r()));
      if (child.exitCode === null) { child.kill('SIGTERM'); await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]); }
      if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; }
    },
  };
}
