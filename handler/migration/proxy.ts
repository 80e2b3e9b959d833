// The migration proxy between two node agents (KubeVirt's pkg/virt-handler/migration-proxy): on the
// target node a TLS listener on the node's migration address (random port) forwards each connection
// to the target launcher's migration socket; on the source node a unix socket in the source
// launcher's pod forwards each connection over TLS to the target's listener. Multifd opens several
// connections; each is piped on its own. Without TLS (migrations.disableTLS) plain TCP is used.
// The data path runs in a worker thread per listener (relay-worker.ts); this is its shell: start,
// wait until it listens, log what it reports, close.
import { Worker } from 'node:worker_threads';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import { shortUnixPath } from '../../src/proto/unix-path.ts';
import { clientTlsOptions, HANDLER_CERT_CN, serverTlsOptions, type MigrationTls } from './tls.ts';
import { RELAY_CLOSE, relayWorkerMain, type RelayEvent, type RelaySpec } from './relay-worker.ts';

export class MigrationProxyError extends Error {
  override readonly name = 'MigrationProxyError';
}

/** How long close() waits for the worker to wind down before terminating it. */
const CLOSE_TIMEOUT_MS = 5000;

const RELAY_SOURCE = `(${relayWorkerMain.toString()})()`;

abstract class Proxy {
  protected readonly log: Logger;
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  connections = 0;

  constructor(log: Logger) {
    this.log = log;
  }

  /** Starts the relay worker; resolves with the port it listens on once it does. */
  protected async startRelay(spec: RelaySpec, what: string): Promise<number> {
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
    try {
      l.port = await l.startRelay({
        role: 'target', address: o.address, unixPath: short.path, peerCommonName: HANDLER_CERT_CN,
        tls: o.tls ? serverTlsOptions(o.tls) : undefined,
      }, `target listener on ${o.address}`);
    } catch (err) {
      short.release();
      throw err;
    }
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
    try {
      await l.startRelay({
        role: 'source', unixPath: short.path, host: o.host, port: o.port, peerCommonName: HANDLER_CERT_CN,
        tls: o.tls ? clientTlsOptions(o.tls) : undefined,
      }, `source listener on ${o.unixPath}`);
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
