// Kubeconfigs and in-cluster service accounts read without loading @kubernetes/client-node: its
// KubeConfig imports the whole generated API with it (measured: 250 ms of CPU, 26 MB of heap and
// ~80 MB of RSS in every process that loads it: the local mode, virt-handler, virt-controller).
// The common credentials are read here: a client certificate (file or data), a bearer token (or a
// token file, read again whenever the transport is rebuilt), basic auth, the cluster's CA (file or
// data), insecure-skip-tls-verify and tls-server-name, from one file or $KUBECONFIG's files merged as
// kubectl merges them. A user that needs more (an exec plugin, an auth provider, impersonation, a
// proxy) is handed to client-node's KubeConfig, imported only then. The decisions are pure
// (parseKubeconfig, kubeconfigSource, inClusterContext).
import { existsSync, readFileSync } from 'node:fs';
import type https from 'node:https';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import yaml from 'js-yaml';

/** What a client needs of a kubeconfig: the API server, and its user's TLS material and headers (client-node's KubeConfig has both). */
export interface ClusterCredentials {
  getCurrentCluster(): { readonly server: string } | null;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}

/** The in-cluster service account's files (client-node's, and kubelet's projected volume). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Src = { readonly data: string } | { readonly file: string };

/** The current context of a kubeconfig, resolved. */
export interface KubeconfigContext {
  readonly server: string;
  readonly ca?: Src;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
  readonly clientCert?: Src;
  readonly clientKey?: Src;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly namespace?: string;
  /** Why client-node must apply this user's credentials (an exec plugin, an auth provider, …), if it must. */
  readonly delegate?: string;
}

const obj = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' && !Array.isArray(x) ? x as Record<string, unknown> : {});
const str = (x: unknown): string | undefined => (typeof x === 'string' && x !== '' ? x : undefined);

/**
 * The current context of one kubeconfig, or of several merged as kubectl merges $KUBECONFIG's files (the
 * first file to set current-context wins, and the first entry of a name): each file's text and its
 * directory, for its relative paths. Throws an Error naming what is missing. Pure.
 */
export function parseKubeconfig(files: ReadonlyArray<{ readonly text: string; readonly dir: string }>): KubeconfigContext {
  const docs = files.map((f) => ({ doc: obj(yaml.load(f.text)), dir: f.dir }));
  const named = (list: 'contexts' | 'clusters' | 'users', name: string, field: string): { entry: Record<string, unknown>; dir: string } | undefined => {
    for (const { doc, dir } of docs) {
      const entry = (Array.isArray(doc[list]) ? doc[list] as unknown[] : []).find((e) => obj(e).name === name);
      if (entry !== undefined) return { entry: obj(obj(entry)[field]), dir };
    }
    return undefined;
  };
  const current = docs.map(({ doc }) => str(doc['current-context'])).find((c) => c !== undefined);
  if (!current) throw new Error('the kubeconfig has no current-context');
  const context = named('contexts', current, 'context')?.entry;
  if (!context) throw new Error(`the kubeconfig's current-context "${current}" is not in its contexts`);
  const clusterName = str(context.cluster) ?? '';
  const clusterAt = named('clusters', clusterName, 'cluster');
  if (!clusterAt) throw new Error(`context "${current}": cluster "${clusterName}" is not in the kubeconfig's clusters`);
  const cluster = clusterAt.entry;
  const server = str(cluster.server);
  if (!server) throw new Error(`cluster "${clusterName}" has no server`);
  const userName = str(context.user);
  const userAt = userName ? named('users', userName, 'user') : undefined;
  const user = userAt?.entry ?? {};
  const at = (dir: string) => (p: string) => (isAbsolute(p) ? p : join(dir, p));
  const clusterPath = at(clusterAt.dir);
  const userPath = at(userAt?.dir ?? clusterAt.dir);
  const src = (data: unknown, file: unknown, path: (p: string) => string): Src | undefined => {
    const d = str(data);
    if (d) return { data: d };
    const f = str(file);
    return f ? { file: path(f) } : undefined;
  };
  const delegate = user.exec ? 'an exec plugin' : user['auth-provider'] ? 'an auth provider' : user.as || user['as-groups'] ? 'impersonation'
    : cluster['proxy-url'] ? 'a proxy' : undefined;
  const ca = src(cluster['certificate-authority-data'], cluster['certificate-authority'], clusterPath);
  const clientCert = src(user['client-certificate-data'], user['client-certificate'], userPath);
  const clientKey = src(user['client-key-data'], user['client-key'], userPath);
  const token = str(user.token);
  const tokenFile = str(user.tokenFile);
  const username = str(user.username);
  const password = str(user.password);
  const tlsServerName = str(cluster['tls-server-name']);
  const namespace = str(context.namespace);
  return {
    server,
    ...(ca ? { ca } : {}),
    ...(cluster['insecure-skip-tls-verify'] === true ? { insecureSkipTlsVerify: true } : {}),
    ...(tlsServerName ? { tlsServerName } : {}),
    ...(clientCert ? { clientCert } : {}),
    ...(clientKey ? { clientKey } : {}),
    ...(token ? { token } : {}),
    ...(tokenFile ? { tokenFile: userPath(tokenFile) } : {}),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(namespace ? { namespace } : {}),
    ...(delegate ? { delegate } : {}),
  };
}

/** The in-cluster context from the service host and port variables, as client-node's loadFromCluster builds it. Pure. */
export function inClusterContext(host: string, port: string, dir = SERVICE_ACCOUNT_DIR): KubeconfigContext {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return { server: `https://${h}:${port}`, ca: { file: join(dir, 'ca.crt') }, tokenFile: join(dir, 'token') };
}

/** Where a kubeconfig comes from: a file, the in-cluster service account, or several files to merge ($KUBECONFIG). */
export type KubeconfigSource = { readonly kind: 'file'; readonly path: string } | { readonly kind: 'in-cluster' } | { readonly kind: 'merged'; readonly paths: readonly string[] };

/**
 * The source of `loadKubeConfig(file)`: an explicit file; else the service account when in a pod and no
 * $KUBECONFIG; else $KUBECONFIG (several files: merged, as kubectl merges them); else
 * ~/.kube/config; else the service account when its variables are set. Undefined: none. Pure.
 */
export function kubeconfigSource(file: string | undefined, env: { KUBECONFIG?: string | undefined; KUBERNETES_SERVICE_HOST?: string | undefined }, homeConfig: string, exists: (p: string) => boolean): KubeconfigSource | undefined {
  if (file) return { kind: 'file', path: file };
  if (env.KUBERNETES_SERVICE_HOST && !env.KUBECONFIG) return { kind: 'in-cluster' };
  const fromEnv = kubeconfigEnvSource(env.KUBECONFIG ?? '');
  if (fromEnv) return fromEnv;
  if (exists(homeConfig)) return { kind: 'file', path: homeConfig };
  return env.KUBERNETES_SERVICE_HOST ? { kind: 'in-cluster' } : undefined;
}

/** $KUBECONFIG's source: one file, or several to merge; undefined when it names none. Pure. */
export function kubeconfigEnvSource(value: string): KubeconfigSource | undefined {
  const listed = value.split(':').filter(Boolean);
  if (listed.length > 1) return { kind: 'merged', paths: listed };
  return listed.length === 1 ? { kind: 'file', path: listed[0]! } : undefined;
}

const read = (s: Src): Buffer => ('data' in s ? Buffer.from(s.data, 'base64') : readFileSync(s.file));

/** Credentials read here, or by client-node when the context says it must (`delegate`). */
export class KubeconfigCredentials implements ClusterCredentials {
  readonly context: KubeconfigContext;
  readonly #source: KubeconfigSource;
  #delegated?: Promise<ClusterCredentials>;

  constructor(context: KubeconfigContext, source: KubeconfigSource) {
    this.context = context;
    this.#source = source;
  }

  getCurrentCluster(): { server: string } {
    return { server: this.context.server };
  }

  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const c = this.context;
    if (c.delegate) {
      this.#delegated ??= clientNodeConfig(this.#source);
      await (await this.#delegated).applyToHTTPSOptions(opts);
      return;
    }
    if (c.ca) opts.ca = read(c.ca);
    if (c.clientCert) opts.cert = read(c.clientCert);
    if (c.clientKey) opts.key = read(c.clientKey);
    if (c.insecureSkipTlsVerify) opts.rejectUnauthorized = false;
    if (c.tlsServerName) opts.servername = c.tlsServerName;
    // A token file is read at every call: service-account tokens are rotated under a running pod.
    const token = c.tokenFile ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
    if (token) opts.headers = { ...(opts.headers ?? {}), Authorization: `Bearer ${token}` };
    else if (c.username && c.password) opts.auth = `${c.username}:${c.password}`;
  }
}

/** client-node's KubeConfig for a source: the user's credentials that need it (exec plugins, auth providers, merged files). */
async function clientNodeConfig(source: KubeconfigSource): Promise<ClusterCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (source.kind === 'file') kc.loadFromFile(source.path);
  else if (source.kind === 'in-cluster') kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** Loads a kubeconfig (kubeconfigSource's order) into credentials; throws naming what is missing. */
export function loadKubeConfig(file?: string): KubeconfigCredentials {
  const source = kubeconfigSource(file, process.env, join(homedir(), '.kube', 'config'), existsSync);
  if (!source) throw new Error('no kubeconfig: give --kubeconfig FILE or set KUBECONFIG');
  return credentialsFrom(source);
}

/** The credentials of a source: its file(s) read and parsed, or the service account's; throws naming the file and what is wrong. */
export function credentialsFrom(source: KubeconfigSource): KubeconfigCredentials {
  if (source.kind === 'in-cluster') {
    const host = process.env.KUBERNETES_SERVICE_HOST;
    if (!host) throw new Error('not in a pod: KUBERNETES_SERVICE_HOST is not set');
    return new KubeconfigCredentials(inClusterContext(host, process.env.KUBERNETES_SERVICE_PORT ?? '443'), source);
  }
  // $KUBECONFIG's files that do not exist are skipped, as kubectl skips them; an explicit file must exist.
  const paths = source.kind === 'file' ? [source.path] : source.paths.filter((p) => existsSync(p));
  const what = paths.join(':');
  if (paths.length === 0) throw new Error(`none of the files in KUBECONFIG exists: ${source.kind === 'merged' ? source.paths.join(':') : ''}`);
  const files = paths.map((p) => {
    try { return { text: readFileSync(p, 'utf8'), dir: dirname(p) }; } catch (err) { throw new Error(`cannot read the kubeconfig ${p}: ${(err as Error).message}`, { cause: err }); }
  });
  try {
    return new KubeconfigCredentials(parseKubeconfig(files), source);
  } catch (err) {
    throw new Error(`the kubeconfig ${what}: ${(err as Error).message}`, { cause: err });
  }
}

/** Credentials for an API server URL without a user (the embedded server over plain HTTP, or trusting any certificate). */
export function kubeConfigForServer(url: string): KubeconfigCredentials & { exportConfig(): string } {
  const context: KubeconfigContext = { server: url, ...(url.startsWith('http:') ? { insecureSkipTlsVerify: true } : {}) };
  return Object.assign(new KubeconfigCredentials(context, { kind: 'file', path: '' }), {
    exportConfig: () => JSON.stringify({
      apiVersion: 'v1', kind: 'Config',
      clusters: [{ name: 'qvirt', cluster: { server: url, ...(context.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}) } }],
      users: [{ name: 'qvirt', user: {} }],
      contexts: [{ name: 'qvirt', context: { cluster: 'qvirt', user: 'qvirt' } }],
      'current-context': 'qvirt',
    }, null, 2),
  });
}
