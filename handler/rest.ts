// The subresource endpoints virt-api proxies to virt-handler (§5.1): console (HTTP Upgrade,
// raw byte stream to the guest's serial socket), pause, unpause, freeze, unfreeze, reset,
// softreboot, guestosinfo, userlist, filesystemlist. Every request carries `Authorization: Bearer
// <token>` matching --token-file (compared in constant time); nothing is served without it. With
// --tls-cert/--tls-key it is HTTPS; without them it listens on loopback only.
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from '../src/log/logger.ts';
import type { HandlerController } from './controller.ts';
import { shortSocketPath } from './launcher-sockets.ts';

export interface RestOptions {
  readonly controller: HandlerController;
  readonly listen: string;
  readonly tokenFile: string;
  readonly stateDir?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly log: Logger;
}

const PATH = /^\/v1\/namespaces\/([^/]+)\/virtualmachineinstances\/([^/]+)\/([a-z]+)$/;
const COMMANDS = new Set(['pause', 'unpause', 'freeze', 'unfreeze', 'reset', 'softreboot', 'guestosinfo', 'userlist', 'filesystemlist', 'console']);

function authorized(req: IncomingMessage, token: Buffer): boolean {
  const h = req.headers.authorization ?? '';
  if (!h.startsWith('Bearer ')) return false;
  const got = Buffer.from(h.slice(7).trim());
  return got.length === token.length && timingSafeEqual(got, token);
}

function send(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startRestServer(o: RestOptions): Promise<{ close(): Promise<void>; port: number }> {
  const token = Buffer.from(readFileSync(o.tokenFile, 'utf8').trim());
  if (token.length === 0) throw new Error(`--token-file ${o.tokenFile} is empty: refusing to serve without authentication`);
  const [host = '127.0.0.1', portText = '8186'] = o.listen.split(/:(?=\d+$)/);
  const tls = o.tlsCert && o.tlsKey ? { cert: readFileSync(o.tlsCert), key: readFileSync(o.tlsKey) } : undefined;
  if (!tls && host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') throw new Error(`--listen ${o.listen}: without TLS the endpoints are served on loopback only`);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!authorized(req, token)) return send(res, 401, { message: 'Unauthorized' });
    const m = PATH.exec(new URL(req.url ?? '/', 'http://x').pathname);
    if (!m || !COMMANDS.has(m[3]!)) return send(res, 404, { message: `not found: ${req.url}` });
    const [, ns, name, cmd] = m as unknown as [string, string, string, string];
    const entry = o.controller.launcherOf(ns, name);
    const vmi = o.controller.informer.get(`${ns}/${name}`);
    if (!entry || !vmi) return send(res, 404, { message: `VMI ${ns}/${name} is not running on this node` });
    o.log.info({ namespace: ns, name, command: cmd, remote: req.socket.remoteAddress }, 'subresource request');
    const c = entry.client;
    const ok = (r: { success: boolean; message: string }) => (r.success ? send(res, 200, {}) : send(res, 500, { message: r.message }));
    const info = (r: { response: { success: boolean; message: string } | null }, body: string) => (r.response && !r.response.success ? send(res, 500, { message: r.response.message }) : (res.writeHead(200, { 'content-type': 'application/json' }), res.end(body || '{}')));
    switch (cmd) {
      case 'pause': return ok(await c.pauseVirtualMachine(vmi));
      case 'unpause': return ok(await c.unpauseVirtualMachine(vmi));
      case 'freeze': return ok(await c.freezeVirtualMachine(vmi, 0));
      case 'unfreeze': return ok(await c.unfreezeVirtualMachine(vmi));
      case 'reset': return ok(await c.resetVirtualMachine(vmi));
      case 'softreboot': return ok(await c.softRebootVirtualMachine(vmi));
      case 'guestosinfo': { const r = await c.getGuestInfo(); return info(r, r.guestInfoResponse); }
      case 'userlist': { const r = await c.getUsers(); return info(r, r.guestUserListResponse); }
      case 'filesystemlist': { const r = await c.getFilesystems(); return info(r, r.guestFilesystemsResponse); }
      default: return send(res, 400, { message: `${cmd} needs an Upgrade` });
    }
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex) => {
    const m = PATH.exec(new URL(req.url ?? '/', 'http://x').pathname);
    if (!authorized(req, token) || !m || m[3] !== 'console') {
      socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\n\r\n');
      return;
    }
    const entry = o.controller.launcherOf(m[1]!, m[2]!);
    if (!entry) { socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n'); return; }
    void shortSocketPath(join(entry.paths.privateVmiDir, 'virt-serial0'), o.controller.o.stateDir).then((path) => {
      const serial = connect(path);
      serial.once('connect', () => {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: plain.kubevirt.io\r\n\r\n');
        socket.pipe(serial).pipe(socket);
      });
      serial.once('error', () => socket.end('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\r\n'));
      socket.once('close', () => serial.destroy());
      socket.once('error', () => serial.destroy());
    }, () => socket.end('HTTP/1.1 500 Internal Server Error\r\nconnection: close\r\n\r\n'));
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { message: err instanceof Error ? err.message : String(err) }));
  };
  const server = tls ? createHttps(tls, listener) : createHttp(listener);
  server.on('upgrade', onUpgrade);
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(Number(portText), host, () => resolve()); });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : Number(portText),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
