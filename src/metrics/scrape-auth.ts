// Who may read a component's /metrics: the scraper's own credentials (a bearer token, reviewed by
// the API server), then `get` on the non-resource URL /metrics (a SubjectAccessReview) — what
// kube-rbac-proxy asks in front of KubeVirt's metrics, and what the node agent asks on its endpoint.
// Wraps a serving function; refusals are 401/403 (503 when the API server cannot be asked).
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface ScrapeUser { readonly name: string }

/** The authentication and authorization the wrapper needs (handler/endpoint/auth.ts's EndpointAuth is one). */
export interface ScrapeAuth {
  authenticate(req: IncomingMessage): Promise<ScrapeUser | undefined>;
  authorizeNonResource(user: never, path: string, verb: 'get'): Promise<{ allowed: boolean; reason: string }>;
}

export const METRICS_URL_PATH = '/metrics';

/** `serve` behind the scraper's authentication and authorization; `isUnavailable` tells the API server's failures apart. */
export function authorizedScrape(auth: ScrapeAuth, serve: (req: IncomingMessage, res: ServerResponse) => Promise<void>, isUnavailable: (err: unknown) => boolean = () => false) {
  const refuse = (res: ServerResponse, code: number, message: string) => {
    res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
  };
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const user = await auth.authenticate(req);
      if (!user) return refuse(res, 401, 'Unauthorized: send a bearer token (Authorization: Bearer ...) of a user who may get the non-resource URL /metrics');
      const d = await auth.authorizeNonResource(user as never, METRICS_URL_PATH, 'get');
      if (!d.allowed) return refuse(res, 403, `user "${user.name}" cannot get the non-resource URL ${METRICS_URL_PATH}${d.reason ? `: ${d.reason}` : ''}`);
    } catch (err) {
      if (isUnavailable(err)) return refuse(res, 503, `cannot authorize the request: ${(err as Error).message}`);
      throw err;
    }
    await serve(req, res);
  };
}
