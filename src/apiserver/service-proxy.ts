// kube-apiserver's service proxy (`/api/v1/namespaces/NS/services/[SCHEME:]NAME[:PORT]/proxy/PATH`),
// for in-process backends the embedded API server stands in for: the local mode serves virt-controller's
// /metrics there, so `kubectl get --raw /api/v1/namespaces/kubevirt/services/https:kubevirt-prometheus-metrics:metrics/proxy/metrics`
// reads it as it would through a cluster's API server. The caller is the API server's authenticated
// user; the backend is asked only for what it serves. Pure routing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { User } from './auth.ts';

export interface ServiceProxy {
  readonly namespace: string;
  readonly name: string;
  /** Answers `path` (after /proxy, '/' at least) for `user`. */
  handle(req: IncomingMessage, res: ServerResponse, path: string, user: User | undefined): Promise<void> | void;
}

const PROXY_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)\/proxy(\/.*)?$/;

/** The namespace, service name and backend path a service-proxy URL names (the scheme and port part of `[SCHEME:]NAME[:PORT]` dropped). Pure. */
export function parseServiceProxyPath(path: string): { namespace: string; name: string; path: string } | undefined {
  const m = PROXY_PATH.exec(path);
  if (!m) return undefined;
  const parts = decodeURIComponent(m[2]!).split(':');
  const name = parts.length === 3 ? parts[1]! : parts[0]!;
  if (!name) return undefined;
  return { namespace: decodeURIComponent(m[1]!), name, path: m[3] || '/' };
}
