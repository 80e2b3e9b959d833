// The local mode's CDI upload path, as virtctl image-upload uses it on a cluster: cdi-apiserver's
// `upload.cdi.kubevirt.io/v1beta1` UploadTokenRequest (served by the embedded API server as an
// aggregated group: the caller's credentials, then a token for one claim), and the upload proxy
// (an HTTPS server of its own, CDI's `/v1beta1/upload` and `/v1beta1/upload-async`, bearer token)
// that streams the body into the DataVolume's claim through the DataVolume controller. Its URL is
// published where virtctl looks for it: the CDIConfig `config`'s status.uploadProxyURL.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../src/log/logger.ts';
import { UPLOAD_GROUP, UPLOAD_VERSION, UploadProxyPaths, type UploadTokenRequest } from '../../src/api/cdi/types.ts';
import type { APIResource } from '../../src/api/kube.ts';
import { signUploadToken, verifyUploadToken } from './upload-token.ts';
import { UploadNotReadyError, type DataVolumeController } from './controller.ts';
import { ImportError } from './importer.ts';
import { errorText } from '../shell.ts';

export interface UploadProxy {
  readonly url: string;
  /** The aggregated API (UploadTokenRequest) for the embedded API server. */
  readonly tokenApi: {
    readonly group: string;
    readonly versions: readonly string[];
    resources(version: string): readonly APIResource[];
    handle(req: IncomingMessage, res: ServerResponse, user: { name: string } | undefined): Promise<void>;
    upgrade(req: IncomingMessage, socket: Duplex): Promise<void>;
  };
  close(): Promise<void>;
}

const json = (res: ServerResponse, code: number, body: unknown) => { res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body)); };
const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

async function readBody(req: IncomingMessage, limit = 1 << 20): Promise<string> {
  let s = '';
  for await (const c of req) { s += c; if (s.length > limit) throw new Error('request body too large'); }
  return s;
}

export async function startUploadProxy(o: { dataVolumes: DataVolumeController; tls: { key: string; cert: string }; host?: string; log: Logger; now?: () => number }): Promise<UploadProxy> {
  const secret = randomBytes(32);
  const now = o.now ?? Date.now;
  const tokenPath = new RegExp(`^/apis/${UPLOAD_GROUP.replace(/\./g, '\\.')}/${UPLOAD_VERSION}/namespaces/([^/]+)/uploadtokenrequests/?$`);

  const tokenApi: UploadProxy['tokenApi'] = {
    group: UPLOAD_GROUP,
    versions: [UPLOAD_VERSION],
    resources: (version) => (version === UPLOAD_VERSION ? [{ name: 'uploadtokenrequests', singularName: 'uploadtokenrequest', namespaced: true, kind: 'UploadTokenRequest', verbs: ['create'] }] : []),
    async handle(req, res, user) {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === `/apis/${UPLOAD_GROUP}/${UPLOAD_VERSION}` && req.method === 'GET') {
        json(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${UPLOAD_GROUP}/${UPLOAD_VERSION}`, resources: tokenApi.resources(UPLOAD_VERSION) });
        return;
      }
      const m = tokenPath.exec(url.pathname);
      if (!m || req.method !== 'POST') { json(res, 404, status(404, 'NotFound', 'the server could not find the requested resource')); return; }
      if (!user) { json(res, 401, status(401, 'Unauthorized', 'Unauthorized')); return; }
      const ns = decodeURIComponent(m[1]!);
      let body: UploadTokenRequest;
      try { body = JSON.parse(await readBody(req)) as UploadTokenRequest; } catch (err) { json(res, 400, status(400, 'BadRequest', `invalid UploadTokenRequest: ${errorText(err)}`)); return; }
      const pvc = body?.spec?.pvcName;
      if (typeof pvc !== 'string' || pvc === '') { json(res, 400, status(400, 'BadRequest', 'UploadTokenRequest.spec.pvcName: Required value')); return; }
      const token = signUploadToken(secret, ns, pvc, now());
      o.log.info({ namespace: ns, pvc, user: user.name }, 'upload token issued');
      json(res, 201, { apiVersion: `${UPLOAD_GROUP}/${UPLOAD_VERSION}`, kind: 'UploadTokenRequest', metadata: { ...(body.metadata ?? {}), namespace: ns, creationTimestamp: null }, spec: { pvcName: pvc }, status: { token } });
    },
    async upgrade(_req, socket) { socket.destroy(); },
  };

  const server: Server = createServer({ key: o.tls.key, cert: o.tls.cert }, (req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/healthz') { res.writeHead(200).end('OK'); return; }
      if (path !== UploadProxyPaths.sync && path !== UploadProxyPaths.async) { res.writeHead(404).end('not found\n'); return; }
      if (req.method !== 'POST' && req.method !== 'PUT') { res.writeHead(405, { allow: 'POST, PUT' }).end('method not allowed\n'); return; }
      const auth = req.headers.authorization ?? '';
      const claims = auth.startsWith('Bearer ') ? verifyUploadToken(secret, auth.slice(7).trim(), now()) : { error: 'no bearer token' };
      if ('error' in claims) { req.resume(); res.writeHead(401).end(`${claims.error}\n`); return; }
      const length = req.headers['content-length'] !== undefined ? Number(req.headers['content-length']) : undefined;
      try {
        // upload and upload-async alike: answered when the disk is in the claim (qemu-img convert of
        // a local file takes seconds, not the minutes CDI's async mode exists for).
        await o.dataVolumes.upload(claims.namespace, claims.pvc, req, length);
        res.writeHead(200).end();
        o.log.info({ namespace: claims.namespace, pvc: claims.pvc, bytes: length }, 'upload done');
      } catch (err) {
        req.resume();
        if (err instanceof UploadNotReadyError) { res.writeHead(503).end(`${err.message}\n`); return; }
        const code = err instanceof ImportError ? 400 : 500;
        o.log.warn({ namespace: claims.namespace, pvc: claims.pvc, err: errorText(err) }, 'upload failed');
        if (!res.headersSent) res.writeHead(code).end(`${errorText(err)}\n`);
      }
    })();
  });
  // Long uploads: no request timeout (the client's connection is the bound).
  server.requestTimeout = 0;
  await new Promise<void>((r) => server.listen(0, o.host ?? '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://${o.host ?? '127.0.0.1'}:${port}`,
    tokenApi,
    close: async () => { server.closeAllConnections(); await new Promise<void>((r) => server.close(() => r())); },
  };
}
