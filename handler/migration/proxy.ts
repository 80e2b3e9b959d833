// The migration proxy between two node agents (KubeVirt's pkg/virt-handler/migration-proxy): on the
// target node a TLS listener on the node's migration address (random port) forwards each connection
// to the target launcher's migration socket; on the source node a unix socket in the source
// launcher's pod forwards each connection over TLS to the target's listener. Multifd opens several
// connections; each is piped on its own. Without TLS (migrations.disableTLS) plain TCP is used.
// Two data paths: socat processes (socat-relay.ts), where socat is installed — the default — and
// otherwise a worker thread per listener (relay-worker.ts); this file starts either and closes it.
// The socat target listens on a second port for the multifd channels (see socat-relay.ts for why);
// the source sends its first connection to the main port and the rest to the multifd port when
// the target published one.
import { Worker } from 'node:worker_threads';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import { shortUnixPath } from '../../src/proto/unix-path.ts';
import { clientTlsOptions, HANDLER_CERT_CN, serverTlsOptions, type MigrationTls } from './tls.ts';
import { RELAY_CLOSE, relayWorkerMain, type RelayEvent, type RelaySpec } from './relay-worker.ts';
import { findSocat, SocatSourceRelay, SocatTargetRelay } from './socat-relay.ts';
import type { RelayRecords } from './relay-records.ts';

/** Which data path carries the bytes: `socat` processes or the `node` worker; `auto`: socat when installed. */
export type RelayKind = 'auto' | 'socat' | 'node';

let fallbackLogged = false;

/** The environment variable that picks the data path for a whole node agent (`socat`, `node`; default `auto`). */
export const RELAY_ENV = 'QVIRT_MIGRATION_RELAY';

/** The socat executable to use, or undefined for the Node relay (logged once when socat is missing). */
function chooseRelay(asked: RelayKind | undefined, log: Logger): string | undefined {
  const env = process.env[RELAY_ENV];
  if (asked === undefined && env !== undefined && env !== 'auto' && env !== 'socat' && env !== 'node') {
    throw new MigrationProxyError(`migration proxy: ${RELAY_ENV}=${JSON.stringify(env)} is not one of auto, socat, node`);
  }
  const kind = asked ?? (env as RelayKind | undefined) ?? 'auto';
  if (kind === 'node') return undefined;
  const socat = findSocat();
  if (!socat && kind === 'socat') throw new MigrationProxyError('migration proxy: socat was asked for but is not on PATH');
  if (!socat && !fallbackLogged) {
    fallbackLogged = true;
    log.warn('migration proxy: socat is not installed, migrations are relayed in Node (slower, more CPU): install the socat package');
  }
  return socat;
}

export class MigrationProxyError extends Error {
  override readonly name = 'MigrationProxyError';
}

/** How long close() waits for the worker to wind down before terminating it. */
const CLOSE_TIMEOUT_MS = 5000;

const RELAY_SOURCE = `(${relayWorkerMain.toString()})()`;

/** What carries a listener's connections: socat processes (socat-relay.ts) or a Node worker. */
interface Relay {
  readonly connections: number;
  close(): Promise<void>;
}

/** The Node relay: a worker thread per listener. */
class WorkerProxy implements Relay {
  private readonly log: Logger;
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  connections = 0;

  constructor(log: Logger) {
    this.log = log;
  }

  /** Starts the relay worker; resolves with the port it listens on once it does. */
  async start(spec: RelaySpec, what: string): Promise<number> {
    const w = new Worker(RELAY_SOURCE, { eval: true, workerData: spec, name: `migration-proxy-${spec.role}` });
    this.worker = w;
    this.exited = new Promise((r) => w.once('exit', () => r()));
    w.unref();
    let listening: ((port: number) => void) | undefined;
    let failed: ((err: Error) => void) | undefined;
    const ready = new Promise<number>((resolve, reject) => { listening = resolve; failed = reject; });
    w.on('message', (ev: RelayEvent) => {
      switch (ev.kind) {
        case 'listening': listening?.(ev.port); break;
        case 'listen-failed': failed?.(new MigrationProxyError(`migration ${what}: ${ev.message}`)); break;
        case 'connection': this.connections++; break;
        case 'rejected': this.log.warn({ reason: ev.reason }, 'migration proxy: rejected a peer'); break;
        case 'tls-error': this.log.warn({ err: ev.message }, 'migration proxy: TLS handshake with a peer failed'); break;
        case 'connection-failed': this.log.debug({ err: ev.message, what: spec.role }, 'migration proxy connection failed'); break;
        case 'closed': break;
      }
    });
    w.on('error', (err) => {
      this.log.error({ err: err.message }, 'migration proxy worker failed');
      failed?.(new MigrationProxyError(`migration ${what}: the proxy worker failed: ${err.message}`));
    });
    w.once('exit', (code) => {
      failed?.(new MigrationProxyError(`migration ${what}: the proxy worker exited (${code}) before listening`));
      if (this.worker === w) this.log.error({ code }, 'migration proxy worker exited: its connections are gone');
    });
    try {
      return await ready;
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (!w) return;
    w.postMessage(RELAY_CLOSE);
    const timer = setTimeout(() => void w.terminate(), CLOSE_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Target side: TLS (or TCP) on `address:0` → the target launcher's unix socket. */
export class TargetListener {
  port = 0;
  /** The multifd channels' port (socat relay); undefined: all channels on `port` (Node relay). */
  multifdPort: number | undefined;
  readonly address: string;
  readonly unixPath: string;
  private impl: Relay | undefined;
  private releasePath: () => void = () => {};

  private constructor(address: string, unixPath: string) {
    this.address = address;
    this.unixPath = unixPath;
  }

  /** Connections forwarded to the target QEMU so far. */
  get connections(): number {
    return this.impl?.connections ?? 0;
  }

  /**
   * `channels`: `migration` (default): a QEMU migration stream, whose first connection must reach
   * QEMU first (socat: a second, gated port for the rest); `any-order`: connections in any order
   * (a block migration's NBD stream): one port.
   */
  static async start(o: { address: string; unixPath: string; tls: MigrationTls | undefined; log: Logger; relay?: RelayKind; channels?: 'migration' | 'any-order'; records?: RelayRecords | undefined }): Promise<TargetListener> {
    const l = new TargetListener(o.address, o.unixPath);
    const socat = chooseRelay(o.relay, o.log);
    const short = shortUnixPath(o.unixPath);
    l.releasePath = short.release;
    try {
      if (socat) {
        const r = await SocatTargetRelay.start({ socat, address: o.address, unixPath: short.path, link: short.path === o.unixPath ? undefined : dirname(short.path), tls: o.tls, log: o.log, multifd: o.channels !== 'any-order', records: o.records });
        l.impl = r;
        l.port = r.port;
        l.multifdPort = r.multifdPort;
      } else {
        const w = new WorkerProxy(o.log);
        l.impl = w;
        l.port = await w.start({
          role: 'target', address: o.address, unixPath: short.path, peerCommonName: HANDLER_CERT_CN,
          tls: o.tls ? serverTlsOptions(o.tls) : undefined,
        }, `target listener on ${o.address}`);
      }
    } catch (err) {
      short.release();
      throw err instanceof MigrationProxyError ? err : new MigrationProxyError(`migration target listener on ${o.address}: ${(err as Error).message}`);
    }
    o.log.info({ address: o.address, port: l.port, multifdPort: l.multifdPort, socket: o.unixPath, relay: socat ? 'socat' : 'node' }, 'migration target listener started');
    return l;
  }

  async close(): Promise<void> {
    const impl = this.impl;
    this.impl = undefined;
    await impl?.close();
    this.releasePath();
  }
}

/** Source side: a unix socket in the source pod → TLS (or TCP) to the target's listener. */
export class SourceListener {
  readonly unixPath: string;
  private impl: Relay | undefined;

  private constructor(unixPath: string) {
    this.unixPath = unixPath;
  }

  /** Connections QEMU made so far. */
  get connections(): number {
    return this.impl?.connections ?? 0;
  }

  /**
   * `multifdPort`: the target's port for the connections after the first (when it published one).
   * `records`: where the socat processes are recorded (relay-records.ts), for a restarted node agent.
   */
  static async start(o: { unixPath: string; host: string; port: number; multifdPort?: number | undefined; tls: MigrationTls | undefined; log: Logger; relay?: RelayKind; records?: RelayRecords | undefined }): Promise<SourceListener> {
    const l = new SourceListener(o.unixPath);
    const socat = chooseRelay(o.relay, o.log);
    await mkdir(dirname(o.unixPath), { recursive: true });
    // Bound through a short link when the pod path is too long; the socket file lands in the pod.
    const short = shortUnixPath(o.unixPath);
    await rm(o.unixPath, { force: true });
    try {
      if (socat) {
        l.impl = await SocatSourceRelay.start({ socat, listenPath: short.path, host: o.host, port: o.port, multifdPort: o.multifdPort, tls: o.tls, log: o.log, records: o.records });
      } else {
        const w = new WorkerProxy(o.log);
        l.impl = w;
        await w.start({
          role: 'source', unixPath: short.path, host: o.host, port: o.port, multifdPort: o.multifdPort, peerCommonName: HANDLER_CERT_CN,
          tls: o.tls ? clientTlsOptions(o.tls) : undefined,
        }, `source listener on ${short.path}`);
      }
    } catch (err) {
      throw err instanceof MigrationProxyError ? err : new MigrationProxyError(`migration source listener on ${o.unixPath}: ${(err as Error).message}`);
    } finally {
      short.release();
    }
    o.log.info({ socket: o.unixPath, target: `${o.host}:${o.port}`, multifdPort: o.multifdPort, relay: socat ? 'socat' : 'node' }, 'migration source listener started');
    return l;
  }

  async close(): Promise<void> {
    const impl = this.impl;
    this.impl = undefined;
    await impl?.close();
    await rm(this.unixPath, { force: true });
  }
}
