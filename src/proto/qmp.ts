// qvirt.qmp.v1.QmpPassthrough: one QMP command against a VM's QEMU through its launcher's command
// socket (debugging and tooling; the launcher enforces a read-only allow-list unless `unsafe`).
import { loadService, UnaryClient, type UnaryHandlers, type CallOptions } from './grpc.ts';

export interface QmpExecuteRequest {
  command: string;
  argumentsJson: string;
  unsafe: boolean;
  caller: string;
  timeoutSeconds: number;
}
export interface QmpExecuteResponse {
  success: boolean;
  message: string;
  returnJson: string;
  errorClass: string;
  refused: boolean;
}
export type QmpPassthroughMethods = { Execute: [QmpExecuteRequest, QmpExecuteResponse] };
export type QmpPassthroughHandlers = UnaryHandlers<QmpPassthroughMethods>;

export const QMP_PASSTHROUGH_SERVICE_NAME = 'qvirt.qmp.v1.QmpPassthrough';
export function qmpPassthroughService() { return loadService('qmp.proto', QMP_PASSTHROUGH_SERVICE_NAME); }

export class QmpPassthroughClient {
  readonly rpc: UnaryClient<QmpPassthroughMethods>;
  constructor(socketPath: string, opts: { timeoutMs?: number } = {}) {
    this.rpc = new UnaryClient<QmpPassthroughMethods>(qmpPassthroughService(), socketPath, opts);
  }
  execute(command: string, args?: Record<string, unknown>, o: { unsafe?: boolean; caller?: string; timeoutSeconds?: number } & CallOptions = {}) {
    return this.rpc.call('Execute', {
      command,
      argumentsJson: args ? JSON.stringify(args) : '',
      unsafe: o.unsafe ?? false,
      caller: o.caller ?? '',
      timeoutSeconds: o.timeoutSeconds ?? 0,
    }, o);
  }
  close() { this.rpc.close(); }
}
