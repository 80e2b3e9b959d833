// virt-api's front door on a real cluster: the subresource app behind kube-apiserver's aggregation
// layer (an APIService per served version points at the controller's Service). Each request's
// caller comes from the front proxy's request headers (request-header.ts), believed only over a
// connection with the front proxy's client certificate; the requestheader settings are read from
// kube-system/extension-apiserver-authentication and re-read by `refresh()` (the CA rotates).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import type { Logger } from '../log/logger.ts';
import { REQUEST_HEADER_CONFIGMAP, requestHeaderConfig, userFromRequestHeaders, type RequestHeaderConfig } from './request-header.ts';
import { refuseUpgrade, type RequestUser, type SubresourceApi } from './subresource-api.ts';
import { needsAuthorization, routeOf } from './subresource-routes.ts';
import * as E from './status-error.ts';

export interface AggregatedFrontDoor {
  handle(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Re-reads the requestheader settings; resolves to the CA client certificates must chain to (undefined: none published). */
  refresh(): Promise<string | undefined>;
}

interface ConfigMap extends KubeObject { data?: Record<string, string> }

function peerOf(req: IncomingMessage): { verified: boolean; commonName?: string } {
  const sock = req.socket as Partial<TLSSocket>;
  if (sock.authorized !== true || typeof sock.getPeerCertificate !== 'function') return { verified: false };
  const cn = sock.getPeerCertificate().subject?.CN;
  return { verified: true, commonName: Array.isArray(cn) ? cn[0] : cn };
}

export function aggregatedFrontDoor(o: { client: KubeClient; api: SubresourceApi; log: Logger }): AggregatedFrontDoor {
  let config: RequestHeaderConfig | undefined;

  /** The caller, undefined for the routes that need none; a StatusError when the request cannot be believed. */
  const callerOf = (req: IncomingMessage): RequestUser | undefined => {
    const r = routeOf(req.method ?? 'GET', new URL(req.url ?? '/', 'https://virt-api').pathname);
    if (!r.ok || !needsAuthorization(r.route)) return undefined;
    if (!config) throw E.unauthorized('Unauthorized: the cluster publishes no requestheader CA (kube-system/extension-apiserver-authentication), so proxied callers cannot be verified');
    const u = userFromRequestHeaders(req.headers, peerOf(req), config);
    if (!u.ok) throw E.unauthorized(`Unauthorized: ${u.reason}`);
    return u.user;
  };

  return {
    handle(req, res) {
      let user: RequestUser | undefined;
      try {
        user = callerOf(req);
      } catch (err) {
        const s = err as E.StatusError;
        const body = JSON.stringify(s.toStatus());
        res.writeHead(s.code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
        return;
      }
      void o.api.handle(req, res, user);
    },
    upgrade(req, socket, head) {
      socket.on('error', () => socket.destroy());
      let user: RequestUser | undefined;
      try {
        user = callerOf(req);
      } catch (err) {
        refuseUpgrade(socket, err as E.StatusError);
        return;
      }
      o.api.upgrade(req, socket, head, user).catch((err: unknown) => {
        o.log.error({ err, url: req.url }, 'stream request failed');
        refuseUpgrade(socket, E.internalError((err as Error).message));
      });
    },
    async refresh() {
      try {
        const cm = await o.client.get<ConfigMap>(Resources.configMaps, REQUEST_HEADER_CONFIGMAP.namespace, REQUEST_HEADER_CONFIGMAP.name);
        config = requestHeaderConfig(cm.data);
      } catch (err) {
        if (!isNotFound(err)) {
          o.log.warn({ err: (err as Error).message }, 'cannot read the requestheader settings; keeping the last ones');
          return config?.clientCa;
        }
        config = undefined;
      }
      if (!config) o.log.warn('the cluster publishes no requestheader CA: aggregated subresource requests will be refused (is the aggregation layer configured?)');
      return config?.clientCa;
    },
  };
}
