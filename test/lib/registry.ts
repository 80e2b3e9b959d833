// A real container registry for tests and benchmarks: Debian's docker-registry (the CNCF
// distribution registry, scripts/setup.sh installs it) on loopback, with TLS from a CA the project's
// PKI code makes and htpasswd (bcrypt, apache2-utils' htpasswd -B) basic auth. Images are pushed
// with skopeo. Stop it with `stop()` (the process and its directory).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
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
  /** Pushes a skopeo source (`oci:DIR:TAG`, ...) as `<host>/<repo>`. */
  push(src: string, repo: string): void;
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

export async function startRegistry(dir: string, o: { user?: string; password?: string } = {}): Promise<TestRegistry> {
  const user = o.user ?? 'qvirt';
  const password = o.password ?? 'registry-secret';
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const pki = join(dir, 'pki');
  ensureCaFiles(pki, 'qvirt test registry CA');
  ensureCertFiles(pki, 'registry', { commonName: 'localhost' }, { usages: ['serverAuth'], hosts: ['localhost', '127.0.0.1'] });
  execFileSync('htpasswd', ['-Bbc', join(dir, 'htpasswd'), user, password], { stdio: 'ignore' });
  const port = await freePort();
  const host = `localhost:${port}`;
  const config = join(dir, 'config.yml');
  writeFileSync(config, [
    'version: 0.1',
    'log: {level: warn, accesslog: {disabled: true}}',
    `storage: {filesystem: {rootdirectory: ${join(dir, 'storage')}}, delete: {enabled: true}}`,
    `http: {addr: "127.0.0.1:${port}", tls: {certificate: ${join(pki, 'registry.crt')}, key: ${join(pki, 'registry.key')}}}`,
    `auth: {htpasswd: {realm: qvirt-test, path: ${join(dir, 'htpasswd')}}}`,
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
    push: (src, repo) => {
      execFileSync('skopeo', ['--insecure-policy', 'copy', '-q', '--dest-cert-dir', join(certsDir, host), '--dest-creds', `${user}:${password}`, src, `docker://${host}/${repo}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    },
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) { child.kill('SIGTERM'); await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]); }
      if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; }
    },
  };
}
