// qvirt's embedded Kubernetes-compatible API server: the wire protocol client-node and kubectl
// speak, for the resources qvirt uses and the custom resources of any CRD (see server.ts, rest.ts).
//
//   const api = await startApiServer({ dataDir, log });        // HTTPS on 127.0.0.1, admin kubeconfig
//   const api = await startApiServer({ tls: false, log });      // plain HTTP, no auth (tests)
//   ...; await api.stop();
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { ensurePki, ensureToken, writeKubeconfig, type Pki, type TokenUser } from './auth.ts';
import type { Authorizer } from './reviews.ts';
import type { ValidatingAdmissionPlugin } from '../kube/admission.ts';
import type { AggregatedApi } from './aggregated-api.ts';
import type { ServiceProxy } from './service-proxy.ts';
import { publishClientCa } from './client-ca.ts';
import { GarbageCollector } from './gc.ts';
import { Lifecycle, NAMESPACES } from './lifecycle.ts';
import { Registry } from './resources.ts';
import { Rest } from './rest.ts';
import { makeHandler, makeUpgradeHandler } from './server.ts';
import { Store } from './store.ts';
import { WatchHub } from './watch.ts';
import { SYSTEM_PRIORITY_CLASSES, systemPriorityClass } from './priority.ts';

export { writeKubeconfig } from './auth.ts';
export type { KubeconfigAccess, TokenUser, User } from './auth.ts';
export type { AccessRequest, AccessDecision, Authorizer } from './reviews.ts';
export type { AggregatedApi } from './aggregated-api.ts';

export interface ApiServerOptions {
  /** Where objects (SQLite), certificates, the token and the kubeconfig live; in memory only when absent. */
  dataDir?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * HTTPS with client-certificate and token authentication (default true; needs `dataDir` or
   * `pkiDir` for the PKI). false: plain HTTP without authentication, for tests.
   */
  tls?: boolean;
  /** Where the PKI lives when it should not be under dataDir. */
  pkiDir?: string;
  /** Extra bearer tokens accepted besides the generated admin token (they authenticate as the admin). */
  tokens?: string[];
  /** Bearer tokens of other users (TokenReview answers with their names and groups). */
  users?: TokenUser[];
  /** What SubjectAccessReviews answer; default: every authenticated user is allowed (no RBAC). */
  authorize?: Authorizer;
  log: Logger;
  /** Watch bookmark interval (default 60 000 ms). */
  bookmarkIntervalMs?: number;
  /** Events kept for watch resumption (default 20 000). */
  historySize?: number;
  /** How long a watch without timeoutSeconds stays open (default 1800 s). */
  watchTimeoutSeconds?: number;
  /** Validating admission plugins (in-process webhooks), run in order on API requests. */
  admission?: readonly ValidatingAdmissionPlugin[];
  /** Groups served by in-process backends, as the aggregation layer serves APIServices (aggregated-api.ts). */
  aggregated?: readonly AggregatedApi[];
}

export interface ApiServer {
  /** `https://127.0.0.1:PORT` or `http://...` */
  url: string;
  /** The admin kubeconfig (written under dataDir, or pkiDir). */
  kubeconfigPath?: string;
  /** PEM of the serving CA and the admin credentials (TLS mode). */
  pki?: Pki;
  token?: string;
  /** The store's current resourceVersion (tests, diagnostics). */
  resourceVersion(): number;
  /** Serves a group through an in-process backend from now on (aggregated-api.ts). */
  addAggregatedApi(api: AggregatedApi): void;
  /** Answers a Service's proxy subresource in-process from now on (service-proxy.ts); returns its removal. */
  addServiceProxy(proxy: ServiceProxy): () => void;
  /** Resolves when the garbage collector and lifecycle controllers have nothing queued. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const log = opts.log;
  const host = opts.host ?? '127.0.0.1';
  const tls = opts.tls ?? true;
  const store = new Store({ dataDir: opts.dataDir ? join(opts.dataDir, 'store') : undefined, historySize: opts.historySize });
  const registry = new Registry();
  const rest = new Rest(store, registry);
  rest.admission = opts.admission ?? [];
  const hub = new WatchHub();
  const unsubscribeHub = store.subscribe((e) => hub.dispatch(e));
  const lifecycle = new Lifecycle(rest, log);
  const gc = new GarbageCollector(rest, log);
  const nsDef = registry.get('', 'namespaces')!;
  for (const ns of INITIAL_NAMESPACES) {
    if (!store.get(NAMESPACES, '', ns)) rest.create(nsDef, 'v1', '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  // kube-apiserver's bootstrap: the system PriorityClasses.
  const pcDef = registry.get('scheduling.k8s.io', 'priorityclasses')!;
  for (const c of SYSTEM_PRIORITY_CLASSES) {
    if (!store.get(rest.key(pcDef), '', c.name)) rest.create(pcDef, 'v1', '', systemPriorityClass(c));
  }

  let pki: Pki | undefined;
  let token: string | undefined;
  const pkiDir = opts.pkiDir ?? (opts.dataDir ? join(opts.dataDir, 'pki') : undefined);
  if (tls) {
    if (!pkiDir) throw new Error('startApiServer: TLS needs a dataDir or pkiDir for its certificates');
    pki = ensurePki(pkiDir, host === '0.0.0.0' || host === '::' ? [] : [host]);
    token = ensureToken(pkiDir);
    publishClientCa(rest, registry, pki.caCert);
  }
  let address = '';
  const aggregated: AggregatedApi[] = [...(opts.aggregated ?? [])];
  const serviceProxies: ServiceProxy[] = [];
  const handlerOptions = {
    rest,
    hub,
    log,
    tokens: [...(token ? [token] : []), ...(opts.tokens ?? [])],
    requireAuth: tls || (opts.tokens?.length ?? 0) > 0 || (opts.users?.length ?? 0) > 0,
    ...(opts.users ? { users: opts.users } : {}),
    ...(opts.authorize ? { authorize: opts.authorize } : {}),
    serverAddress: () => address,
    ...(opts.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
    ...(opts.watchTimeoutSeconds !== undefined ? { defaultWatchTimeoutSeconds: opts.watchTimeoutSeconds } : {}),
    ...(pki ? { kubeletClient: { ca: pki.caCert, cert: pki.kubeletClientCert, key: pki.kubeletClientKey } } : {}),
    aggregated,
    serviceProxies,
  };
  const handler = makeHandler(handlerOptions);
  const server: Server = tls
    ? createHttpsServer({ key: pki!.serverKey, cert: pki!.serverCert, ca: pki!.caCert, requestCert: true, rejectUnauthorized: false }, handler)
    : createHttpServer(handler);
  server.on('upgrade', makeUpgradeHandler(handlerOptions));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const url = `${tls ? 'https' : 'http'}://${address}`;
  let kubeconfigPath: string | undefined;
  const kcDir = opts.dataDir ?? pkiDir;
  if (kcDir) kubeconfigPath = writeKubeconfig(kcDir, { server: url, caCert: pki?.caCert, clientCert: pki?.adminCert, clientKey: pki?.adminKey });
  log.info({ url, dataDir: opts.dataDir, resourceVersion: store.resourceVersion }, 'API server listening');

  let stopped = false;
  return {
    url,
    ...(kubeconfigPath ? { kubeconfigPath } : {}),
    ...(pki ? { pki } : {}),
    ...(token ? { token } : {}),
    resourceVersion: () => store.resourceVersion,
    addAggregatedApi: (a) => { aggregated.push(a); },
    addServiceProxy: (p) => {
      serviceProxies.push(p);
      return () => { const i = serviceProxies.indexOf(p); if (i >= 0) serviceProxies.splice(i, 1); };
    },
    settled: async () => {
      // The controllers queue work for the next turn of the event loop; wait until a full pass finds none.
      for (let i = 0; i < 100; i++) {
        await gc.idle();
        await lifecycle.idle();
        await new Promise((r) => setImmediate(r));
        if (gc.isIdle() && lifecycle.isIdle()) return;
      }
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      gc.stop();
      lifecycle.stop();
      unsubscribeHub();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      store.close();
      log.info({ url }, 'API server stopped');
    },
  };
}
