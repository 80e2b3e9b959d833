// kubevirt.notify.v1.Notify: domain and Kubernetes events from a launcher to its node agent
// (KubeVirt's pkg/handler-launcher-com/notify/v1). Typed messages, the client the launcher uses
// and the handler types the node agent's server implements.
import { loadService, type UnaryHandlers, type CallOptions } from './service.ts';
import { GrpcClient } from './h2/grpc-client.ts';

export interface NotifyResponse { success: boolean; message: string }
export interface DomainEventRequest { domainJSON: Buffer; statusJSON: Buffer; eventType: string }
export interface K8sEventRequest { eventJSON: Buffer }

export type NotifyMethods = {
  HandleDomainEvent: [DomainEventRequest, NotifyResponse];
  HandleK8sEvent: [K8sEventRequest, NotifyResponse];
};
export type NotifyHandlers = UnaryHandlers<NotifyMethods>;

/** Kubernetes watch event types, as carried in `eventType`. */
export const WatchEventType = { Added: 'ADDED', Modified: 'MODIFIED', Deleted: 'DELETED', Error: 'ERROR' } as const;
export type WatchEventType = (typeof WatchEventType)[keyof typeof WatchEventType];

/** The core/v1 Event fields a launcher sends through HandleK8sEvent. */
export interface K8sEvent {
  involvedObject: { kind: string; apiVersion: string; namespace: string; name: string; uid: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export const NOTIFY_SERVICE_NAME = 'kubevirt.notify.v1.Notify';
export function notifyService() { return loadService('notify.proto', NOTIFY_SERVICE_NAME); }

/** A plain typed Notify client over src/proto/h2 (no retries; the launcher's notifier adds KubeVirt's retry policy). */
export class NotifyClient {
  readonly rpc: GrpcClient<NotifyMethods>;
  constructor(socketPath: string, opts: { timeoutMs?: number } = {}) {
    this.rpc = new GrpcClient<NotifyMethods>(notifyService(), socketPath, opts);
  }
  handleDomainEvent(eventType: WatchEventType, domainJSON: string | null, statusJSON: string | null = null, opts?: CallOptions) {
    return this.rpc.call('HandleDomainEvent', {
      eventType,
      domainJSON: Buffer.from(domainJSON ?? ''),
      statusJSON: Buffer.from(statusJSON ?? ''),
    }, opts);
  }
  handleK8sEvent(event: K8sEvent, opts?: CallOptions) {
    return this.rpc.call('HandleK8sEvent', { eventJSON: Buffer.from(JSON.stringify(event)) }, opts);
  }
  close() { this.rpc.close(); }
}
