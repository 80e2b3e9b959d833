// Test harness: an embedded API server on a free loopback port and real @kubernetes/client-node
// clients pointed at it. Plain HTTP by default; `tls: true` goes through the generated PKI and the
// admin kubeconfig, as qvirt's local mode does.
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

export interface TestServer {
  api: ApiServer;
  kc: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  objects: KubernetesObjectApi;
  dir: string;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

export const log = componentLogger('apiserver-test', { level: (process.env.QVIRT_LOG_LEVEL as 'warn' | undefined) ?? 'warn' });

export function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: url.startsWith('http:') }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

export async function startTestServer(opts: { tls?: boolean; dataDir?: string; port?: number; bookmarkIntervalMs?: number; historySize?: number; watchTimeoutSeconds?: number } = {}): Promise<TestServer> {
  const tmp = opts.dataDir ? { path: opts.dataDir, cleanup: () => {} } : tempDir('qapi');
  const persistent = opts.tls === true || opts.dataDir !== undefined;
  const api = await startApiServer({
    ...(persistent ? { dataDir: tmp.path } : {}),
    tls: opts.tls ?? false,
    log,
    ...(opts.bookmarkIntervalMs ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
    ...(opts.historySize ? { historySize: opts.historySize } : {}),
    ...(opts.watchTimeoutSeconds ? { watchTimeoutSeconds: opts.watchTimeoutSeconds } : {}),
    ...(opts.port ? { port: opts.port } : {}),
  });
  let kc: KubeConfig;
  if (api.kubeconfigPath && opts.tls) {
    kc = new KubeConfig();
    kc.loadFromFile(api.kubeconfigPath);
  } else kc = kubeConfigFor(api.url);
  return {
    api,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
    dir: tmp.path,
    close: async () => {
      await api.stop();
      if (!opts.dataDir) tmp.cleanup();
    },
  };
}

export interface StatusBody {
  kind: string;
  apiVersion: string;
  status: string;
  reason: string;
  message: string;
  code: number;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason: string; message: string; field: string }[] };
}

/** Runs `fn`, which must fail with an API error; returns the HTTP code and the parsed Status body. */
export async function apiError(fn: () => Promise<unknown>): Promise<{ code: number; status: StatusBody }> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ApiException) {
      const body = typeof e.body === 'string' ? (JSON.parse(e.body) as StatusBody) : (e.body as StatusBody);
      return { code: e.code, status: body };
    }
    throw e;
  }
  throw new Error('expected the call to fail with an API error, but it succeeded');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a truthy value (or throws after `ms`). */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, ms = 5000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(20);
  }
}

export const pod = (name: string, extra: { labels?: Record<string, string>; nodeName?: string; generateName?: string } = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { ...(extra.generateName ? { generateName: extra.generateName } : { name }), ...(extra.labels ? { labels: extra.labels } : {}) },
  spec: { ...(extra.nodeName ? { nodeName: extra.nodeName } : {}), containers: [{ name: 'compute', image: 'registry.local/virt-launcher:v1', env: [{ name: 'A', value: '1' }] }] },
});

/**
 * Creates a CRD by POSTing its JSON as is. (client-node's typed serializer would drop JSON-named
 * schema extensions such as `x-kubernetes-validations` given as plain objects.)
 */
export async function createCrd(url: string, crd: unknown): Promise<{ status: number; json: unknown }> {
  return raw(`${url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, { method: 'POST', body: crd });
}

/** Plain fetch against the test server (HTTP mode) for wire-level checks. */
export async function raw(url: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const r = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { 'Content-Type': 'application/json', ...(init.headers ?? {}) },
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
  });
  const text = await r.text();
  let json: unknown;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: r.status, json, text, headers: r.headers };
}
