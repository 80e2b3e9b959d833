// The node agent's end of KubeVirt's kubevirt.notify.v1.Notify: launchers report domain changes
// and Kubernetes events here. Handlers run in arrival order per launcher connection; a handler
// failure becomes `success: false` so the launcher's notifier retries, as KubeVirt's does.
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

export class NotifyServer {
  private readonly server: grpc.Server;
  readonly socketPath: string;

  private constructor(server: grpc.Server, socketPath: string) {
    this.server = server;
    this.socketPath = socketPath;
  }

  static async start(socketPath: string, handlers: NotifyServerHandlers): Promise<NotifyServer> {
    const server = new grpc.Server();
    const impl: NotifyHandlers = {
      HandleDomainEvent: async (req) => {
        try {
          const domain = decodeDomain(req.domainJSON);
          await handlers.domainEvent(req.eventType, domain);
          return { success: true, message: '' };
        } catch (err) {
          return { success: false, message: err instanceof Error ? err.message : String(err) };
        }
      },
      HandleK8sEvent: async (req) => {
        try {
          const ev = JSON.parse(req.eventJSON.toString('utf8')) as K8sEvent;
          await handlers.k8sEvent?.(ev);
          return { success: true, message: '' };
        } catch (err) {
          return { success: false, message: err instanceof Error ? err.message : String(err) };
        }
      },
    };
    addUnaryService(server, notifyService(), impl);
    await rm(socketPath, { force: true });
    await listenUnix(server, socketPath);
    return new NotifyServer(server, socketPath);
  }

  async stop(): Promise<void> {
    await shutdownServer(this.server, 500);
    await rm(this.socketPath, { force: true });
  }
}
