// The migration proxy between two node agents (KubeVirt's pkg/virt-handler/migration-proxy): on the
// target node a TLS listener on the node's migration address (random port) forwards each connection
// to the target launcher's migration socket; on the source node a unix socket in the source
// launcher's pod forwards each connection over TLS to the target's listener. Multifd opens several
// connections; each is piped on its own. Without TLS (migrations.disableTLS) plain TCP is used.
import { createServer as createNetServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, connect as tlsConnect, type TLSSocket } from 'node:tls';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import { shortUnixPath } from '../../src/proto/unix-path.ts';
import { clientTlsOptions, peerIdentityError, serverTlsOptions, type MigrationTls } from './tls.ts';

export class MigrationProxyError extends Error {
  override readonly name = 'MigrationProxyError';
}

function pipeBoth(a: Socket, b: Socket, sockets: Set<Socket>, log: Logger, what: string): void {
  sockets.add(a).add(b);
  // pipe() half-closes the other side when one side ends, after everything was written: the end of
  // a migration stream must reach QEMU whole. Only an error tears both down at once.
  a.pipe(b);
  b.pipe(a);
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    log.debug({ err: err.message, what }, 'migration proxy connection failed');
    a.destroy();
    b.destroy();
  };
  a.on('error', fail).on('close', () => sockets.delete(a));
  b.on('error', fail).on('close', () => sockets.delete(b));
}

abstract class Proxy {
  protected readonly sockets = new Set<Socket>();
  protected server: Server | undefined;
  protected readonly log: Logger;
  connections = 0;

  constructor(log: Logger) {
    this.log = log;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const srv = this.server;
    this.server = undefined;
    if (srv) await new Promise<void>((r) => srv.close(() => r()));
  }
}

/** Target side: TLS (or TCP) on `address:0` → the target launcher's unix socket. */
export class TargetListener extends Proxy {
  port = 0;
  readonly address: string;
  readonly unixPath: string;

  private constructor(address: string, unixPath: string, log: Logger) {
    super(log);
    this.address = address;
    this.unixPath = unixPath;
  }

  private releasePath: () => void = () => {};

  static async start(o: { address: string; unixPath: string; tls: MigrationTls | undefined; log: Logger }): Promise<TargetListener> {
    const l = new TargetListener(o.address, o.unixPath, o.log);
    const short = shortUnixPath(o.unixPath);
    l.releasePath = short.release;
    const onConn = (inbound: Socket) => {
      if (o.tls) {
        const why = peerIdentityError((inbound as TLSSocket).getPeerCertificate());
        if (why) {
          o.log.warn({ reason: why }, 'migration proxy: rejected a peer');
          inbound.destroy();
          return;
        }
      }
      l.connections++;
      const outbound = netConnect(short.path);
      pipeBoth(inbound, outbound, l.sockets, o.log, 'target');
    };
    const server = o.tls ? createTlsServer(serverTlsOptions(o.tls), onConn) : createNetServer(onConn);
    server.on('tlsClientError', (err: Error) => o.log.warn({ err: err.message }, 'migration proxy: TLS handshake with a peer failed'));
    l.server = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new MigrationProxyError(`migration target listener on ${o.address}: ${err.message}`)));
        server.listen(0, o.address, () => resolve());
      });
    } catch (err) {
      short.release();
      throw err;
    }
    const addr = server.address();
    l.port = typeof addr === 'object' && addr ? addr.port : 0;
    o.log.info({ address: o.address, port: l.port, socket: o.unixPath }, 'migration target listener started');
    return l;
  }

  override async close(): Promise<void> {
    await super.close();
    this.releasePath();
  }
}

/** Source side: a unix socket in the source pod → TLS (or TCP) to the target's listener. */
export class SourceListener extends Proxy {
  readonly unixPath: string;

  private constructor(unixPath: string, log: Logger) {
    super(log);
    this.unixPath = unixPath;
  }

  static async start(o: { unixPath: string; host: string; port: number; tls: MigrationTls | undefined; log: Logger }): Promise<SourceListener> {
    const l = new SourceListener(o.unixPath, o.log);
    await mkdir(dirname(o.unixPath), { recursive: true });
    // Bound through a short link when the pod path is too long; the socket file lands in the pod.
    const short = shortUnixPath(o.unixPath);
    await rm(o.unixPath, { force: true });
    const server = createNetServer((inbound) => {
      l.connections++;
      const outbound: Socket = o.tls
        ? tlsConnect({ host: o.host, port: o.port, ...clientTlsOptions(o.tls) })
        : netConnect({ host: o.host, port: o.port });
      pipeBoth(inbound, outbound, l.sockets, o.log, 'source');
    });
    l.server = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new MigrationProxyError(`migration source listener on ${o.unixPath}: ${err.message}`)));
        server.listen(short.path, () => resolve());
      });
    } finally {
      short.release();
    }
    o.log.info({ socket: o.unixPath, target: `${o.host}:${o.port}` }, 'migration source listener started');
    return l;
  }

  override async close(): Promise<void> {
    await super.close();
    await rm(this.unixPath, { force: true });
  }
}
