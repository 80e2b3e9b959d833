// The node agent's end of KubeVirt's kubevirt.notify.v1.Notify: launchers report domain changes
// and Kubernetes events here. Handlers run in arrival order per launcher connection; a handler
// failure becomes `success: false` so the launcher's notifier retries, as KubeVirt's does.
//
// One listening socket per path in this process: the migration target's side and the node's main
// controller each start a server for a launcher's socket in turn (the target hands the launcher over
// when the guest runs here), and a second listen on the path, then the first server's close (libuv
// unlinks a pipe's path when it closes), left the path with no socket at all — the launcher's domain
// events were lost for good. Servers on one path share its listener; events go to the newest one,
// and the listener closes with the last.
import * as grpc from '@grpc/grpc-js';
import { rm } from 'node:fs/promises';
import { addUnaryService, listenUnix, shutdownServer } from '../../src/proto/grpc.ts';
import { notifyService, type NotifyHandlers, type K8sEvent } from '../../src/proto/notify.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { Domain } from '../../src/api/domain/domain.ts';

export interface NotifyServerHandlers {
  domainEvent(type: string, domain: Domain): void | Promise<void>;
  k8sEvent?(event: K8sEvent): void | Promise<void>;
}

interface SharedListener {
  readonly server: grpc.Server;
  /** The servers started on this path and not stopped, oldest first: the newest gets the events. */
  readonly owners: NotifyServer[];
  /** The listener closing with its last server: a server started meanwhile waits for it (its close unlinks the path). */
  closing?: Promise<void>;
}

const listeners = new Map<string, SharedListener>();

export class NotifyServer {
  readonly socketPath: string;
  readonly handlers: NotifyServerHandlers;
  private stopped = false;

  private constructor(socketPath: string, handlers: NotifyServerHandlers) {
    this.socketPath = socketPath;
    this.handlers = handlers;
  }

  static async start(socketPath: string, handlers: NotifyServerHandlers): Promise<NotifyServer> {
    const self = new NotifyServer(socketPath, handlers);
    let shared = listeners.get(socketPath);
    while (shared?.closing) {
      await shared.closing;
      shared = listeners.get(socketPath);
    }
    if (shared) {
      shared.owners.push(self);
      return self;
    }
    const owners: NotifyServer[] = [self];
    const current = (): NotifyServerHandlers => {
      const h = owners.at(-1)?.handlers;
      if (!h) throw new Error('the notify server is stopping');
      return h;
    };
    const server = new grpc.Server();
    const impl: NotifyHandlers = {
      HandleDomainEvent: async (req) => {
        try {
          const domain = decodeDomain(req.domainJSON);
          await current().domainEvent(req.eventType, domain);
          return { success: true, message: '' };
        } catch (err) {
          return { success: false, message: err instanceof Error ? err.message : String(err) };
        }
      },
      HandleK8sEvent: async (req) => {
        try {
          const ev = JSON.parse(req.eventJSON.toString('utf8')) as K8sEvent;
          await current().k8sEvent?.(ev);
          return { success: true, message: '' };
        } catch (err) {
          return { success: false, message: err instanceof Error ? err.message : String(err) };
        }
      },
    };
    addUnaryService(server, notifyService(), impl);
    listeners.set(socketPath, { server, owners });
    try {
      await rm(socketPath, { force: true });
      await listenUnix(server, socketPath);
    } catch (err) {
      listeners.delete(socketPath);
      throw err;
    }
    return self;
  }

  /** Stops this server; the path's listener closes (and its socket file goes) with the last server on it. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const shared = listeners.get(this.socketPath);
    if (!shared) return;
    const i = shared.owners.indexOf(this);
    if (i >= 0) shared.owners.splice(i, 1);
    if (shared.owners.length > 0) return;
    shared.closing = (async () => {
      try {
        await shutdownServer(shared.server, 500);
        await rm(this.socketPath, { force: true });
      } finally {
        if (listeners.get(this.socketPath) === shared) listeners.delete(this.socketPath);
      }
    })();
    await shared.closing;
  }
}
